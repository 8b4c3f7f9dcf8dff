#include "core/store/run_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>

#include "core/store/checkpoint_files.h"
#include "core/store/durable_file.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/util/number_text.h"

namespace descentlab::store {
namespace fs = std::filesystem;

namespace {

std::string parent_folder(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// An HDF5 file that lives in memory only (the core driver without a backing store): the commit builds the new
// version there and writes its bytes itself, so that every disk operation is one this code checks. HDF5 then never
// writes to disk, so no HDF5 close can fail on a full disk and leave a half-closed file for the library's shutdown.
// `expected_bytes` sizes the driver's growth step: the whole new version in one or two steps, not a reallocation
// (and a copy of everything so far) per megabyte.
H5::FileAccPropList in_memory(const std::vector<char>* image, size_t expected_bytes) {
  H5::FileAccPropList access;
  const size_t increment = std::max<size_t>(size_t{1} << 20, expected_bytes);
  if (H5Pset_fapl_core(access.getId(), increment, 0) < 0) throw std::runtime_error("HDF5 refused the core driver");
  if (image && H5Pset_file_image(access.getId(), const_cast<char*>(image->data()), image->size()) < 0) {
    throw std::runtime_error("HDF5 refused the file image");
  }
  return access;
}

std::string memory_name(const char* role) {
  static std::atomic<int64_t> counter{0};
  return std::string("descentlab-in-memory-") + role + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(++counter);
}

std::vector<char> image_of(H5::H5File& file) {
  file.flush(H5F_SCOPE_GLOBAL);
  const ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
  if (size <= 0) throw std::runtime_error("HDF5 could not size the new version");
  std::vector<char> image(static_cast<size_t>(size));
  if (H5Fget_file_image(file.getId(), image.data(), image.size()) != size) {
    throw std::runtime_error("HDF5 could not copy out the new version");
  }
  return image;
}

// Copies every object of `from` into `to` (new, empty), leaving out the checkpoints and sweeps that are about to be
// replaced, so that their space is not carried along.
void rebuild_without(const H5::H5File& from, H5::H5File& to, const std::string& destination, const RunHeader& header,
                     const std::map<std::string, std::shared_ptr<const record::CheckpointData>>& replaced_checkpoints,
                     const std::map<std::string, record::SweepResult>& replaced_sweeps) {
  format::write_header(to, header);
  const H5::Group from_root = from.openGroup("/");
  H5::Group to_root = to.openGroup("/");
  for (const auto& top : hdf5::child_names(from_root)) {
    const bool checkpoints = top == format::kCheckpoints;
    const bool sweeps = top == format::kSweeps;
    if (!checkpoints && !sweeps) {
      if (H5Ocopy(from_root.getId(), top.c_str(), to_root.getId(), top.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
        throw RunFileError(RunFileError::Kind::WriteFailed, destination, "/" + top, "copy failed");
      }
      continue;
    }
    const H5::Group from_group = from.openGroup(top);
    H5::Group to_group = to.createGroup(top);
    for (const auto& child : hdf5::child_names(from_group)) {
      if ((checkpoints && replaced_checkpoints.count(child)) || (sweeps && replaced_sweeps.count(child))) continue;
      if (H5Ocopy(from_group.getId(), child.c_str(), to_group.getId(), child.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
        throw RunFileError(RunFileError::Kind::WriteFailed, destination, "/" + top + "/" + child, "copy failed");
      }
    }
  }
}

void truncate_series(H5::H5File& file, int64_t last_step) {
  for (const char* top : {format::kMetrics, format::kHistograms}) {
    H5::Group parent = file.openGroup(top);
    for (const auto& name : hdf5::child_names(parent)) {
      H5::Group group = parent.openGroup(name);
      const auto steps = hdf5::read_all<int64_t>(group.openDataSet("step"), H5::PredType::NATIVE_INT64);
      size_t keep = 0;
      while (keep < steps.size() && steps[keep] <= last_step) ++keep;
      if (keep == steps.size()) continue;
      // A scalar series' last row (its group's attributes) becomes the last row kept.
      if (hdf5::has_attribute(group, format::kLastRows)) {
        format::remove_last_row(group);
        if (keep > 0) {
          const auto values = hdf5::read_all<double>(group.openDataSet("value"), H5::PredType::NATIVE_DOUBLE);
          if (values.size() == steps.size()) {
            format::set_last_row(group, static_cast<int64_t>(keep), steps[keep - 1], values[keep - 1]);
          }
        }
      }
      for (const auto& dataset_name : hdf5::child_names(group)) {
        if (dataset_name == "bin_edges") continue;
        H5::DataSet dataset = group.openDataSet(dataset_name);
        auto dims = hdf5::dataset_shape(dataset);
        dims[0] = keep;
        dataset.extend(dims.data());  // H5Dset_extent: shrinking is allowed for chunked datasets
      }
    }
  }
}

// Removes "RUN.h5.tmp-<pid>" and "RUN.h5.log.tmp-<pid>" files left by writers that were killed mid-commit. Called
// with the run file's lock held, so no other writer is committing: every such file is abandoned.
void remove_abandoned_temporaries(const std::string& path) {
  const fs::path run(path);
  const std::string prefix = run.filename().string() + ".tmp-";
  const std::string log_prefix = fs::path(log_path_for(path)).filename().string() + ".tmp-";
  std::error_code status;
  for (const auto& entry : fs::directory_iterator(parent_folder(path), status)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 || name.rfind(log_prefix, 0) == 0) fs::remove(entry.path(), status);
  }
}

std::string temporary_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

// The rows, snapshots and sweeps of the log's records after the run file's own, in order. `*missing` says so when
// the log no longer holds every record this writer committed (deleted or replaced by another program).
RunBatch logged_since_fold(const std::string& path, int64_t folded_sequence, int64_t last_committed,
                           std::string* missing) {
  RunLog log = read_run_log(path, folded_sequence);
  format::check_log_follows(log, folded_sequence, path);
  if (log.last_sequence < last_committed) {
    *missing = log_path_for(path) + " lost the records " +
               std::to_string(std::max(log.last_sequence, folded_sequence) + 1) + " to " +
               std::to_string(last_committed) +
               " committed to it (deleted or replaced by another program?); "
               "their rows are missing from the run file";
  }
  RunBatch logged;
  for (auto& record : log.records) logged.merge_newer(std::move(record.batch));
  return logged;
}

// Appends a batch's rows and snapshots to the file's series and stores its sweeps (replacing those of the name).
void add_rows(H5::H5File& file, const RunBatch& part) {
  H5::Group metrics = file.openGroup(format::kMetrics);
  H5::Group histograms = file.openGroup(format::kHistograms);
  H5::Group sweeps = file.openGroup(format::kSweeps);
  for (const auto& [name, rows] : part.metrics) {
    if (!rows.steps.empty()) {
      format::write_metric_rows(metrics, name, rows.shape, rows.width, rows.steps, rows.wall_times, rows.values);
    }
  }
  for (const auto& [name, snapshots] : part.histograms) {
    if (!snapshots.steps.empty()) {
      format::write_histogram_rows(histograms, name, snapshots.edges, snapshots.steps, snapshots.counts);
    }
  }
  for (const auto& [name, sweep] : part.sweeps) format::write_sweep(sweeps, sweep);
}

size_t bytes_of_rows(const RunBatch& part) {
  size_t bytes = 0;
  for (const auto& [name, rows] : part.metrics) bytes += (rows.values.size() + 2 * rows.steps.size()) * 8;
  for (const auto& [name, snapshots] : part.histograms) bytes += (snapshots.counts.size() + 1) * 8;
  return bytes;
}

// What a second writer is told the lock's holder is doing: this program's name and the writer's purpose.
std::string lock_purpose(const RunWriterOptions& options) {
  std::ifstream comm("/proc/self/comm");
  std::string program;
  std::getline(comm, program);
  if (program.empty()) program = "DescentLab";
  return options.purpose.empty() ? program : program + ": " + options.purpose;
}

}  // namespace

RunWriter::RunWriter(std::string path, const RunWriterOptions& options)
    : path_(std::move(path)), options_(options), pending_(std::make_unique<Pending>()) {
  hdf5::quiet_library_errors();
}

std::unique_ptr<RunWriter> RunWriter::create(const std::string& path, const RunHeader& header,
                                             const RunWriterOptions& options) {
  auto lock = RunFileLock::acquire(path, lock_purpose(options));
  if (fs::exists(path) && !options.overwrite) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path, "",
                       "a file already exists here; choose another name or allow overwriting");
  }
  remove_abandoned_temporaries(path);
  // An overwritten run's log goes before the new file exists: it must never be read as the new run's.
  std::error_code removed;
  fs::remove(log_path_for(path), removed);
  std::unique_ptr<RunWriter> writer(new RunWriter(path, options));
  writer->lock_ = std::move(lock);
  writer->header_ = header;
  if (writer->header_.created.empty()) writer->header_.created = utc_timestamp();
  writer->flush();  // the file exists, complete, from the start
  writer->ready_ = true;
  writer->start_flusher();
  return writer;
}

void RunWriter::take_over_abandoned(const std::string& path, const RunWriterOptions& options) {
  std::error_code status;
  if (!fs::exists(path, status)) return;  // the reader says what is missing
  const auto lock = RunFileLock::acquire(path, lock_purpose(options));
  remove_abandoned_temporaries(path);
}

std::unique_ptr<RunWriter> RunWriter::open(const std::string& path, const RunWriterOptions& options) {
  auto lock = RunFileLock::acquire(path, lock_purpose(options));
  // Before validating: a killed writer's temporaries go even when the file itself is then refused.
  remove_abandoned_temporaries(path);
  std::unique_ptr<RunWriter> writer(new RunWriter(path, options));
  writer->lock_ = std::move(lock);
  try {
    H5::H5File file = format::open_validated(path, H5F_ACC_RDONLY);
    writer->header_ = format::read_header(file, path);
    // An older file takes this build's format on its next commit: its series keep the words they were written
    // with (version 1's "scalar" | "vector"), which version 2 still reads.
    writer->upgrade_format_ = writer->header_.format_version < kFormatVersion;
    writer->header_.format_version = kFormatVersion;
    // Every series the next commits copy or cut is checked first: a damaged one that claims billions of rows is
    // refused here, naming it, not by an allocation in a commit.
    const auto check_claims = [&](const H5::Group& series, const std::string& object) {
      for (const auto& dataset : hdf5::child_names(series)) {
        try {
          hdf5::checked_element_count(series.openDataSet(dataset), 8);
        } catch (const hdf5::ClaimTooLarge& error) {
          throw RunFileError(RunFileError::Kind::Corrupt, path, object + "/" + dataset, error.what());
        }
      }
    };
    const H5::Group metrics = file.openGroup(format::kMetrics);
    for (const auto& name : hdf5::child_names(metrics)) {
      check_claims(metrics.openGroup(name), std::string("/") + format::kMetrics + "/" + name);
      writer->metric_widths_[name] = hdf5::int_attribute(metrics.openGroup(name), "width");
    }
    const H5::Group histograms = file.openGroup(format::kHistograms);
    for (const auto& name : hdf5::child_names(histograms)) {
      check_claims(histograms.openGroup(name), std::string("/") + format::kHistograms + "/" + name);
      writer->histogram_edges_[name] =
          hdf5::read_all<double>(histograms.openGroup(name).openDataSet("bin_edges"), H5::PredType::NATIVE_DOUBLE);
    }
    const H5::Group checkpoints = file.openGroup(format::kCheckpoints);
    std::set<std::string> referenced;
    for (const auto& label : hdf5::child_names(checkpoints)) {
      auto& files = writer->stored_checkpoints_[label];
      files = format::external_file_names(checkpoints.openGroup(label));
      referenced.insert(files.begin(), files.end());
    }
    // Data files of commits that never landed (a writer killed before its rename) go, as temporaries do.
    remove_unreferenced_checkpoint_files(path, referenced);
    for (const auto& name : hdf5::child_names(file.openGroup(format::kSweeps))) writer->stored_sweeps_.insert(name);
    writer->folded_sequence_ = format::log_sequence(file);
  } catch (const H5::Exception& error) {
    throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, path, "");
  }
  // The log's records count as the file's: their series' widths and edges bind the rows to come.
  const RunLog log = read_run_log(path, writer->folded_sequence_);
  format::check_log_follows(log, writer->folded_sequence_, path);
  for (const auto& record : log.records) {
    for (const auto& [name, rows] : record.batch.metrics) writer->metric_widths_[name] = rows.width;
    for (const auto& [name, snapshots] : record.batch.histograms) writer->histogram_edges_[name] = snapshots.edges;
  }
  writer->sequence_ = std::max(writer->folded_sequence_, log.last_sequence);
  writer->main_bytes_ = static_cast<size_t>(fs::file_size(path));
  if (log.exists) {
    // A record cut short at the end (its writer died mid-commit) is cut off, so the next record follows the last
    // whole one.
    writer->log_length_ = log.valid_length;
    writer->open_log();
    if (writer->log_descriptor_ >= 0 && log.file_length != log.valid_length &&
        (::ftruncate(writer->log_descriptor_, static_cast<off_t>(log.valid_length)) != 0 ||
         ::fsync(writer->log_descriptor_) != 0)) {
      ::close(writer->log_descriptor_);
      writer->log_descriptor_ = -1;  // the first commit folds and starts a new log
    }
  }
  writer->file_exists_ = true;
  writer->ready_ = true;
  writer->start_flusher();
  return writer;
}

