#include "core/store/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/store/run_file.h"

namespace descentlab::store {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// Reads "key=value" lines of a lock file.
std::string holder_field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

// Whether /proc/locks lists a flock on the file `locked` (taken by `pid` when the lock file names one). A line reads
// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:408225 0 EOF" (a waiter's has "->" after the number): the device as major and
// minor in hex, then the inode. Empty when the table cannot be read.
std::optional<bool> flock_listed(const struct stat& locked, const std::string& pid) {
  std::ifstream table("/proc/locks");
  if (!table) return std::nullopt;
  char device[64];
  std::snprintf(device, sizeof device, "%02x:%02x:%llu", major(locked.st_dev), minor(locked.st_dev),
                static_cast<unsigned long long>(locked.st_ino));
  const std::string inode = ":" + std::to_string(static_cast<unsigned long long>(locked.st_ino));
  std::string line;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string number, kind, mode, access, holder, where;
    fields >> number >> kind;
    if (kind == "->") continue;  // waiting, not holding
    fields >> mode >> access >> holder >> where;
    if (kind != "FLOCK") continue;
    if (where == device) return true;
    // A file system that reports another device to stat() than to the lock table (an overlay): the inode and the
    // lock file's own pid together.
    if (!pid.empty() && holder == pid && where.size() > inode.size() &&
        where.compare(where.size() - inode.size(), inode.size(), inode) == 0) {
      return true;
    }
  }
  return false;
}

std::string read_lock_file(const std::string& lock_path) {
  std::ifstream file(lock_path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The holder lines of a lock file's contents, in words ("" when they name no pid).
std::string describe_contents(const std::string& contents) {
  const std::string pid = holder_field(contents, "pid");
  if (pid.empty()) return "";
  std::string holder = "process " + pid;
  const std::string host = holder_field(contents, "host");
  if (!host.empty() && host != host_name()) holder += " on host " + host;
  if (pid == std::to_string(::getpid()) && (host.empty() || host == host_name())) holder = "this process";
  const std::string purpose = holder_field(contents, "purpose");
  if (!purpose.empty()) holder += " (" + purpose;
  const std::string since = holder_field(contents, "since");
  if (!since.empty()) holder += purpose.empty() ? " (since " + since : ", since " + since;
  if (!purpose.empty() || !since.empty()) holder += ")";
  return holder;
}

}  // namespace

std::string RunFileLock::describe_holder(const std::string& lock_path) {
  return describe_contents(read_lock_file(lock_path));
}

std::string RunFileLock::current_writer(const std::string& run_path) {
  const std::string lock_path = lock_path_for(run_path);
  struct stat locked {};
  if (::stat(lock_path.c_str(), &locked) != 0) return "";  // a clean release removes it
  const std::string contents = read_lock_file(lock_path);  // read once: the holder may rewrite it meanwhile
  const std::string pid = holder_field(contents, "pid");
  const std::string host = holder_field(contents, "host");
  const std::string holder = describe_contents(contents);
  const std::string named = holder.empty() ? std::string("another process") : holder;
  if (const auto listed = flock_listed(locked, pid)) return *listed ? named : "";
  // No lock table: a writer on this host is alive while its pid is (a killed writer's lock file stays behind).
  if (pid.empty() || (!host.empty() && host != host_name())) return named;
  char* end = nullptr;
  const long number = std::strtol(pid.c_str(), &end, 10);
  if (number <= 0 || *end != '\0') return named;
  return ::kill(static_cast<pid_t>(number), 0) == 0 || errno == EPERM ? named : "";
}

std::unique_ptr<RunFileLock> RunFileLock::acquire(const std::string& run_path, const std::string& purpose) {
  const std::string lock_path = lock_path_for(run_path);
  // A releasing writer removes the lock file while it still holds it, so the file we lock may already be unlinked:
  // after locking, check that the path still names the same file, and try again if it does not.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int descriptor = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor < 0) {
      const int error_number = errno;
      throw RunFileError(RunFileError::Kind::WriteFailed, run_path, "",
                         "cannot create its lock file " + lock_path + ": " + std::strerror(error_number));
    }
    if (::flock(descriptor, LOCK_EX | LOCK_NB) != 0) {
      const int error_number = errno;
      ::close(descriptor);
      if (error_number != EWOULDBLOCK) {
        throw RunFileError(RunFileError::Kind::WriteFailed, run_path, "",
                           "cannot lock " + lock_path + ": " + std::strerror(error_number));
      }
      const std::string holder = describe_holder(lock_path);
      throw RunFileError(RunFileError::Kind::Busy, run_path, "",
                         "is being written by " + (holder.empty() ? std::string("another process") : holder) +
                             "; one writer at a time: wait for it to finish or stop it (its lock is " + lock_path +
                             "); reading the file meanwhile is fine");
    }
    struct stat locked {};
    struct stat named {};
    if (::fstat(descriptor, &locked) != 0 || ::stat(lock_path.c_str(), &named) != 0 || locked.st_ino != named.st_ino ||
        locked.st_dev != named.st_dev) {
      ::close(descriptor);
      continue;
    }
    const std::string holder = "pid=" + std::to_string(::getpid()) + "\nhost=" + host_name() + "\npurpose=" + purpose +
                               "\nsince=" + utc_timestamp() + "\n";
    // The holder lines are a courtesy for the message above; the lock itself is the flock.
    if (::ftruncate(descriptor, 0) == 0) {
      const ssize_t written = ::pwrite(descriptor, holder.data(), holder.size(), 0);
      (void)written;
    }
    return std::unique_ptr<RunFileLock>(new RunFileLock(lock_path, descriptor));
  }
  throw RunFileError(RunFileError::Kind::Busy, run_path, "", "its lock file " + lock_path + " keeps changing");
}

RunFileLock::~RunFileLock() {
  ::unlink(lock_path_.c_str());  // while still holding it: see acquire()
  ::close(descriptor_);
}

}  // namespace descentlab::store
