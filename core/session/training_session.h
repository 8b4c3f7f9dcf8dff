#pragma once
// One training run of either engine (layerwise descent or sparse training) into its run file, with pause, resume
// and stop: what `descentlab-cli train` and the desktop lab both drive. The header is free of LibTorch, so the GUI
// can hold sessions without seeing torch; run() does the work on the calling thread, start() on a worker thread.

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/experiment_config.h"
#include "core/record/annotation.h"
#include "core/record/events.h"
#include "core/session/control.h"
#include "core/session/training_result.h"

namespace descentlab::store {
class RunWriter;
}

namespace descentlab::session {

// What a session knows once its task is built (datasets read, model made): sent before the first batch.
struct SessionStart {
  int64_t total_steps = 0;
  int64_t first_step = 0;   // > 0 when resumed
  std::string description;  // the task, optimizer and sparsity in words
  std::string device;       // "cpu", "cuda", "cuda:0"
  std::string metric;       // "accuracy", "rmse" or "perplexity"
};

// Data-parallel training (docs/scale-out.md): this process's place in a launch (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT as launchers set them), the backend ("auto", "gloo", "nccl") and the timeout of the
// rendezvous and of every collective. world_size 1: one process.
struct DataParallelOptions {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  std::string backend = "auto";
  double timeout_seconds = 300.0;
};

// This process's place in a data-parallel launch as launchers describe it in the environment (torchrun, srun, mpirun
// wrappers, descentlab-cli --nproc): world_size 1 when none is. Throws descentlab::Error naming a missing or
// malformed variable.
DataParallelOptions data_parallel_from_environment();
// The backend a launch asking for `options.backend` uses, in words ("gloo"); an Error names an unknown one.
std::string data_parallel_backend(const DataParallelOptions& options);

struct SessionOptions {
  std::string run_path;
  bool overwrite = false;               // a new run may replace an existing run file
  double flush_interval_seconds = 2.0;  // how often the run file is committed while the run goes
  // Told (on the run file's writer thread) when its rows cannot be committed and are held in memory, and when they
  // land; nullptr: printed to stderr.
  std::function<void(const std::string&)> notice;
  // A resume of a user's module on a user's data (the torchscript task): where the run's module and data file are
  // now, when they moved (ResumeFiles). Each is checked against the SHA-256 the run recorded.
  std::string model_file, data_file;
};

// Where a resumed run's own files are now (train --resume RUN --model M.pt --data D.h5), when they moved: "" for
// where the run's configuration names them. The run trains its own copy of the module either way; a given module
// or data file is refused, naming both SHA-256s, when it is not the one the run began with (core/train/user_files.h).
struct ResumeFiles {
  std::string model, data;
};

class TrainingSession {
 public:
  // A new run of `config` into options.run_path.
  TrainingSession(config::ExperimentConfig config, SessionOptions options);
  // Continues the run file at `run_path` from its "latest" checkpoint, with its own configuration. In a data-parallel
  // launch only rank 0 reads the file: the other ranks (`data_parallel.rank` > 0) receive its configuration and
  // checkpoint from rank 0 when run() starts, so they need no access to it.
  static std::unique_ptr<TrainingSession> resume(const std::string& run_path,
                                                 const DataParallelOptions& data_parallel = {},
                                                 const ResumeFiles& files = {});
  // A child of the run at `parent_path` (issue 55): a new run into options.run_path that continues the parent's
  // checkpoint at `step` (-1: its "latest"; else the step of a checkpoint it keeps) exactly (weights, optimizer
  // state, lambda, data order, random generators) under `config`, the parent's configuration with the changes asked
  // for, and records its lineage (core/store/run_file.h). The parent is only read. Throws descentlab errors naming a
  // setting that cannot change mid-run (core/session/branch_rules.h), a step with no kept checkpoint (naming those
  // kept), a child that is its parent; RunWriter refuses a child path that exists unless options.overwrite.
  static std::unique_ptr<TrainingSession> branch(const std::string& parent_path, int64_t step,
                                                 config::ExperimentConfig config, SessionOptions options);
  // What a branch changes ("constraints.alpha 0.4 -> 0.1"), "" for none or when this is not a branch.
  const std::string& branch_changes() const { return branch_changes_; }
  // How the child takes up those changes, a sentence each (core/session/branch_rules.h: branch_notes), for the person.
  const std::vector<std::string>& branch_notes() const { return branch_notes_; }
  ~TrainingSession();  // stops a running worker and joins it
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  const config::ExperimentConfig& config() const { return config_; }
  const std::string& run_path() const { return options_.run_path; }
  // Trains as one rank of a data-parallel launch (before run()). Only rank 0 writes the run file and calls the sinks
  // and the start callback; every rank throws the same errors.
  void set_data_parallel(const DataParallelOptions& options) { data_parallel_ = options; }
  const DataParallelOptions& data_parallel() const { return data_parallel_; }
  // Seconds this rank spent waiting in collectives during run() (0 in one process).
  double communication_seconds() const { return communication_seconds_; }
  // Overrides the configured device ("auto", "cpu", "cuda") before the run starts.
  void set_device(const std::string& name) {
    config_.train.device = config::require_choice<config::Device>(name, "device");
  }
  // Stops the run once it has done `step` steps in all (negative: no limit), exactly there, whatever the metric
  // interval and the epochs; the state at that step is kept as "latest", so --resume continues exactly. 0 sets a new
  // run up and keeps its initial state (the seeded initial weights) as "latest" without a step. Before run().
  void set_step_limit(int64_t step) { step_limit_ = step; }
  // The device the run uses ("cpu", "cuda:0"), known once run() has started; empty before.
  std::string device_name() const;

