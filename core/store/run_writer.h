#pragma once
// RunWriter: the metric sink that keeps a run in its HDF5 run file.
//
// Crash safety: the run file on disk is never modified in place. Each commit builds the complete new version in
// memory, writes it to "RUN.h5.tmp-<pid>" checking every write, fsync and close, and only then renames it over
// RUN.h5 and syncs the folder; so a process killed at any moment, or a disk that fills up, leaves the last committed
// version intact and openable (core/store/durable_file.h). One writer at a time: create() and open() take the run
// file's lock (core/store/run_lock.h) and refuse, naming the holder, when another writer has it. Metric events are
// buffered in memory (cheap, under a mutex held only to move data) and a background thread commits them every
// `flush_interval_seconds`; checkpoints and sweeps are committed by the same thread, or at once by flush(). Replacing a
// checkpoint label or a sweep rebuilds the file without the old copy, so a run that saves "latest" every epoch does not
// grow without bound.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/record/events.h"
#include "core/store/run_file.h"
#include "core/store/run_lock.h"

namespace descentlab::store {

struct RunWriterOptions {
  double flush_interval_seconds = 2.0;  // how long metric events may wait in memory; <= 0: only on flush()
  bool overwrite = false;               // create(): replace an existing file instead of refusing
  std::string purpose;                  // a few words a second writer is told ("a robustness sweep")
};

class RunWriter : public record::MetricSink, public record::CheckpointStore {
 public:
  // Starts a new run file. Refuses to replace an existing file unless options.overwrite.
  static std::unique_ptr<RunWriter> create(const std::string& path, const RunHeader& header,
                                           const RunWriterOptions& options = {});
  // Continues an existing run file (resume). Validates it like RunReader does.
  static std::unique_ptr<RunWriter> open(const std::string& path, const RunWriterOptions& options = {});

  ~RunWriter() override;  // commits what is pending; never throws (an error is printed to stderr)
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  void scalar(const std::string& name, int64_t step, double wall_time, double value) override;
  void vector(const std::string& name, int64_t step, double wall_time, const std::vector<double>& values) override;
  void histogram(const record::HistogramSnapshot& snapshot) override;
  void sweep(const record::SweepResult& sweep) override;
  // Commits everything pending now and returns when it is on disk. Throws RunFileError(WriteFailed) if the commit
  // failed: the file on disk is untouched and the data stays pending, so a later commit retries it (a full disk's
  // message names the folder, the bytes needed and the bytes free).
  void flush() override;

  // Queues a checkpoint under `label` ("latest", "best", or a user name), replacing any earlier one of that label.
  // With wait = true it returns once the checkpoint is durable.
  void save_checkpoint(const std::string& label, record::CheckpointData checkpoint, bool wait = true);
  // record::CheckpointStore: the same checkpoint under each label, queued together (the last save waits for the
  // commit).
  void save_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint) override;

  // Drops metric rows and histogram snapshots with step > `step` (used when resuming from a checkpoint taken
  // before the last metrics). Committed at once.
  void truncate_after(int64_t step);

  const std::string& path() const { return path_; }
  // The last background commit error (or a warning of the last commit), empty when the last commit went well.
  std::string last_error() const;
  int64_t commits() const { return commits_.load(); }

 private:
  struct Pending;
  RunWriter(std::string path, const RunWriterOptions& options);
  void start_flusher();
  // Validates the checkpoint and puts it under every label into pending_ (labels not empty).
  void append(const std::string& name, record::SeriesShape shape, int64_t step, double wall_time,
              const std::vector<double>& values);
  void queue_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint);
  void commit();                                          // serialised by commit_mutex_
  std::vector<char> build_version(const Pending& batch);  // the new file's bytes, built in memory
  [[noreturn]] void restore_and_throw(std::unique_ptr<Pending>& batch, const std::string& temporary,
                                      const std::string& message);
  void flusher_loop();

  std::string path_;
  RunWriterOptions options_;
  RunHeader header_;  // for a new file, written on the first commit

  mutable std::mutex data_mutex_;  // guards pending_, widths_, edges_, last_error_
  std::unique_ptr<Pending> pending_;
  std::map<std::string, int64_t> metric_widths_;
  bool upgrade_format_ = false;  // opened a file of an older format_version: the next commit writes this one
  std::map<std::string, std::vector<double>> histogram_edges_;
  std::string last_error_;

  std::unique_ptr<RunFileLock> lock_;  // held from create()/open() until the writer is gone
  std::mutex commit_mutex_;
  bool ready_ = false;  // set once create() or open() succeeded; until then the destructor writes nothing
  bool file_exists_ = false;
  std::set<std::string> stored_checkpoints_;
  std::set<std::string> stored_sweeps_;
  std::atomic<int64_t> commits_{0};

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread flusher_;
};

}  // namespace descentlab::store
