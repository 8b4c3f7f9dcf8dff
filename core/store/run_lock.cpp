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

// The pid holding a flock on the file `locked`, as /proc/locks lists it ("" when none does; nullopt when the table
// cannot be read). `pid` is the lock file's own, when it names one. A line reads "1: FLOCK  ADVISORY  WRITE 4242
// fe:00:408225 0 EOF" (a waiter's has "->" after the number): the device as major and minor in hex, then the inode.
std::optional<std::string> flock_holder(const struct stat& locked, const std::string& pid) {
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
    if (where == device) return holder;
    // A file system that reports another device to stat() than to the lock table (an overlay): the inode and the
    // lock file's own pid together.
    if (!pid.empty() && holder == pid && where.size() > inode.size() &&
        where.compare(where.size() - inode.size(), inode.size(), inode) == 0) {
      return holder;
    }
  }
  return std::string();
}

std::optional<bool> flock_listed(const struct stat& locked, const std::string& pid) {
  const auto holder = flock_holder(locked, pid);
  if (!holder) return std::nullopt;
  return !holder->empty();
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

// Who holds the run log's flock (core/store/run_log.h), in words.
std::string log_holder(const std::string& log_path) {
  struct stat log {};
  if (::stat(log_path.c_str(), &log) != 0) return "another writer";
  const auto pid = flock_holder(log, "");
  if (!pid || pid->empty()) return "another writer";
  return *pid == std::to_string(::getpid()) ? "this process" : "process " + *pid;
}

// The holder lines are a courtesy for the messages; the lock itself is the flock.
void write_holder(int descriptor, const std::string& holder) {
  if (::ftruncate(descriptor, 0) == 0) {
    const ssize_t written = ::pwrite(descriptor, holder.data(), holder.size(), 0);
    (void)written;
  }
}

bool same_file(int descriptor, const std::string& path) {
  struct stat held {};
  struct stat named {};
  return ::fstat(descriptor, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
         held.st_dev == named.st_dev;
}

}  // namespace

void throw_log_held(const std::string& run_path) {
  const std::string log = run_path + ".log";
  throw RunFileError(RunFileError::Kind::Busy, run_path, "",
                     "is being written by " + log_holder(log) + ", which holds its log " + log +
                         ", although its lock file " + RunFileLock::lock_path_for(run_path) +
                         " was free (deleted or replaced while that writer ran); one writer at a time: wait for it "
                         "to finish or stop it; reading the file meanwhile is fine");
}

void check_log_free(const std::string& run_path) {
  const int descriptor = ::open((run_path + ".log").c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return;  // no log: no writer holds one
  const bool held = ::flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(descriptor);
  if (held) throw_log_held(run_path);
}

std::string RunFileLock::describe_holder(const std::string& lock_path) {
  return describe_contents(read_lock_file(lock_path));
}

std::string RunFileLock::current_writer(const std::string& run_path) {
  const std::string lock_path = lock_path_for(run_path);
  struct stat locked {};
  if (::stat(lock_path.c_str(), &locked) != 0) {
    // A clean release removes it; a writer whose lock file was deleted under it still holds its log.
    struct stat log {};
    if (::stat((run_path + ".log").c_str(), &log) != 0) return "";
    const auto holder = flock_holder(log, "");
    return holder && !holder->empty() ? log_holder(run_path + ".log") + " (its lock file is missing)" : "";
  }
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
    if (!same_file(descriptor, lock_path)) {
      ::close(descriptor);
      continue;
    }
    const std::string holder = "pid=" + std::to_string(::getpid()) + "\nhost=" + host_name() + "\npurpose=" + purpose +
                               "\nsince=" + utc_timestamp() + "\n";
    write_holder(descriptor, holder);
    return std::unique_ptr<RunFileLock>(new RunFileLock(lock_path, descriptor, holder));
  }
  throw RunFileError(RunFileError::Kind::Busy, run_path, "", "its lock file " + lock_path + " keeps changing");
}

std::string RunFileLock::keep_in_place() {
  if (same_file(descriptor_, lock_path_)) return "";
  const int fresh = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fresh < 0) {
    return "its lock file " + lock_path_ + " was deleted while it ran and cannot be made again (" +
           std::strerror(errno) + "); its log stays held, so no second writer can append";
  }
  if (::flock(fresh, LOCK_EX | LOCK_NB) != 0 || !same_file(fresh, lock_path_)) {
    ::close(fresh);
    const std::string holder = describe_holder(lock_path_);
    return "its lock file " + lock_path_ + " was replaced while it ran, and is now held by " +
           (holder.empty() ? std::string("another process") : holder) +
           "; that writer is refused at the run's log, which this one holds";
  }
  write_holder(fresh, holder_);
  ::close(descriptor_);
  descriptor_ = fresh;
  return "its lock file " + lock_path_ + " was deleted or replaced while it ran; it is made and held again";
}

RunFileLock::~RunFileLock() {
  // While still holding it (see acquire()), and only when the name is still this lock's: a lock file that replaced
  // it is another writer's.
  if (same_file(descriptor_, lock_path_)) ::unlink(lock_path_.c_str());
  ::close(descriptor_);
}

}  // namespace descentlab::store
