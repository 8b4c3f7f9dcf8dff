#include "core/store/run_writer.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/record/checkpoint.h"
#include "core/store/committed_run.h"
#include "core/store/durable_file.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_log.h"
#include "core/util/number_text.h"

namespace descentlab::store {
namespace fs = std::filesystem;

namespace {

std::string parent_folder(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Removes "RUN.h5.tmp-<pid>" and "RUN.h5.log.tmp-<pid>" files (durable_file.h's temporary_for) left by writers that
// were killed mid-commit. Called with the run file's lock held, so no other writer is committing: every such file is
// abandoned.
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

// What a second writer is told the lock's holder is doing: this program's name and the writer's purpose.
std::string lock_purpose(const RunWriterOptions& options) {
  std::ifstream comm("/proc/self/comm");
  std::string program;
  std::getline(comm, program);
  if (program.empty()) program = "DescentLab";
  return options.purpose.empty() ? program : program + ": " + options.purpose;
}

using MetricWidths = std::map<std::string, int64_t>;
using HistogramEdges = std::map<std::string, std::vector<double>>;

// The widths and bin edges of the series in the run file `path`: they bind the rows to come. Every series the next
// commits copy or cut is checked first: a damaged one that claims billions of rows is refused here, naming it, not by
// an allocation in a commit.
void bind_series(const H5::H5File& file, const std::string& path, MetricWidths& widths, HistogramEdges& edges) {
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
    widths[name] = hdf5::int_attribute(metrics.openGroup(name), "width");
  }
  const H5::Group histograms = file.openGroup(format::kHistograms);
  for (const auto& name : hdf5::child_names(histograms)) {
    check_claims(histograms.openGroup(name), std::string("/") + format::kHistograms + "/" + name);
    edges[name] =
        hdf5::read_all<double>(histograms.openGroup(name).openDataSet("bin_edges"), H5::PredType::NATIVE_DOUBLE);
  }
}

// The same of the series in the log's records: they count as the file's.
void bind_series(const RunLog& log, MetricWidths& widths, HistogramEdges& edges) {
  for (const auto& record : log.records) {
    for (const auto& [name, rows] : record.batch.metrics) widths[name] = rows.width;
    for (const auto& [name, snapshots] : record.batch.histograms) edges[name] = snapshots.edges;
  }
}

}  // namespace

RunWriter::RunWriter(std::string path, const RunWriterOptions& options)
    : path_(std::move(path)),
      options_(options),
      pending_(std::make_unique<Pending>()),
      committed_(std::make_unique<CommittedRun>(path_)) {
  hdf5::quiet_library_errors();
}

std::unique_ptr<RunWriter> RunWriter::create(const std::string& path, const RunHeader& header,
                                             const RunWriterOptions& options) {
  // A new run's folder is made as loggers make theirs ("train --out runs/new/x.h5" said the lock file could not be
  // created); one that cannot be made is named.
  const fs::path folder = fs::path(path).parent_path();
  std::error_code made;
  if (!folder.empty() && !fs::is_directory(folder, made)) {
    fs::create_directories(folder, made);
    if (made || !fs::is_directory(folder)) {
      throw RunFileError(RunFileError::Kind::WriteFailed, path, "",
                         "cannot make its folder " + folder.string() + ": " +
                             (made ? made.message() : std::string("a file of that name is in the way")));
    }
  }
  auto lock = RunFileLock::acquire(path, lock_purpose(options));
  check_log_free(path);
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
  RunHeader stamped = header;
  if (stamped.created.empty()) stamped.created = utc_timestamp();
  writer->committed_->start_new(stamped);
  writer->flush();  // the file exists, complete, from the start
  writer->ready_ = true;
  writer->start_flusher();
  return writer;
}

void RunWriter::take_over_abandoned(const std::string& path, const RunWriterOptions& options) {
  std::error_code status;
  if (!fs::exists(path, status)) return;  // the reader says what is missing
  const auto lock = RunFileLock::acquire(path, lock_purpose(options));
  check_log_free(path);
  remove_abandoned_temporaries(path);
}

std::unique_ptr<RunWriter> RunWriter::open(const std::string& path, const RunWriterOptions& options) {
  auto lock = RunFileLock::acquire(path, lock_purpose(options));
  check_log_free(path);  // a writer whose lock file was deleted or replaced still holds its log
  // Before validating: a killed writer's temporaries go even when the file itself is then refused.
  remove_abandoned_temporaries(path);
  std::unique_ptr<RunWriter> writer(new RunWriter(path, options));
  writer->lock_ = std::move(lock);
  CommittedRun& committed = *writer->committed_;
  std::string file_run_id;  // "" in a file from before identities (the writer gives it one)
  try {
    H5::H5File file = format::open_validated(path, H5F_ACC_RDONLY);
    file_run_id = format::run_id_of(file);
    committed.read_header(file);
    bind_series(file, path, writer->metric_widths_, writer->histogram_edges_);
    committed.read_contents(file);
  } catch (const H5::Exception& error) {
    throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, path, "");
  }
  const RunLog log = read_run_log(path, committed.folded_sequence());
  check_log_follows(log, committed.folded_sequence(), file_run_id, path);
  bind_series(log, writer->metric_widths_, writer->histogram_edges_);
  committed.continue_log(log);
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
      committed_->remove_log_if_folded();
    } catch (const std::exception& error) {
      std::cerr << "descentlab: the rows recorded since the last commit are lost (the file keeps everything "
                   "committed before): "
                << error.what() << "\n";
    }
  }
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

