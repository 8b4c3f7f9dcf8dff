#include "core/session/sweep_session.h"

#include <torch/torch.h>

#include <chrono>

#include "core/data/catalog.h"
#include "core/eval/robustness.h"
#include "core/store/run_writer.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/random_stream.h"
#include "core/train/saved_run.h"

namespace descentlab::session {

SweepSession::SweepSession(SweepRequest request) : request_(std::move(request)) {}

SweepSession::~SweepSession() {
  cancel();
  join();
}

record::SweepResult SweepSession::run() {
  eval::SweepOptions options;
  options.gamma = eval::parse_gamma_grid(request_.gamma);  // a bad grid fails before the data is read
  // The run file's lock first: a sweep of a file another process is training is refused now, naming that process,
  // rather than after minutes of work.
  store::RunWriterOptions writer_options;
  writer_options.flush_interval_seconds = 0;
  writer_options.purpose = "a robustness sweep";
  auto writer = store::RunWriter::open(request_.run_path, writer_options);
  const train::SavedRun saved = train::read_saved_run(request_.run_path, request_.checkpoint, request_.device);
  const torch::Device device = train::resolve_device(saved.config.train.device);
  // Seeded and built as a training run is (its weights are then overwritten): under the generator lock, never
  // inside a training run's draws (random_stream.h).
  std::unique_ptr<tasks::LayerwiseTask> task;
  train::RandomStream().seed_and_initialise(saved.config.train.seed, [&] {
    task = tasks::make_task(saved.config, data::default_data_root(), device, saved.script_sources());
  });
  train::load_saved_model(saved, *task->module(), request_.run_path, request_.checkpoint);

  options.noise = request_.noise;
  options.seeds = request_.seeds;
  options.limit = request_.limit;
  const auto started = std::chrono::steady_clock::now();
  options.on_cell = [&](size_t done, size_t cells) {
    if (cancelled_.load()) return false;
    if (on_progress_) {
      SweepProgress progress;
      progress.done = done;
      progress.cells = cells;
      progress.gammas = options.gamma.size();
      const auto seeds = static_cast<size_t>(std::max<int64_t>(1, options.seeds));
      progress.gamma_index = std::min(done / seeds, progress.gammas > 0 ? progress.gammas - 1 : 0);
      progress.seed = static_cast<int64_t>(done % seeds);
      progress.gamma = options.gamma.empty() ? 0.0 : options.gamma[progress.gamma_index];
      progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (done > 0) progress.eta_seconds = progress.seconds / static_cast<double>(done) * (cells - done);
      on_progress_(progress);
    }
    return !cancelled_.load();
  };
  const record::SweepResult sweep = eval::run_sweep(*task, options);
  // Only a whole sweep reaches the run file (one commit: written beside it, then renamed).
  writer->sweep(sweep);
  writer->flush();
  return sweep;
}

void SweepSession::start(
    std::function<void(const record::SweepResult&, const std::string& error, bool cancelled)> done) {
  join();
  worker_ = std::thread([this, done = std::move(done)] {
    at::init_num_threads();  // as TrainingSession::start: the thread count set at start-up, not every core
    record::SweepResult result;
    std::string error;
    bool was_cancelled = false;
    try {
      result = run();
    } catch (const eval::SweepCancelled&) {
      was_cancelled = true;
    } catch (const std::exception& failure) {
      error = failure.what();
    } catch (...) {
      error = "unknown error in the sweep thread";
    }
    if (done) done(result, error, was_cancelled);
  });
}

void SweepSession::join() {
  if (worker_.joinable()) worker_.join();
}

}  // namespace descentlab::session
