#pragma once
// Checkpoint data files (format 5; internal to core/store). A commit with checkpoints writes their tensors once, one
// after another, into a raw file beside the run file, RUN.h5.checkpoints/<sequence>.bin (pwrite + fdatasync, as
// torch::save writes each tensor once), and the run file describes every tensor as an HDF5 dataset with external
// storage: the data file's name relative to the run file's folder, an offset and a size, with the same checksums as
// before. A later commit rewrites only the run file (metadata and rows), never the tensors. Readers read the bytes
// themselves (pread) from the folder beside the run file, whatever folder their process works in; h5py reads them
// with HDF5_EXTFILE_PREFIX='${ORIGIN}' (docs/run-file.md).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/record/checkpoint.h"

namespace descentlab::store {

// "RUN.h5.checkpoints": the folder of a run file's checkpoint data files.
std::string checkpoint_folder_for(const std::string& run_path);
// The name a run file stores for the data file of its commit `sequence`:
// "<RUN.h5's name>.checkpoints/<sequence>-<run id>.bin" (core/store/run_file.h's run_id; "<sequence>.bin" before
// identities, and for a run without one). The identity in the name keeps two runs whose folders are one (a symlink)
// from writing over each other's files, and tells a writer which files are its own to remove.
std::string checkpoint_file_name(const std::string& run_path, int64_t sequence, const std::string& run_id);
// The name a run file stores for its copy of a user's module (issue 53): "<RUN.h5's name>.checkpoints/module-<run
// id>.bin", written once at the run's first commit and kept as long as the run.
std::string module_copy_file_name(const std::string& run_path, const std::string& run_id);
// Writes `bytes` durably as the module copy of the run `run_path` (write_file_durably, the folder made if missing)
// and returns its stored name. Throws RunFileError(WriteFailed) naming `run_path`, with nothing left behind.
std::string write_module_copy(const std::string& run_path, const std::string& run_id, const std::string& bytes);
// Where a stored name is on disk: the last part of the name in the run file's checkpoint folder (so a run renamed
// together with its folder still reads).
std::string checkpoint_file_path(const std::string& run_path, const std::string& stored_name);

// The data files of one version of a run file. A reader opens them together with the run file and keeps them open:
// a writer that meanwhile replaces "latest" and removes the old data file does not take it from under the reader.
class CheckpointFiles {
 public:
  explicit CheckpointFiles(std::string run_path);
  ~CheckpointFiles();
  CheckpointFiles(const CheckpointFiles&) = delete;
  CheckpointFiles& operator=(const CheckpointFiles&) = delete;

  // Opens the files `stored_names` name; returns the names of those that do not exist.
  std::vector<std::string> open(const std::set<std::string>& stored_names);
  // Reads `size` bytes at `offset` of the file stored as `stored_name` (opened now if open() did not) into `into`,
  // after checking that the file holds them, so a forged size allocates nothing. Throws RunFileError(Corrupt or
  // NotFound) naming the run file, `object` and the data file.
  void read(const std::string& stored_name, uint64_t offset, uint64_t size, const std::string& object,
            std::vector<uint8_t>& into);

 private:
  int descriptor_for(const std::string& stored_name);  // -1 when missing (errno kept)
  std::string run_path_;
  std::mutex mutex_;
  std::map<std::string, int> descriptors_;  // by path
};

// Removes the data files in `run_path`'s checkpoint folder that are this run's and not in `referenced` (stored
// names): those whose names carry `run_id` (a replaced checkpoint's, a killed writer's) and those in `known` (names
// the run file itself stored, from before identities). Files of any other name stay: the folder may be shared with
// another run (a symlink). The folder goes too when nothing is left in it. Called with the run file's lock held.
void remove_unreferenced_checkpoint_files(const std::string& run_path, const std::set<std::string>& referenced,
                                          const std::string& run_id, const std::set<std::string>& known);

// Where a checkpoint's tensors were written in a data file: the file's stored name, the offset of its first tensor
// (the others follow in tensors_in_order's order, without gaps), and the sections' checksums
// (core/store/checkpoint_checksums.h), computed while the data file was written.
struct ExternalPlacement {
  std::string name;
  uint64_t offset = 0;
  std::map<std::string, std::string> section_sums;
};
// A checkpoint's tensors in the order a data file holds them: sections by name, tensors by name. Empty tensors
// are stored in the run file itself and are left out.
std::vector<const record::TensorBlob*> tensors_in_order(const record::CheckpointData& checkpoint);

// Checkpoints by label, as a commit stores them: one checkpoint under several labels is one shared copy.
using LabelledCheckpoints = std::map<std::string, std::shared_ptr<const record::CheckpointData>>;
// Where each checkpoint of a commit went (write_checkpoint_data), by checkpoint.
using CheckpointPlacements = std::map<const record::CheckpointData*, ExternalPlacement>;

// Writes the tensors of `checkpoints` (a checkpoint under several labels once) into the data file of the commit
// `sequence` of the run file `run_path`, durably (core/store/durable_file.h: the folder made if missing, the file
// synced), summing their sections on another thread meanwhile; returns where each went. Nothing is written when
// there are no checkpoints. On failure the data file is removed and RunFileError(WriteFailed) names `run_path`.
CheckpointPlacements write_checkpoint_data(const std::string& run_path, const LabelledCheckpoints& checkpoints,
                                           int64_t sequence, const std::string& run_id);

// The checkpoints a run file holds, each with the data files its tensors are in (none for a checkpoint stored in the
// run file itself, as formats before 5 did): what its writer keeps, under its commit lock, so that the folder holds
// only the data files the run file names.
class StoredCheckpoints {
 public:
  explicit StoredCheckpoints(std::string run_path);
  void set_run_id(const std::string& run_id) { run_id_ = run_id; }
  // A checkpoint the run file holds when the writer opens it.
  void add(const std::string& label, std::set<std::string> data_files);
  bool contains(const std::string& label) const { return data_files_.count(label) > 0; }
  // A data file the run file names outside its checkpoints (the module copy under /inputs): kept as long as the run.
  void keep(const std::set<std::string>& data_files);
  // The checkpoints the commit `sequence` stored, each in that commit's data file (when it has tensors), replacing
  // any earlier one of their label.
  void replace(const LabelledCheckpoints& checkpoints, int64_t sequence);
  // Checkpoints the commit let go (RunBatch::dropped_checkpoints): their data files become unused.
  void forget(const std::set<std::string>& labels) {
    for (const auto& label : labels) data_files_.erase(label);
  }
  // Removes this run's data files no checkpoint uses (a replaced "latest", a commit that never landed).
  void remove_unused_files() const;

 private:
  std::string run_path_;
  std::string run_id_;
  std::map<std::string, std::set<std::string>> data_files_;  // by label
  std::set<std::string> known_;                              // every data file the run file has named
  std::set<std::string> kept_;                               // named outside the checkpoints (keep)
};

}  // namespace descentlab::store
