#include "core/store/durable_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "core/store/run_file.h"

namespace descentlab::store {
namespace fs = std::filesystem;

namespace fault {
namespace {

std::mutex& fault_mutex() {
  static std::mutex mutex;
  return mutex;
}

struct PendingFault {
  int error_number = 0;
  int skip = 0;  // calls to let pass first
};

std::array<PendingFault, 5>& pending_faults() {
  static std::array<PendingFault, 5> faults{};
  return faults;
}

}  // namespace

void inject(Point point, int error_number, int skip) {
  std::lock_guard<std::mutex> lock(fault_mutex());
  pending_faults()[static_cast<size_t>(point)] = {error_number, skip};
}

void clear() {
  std::lock_guard<std::mutex> lock(fault_mutex());
  pending_faults().fill(PendingFault{});
}

// The injected errno for `point` (consumed), or 0.
int take(Point point) {
  std::lock_guard<std::mutex> lock(fault_mutex());
  PendingFault& pending = pending_faults()[static_cast<size_t>(point)];
  if (pending.error_number == 0) return 0;
  if (pending.skip > 0) {
    --pending.skip;
    return 0;
  }
  const int error_number = pending.error_number;
  pending = PendingFault{};
  return error_number;
}

}  // namespace fault

namespace {

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

bool disk_full(int error_number) {
  return error_number == ENOSPC || error_number == EDQUOT || error_number == EFBIG;
}

// Makes a system call unless a failure is injected at `point`: then the call is not made and it "fails" with the
// injected errno, as the kernel would have failed it (fault::kKill kills the process there instead).
template <typename Call>
long long call_at(fault::Point point, Call call) {
  const int injected = fault::take(point);
  if (injected == fault::kKill) ::raise(SIGKILL);
  if (injected != 0) {
    errno = injected;
    return -1;
  }
  return static_cast<long long>(call());
}

[[noreturn]] void fail(const std::string& target, const std::string& message) {
  throw RunFileError(RunFileError::Kind::WriteFailed, target, "", message);
}

[[noreturn]] void fail_with_errno(const std::string& target, const std::string& temporary, size_t size,
                                  const std::string& what, int error_number) {
  if (disk_full(error_number)) {
    const std::string folder = folder_of(target);
    const long long free_now = free_bytes_in(folder);
    fail(target, "the disk is full: this commit needs " + megabytes_text(static_cast<long long>(size)) + " in " +
                     folder + (free_now >= 0 ? ", which has " + megabytes_text(free_now) + " free" : "") + " (" +
                     std::strerror(error_number) + " while " + what + "); the run file still holds its last commit");
  }
  fail(target, "could not " + what + " " + temporary + ": " + std::strerror(error_number) +
                   "; the run file still holds its last commit");
}

}  // namespace

std::string megabytes_text(long long bytes) {
  char text[48];
  if (bytes < 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f KB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return text;
}

long long free_bytes_in(const std::string& folder) {
  struct statvfs info {};
  if (::statvfs(folder.c_str(), &info) != 0) return -1;
  return static_cast<long long>(info.f_bavail) * static_cast<long long>(info.f_frsize);
}

std::vector<char> read_whole_file(const std::string& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    const int error_number = errno;
    throw RunFileError(error_number == ENOENT ? RunFileError::Kind::NotFound : RunFileError::Kind::WriteFailed, path,
                       "", std::string("cannot open it to add to it: ") + std::strerror(error_number));
  }
  struct stat info {};
  std::vector<char> bytes(::fstat(descriptor, &info) == 0 ? static_cast<size_t>(info.st_size) : 0);
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) bytes.resize(std::max<size_t>(bytes.size() * 2, 1 << 16));  // it grew meanwhile
    const ssize_t got = ::read(descriptor, bytes.data() + filled, bytes.size() - filled);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error_number = errno;
      ::close(descriptor);
      throw RunFileError(RunFileError::Kind::WriteFailed, path, "",
                         std::string("read error: ") + std::strerror(error_number));
    }
    filled += static_cast<size_t>(got);
  }
  ::close(descriptor);
  bytes.resize(filled);
  return bytes;
}

void append_durably(int descriptor, unsigned long long offset, const char* data, size_t size, const std::string& target,
                    const std::string& file, bool* cut_back) {
  *cut_back = true;
  const auto abandon = [&](const std::string& what, int error_number) {
    *cut_back = ::ftruncate(descriptor, static_cast<off_t>(offset)) == 0;
    fail_with_errno(target, file, size, what, error_number);
  };
  size_t written = 0;
  while (written < size) {
    const long long put = call_at(fault::Point::Write, [&] {
      return ::pwrite(descriptor, data + written, size - written, static_cast<off_t>(offset + written));
    });
    if (put < 0) {
      if (errno == EINTR) continue;
      abandon("append to", errno);
    }
    written += static_cast<size_t>(put);
  }
  if (call_at(fault::Point::Fsync, [&] { return ::fdatasync(descriptor); }) != 0) abandon("sync", errno);
}

namespace {

// fsyncs `folder` (fault point SyncFolder); returns errno, 0 when it went well or the file system cannot sync folders.
int sync_folder(const std::string& folder) {
  const int folder_descriptor = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_descriptor < 0) return errno;
  const long long synced = call_at(fault::Point::SyncFolder, [&] { return ::fsync(folder_descriptor); });
  const int error_number = errno;
  ::close(folder_descriptor);
  return synced != 0 && error_number != EINVAL ? error_number : 0;
}

}  // namespace

