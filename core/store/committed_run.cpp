#include "core/store/committed_run.h"

#include <algorithm>
#include <filesystem>

#include "core/store/durable_file.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"

namespace descentlab::store {

CommittedRun::CommittedRun(std::string path) : path_(std::move(path)), checkpoints_(path_), log_(path_) {}

void CommittedRun::start_new(const RunHeader& header) {
  header_ = header;
  if (header_.run_id.empty()) header_.run_id = new_run_id();
  checkpoints_.set_run_id(header_.run_id);
}

void CommittedRun::read_header(const H5::H5File& file) {
  header_ = format::read_header(file, path_);
  upgrade_format_ = header_.format_version < kFormatVersion;
  header_.format_version = kFormatVersion;
  // A file from before identities gets one, written by its next commit (a fold, as for a format upgrade).
  if (header_.run_id.empty()) {
    header_.run_id = new_run_id();
    upgrade_format_ = true;
  }
  checkpoints_.set_run_id(header_.run_id);
}

void CommittedRun::read_contents(const H5::H5File& file) {
  const H5::Group checkpoints = file.openGroup(format::kCheckpoints);
  for (const auto& label : hdf5::child_names(checkpoints)) {
    checkpoints_.add(label, format::external_file_names(checkpoints.openGroup(label)));
  }
  if (hdf5::link_exists(file.getId(), format::kInputs)) {
    checkpoints_.keep(format::external_file_names(file.openGroup(format::kInputs)));
  }
  checkpoints_.remove_unused_files();
  for (const auto& name : hdf5::child_names(file.openGroup(format::kSweeps))) sweeps_.insert(name);
  folded_sequence_ = format::log_sequence(file);
}

void CommittedRun::continue_log(const RunLog& log) {
  sequence_ = std::max(folded_sequence_, log.last_sequence);
  file_bytes_ = static_cast<size_t>(std::filesystem::file_size(path_));
  log_.continue_after(log);
  file_exists_ = true;
  // No log, or one without a record (shorter than its header): a new one now, so that this writer holds a log (its
  // lock, core/store/run_lock.h) from the start. When that fails, the first commit folds and tries again.
  if (!log_.is_open() && (!log.exists || log.valid_length == 0)) {
    try {
      log_.start_new(folded_sequence_, header_.run_id);
    } catch (const RunFileError&) {
    }
  }
}

bool CommittedRun::needs_fold(const RunBatch& batch) const {
  const unsigned long long log_limit = std::max<unsigned long long>(16ull << 20, file_bytes_);
  return !file_exists_ || upgrade_format_ || !log_.is_open() || !batch.checkpoints.empty() ||
         !batch.dropped_checkpoints.empty() || batch.truncate_after.has_value() || log_.length() > log_limit;
}

void CommittedRun::append(const RunBatch& batch) {
  if (batch.metrics.empty() && batch.histograms.empty() && batch.sweeps.empty() && !batch.annotation) return;
  log_.append(sequence_ + 1, batch);
  ++sequence_;
}

void CommittedRun::note_sweeps(const RunBatch& batch) {
  for (const auto& entry : batch.sweeps) sweeps_.insert(entry.first);
}

std::string CommittedRun::fold(const RunBatch& batch) {
  std::string missing;
  const RunBatch logged =
      file_exists_ ? logged_since_fold(path_, folded_sequence_, header_.run_id, sequence_, &missing) : RunBatch{};
  const int64_t sequence = sequence_ + 1;
  // A rebuilt version writes the header afresh: with the newest annotation.
  if (logged.annotation) header_.annotation = *logged.annotation;
  if (batch.annotation) header_.annotation = *batch.annotation;
  std::string warning = write_version(logged, batch, sequence);
  // Committed: the run file holds every record up to `sequence`.
  file_exists_ = true;
  upgrade_format_ = false;
  folded_sequence_ = sequence_ = sequence;
  // The data files no label uses any more (a replaced "latest") go: the folder holds what the run file names.
  checkpoints_.replace(batch.checkpoints, sequence);
  checkpoints_.forget(batch.dropped_checkpoints);
  checkpoints_.remove_unused_files();
  // A new, empty log. If this fails the old one stays (RunLogAppender::start_new).
  try {
    const std::string log_warning = log_.start_new(sequence, header_.run_id);
    if (warning.empty()) warning = log_warning;
  } catch (const RunFileError& error) {
    if (warning.empty()) warning = std::string("committed, but a new log could not be started: ") + error.what();
  }
  return missing.empty() ? warning : missing;
}

std::string CommittedRun::write_version(const RunBatch& logged, const RunBatch& batch, int64_t sequence) {
  // The tensors go once into their own data file; the run file's new version, built in memory, holds only the rows
  // and the metadata, so its size does not grow with the checkpoints.
  // A new run of a user's module: the module's copy goes beside the file once, with the first version.
  std::string module_copy;
  if (!file_exists_ && header_.module_copy) {
    module_copy = write_module_copy(path_, header_.run_id, *header_.module_copy);
  }
  const auto remove_unnamed = [&](const CheckpointPlacements& placements) {
    std::error_code ignored;
    if (!placements.empty())
      std::filesystem::remove(checkpoint_file_path(path_, placements.begin()->second.name), ignored);
    if (!module_copy.empty()) std::filesystem::remove(checkpoint_file_path(path_, module_copy), ignored);
  };
  CheckpointPlacements placements;
  try {
    placements = write_checkpoint_data(path_, batch.checkpoints, sequence, header_.run_id);
    const std::vector<char> image = build_version(logged, batch, sequence, placements, module_copy);
    const std::string warning = replace_file_durably(path_, temporary_for(path_), image.data(), image.size());
    file_bytes_ = image.size();
    if (!module_copy.empty()) {
      checkpoints_.keep({module_copy});
      header_.module_copy.reset();  // on disk now: the memory goes
    }
    return warning;
  } catch (...) {
    remove_unnamed(placements);  // the data files no version will name
    throw;
  }
}

std::vector<char> CommittedRun::build_version(const RunBatch& logged, const RunBatch& batch, int64_t sequence,
                                              const CheckpointPlacements& placements,
                                              const std::string& module_copy) const {
  FileVersion version = start_version(logged, batch);
  if (!file_exists_) format::write_inputs(version.file(), header_, module_copy);
  if (upgrade_format_) version.upgrade_format(header_.run_id);
  version.set_log_sequence(sequence);
  // The log's records were committed before the batch (and before the cut it may carry).
  version.add_rows(logged);
  if (batch.truncate_after) version.truncate_series(*batch.truncate_after);
  version.add_rows(batch);
  version.write_checkpoints(batch.checkpoints, path_, placements);
  return version.finish();
}

FileVersion CommittedRun::start_version(const RunBatch& logged, const RunBatch& batch) const {
  // Roughly what this commit adds: its rows and the checkpoints' metadata (their tensors are in their data file).
  const size_t added_bytes =
      FileVersion::bytes_of_rows(logged) + FileVersion::bytes_of_rows(batch) + (64u << 10) * batch.checkpoints.size();
  if (!file_exists_) return FileVersion::new_file(header_, added_bytes);
  // A checkpoint or sweep replaced: the file is copied without the old one, so that its space is not carried along.
  std::set<std::string> replaced_checkpoints, replaced_sweeps;
  bool rebuild = false;
  for (const auto& entry : batch.checkpoints) {
    replaced_checkpoints.insert(entry.first);
    rebuild = rebuild || checkpoints_.contains(entry.first);
  }
  for (const auto& label : batch.dropped_checkpoints) {
    if (!checkpoints_.contains(label)) continue;
    replaced_checkpoints.insert(label);
    rebuild = true;
  }
  for (const RunBatch* part : {&logged, &batch}) {
    for (const auto& entry : part->sweeps) {
      replaced_sweeps.insert(entry.first);
      rebuild = rebuild || sweeps_.count(entry.first) > 0;
    }
  }
  if (rebuild) return FileVersion::rebuilt_without(path_, header_, replaced_checkpoints, replaced_sweeps, added_bytes);
  return FileVersion::from_image(read_whole_file(path_), added_bytes, "next");
}

void CommittedRun::remove_log_if_folded() {
  if (sequence_ == folded_sequence_) log_.close_and_remove();
}

}  // namespace descentlab::store