RunWriter::~RunWriter() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (ready_) {  // create() or open() failed: never touch the file
    try {
      commit(/*fold_log=*/true);  // a finished run is one file that h5py reads whole
      if (sequence_ == folded_sequence_) {
        // Every record is in the run file: the log goes, so a closed run is one file (if the removal is lost in a
        // crash, the log left holds only folded records, which readers skip).
        if (log_descriptor_ >= 0) ::close(log_descriptor_);
        log_descriptor_ = -1;
        std::error_code removed;
        fs::remove(log_path_for(path_), removed);
      }
    } catch (const std::exception& error) {
      std::cerr << "descentlab: the rows recorded since the last commit are lost (the file keeps everything "
                   "committed before): "
                << error.what() << "\n";
    }
  }
  if (log_descriptor_ >= 0) ::close(log_descriptor_);
}

void RunWriter::start_flusher() {
  if (options_.flush_interval_seconds > 0) flusher_ = std::thread([this] { flusher_loop(); });
}

void RunWriter::flusher_loop() {
  const auto interval = std::chrono::duration<double>(options_.flush_interval_seconds);
  std::unique_lock<std::mutex> lock(wake_mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval);
    if (stopping_) break;
    lock.unlock();
    // Said once when rows start to be held in memory (a full disk between checkpoints), and once when they land:
    // a run must not go quiet while its rows cannot be written.
    try {
      commit();
      if (holding_since_) {
        notice(path_ + ": the rows held in memory since " + *holding_since_ + " are committed");
        holding_since_.reset();
      }
    } catch (const std::exception&) {
      // Recorded in last_error_; the data stays pending and the next commit retries.
      if (!holding_since_) {
        holding_since_ = utc_timestamp();
        notice(path_ + ": the rows recorded since the last commit are held in memory: " + last_error());
      }
    }
    lock.lock();
  }
}

