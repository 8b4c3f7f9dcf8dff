#pragma once
// The run log (internal to core/store): RUN.h5.log beside a run file takes the commits that only add rows,
// histogram snapshots and sweeps, so that such a commit costs an append and an fsync of what it adds, not a rewrite
// of the run file (with its checkpoints). The run file records in its root attribute "log_sequence" the last record
// it holds; the writer folds the log into the run file at checkpoints and at the end (docs/run-file.md).
//
// Layout, little-endian: a 32-byte header ("DLRUNLOG", version 1, 4 zero bytes, the base sequence: the run file's
// log_sequence when this log was started, a CRC-32 of the first 24 bytes, 4 zero bytes), then records:
//   u32 marker "LOGR" | u32 type (1: a batch) | i64 sequence | u64 length | u32 CRC-32 of type..length |
//   payload | u32 CRC-32 of type..payload.
// One commit is one record, so a reader sees a commit whole or not at all.

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/run_batch.h"

namespace descentlab::store {

inline constexpr size_t kLogHeaderBytes = 32;

std::string log_path_for(const std::string& run_path);

struct RunLog {
  struct Record {
    int64_t sequence = 0;
    RunBatch batch;  // rows, snapshots and sweeps
  };
  bool exists = false;
  int64_t base_sequence = 0;
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

std::vector<char> encode_log_header(int64_t base_sequence);
// The record of one commit: its metric rows, histogram snapshots and sweeps (not checkpoints or cuts).
std::vector<char> encode_log_record(int64_t sequence, const RunBatch& batch);

}  // namespace descentlab::store