void make_folder_durably(const std::string& target, const std::string& folder) {
  if (::mkdir(folder.c_str(), 0755) != 0) {
    if (errno == EEXIST && fs::is_directory(folder)) return;
    fail(target, "could not create the folder " + folder + ": " + std::strerror(errno) +
                     "; the run file still holds its last commit");
  }
  const int error_number = sync_folder(folder_of(folder));
  if (error_number != 0) {
    fail(target, "could not sync the folder " + folder_of(folder) + " after creating " + folder + ": " +
                     std::strerror(error_number) + "; the run file still holds its last commit");
  }
}

namespace {

// Creates `file` (after removing any old one), writes `pieces` one after another, syncs it (fdatasync or fsync)
// and closes it, checking each call; a full disk is refused before any byte is written when the folder says so.
// On failure `file` is removed and RunFileError(WriteFailed) is thrown naming `target`. Returns the bytes written.
size_t write_synced_file(const std::string& target, const std::string& file, const std::vector<FilePiece>& pieces,
                         bool data_only) {
  size_t size = 0;
  for (const auto& piece : pieces) size += piece.size;
  const std::string folder = folder_of(file);
  std::error_code ignored;
  fs::remove(file, ignored);
  // The old version stays until the commit is done, so the new bytes need their whole size free beside it.
  const long long free_before = free_bytes_in(folder);
  if (free_before >= 0 && static_cast<unsigned long long>(free_before) < size) {
    fail(target, "the disk is full: this commit needs " + megabytes_text(static_cast<long long>(size)) + " in " +
                     folder + ", which has " + megabytes_text(free_before) +
                     " free; the run file still holds its last commit");
  }
  const int descriptor = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (descriptor < 0) fail_with_errno(target, file, size, "create", errno);
  const auto abandon = [&](const std::string& what, int error_number) {
    ::close(descriptor);
    fs::remove(file, ignored);
    fail_with_errno(target, file, size, what, error_number);
  };
  // Reserving the blocks first turns a full disk into one clear failure before any byte is written.
  const int reserved = size > 0 ? ::posix_fallocate(descriptor, 0, static_cast<off_t>(size)) : 0;
  if (reserved != 0 && reserved != EOPNOTSUPP && reserved != EINVAL) abandon("reserve space for", reserved);
  unsigned long long offset = 0;
  for (const auto& piece : pieces) {
    const char* data = static_cast<const char*>(piece.data);
    size_t written = 0;
    while (written < piece.size) {
      const long long put = call_at(fault::Point::Write, [&] {
        return ::pwrite(descriptor, data + written, piece.size - written, static_cast<off_t>(offset + written));
      });
      if (put < 0) {
        if (errno == EINTR) continue;
        abandon("write", errno);
      }
      written += static_cast<size_t>(put);
    }
    offset += piece.size;
  }
  const auto synced = [&] { return data_only ? ::fdatasync(descriptor) : ::fsync(descriptor); };
  if (call_at(fault::Point::Fsync, synced) != 0) abandon("sync", errno);
  // close() releases the descriptor even when it reports an error, so it is always made; an injected failure then
  // only changes what it reports.
  int closed = ::close(descriptor);
  int close_errno = errno;
  const int injected_close = fault::take(fault::Point::Close);
  if (injected_close == fault::kKill) ::raise(SIGKILL);
  if (injected_close != 0) {
    closed = -1;
    close_errno = injected_close;
  }
  if (closed != 0) {
    fs::remove(file, ignored);
    fail_with_errno(target, file, size, "close", close_errno);
  }
  return size;
}

}  // namespace

void write_file_durably(const std::string& target, const std::string& file, const std::vector<FilePiece>& pieces) {
  const size_t size = write_synced_file(target, file, pieces, /*data_only=*/true);
  // The file's name must be durable before the run file that names it is.
  const int error_number = sync_folder(folder_of(file));
  if (error_number != 0) {
    std::error_code ignored;
    fs::remove(file, ignored);
    fail_with_errno(target, folder_of(file), size, "sync the folder", error_number);
  }
}

std::string temporary_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

std::string replace_file_durably(const std::string& target, const std::string& temporary, const char* data, size_t size,
                                 int* held) {
  write_synced_file(target, temporary, {{data, size}}, /*data_only=*/false);
  int locked = -1;
  if (held) {
    locked = ::open(temporary.c_str(), O_RDWR | O_CLOEXEC);
    if (locked < 0 || ::flock(locked, LOCK_EX | LOCK_NB) != 0) {
      const int error_number = errno;
      if (locked >= 0) ::close(locked);
      std::error_code ignored;
      fs::remove(temporary, ignored);
      fail_with_errno(target, temporary, size, "lock", error_number);
    }
  }
  if (call_at(fault::Point::Rename, [&] { return ::rename(temporary.c_str(), target.c_str()); }) != 0) {
    const int error_number = errno;
    if (locked >= 0) ::close(locked);
    std::error_code ignored;
    fs::remove(temporary, ignored);
    fail_with_errno(target, temporary, size, "rename to the run file", error_number);
  }
  if (held) *held = locked;
  // The rename is done; only its durability across a power cut is in question if the folder cannot be synced.
  const std::string folder = folder_of(target);
  const int error_number = sync_folder(folder);
  if (error_number != 0) {
    return "committed, but syncing its folder " + folder + " failed (" + std::strerror(error_number) +
           "): a power cut now could lose this commit";
  }
  return "";
}

}  // namespace descentlab::store