void RunWriter::annotate(const RunAnnotation& annotation) {
  RunAnnotation checked = checked_annotation(annotation, path_);
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    pending_->annotation = std::move(checked);
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
      const std::string object = record::checkpoint_object(label, section, name);
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

void RunWriter::save_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint,
                                 const std::vector<std::string>& dropped) {
  if (labels.empty()) return;
  queue_checkpoints(labels, std::move(checkpoint), dropped);
  flush();
}

void RunWriter::queue_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint,
                                  const std::vector<std::string>& dropped) {
  for (const auto& label : labels) validate_checkpoint(label, checkpoint, path_);
  if (checkpoint.created.empty()) checkpoint.created = utc_timestamp();
  // Queued under one lock, so one commit writes every label (no file ever holds "best" without "latest") and lets
  // go of the dropped ones.
  std::lock_guard<std::mutex> lock(data_mutex_);
  for (const auto& label : dropped) {
    pending_->checkpoints.erase(label);
    pending_->dropped_checkpoints.insert(label);
  }
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

void RunWriter::commit(bool fold_log) {
  std::lock_guard<std::mutex> commit_lock(commit_mutex_);
  // A lock file deleted or replaced while this writer runs is made again (its log stays held meanwhile).
  const std::string lock_notice = lock_->keep_in_place();
  if (!lock_notice.empty()) notice(path_ + ": " + lock_notice);
  std::unique_ptr<Pending> batch;
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    batch = std::move(pending_);
    pending_ = std::make_unique<Pending>();
  }
  const bool unfolded = fold_log && committed_->has_unfolded_records();
  // Nothing to commit leaves the file as it is (a cancelled sweep writes nothing, not even a format upgrade).
  if (batch->empty() && committed_->file_exists() && !unfolded) return;
  // The end folds whatever it commits, so that a finished run is one file (its last rows not left in the log).
  const bool fold_now = fold_log || committed_->needs_fold(*batch);

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
      warning = committed_->fold(*batch);
      ++folds_;
    } else {
      committed_->append(*batch);
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
  committed_->note_sweeps(*batch);
  ++commits_;
  std::lock_guard<std::mutex> lock(data_mutex_);
  last_error_ = warning;
}

}  // namespace descentlab::store