void RunWriter::notice(const std::string& message) const {
  if (options_.notice) {
    options_.notice(message);
  } else {
    std::cerr << "descentlab: " << message << "\n";
  }
}

void RunWriter::scalar(const std::string& name, int64_t step, double wall_time, double value) {
  append(name, record::shape_of(name, true), step, wall_time, {value});
}

void RunWriter::vector(const std::string& name, int64_t step, double wall_time, const std::vector<double>& values) {
  append(name, record::shape_of(name, false), step, wall_time, values);
}

void RunWriter::append(const std::string& name, record::SeriesShape shape, int64_t step, double wall_time,
                       const std::vector<double>& values) {
  format::validate_name("metric", name, path_);
  const auto width = static_cast<int64_t>(values.size());
  std::lock_guard<std::mutex> lock(data_mutex_);
  const auto known = metric_widths_.find(name);
  if (known == metric_widths_.end()) {
    if (width < 1) throw RunFileError(RunFileError::Kind::InvalidArgument, path_, "/metrics/" + name, "empty vector");
    metric_widths_[name] = width;
  } else if (known->second != width) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path_, "/metrics/" + name,
                       "has width " + std::to_string(known->second) + ", got a row of " + std::to_string(width));
  }
  auto& rows = pending_->metrics[name];
  rows.shape = shape;
  rows.width = width;
  rows.steps.push_back(step);
  rows.wall_times.push_back(wall_time);
  rows.values.insert(rows.values.end(), values.begin(), values.end());
}

