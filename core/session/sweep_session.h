#pragma once
// A robustness sweep of a saved layerwise run (SCIENCE.md §1), stored in its run file: what `descentlab-cli sweep`
// does, for the desktop lab on a worker thread, with progress after every (γ, seed) cell and cancel between cells.
// Nothing is written until the whole sweep is done, so a cancelled or failed sweep leaves the run file as it was.
// The header is free of LibTorch, like TrainingSession's.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "core/record/checkpoint.h"
#include "core/record/events.h"

namespace descentlab::session {

struct SweepRequest {
  std::string run_path;
  std::string checkpoint = record::checkpoint_label::kLatest;
  std::string noise;               // gaussian | uniform | discrete (text); video (video)
  std::string gamma = "0:2:0.25";  // start:stop:step or a,b,c
  int64_t seeds = 3;
  int64_t limit = 0;   // test samples; 0: all
  std::string device;  // "auto", "cpu", "cuda"; empty: the run's own
};

struct SweepProgress {
  size_t done = 0;  // cells finished
  size_t cells = 0;
  size_t gamma_index = 0;  // the cell under way: γ number gamma_index + 1 of gammas, seed `seed`
  size_t gammas = 0;
  int64_t seed = 0;
  double gamma = 0.0;
  double seconds = 0.0;
  double eta_seconds = -1.0;  // negative until the first cell is done
};

class SweepSession {
 public:
  explicit SweepSession(SweepRequest request);
  ~SweepSession();  // cancels a running worker and joins it
  SweepSession(const SweepSession&) = delete;
  SweepSession& operator=(const SweepSession&) = delete;

  const SweepRequest& request() const { return request_; }
  // Called on the sweeping thread before every cell and once at the end; set before run()/start().
  void on_progress(std::function<void(const SweepProgress&)> callback) { on_progress_ = std::move(callback); }
  // Sweeps on the calling thread and stores the result in the run file. Throws an Error naming the file, key or
  // value on bad input; a cancelled sweep throws one whose what() is "the sweep was cancelled".
  record::SweepResult run();
  // The same on a worker thread; `done` gets the result, or the error, or cancelled = true.
  void start(std::function<void(const record::SweepResult&, const std::string& error, bool cancelled)> done);
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }
  void join();

 private:
  SweepRequest request_;
  std::function<void(const SweepProgress&)> on_progress_;
  std::atomic<bool> cancelled_{false};
  std::thread worker_;
};

}  // namespace descentlab::session
