#pragma once
// The run log (internal to core/store): RUN.h5.log beside a run file takes the commits that only add rows,
// histogram snapshots and sweeps, so that such a commit costs an append and an fsync of what it adds, not a rewrite
// of the run file (with its checkpoints). The run file records in its root attribute "log_sequence" the last record
// it holds; the writer folds the log into the run file at checkpoints and at the end (docs/run-file.md).
//
// Layout, little-endian: a 48-byte header ("DLRUNLOG", version 2, 4 zero bytes, the base sequence: the run file's
// log_sequence when this log was started, the run's identity as 16 bytes (RunHeader::run_id), a CRC-32 of the first
// 40 bytes, 4 zero bytes), then records (version 1, still read, had a 32-byte header without the identity):
//   u32 marker "LOGR" | u32 type (1: a batch; 2: a batch and a person's annotation of the run) | i64 sequence | u64
//   length | u32 CRC-32 of type..length | payload | u32 CRC-32 of type..payload.
// One commit is one record, so a reader sees a commit whole or not at all.

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/run_batch.h"

namespace descentlab::store {

inline constexpr size_t kLogHeaderBytes = 48;  // this version's

std::string log_path_for(const std::string& run_path);

struct RunLog {
  struct Record {
    int64_t sequence = 0;
    RunBatch batch;  // rows, snapshots and sweeps
  };
  bool exists = false;
  int64_t base_sequence = 0;
  std::string run_id;           // of the run that wrote it; "" in a version-1 log
  std::vector<Record> records;  // in order, only those after `after_sequence`
  int64_t last_sequence = 0;    // of the last whole record (base_sequence when there is none)
  uint64_t valid_length = 0;    // where the last whole record ends
  uint64_t file_length = 0;     // more than valid_length when a record is cut short at the end
};

// Reads the log of `run_path`; a missing log is an empty one (exists = false). A record cut short at the end (a
// commit being written now, or by a writer that died) is left out. Damaged bytes before the end are
// RunFileError(Corrupt) naming the log file and the record's offset: records are never silently skipped.
RunLog read_run_log(const std::string& run_path, int64_t after_sequence);
// The same from byte `from` of the log on: a record boundary an earlier read of this log ended at (its
// valid_length), with `after_sequence` the last sequence that read saw. Reads the header and only the bytes after
// `from`, so a reader following a run pays for what was appended, not for the whole log. The caller checks that the
// log's base_sequence is still the one it read (a fold starts a new log).
RunLog read_run_log_from(const std::string& run_path, int64_t after_sequence, uint64_t from);

// A log must continue the run file beside it: it is the same run's (its identity is the file's `run_id`, when both
// have one: a log copied from another run is refused naming both) and its base sequence is at most the file's
// log_sequence (a larger one means the log belongs to a newer version of the file). Throws RunFileError(Corrupt)
// otherwise.
void check_log_follows(const RunLog& log, int64_t folded_sequence, const std::string& run_id, const std::string& path);
// The rows, snapshots and sweeps of the log's records, merged in order into one batch (the records are emptied).
RunBatch merge_records(RunLog& log);
// The log's records after the run file's own (`folded_sequence`), merged, for a writer that committed up to
// `last_committed`: `*missing` says so when the log no longer holds every one of them (deleted or replaced by another
// program). Throws RunFileError when the log is damaged or does not continue the run file.
RunBatch logged_since_fold(const std::string& run_path, int64_t folded_sequence, const std::string& run_id,
                           int64_t last_committed, std::string* missing);

std::vector<char> encode_log_header(int64_t base_sequence, const std::string& run_id);
// The record of one commit: its metric rows, histogram snapshots and sweeps (not checkpoints or cuts).
std::vector<char> encode_log_record(int64_t sequence, const RunBatch& batch);

// The writer's end of a run log: RUN.h5.log open for appending, one fsynced record per commit of rows. Its writer
// uses it under its commit lock (core/store/committed_run.h). A log that is not open makes the next commit fold and
// start a new one.
class RunLogAppender {
 public:
  explicit RunLogAppender(std::string run_path);
  ~RunLogAppender();
  RunLogAppender(const RunLogAppender&) = delete;
  RunLogAppender& operator=(const RunLogAppender&) = delete;

  bool is_open() const { return descriptor_ >= 0; }
  unsigned long long length() const { return length_; }  // where the next record goes
  // Continues the log a writer read when it opened the run: the next record follows its last whole one, and a record
  // cut short at the end (its writer died mid-commit) is cut off. The log stays closed when it does not exist, cannot
  // be opened or cannot be cut.
  void continue_after(const RunLog& log);
  // Appends the record of commit `sequence` and fsyncs it. On failure the log is cut back to where it was (and closed
  // when that fails, so that the next commit folds and no later record follows the failed one's bytes) and
  // RunFileError(WriteFailed) names the run file.
  void append(int64_t sequence, const RunBatch& batch);
  // Replaces the log, durably, by a new, empty one that continues version `base_sequence` of the run file, and opens
  // it. Returns a warning ("" when all went well; else the folder sync failed after the rename). Throws RunFileError
  // when it cannot be written: the old log then stays open as it was (its records are all folded, which readers skip,
  // and new records follow them with higher sequences).
  std::string start_new(int64_t base_sequence, const std::string& run_id);
  // Closes the log and removes it: every record is in the run file (if the removal is lost in a crash, the log left
  // holds only folded records, which readers skip).
  void close_and_remove();

 private:
  void reopen();  // opens the log file for appending at length_; not open when it cannot be opened
  void close();
  std::string run_path_;
  int descriptor_ = -1;
  unsigned long long length_ = 0;
};

}  // namespace descentlab::store
