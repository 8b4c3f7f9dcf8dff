#pragma once
// CommittedRun (internal to core/store): what one writer has committed of a run, and how a commit adds to it. It
// knows the run file's current version (whether it exists yet, its format, its log_sequence, its checkpoints with
// their data files, its sweeps, its size) and holds its log, RUN.h5.log, open for appending. A commit either appends
// one record to the log (core/store/run_log.h), or folds: the batch's checkpoints' tensors go into their data file
// (core/store/checkpoint_files.h), the next version of the run file is built in memory from the committed one, the
// log's records and the batch (core/store/file_version.h) and put in place durably, and a new log is started.
// RunWriter (core/store/run_writer.h) holds one and uses it under its commit mutex only.

#include <H5Cpp.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/store/checkpoint_files.h"
#include "core/store/file_version.h"
#include "core/store/run_batch.h"
#include "core/store/run_file.h"
#include "core/store/run_log.h"

namespace descentlab::store {

class CommittedRun {
 public:
  explicit CommittedRun(std::string path);

  // A new run: nothing is on disk yet; its first commit folds, writing the file with `header`.
  void start_new(const RunHeader& header);
  // An existing run, from its file (opened and validated): its header, and whether it is of an older format, which
  // its next commit upgrades to this build's (its series keep the words they were written with, which this version
  // still reads).
  void read_header(const H5::H5File& file);
  // Then its checkpoints and their data files (data files of commits that never landed, a writer killed before its
  // rename, are removed), its sweeps and the last log record it holds.
  void read_contents(const H5::H5File& file);
  // Then its log, read after the file's own records (and checked to continue it): the last record committed, and the
  // log continued after its last whole record.
  void continue_log(const RunLog& log);

  const RunHeader& header() const { return header_; }
  bool file_exists() const { return file_exists_; }
  int64_t folded_sequence() const { return folded_sequence_; }
  // Whether the log holds records the run file does not.
  bool has_unfolded_records() const { return sequence_ > folded_sequence_; }
  // Whether committing `batch` takes a fold: the first commit, a format upgrade, no open log, checkpoints, a cut, or a
  // log grown past the run file (and 16 MB), so that each fold rewrites at most about as much as the log added since
  // the last and the cost of a row stays bounded however long the run.
  bool needs_fold(const RunBatch& batch) const;

  // Appends the batch's rows, snapshots and sweeps to the log as the next record (nothing when it has none). Throws
  // RunFileError, with nothing committed.
  void append(const RunBatch& batch);
  // Folds the log's records and the batch into the run file's next version and starts a new log. Returns a warning
  // ("" when all went well): the folder sync failed after the rename, a new log could not be started, or the log had
  // lost records. Throws with the run file as it was and its new data file removed.
  std::string fold(const RunBatch& batch);
  // The batch's sweeps are in the run file or its log now (after a commit of either kind).
  void note_sweeps(const RunBatch& batch);
  // At the end: when every record is in the run file, the log goes, so that a closed run is one file.
  void remove_log_if_folded();

 private:
  // Writes the batch's data file and the run file's version `sequence`, durably; returns a warning.
  std::string write_version(const RunBatch& logged, const RunBatch& batch, int64_t sequence);
  // `module_copy`: the stored name of a new run's module copy, which its first version names ("" when none).
  std::vector<char> build_version(const RunBatch& logged, const RunBatch& batch, int64_t sequence,
                                  const CheckpointPlacements& placements, const std::string& module_copy) const;
  FileVersion start_version(const RunBatch& logged, const RunBatch& batch) const;

  std::string path_;
  RunHeader header_;             // for a new file, and for a rebuilt one
  bool file_exists_ = false;     // false until the first fold of a new run
  bool upgrade_format_ = false;  // a file of an older format_version: the next fold writes this one
  StoredCheckpoints checkpoints_;
  std::set<std::string> sweeps_;  // in the run file, or committed to its log by this writer
  size_t file_bytes_ = 0;         // the run file's size at the last fold
  int64_t folded_sequence_ = 0;   // the run file's log_sequence: the last log record it holds
  int64_t sequence_ = 0;          // the last record committed, in the run file or the log
  RunLogAppender log_;
};

}  // namespace descentlab::store
