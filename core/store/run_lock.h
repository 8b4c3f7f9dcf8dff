#pragma once
// One writer per run file: an advisory lock (flock) on "RUN.h5.lock" beside the run file, held for as long as a
// RunWriter lives (train, sweep, prune, the window's runs and sweeps all write through one). The lock file says who
// holds it (pid, host, what, since when), so a second writer is refused with a message naming the holder. Readers
// never take it and never wait. The kernel drops a flock when its process dies, however it dies, so the lock of a
// killed writer is free at once: the next writer takes it and rewrites the holder lines (a stale lock file is never
// an obstacle). A clean release removes the lock file.

#include <memory>
#include <string>

namespace descentlab::store {

// The lock file can be deleted or replaced while its writer runs (one that looks stale, say). So a writer also holds
// a flock on the run's log (core/store/run_log.h) from open to close, and a second writer checks it after taking the
// lock file: it is refused, and can never append beside the first.
// Throws RunFileError(Busy) naming the process that holds `run_path`'s log (from /proc/locks).
[[noreturn]] void throw_log_held(const std::string& run_path);
// Throws it when another open file holds `run_path`'s log; nothing when there is no log.
void check_log_free(const std::string& run_path);

class RunFileLock {
 public:
  // Takes the lock for `run_path`, or throws RunFileError (Kind::Busy) naming the holder. `purpose` is a few words
  // shown to a second writer ("training", "a robustness sweep").
  static std::unique_ptr<RunFileLock> acquire(const std::string& run_path, const std::string& purpose);
  ~RunFileLock();
  RunFileLock(const RunFileLock&) = delete;
  RunFileLock& operator=(const RunFileLock&) = delete;

  static std::string lock_path_for(const std::string& run_path) { return run_path + ".lock"; }
  // The holder lines of a lock file ("pid 4242 on host x: training since ..."), empty when none can be read.
  static std::string describe_holder(const std::string& lock_path);
  // Who is writing `run_path` now: its lock's holder lines while a live process holds the lock, or empty when none
  // does (never written, finished, stopped or killed alike). It never takes the lock, so a window that asks every
  // second cannot make a writer's start fail: the kernel's table of flocks (/proc/locks) is read instead, and where
  // that cannot be read, whether the pid in the lock file is alive.
  static std::string current_writer(const std::string& run_path);

  // Checks that the lock file at the lock's path is still the one held (the same inode). When it was deleted or
  // replaced by a file no one holds, a new one is made, locked and given the holder lines. Returns "" when nothing
  // was amiss, else a notice saying what happened (a writer calls it at each commit and tells the notice).
  std::string keep_in_place();

 private:
  RunFileLock(std::string lock_path, int descriptor, std::string holder)
      : lock_path_(std::move(lock_path)), descriptor_(descriptor), holder_(std::move(holder)) {}
  std::string lock_path_;
  int descriptor_ = -1;
  std::string holder_;  // the holder lines written into it
};

}  // namespace descentlab::store
