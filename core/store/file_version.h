#pragma once
// FileVersion (internal to core/store): a run file's next version, built in memory and handed out as its bytes. It
// starts as a new file, as the committed file's bytes, or as a copy of the committed file without the checkpoints and
// sweeps about to be replaced (so their space is not carried along); the log's records and a commit's batch are then
// added to it. The writer's fold (core/store/committed_run.h) and pack_run (core/store/pack_run.h) both build theirs
// here. Nothing is written to disk: the caller puts the bytes in place (core/store/durable_file.h).
//
// The file lives in HDF5's core driver without a backing store, so every disk operation is one the caller checks, and
// no HDF5 close can fail on a full disk and leave a half-closed file for the library's shutdown.

#include <H5Cpp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/store/checkpoint_files.h"
#include "core/store/run_batch.h"
#include "core/store/run_file.h"

namespace descentlab::store {

class FileVersion {
 public:
  // A new run file: `header` and the four top-level groups. `expected_bytes` sizes the driver's growth step, so that
  // the whole version takes one or two steps, not a reallocation (and a copy of everything so far) per megabyte.
  static FileVersion new_file(const RunHeader& header, size_t expected_bytes);
  // The committed file's bytes, to add to (`role` names the in-memory file: "next", "packed").
  static FileVersion from_image(const std::vector<char>& committed, size_t added_bytes, const char* role);
  // A copy of the run file `path` with `header`, without the checkpoints and sweeps named. Reads from the disk only
  // the objects it copies (a replaced checkpoint, often most of the file, is never read).
  static FileVersion rebuilt_without(const std::string& path, const RunHeader& header,
                                     const std::set<std::string>& checkpoints, const std::set<std::string>& sweeps,
                                     size_t added_bytes);

  H5::H5File& file() { return file_; }
  // This build's format_version, the run's identity (a file from before identities gets one), and the checkpoints
  // from before checksums marked as such (format::mark_unsummed): sums are never computed over unchecked bytes.
  void upgrade_format(const std::string& run_id);
  // The root attribute log_sequence: the last log record the version holds.
  void set_log_sequence(int64_t sequence);
  // Appends a batch's rows and snapshots to the series, stores its sweeps (replacing those of the name) and its
  // annotation (replacing the one before).
  void add_rows(const RunBatch& part);
  // Drops the rows and snapshots with step > `last_step`.
  void truncate_series(int64_t last_step);
  // Stores each checkpoint under its label (replacing an earlier one), its tensors in the data file `placements`
  // says (`path` names the run file in errors).
  void write_checkpoints(const LabelledCheckpoints& checkpoints, const std::string& path,
                         const CheckpointPlacements& placements);
  // The version's bytes; the file is closed.
  std::vector<char> finish();

  // Roughly what a batch's rows add to a file.
  static size_t bytes_of_rows(const RunBatch& part);

 private:
  explicit FileVersion(H5::H5File file) : file_(std::move(file)) {}
  H5::H5File file_;
};

}  // namespace descentlab::store