void RunWriter::histogram(const record::HistogramSnapshot& snapshot) {
  format::validate_name("histogram", snapshot.name, path_);
  const std::string object = "/histograms/" + snapshot.name;
  if (snapshot.bin_edges.size() < 2 || snapshot.counts.size() + 1 != snapshot.bin_edges.size()) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path_, object,
                       "needs bins + 1 edges for bins counts, got " + std::to_string(snapshot.bin_edges.size()) +
                           " edges and " + std::to_string(snapshot.counts.size()) + " counts");
  }
  std::lock_guard<std::mutex> lock(data_mutex_);
  const auto known = histogram_edges_.find(snapshot.name);
  if (known == histogram_edges_.end()) {
    histogram_edges_[snapshot.name] = snapshot.bin_edges;
  } else if (known->second != snapshot.bin_edges) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path_, object, "bin edges changed during the run");
  }
  auto& snapshots = pending_->histograms[snapshot.name];
  snapshots.edges = snapshot.bin_edges;
  snapshots.steps.push_back(snapshot.step);
  snapshots.counts.insert(snapshots.counts.end(), snapshot.counts.begin(), snapshot.counts.end());
}

void RunWriter::sweep(const record::SweepResult& sweep) {
  format::validate_name("sweep", sweep.name, path_);
  const size_t cells = sweep.gamma.size() * sweep.seeds.size();
  if (sweep.metric.size() != cells || sweep.layer_loss.size() != cells * static_cast<size_t>(sweep.layers)) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path_, "/sweeps/" + sweep.name,
                       "metric must hold gamma x seeds values and layer_loss gamma x seeds x layers");
  }
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    pending_->sweeps[sweep.name] = sweep;
  }
  wake_.notify_all();
}