  // Sinks and the start callback must be set before run()/start(); they are called on the training thread.
  void add_sink(record::MetricSink* sink) { extra_sinks_.push_back(sink); }
  void on_start(std::function<void(const SessionStart&)> callback) { on_start_ = std::move(callback); }
  // The run file's notices (SessionOptions::notice), also for a resumed session.
  void on_notice(std::function<void(const std::string&)> callback) { options_.notice = std::move(callback); }

  // Trains on the calling thread until done or stopped; throws descentlab errors (config, data, NaN, run file), and
  // MemoryError with the run's estimate for an allocation that failed.
  TrainingResult run();

  // Trains on a worker thread. `done` is called on that thread at the end with the result, or with an error
  // message (then the result is empty); everything committed to the run file so far stays there.
  void start(std::function<void(const TrainingResult&, const std::string& error)> done);
  bool running() const { return running_.load(); }
  void join();

  // A person's name, tags and note for the run (issue 54), given to its run file's writer: committed with its next
  // rows (RunWriter::annotate), or when the writer opens if it is not open yet. False when this session's writer has
  // closed (the run ended): then store::annotate_run sets it on the file. Throws RunFileError for a bad value.
  bool annotate(const record::RunAnnotation& annotation);

  TrainingControl& control() { return control_; }
  void pause() { control_.pause(); }
  bool holding() const { return control_.holding(); }  // paused and held between batches (see TrainingControl)
  void resume() { control_.resume(); }
  void stop() { control_.stop(); }
  // Keeps the run's state as it is now as the checkpoint "step-<step>" of its run file, between batches (a paused
  // run at once; a running one before its next batch), for a branch from a live run (issue 55). `done` is called on
  // the training thread with the step kept, or -1 and why not (the run ended first, the commit failed). For a session
  // started with start().
  // A session not training (not started, or ended) answers at once.
  void keep_state(TrainingControl::KeepDone done) {
    control_.keep_state(std::move(done));
    if (!running_.load()) control_.refuse_keep_requests("the run is not training");
  }

 private:
  TrainingSession(config::ExperimentConfig config, SessionOptions options, bool resuming);
  // The training thread's writer for annotate() (nullptr as it closes: later annotations go to the file).
  void share_writer(store::RunWriter* writer);
  TrainingResult train_into_run_file();  // run() without its wording of a failed allocation

  config::ExperimentConfig config_;
  SessionOptions options_;
  bool resuming_ = false;
  // A branch: its parent's run file (absolute), the label of the checkpoint it continues, the settings it changes.
  std::string branch_parent_, branch_label_, branch_changes_;
  std::vector<std::string> branch_notes_;
  std::vector<record::MetricSink*> extra_sinks_;
  std::function<void(const SessionStart&)> on_start_;
  int64_t step_limit_ = -1;
  DataParallelOptions data_parallel_;
  bool config_from_rank_zero_ = false;  // a resuming rank > 0: rank 0 sends the configuration
  double communication_seconds_ = 0.0;
  std::string device_name_;
  mutable std::mutex device_name_mutex_;
  TrainingControl control_;
  // The run file's writer while it is open (set and cleared by the training thread), and an annotation given before it
  // opened; guarded by writer_mutex_.
  std::mutex writer_mutex_;
  store::RunWriter* writer_ = nullptr;
  bool writer_closed_ = false;
  std::optional<record::RunAnnotation> pending_annotation_;
  std::atomic<bool> running_{false};
  std::thread worker_;
};

}  // namespace descentlab::session
