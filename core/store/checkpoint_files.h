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
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace descentlab::store {

// "RUN.h5.checkpoints": the folder of a run file's checkpoint data files.
std::string checkpoint_folder_for(const std::string& run_path);
// The name a run file stores for the data file of its commit `sequence`: "<RUN.h5's name>.checkpoints/<sequence>.bin".
std::string checkpoint_file_name(const std::string& run_path, int64_t sequence);
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

// The data files in `run_path`'s checkpoint folder whose names are not in `referenced` (stored names) are removed,
// and the folder too when nothing is left in it. Called with the run file's lock held.
void remove_unreferenced_checkpoint_files(const std::string& run_path, const std::set<std::string>& referenced);

}  // namespace descentlab::store