namespace {

void validate_checkpoint(const std::string& label, const record::CheckpointData& checkpoint, const std::string& path) {
  format::validate_name("checkpoint", label, path);
  for (const auto& [section, tensors] : checkpoint.sections) {
    format::validate_name("checkpoint section", section, path);
    for (const auto& [name, blob] : tensors) {
      format::validate_name("tensor", name, path);
      const std::string object = "/checkpoints/" + label + "/" + section + "/" + name;
      const size_t expected = static_cast<size_t>(blob.numel()) * format::element_size_of(blob.dtype, path, object);
      if (blob.bytes.size() != expected) {
        throw RunFileError(RunFileError::Kind::InvalidArgument, path, object,
                           std::to_string(blob.bytes.size()) + " bytes for " + std::to_string(expected) + " expected");
      }
    }
  }
}

}  // namespace

void RunWriter::save_checkpoint(const std::string& label, record::CheckpointData checkpoint, bool wait) {
  queue_checkpoints({label}, std::move(checkpoint));
  if (wait) {
    flush();
  } else {
    wake_.notify_all();
  }
}

void RunWriter::save_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint) {
  if (labels.empty()) return;
  queue_checkpoints(labels, std::move(checkpoint));
  flush();
}

void RunWriter::queue_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint) {
  for (const auto& label : labels) validate_checkpoint(label, checkpoint, path_);
  if (checkpoint.created.empty()) checkpoint.created = utc_timestamp();
  // Queued under one lock, so one commit writes every label: no file ever holds "best" without "latest".
  std::lock_guard<std::mutex> lock(data_mutex_);
  const auto shared = std::make_shared<const record::CheckpointData>(std::move(checkpoint));
  for (const auto& label : labels) pending_->checkpoints[label] = shared;
}

void RunWriter::truncate_after(int64_t step) {
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    for (auto& [name, rows] : pending_->metrics) {
      size_t keep = 0;
      while (keep < rows.steps.size() && rows.steps[keep] <= step) ++keep;
      rows.steps.resize(keep);
      rows.wall_times.resize(keep);
      rows.values.resize(keep * static_cast<size_t>(rows.width));
    }
    for (auto& [name, snapshots] : pending_->histograms) {
      size_t keep = 0;
      while (keep < snapshots.steps.size() && snapshots.steps[keep] <= step) ++keep;
      snapshots.steps.resize(keep);
      snapshots.counts.resize(keep * (snapshots.edges.size() - 1));
    }
    pending_->truncate_after = step;
  }
  flush();
}

void RunWriter::flush() {
  commit();
}

std::string RunWriter::last_error() const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  return last_error_;
}

void RunWriter::restore_and_throw(std::unique_ptr<Pending>& batch, const std::string& temporary,
                                  const std::string& message) {
  std::error_code ignored;
  fs::remove(temporary, ignored);
  std::lock_guard<std::mutex> lock(data_mutex_);
  batch->merge_newer(std::move(*pending_));
  pending_ = std::move(batch);
  last_error_ = message + " (the rows stay in memory; the writer tries again every " +
                number_text(options_.flush_interval_seconds) + " s and at the next checkpoint)";
  throw RunFileError(RunFileError::Kind::WriteFailed, path_, "", message);
}

