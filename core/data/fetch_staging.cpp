#include "core/data/fetch_staging.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/util/error.h"

namespace descentlab::data {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOwnerLock = "owner.lock";
constexpr const char* kDataFolderLock = ".fetch.lock";
constexpr const char* kStagingInfix = ".fetch-";
constexpr size_t kUniqueLength = 6;  // mkdtemp's XXXXXX

// A file descriptor, closed when it goes out of scope (and with it any flock it holds).
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  Descriptor(Descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Descriptor& operator=(Descriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// flock(2), again when a signal interrupts it.
int lock(int fd, int operation) {
  int result = 0;
  do {
    result = ::flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

// NAME.fetch-XXXXXX for one of `datasets`, XXXXXX as mkdtemp makes it (letters and digits).
bool is_staging_name(const std::string& file, const std::vector<std::string>& datasets) {
  for (const auto& name : datasets) {
    const std::string prefix = name + kStagingInfix;
    if (file.size() != prefix.size() + kUniqueLength || file.compare(0, prefix.size(), prefix) != 0) continue;
    return std::all_of(file.begin() + static_cast<std::ptrdiff_t>(prefix.size()), file.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  }
  return false;
}

enum class Owner { Gone, Running, Unknown };

// Whether the fetch that made `folder` still runs: it holds the lock on folder/owner.lock while it does.
Owner owner_of(const fs::path& folder) {
  const Descriptor owner(::open((folder / kOwnerLock).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (owner.get() < 0) return errno == ENOENT ? Owner::Gone : Owner::Unknown;  // none: an older DescentLab's
  if (lock(owner.get(), LOCK_EX | LOCK_NB) == 0) return Owner::Gone;           // released when `owner` closes
  return errno == EWOULDBLOCK ? Owner::Running : Owner::Unknown;
}

// ROOT/.fetch.lock, locked; an empty Descriptor where it cannot be (a file system without locks: then no staging
// folder is judged). Its holders hold it only while they create or look for staging folders.
Descriptor lock_data_folder(const std::string& root) {
  Descriptor file(::open((fs::path(root) / kDataFolderLock).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (file.get() < 0 || lock(file.get(), LOCK_EX) != 0) return Descriptor();
  return file;
}

// "pid 4242 on host lab-3": who holds a staging folder, for a person who finds one.
std::string owner_text() {
  char host[256] = "";
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return "pid " + std::to_string(::getpid()) + " on host " + host + " (data fetch)\n";
}

}  // namespace

std::vector<fs::path> abandoned_staging(const std::string& root, const std::vector<std::string>& datasets) {
  std::vector<fs::path> abandoned;
  std::error_code error;
  for (fs::directory_iterator at(root, error), end; !error && at != end; at.increment(error)) {
    const fs::path folder = at->path();
    if (!is_staging_name(folder.filename().string(), datasets)) continue;
    std::error_code kind_error;
    if (!fs::is_directory(fs::symlink_status(folder, kind_error))) continue;  // never a link's target
    if (owner_of(folder) == Owner::Gone) abandoned.push_back(folder);
  }
  return abandoned;
}

StagingFolder::StagingFolder(const std::string& root, const std::string& name,
                             const std::vector<std::string>& datasets) {
  const Descriptor data_folder = lock_data_folder(root);
  if (data_folder.get() >= 0) {
    for (const auto& folder : abandoned_staging(root, datasets)) {
      std::error_code error;
      fs::remove_all(folder, error);
      if (!error) removed_.push_back(folder);
    }
  }
  std::string pattern = (fs::path(root) / (name + kStagingInfix + std::string(kUniqueLength, 'X'))).string();
  if (!::mkdtemp(pattern.data())) {
    throw IoError(root, "cannot create a staging folder for " + name + ": " + std::strerror(errno) +
                            " (is the data folder writable?)");
  }
  Descriptor owner(
      ::open((fs::path(pattern) / kOwnerLock).c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (owner.get() < 0) {
    const std::string reason = std::strerror(errno);
    std::error_code ignored;
    fs::remove_all(pattern, ignored);
    throw IoError(pattern + "/" + kOwnerLock, "cannot create the staging folder's lock: " + reason);
  }
  // A new file nobody else has opened. Where the file system gives no locks, no fetch can judge the folder (the
  // data folder's lock fails there too), so it is kept: never taken for a killed fetch's.
  lock(owner.get(), LOCK_EX | LOCK_NB);
  const std::string who = owner_text();
  if (::write(owner.get(), who.data(), who.size()) < 0) {
    // for a person only: the lock, not the text, says whether the fetch runs
  }
  path_ = pattern;
  lock_ = owner.release();
}

StagingFolder::~StagingFolder() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);  // still locked: no other fetch judges it meanwhile
  if (lock_ >= 0) ::close(lock_);
}

}  // namespace descentlab::data
