#pragma once
// The staging folders of `data fetch` (core/data/fetch.h): ROOT/NAME.fetch-XXXXXX beside the dataset's place, each
// holding a file `owner.lock` that its fetch keeps locked (flock) while it runs, with the fetch's pid and host in it
// for a person. The kernel releases the lock when the process ends however it ends (SIGKILL, a crash, a power cut),
// so a staging folder whose lock can be taken is a killed fetch's, and the next fetch removes it; a live fetch's
// folder is never touched. The data folder's own lock (ROOT/.fetch.lock) is held while a staging folder is created
// and locked and while abandoned ones are looked for, so no folder is judged between its creation and its lock.

#include <filesystem>
#include <string>
#include <vector>

namespace descentlab::data {

// The staging folders in `root` of the datasets named `datasets` ("imdb" -> imdb.fetch-XXXXXX) whose fetch has
// ended: their lock can be taken, or they have none (a fetch of an older DescentLab). A folder that cannot be judged
// (a lock that cannot be opened, a file system without locks) is left out.
std::vector<std::filesystem::path> abandoned_staging(const std::string& root, const std::vector<std::string>& datasets);

class StagingFolder {
 public:
  // Removes the abandoned staging folders of `datasets` in `root` (what abandoned_staging() finds), then creates and
  // locks root/NAME.fetch-XXXXXX. Throws IoError naming `root` when it cannot be created.
  StagingFolder(const std::string& root, const std::string& name, const std::vector<std::string>& datasets);
  ~StagingFolder();  // removes the folder and what is left in it, then unlocks it
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The abandoned folders this one's creation removed.
  const std::vector<std::filesystem::path>& removed() const { return removed_; }

 private:
  std::filesystem::path path_;
  int lock_ = -1;  // owner.lock, locked while this object lives
  std::vector<std::filesystem::path> removed_;
};

}  // namespace descentlab::data
