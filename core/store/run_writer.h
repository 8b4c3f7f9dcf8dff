#pragma once
// RunWriter: the metric sink that keeps a run in its HDF5 run file. It takes the run file's lock, buffers what it is
// given, and commits it from its flusher thread (or at once, on flush() and for checkpoints); each commit goes to
// the run as committed so far (core/store/committed_run.h), which appends it to the run log or folds it into the
// file's next version (core/store/file_version.h).
//
// Crash safety: the run file on disk is never modified in place, and every commit is one durable step.
//  - A commit of metric rows, histogram snapshots and sweeps appends one CRC'd record to the run log RUN.h5.log
//    (core/store/run_log.h) and fsyncs it: it costs what it adds, whatever the run file holds.
//  - A commit with checkpoints (or a cut of the series, a format upgrade, a log grown past the run file's size, and
//    the writer's end) folds: it builds the run file's new version in memory with the log's records and the batch,
//    writes it to "RUN.h5.tmp-<pid>" checking every write, fsync and close, renames it over RUN.h5, syncs the
//    folder, and then starts a new log. The run file's root attribute log_sequence names the last record it holds,
//    so a reader or writer skips the records already folded in: a crash between the two steps loses nothing and
//    counts nothing twice.
// So a process killed at any moment, or a disk that fills up, leaves the last committed version intact and
// openable (core/store/durable_file.h). One writer at a time: create() and open() take the run file's lock
// (core/store/run_lock.h) and refuse, naming the holder, when another writer has it. Metric events are buffered in
// memory (cheap, under a mutex held only to move data) and a background thread commits them every
// `flush_interval_seconds`; checkpoints and sweeps are committed by the same thread, or at once by flush(). Replacing
// a checkpoint label or a sweep rebuilds the file without the old copy, so a run that saves "latest" every epoch
// does not grow without bound.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/record/events.h"
#include "core/store/pack_run.h"  // pack_run: callers that write runs also pack them
#include "core/store/run_batch.h"
#include "core/store/run_file.h"
#include "core/store/run_lock.h"

namespace descentlab::store {

class CommittedRun;  // core/store/committed_run.h

struct RunWriterOptions {
  double flush_interval_seconds = 2.0;  // how long metric events may wait in memory; <= 0: only on flush()
  bool overwrite = false;               // create(): replace an existing file instead of refusing
  std::string purpose;                  // a few words a second writer is told ("a robustness sweep")
  // Told once when background commits start to fail (the rows are held in memory, and why) and once when they land
  // again; nullptr: printed to stderr.
  std::function<void(const std::string&)> notice;
};

class RunWriter : public record::MetricSink, public record::CheckpointStore {
 public:
  // Starts a new run file. Refuses to replace an existing file unless options.overwrite.
  static std::unique_ptr<RunWriter> create(const std::string& path, const RunHeader& header,
                                           const RunWriterOptions& options = {});
  // Continues an existing run file (resume). Validates it like RunReader does.
  static std::unique_ptr<RunWriter> open(const std::string& path, const RunWriterOptions& options = {});
  // What open() does first, for a caller that reads the run before it continues it (a resume): takes the lock for a
  // moment, so a run another process writes is refused naming the holder (RunFileError Busy) before the file's
  // content is judged, and removes the temporaries of writers that were killed, also when the run is then refused.
  static void take_over_abandoned(const std::string& path, const RunWriterOptions& options = {});

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
  void save_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint,
                        const std::vector<std::string>& dropped) override;

  // A person's name, tags and note for the run (checked_annotation; RunFileError InvalidArgument names a bad one),
  // replacing the ones before: committed by the flusher thread at once, as one log record (flush() waits for it).
  void annotate(const RunAnnotation& annotation);

  // Drops metric rows and histogram snapshots with step > `step` (used when resuming from a checkpoint taken
  // before the last metrics). Committed at once.
  void truncate_after(int64_t step);

  const std::string& path() const { return path_; }
  // The last background commit error (or a warning of the last commit), empty when the last commit went well.
  std::string last_error() const;
  int64_t commits() const { return commits_.load(); }
  // Where the writer's time went (issue 34): wall seconds in commits that appended to the run log, in folds (a new
  // version of the run file: checkpoints, the end), and the number of folds.
  double append_seconds() const { return static_cast<double>(append_nanoseconds_.load()) * 1e-9; }
  double fold_seconds() const { return static_cast<double>(fold_nanoseconds_.load()) * 1e-9; }
  int64_t folds() const { return folds_.load(); }

 private:
  using Pending = RunBatch;
  RunWriter(std::string path, const RunWriterOptions& options);
  void start_flusher();
  void append(const std::string& name, record::SeriesShape shape, int64_t step, double wall_time,
              const std::vector<double>& values);
  // Validates the checkpoint and puts it under every label into pending_ (labels not empty), with the labels to let go.
  void queue_checkpoints(const std::vector<std::string>& labels, record::CheckpointData checkpoint,
                         const std::vector<std::string>& dropped = {});
  void commit(bool fold_log = false);  // serialised by commit_mutex_; fold_log folds even an empty batch
  [[noreturn]] void restore_and_throw(std::unique_ptr<Pending>& batch, const std::string& temporary,
                                      const std::string& message);
  void flusher_loop();
  void notice(const std::string& message) const;

  std::string path_;
  RunWriterOptions options_;

  mutable std::mutex data_mutex_;  // guards pending_, widths_, edges_, last_error_
  std::unique_ptr<Pending> pending_;
  std::map<std::string, int64_t> metric_widths_;
  std::map<std::string, std::vector<double>> histogram_edges_;
  std::string last_error_;

  std::unique_ptr<RunFileLock> lock_;  // held from create()/open() until the writer is gone
  std::mutex commit_mutex_;
  bool ready_ = false;  // set once create() or open() succeeded; until then the destructor writes nothing
  // The run file and its log as committed (guarded by commit_mutex_; before the flusher starts, create() and open()).
  std::unique_ptr<CommittedRun> committed_;
  std::atomic<int64_t> commits_{0};
  std::atomic<int64_t> append_nanoseconds_{0};
  std::atomic<int64_t> fold_nanoseconds_{0};
  std::atomic<int64_t> folds_{0};
  std::optional<std::string> holding_since_;  // when background commits began to fail (flusher thread only)

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread flusher_;
};

}  // namespace descentlab::store