void RunWriter::open_log() {
  if (log_descriptor_ >= 0) ::close(log_descriptor_);
  log_descriptor_ = ::open(log_path_for(path_).c_str(), O_RDWR | O_CLOEXEC);
}

bool RunWriter::needs_fold(const Pending& batch) const {
  // The log is folded once it outgrows the run file (and 16 MB): each fold then rewrites at most about as much as
  // the log has added since the last, so the cost of a row stays bounded however long the run.
  const unsigned long long log_limit = std::max<unsigned long long>(16ull << 20, main_bytes_);
  return !file_exists_ || upgrade_format_ || log_descriptor_ < 0 || !batch.checkpoints.empty() ||
         batch.truncate_after.has_value() || log_length_ > log_limit;
}

void RunWriter::commit(bool fold_log) {
  std::lock_guard<std::mutex> commit_lock(commit_mutex_);
  std::unique_ptr<Pending> batch;
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    batch = std::move(pending_);
    pending_ = std::make_unique<Pending>();
  }
  const bool unfolded = fold_log && sequence_ > folded_sequence_;
  // Nothing to commit leaves the file as it is (a cancelled sweep writes nothing, not even a format upgrade).
  if (batch->empty() && file_exists_ && !unfolded) return;
  const bool fold_now = unfolded || needs_fold(*batch);

  std::string warning;
  const auto started = std::chrono::steady_clock::now();
  // Counted whether it succeeds or not: the time is spent either way.
  struct Timed {
    std::chrono::steady_clock::time_point started;
    std::atomic<int64_t>& nanoseconds;
    ~Timed() {
      nanoseconds +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
    }
  } timed{started, fold_now ? fold_nanoseconds_ : append_nanoseconds_};
  try {
    if (fold_now) {
      warning = fold(*batch);
      ++folds_;
    } else {
      append_to_log(*batch);
    }
  } catch (const RunFileError& error) {
    // The durable steps' messages begin with the file's name already; keep only the reason.
    const std::string prefix = path_ + ": ";
    const std::string what = error.what();
    restore_and_throw(batch, temporary_for(path_), what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  } catch (const H5::Exception& error) {
    restore_and_throw(batch, temporary_for(path_),
                      "HDF5 error while building the new version: " + error.getDetailMsg());
  } catch (const std::exception& error) {
    restore_and_throw(batch, temporary_for(path_), error.what());
  }
  for (const auto& entry : batch->sweeps) stored_sweeps_.insert(entry.first);
  ++commits_;
  std::lock_guard<std::mutex> lock(data_mutex_);
  last_error_ = warning;
}

void RunWriter::append_to_log(const Pending& batch) {
  if (batch.metrics.empty() && batch.histograms.empty() && batch.sweeps.empty()) return;
  const std::vector<char> record = encode_log_record(sequence_ + 1, batch);
  bool cut_back = true;
  try {
    append_durably(log_descriptor_, log_length_, record.data(), record.size(), path_, log_path_for(path_), &cut_back);
  } catch (const RunFileError&) {
    // Bytes of the failed record may be left past log_length_: the next commit folds and starts a new log, so no
    // later record can end up between them and a reader.
    if (!cut_back) {
      ::close(log_descriptor_);
      log_descriptor_ = -1;
    }
    throw;
  }
  log_length_ += record.size();
  ++sequence_;
}

std::map<const record::CheckpointData*, format::ExternalPlacement> RunWriter::write_checkpoint_data(
    const Pending& batch, int64_t sequence) {
  std::map<const record::CheckpointData*, format::ExternalPlacement> placements;
  if (batch.checkpoints.empty()) return placements;
  const std::string name = checkpoint_file_name(path_, sequence);
  std::vector<FilePiece> pieces;
  uint64_t offset = 0;
  for (const auto& entry : batch.checkpoints) {
    const record::CheckpointData* checkpoint = entry.second.get();
    if (placements.count(checkpoint)) continue;  // the same checkpoint under another label: written once
    format::ExternalPlacement& placement = placements[checkpoint];
    placement.name = name;
    placement.offset = offset;
    for (const record::TensorBlob* blob : format::tensors_in_order(*checkpoint)) {
      pieces.push_back({blob->bytes.data(), blob->bytes.size()});
      offset += blob->bytes.size();
    }
  }
  // The checksums are computed beside the write (another core), so they add little to its time.
  auto sums = std::async(std::launch::async, [&placements] {
    std::map<const record::CheckpointData*, std::map<std::string, std::string>> all;
    for (const auto& entry : placements) {
      for (const auto& section : entry.first->sections) {
        all[entry.first][section.first] = format::section_checksum(section.second);
      }
    }
    return all;
  });
  const std::string file = checkpoint_file_path(path_, name);
  try {
    make_folder_durably(path_, checkpoint_folder_for(path_));
    write_file_durably(path_, file, pieces);
  } catch (...) {
    sums.wait();
    throw;
  }
  for (auto& entry : sums.get()) placements[entry.first].section_sums = std::move(entry.second);
  return placements;
}

