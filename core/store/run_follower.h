#pragma once
// RunFollower: follows a run file that another process writes, reading only what is new (issue 34, item 4).
// A writer's row commits append records to the run log (RUN.h5.log) and leave the run file alone; its folds
// (checkpoints, the end) put a new, small run file in place by rename (the checkpoints' tensors are in their own
// data files, core/store/checkpoint_files.h). So a poll stats the run file: the same version means only the log's
// bytes after the last whole record read are read and decoded; a new version (or the first poll) is read whole
// through a RunReader. The cost of a poll grows with what was committed since the last one, not with the run.
// Torch-free and Qt-free; one thread at a time.

#include <cstdint>
#include <memory>
#include <string>

#include "core/store/run_batch.h"
#include "core/store/run_reader.h"

namespace descentlab::store {

class RunFollower {
 public:
  explicit RunFollower(std::string path);

  struct Update {
    // Set when the run file is a new version (the first poll, or after a writer's fold): the run as it is now.
    std::unique_ptr<RunReader> whole;
    // Otherwise the log's records committed since the last poll, in order (empty: nothing new).
    RunBatch appended;
    size_t records = 0;       // records in `appended`
    uint64_t bytes_read = 0;  // of the log, this poll (0 for a whole read)
  };
  // Throws RunFileError as RunReader does (a damaged log names the record; the file missing is NotFound).
  Update poll();
  // The next poll reads the run whole (e.g. once its writer has let go, for the final state).
  void reset() { identity_.clear(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string identity_;  // device, inode, size and time of the run file version read; "" before the first read
  bool log_exists_ = false;
  int64_t log_base_ = 0;
  int64_t last_sequence_ = 0;  // the last record read (or the run file's log_sequence)
  uint64_t log_offset_ = 0;    // where the last whole record read ends
};

}  // namespace descentlab::store