std::string RunWriter::fold(const Pending& batch) {
  std::string missing;
  const RunBatch logged = file_exists_ ? logged_since_fold(path_, folded_sequence_, sequence_, &missing) : RunBatch{};
  const int64_t sequence = sequence_ + 1;
  std::string warning;
  {
    // The tensors go once into their own data file; the run file's new version, built in memory, holds only the
    // rows and the metadata, so its size does not grow with the checkpoints.
    const auto placements = write_checkpoint_data(batch, sequence);
    try {
      const std::vector<char> image = build_version(logged, batch, sequence, placements);
      warning = replace_file_durably(path_, temporary_for(path_), image.data(), image.size());
      main_bytes_ = image.size();
    } catch (...) {
      if (!placements.empty()) {  // the data file no version will name
        std::error_code ignored;
        fs::remove(checkpoint_file_path(path_, placements.begin()->second.name), ignored);
      }
      throw;
    }
  }
  // Committed: the run file holds every record up to `sequence`.
  file_exists_ = true;
  upgrade_format_ = false;
  folded_sequence_ = sequence_ = sequence;
  std::set<std::string> referenced;
  for (const auto& entry : batch.checkpoints) {
    auto& files = stored_checkpoints_[entry.first];
    files.clear();
    if (!format::tensors_in_order(*entry.second).empty()) files.insert(checkpoint_file_name(path_, sequence));
  }
  for (const auto& entry : stored_checkpoints_) referenced.insert(entry.second.begin(), entry.second.end());
  // The data files no label uses any more (a replaced "latest") go: the folder holds what the run file names.
  remove_unreferenced_checkpoint_files(path_, referenced);
  // A new, empty log. If this fails the old one stays: its records are all folded (readers skip them), and new
  // records follow them with higher sequences.
  const std::string log = log_path_for(path_);
  const std::vector<char> header = encode_log_header(sequence);
  try {
    const std::string log_warning = replace_file_durably(log, temporary_for(log), header.data(), header.size());
    if (warning.empty()) warning = log_warning;
    log_length_ = header.size();
    open_log();
  } catch (const RunFileError& error) {
    if (warning.empty()) warning = std::string("committed, but a new log could not be started: ") + error.what();
  }
  return missing.empty() ? warning : missing;
}

std::vector<char> RunWriter::build_version(
    const Pending& logged, const Pending& batch, int64_t sequence,
    const std::map<const record::CheckpointData*, format::ExternalPlacement>& placements) {
  bool rebuild = false;
  for (const auto& entry : batch.checkpoints) rebuild = rebuild || stored_checkpoints_.count(entry.first) > 0;
  for (const auto& entry : batch.sweeps) rebuild = rebuild || stored_sweeps_.count(entry.first) > 0;
  for (const auto& entry : logged.sweeps) rebuild = rebuild || stored_sweeps_.count(entry.first) > 0;
  std::map<std::string, record::SweepResult> replaced_sweeps = logged.sweeps;
  for (const auto& entry : batch.sweeps) replaced_sweeps[entry.first] = entry.second;
  // Roughly what this commit adds: its rows and the checkpoints' metadata (their tensors are in their data file).
  const size_t added_bytes = bytes_of_rows(logged) + bytes_of_rows(batch) + (64u << 10) * batch.checkpoints.size();
  H5::H5File file;
  if (!file_exists_) {
    file =
        H5::H5File(memory_name("new"), H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, in_memory(nullptr, added_bytes));
    format::initialize_run_file(file, header_);
  } else {
    if (rebuild) {
      // Read-only from the disk: HDF5 reads just the objects it copies (the replaced checkpoint, often most of the
      // file, is never read), and a read-only close has nothing to fail on.
      const H5::H5File from(path_, H5F_ACC_RDONLY);
      file = H5::H5File(memory_name("rebuilt"), H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT,
                        in_memory(nullptr, static_cast<size_t>(fs::file_size(path_)) + added_bytes));
      rebuild_without(from, file, path_, header_, batch.checkpoints, replaced_sweeps);
    } else {
      const std::vector<char> committed = read_whole_file(path_);
      file = H5::H5File(memory_name("next"), H5F_ACC_RDWR, H5::FileCreatPropList::DEFAULT,
                        in_memory(&committed, added_bytes));
    }
  }
  H5::Group root = file.openGroup("/");
  if (upgrade_format_) {
    hdf5::set_int_attribute(root, "format_version", kFormatVersion);
    // Checkpoints from before checksums existed get them: a file of this version must carry them throughout.
    H5::Group kept = file.openGroup(format::kCheckpoints);
    format::add_missing_checksums(kept, path_);
  }
  hdf5::set_int_attribute(root, format::kLogSequence, sequence);
  // The log's records were committed before the batch (and before the cut it may carry).
  add_rows(file, logged);
  if (batch.truncate_after) truncate_series(file, *batch.truncate_after);
  add_rows(file, batch);
  H5::Group checkpoints = file.openGroup(format::kCheckpoints);
  for (const auto& [label, checkpoint] : batch.checkpoints) {
    format::write_checkpoint(checkpoints, label, *checkpoint, path_, &placements.at(checkpoint.get()));
  }
  std::vector<char> image = image_of(file);
  file.close();
  return image;
}

PackResult pack_run(const std::string& source, const std::string& target) {
  std::error_code status;
  if (fs::weakly_canonical(source, status) == fs::weakly_canonical(target, status)) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, target, "", "is the run being packed; choose another name");
  }
  const RunReader validated(source);  // names what is wrong with the source before anything is written
  (void)validated;
  for (int attempt = 1;; ++attempt) {
    const std::vector<char> committed = read_whole_file(source);
    try {
      H5::H5File file(memory_name("packed"), H5F_ACC_RDWR, H5::FileCreatPropList::DEFAULT,
                      in_memory(&committed, size_t{1} << 20));
      const int64_t folded = format::log_sequence(file);
      RunLog log = read_run_log(source, folded);
      // A writer folded after the file was read: read both again (as RunReader does).
      if (log.exists && log.base_sequence > folded && attempt < 20) continue;
      format::check_log_follows(log, folded, source);
      RunBatch logged;
      for (auto& record : log.records) logged.merge_newer(std::move(record.batch));
      add_rows(file, logged);
      H5::Group root = file.openGroup("/");
      hdf5::set_int_attribute(root, format::kLogSequence, std::max(folded, log.last_sequence));
      // Checkpoints in data files come into the packed file itself (checked against their sums on the way), so
      // that it is one file h5py reads whole.
      H5::Group checkpoints = file.openGroup(format::kCheckpoints);
      const std::set<std::string> data_files = format::external_file_names(checkpoints);
      if (!data_files.empty()) {
        CheckpointFiles files(source);
        // A writer replaced a checkpoint after the file was read: read both again.
        if (!files.open(data_files).empty() && attempt < 20) continue;
        const int64_t version = hdf5::int_attribute(root, "format_version");
        for (const auto& label : hdf5::child_names(checkpoints)) {
          if (format::external_file_names(checkpoints.openGroup(label)).empty()) continue;
          const record::CheckpointData checkpoint =
              format::read_checkpoint(checkpoints.openGroup(label), source,
                                      "/" + std::string(format::kCheckpoints) + "/" + label, version, &files);
          format::write_checkpoint(checkpoints, label, checkpoint, source);
        }
      }
      const std::vector<char> image = image_of(file);
      // A log beside the target belongs to whatever was there before: it must not be read as the packed run's.
      fs::remove(log_path_for(target), status);
      if (status) {
        throw RunFileError(RunFileError::Kind::WriteFailed, log_path_for(target), "",
                           "cannot remove it (it would be read as part of " + target + "): " + status.message());
      }
      PackResult result;
      result.warning = replace_file_durably(target, temporary_for(target), image.data(), image.size());
      result.bytes = image.size();
      result.log_records = log.records.size();
      return result;
    } catch (const H5::Exception& error) {
      throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, source, "");
    }
  }
}

}  // namespace descentlab::store
