#include "core/train/training_session.h"

#include <torch/torch.h>

#include <exception>

#include "core/data/catalog.h"
#include "core/eval/weight_histograms.h"
#include "core/runtime.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/sparse_trainer.h"

namespace descentlab::train {
namespace {

// A new run file, or the resumed one cut back to the checkpoint's step once the trainer has restored it.
template <typename Trainer>
std::unique_ptr<store::RunWriter> open_run(Trainer& trainer, const config::ExperimentConfig& config,
                                           const SessionOptions& options, bool resuming, const torch::Device& device) {
  store::RunWriterOptions writer_options;
  writer_options.overwrite = options.overwrite;
  writer_options.flush_interval_seconds = options.flush_interval_seconds;
  if (resuming) {
    const store::CheckpointData state = store::RunReader(options.run_path).checkpoint("latest");
    auto writer = store::RunWriter::open(options.run_path, writer_options);
    trainer.resume_from(state, options.run_path, "latest");
    writer->truncate_after(state.step);
    return writer;
  }
  const auto info = runtime_info();
  store::RunHeader header;
  header.app_version = info.descentlab_version;
  header.torch_version = info.torch_version;
  header.device = device.str();
  header.config_json = config.to_json().dump();
  return store::RunWriter::create(options.run_path, header, writer_options);
}

// Runs a trainer with the run file, the session's sinks and its control; returns the common result fields.
template <typename Trainer, typename Task>
auto run_engine(Trainer& trainer, Task& task, const config::ExperimentConfig& config, const SessionOptions& options,
                bool resuming, const torch::Device& device, const std::vector<MetricSink*>& sinks,
                TrainingControl& control, const std::function<void(const SessionStart&)>& on_start,
                const std::string& description) -> std::pair<decltype(trainer.run()), SessionResult> {
  auto writer = open_run(trainer, config, options, resuming, device);
  trainer.add_sink(writer.get());
  for (auto* sink : sinks) trainer.add_sink(sink);
  trainer.set_run_writer(writer.get());
  trainer.set_control(&control);
  if (on_start) on_start({trainer.total_steps(), trainer.step(), description, device.str(), task.metric_name()});
  auto result = trainer.run();
  writer->flush();
  SessionResult summary;
  summary.stopped = result.stopped;
  summary.steps = result.steps;
  summary.epochs_completed = result.epochs_completed;
  summary.seconds = result.seconds;
  summary.steps_per_second = result.steps_per_second;
  summary.metric = task.metric_name();
  summary.test_metric = result.test.metric;
  summary.test_loss = result.test.loss;
  return {std::move(result), std::move(summary)};
}

}  // namespace

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options)
    : TrainingSession(std::move(config), std::move(options), false) {}

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options, bool resuming)
    : config_(std::move(config)), options_(std::move(options)), resuming_(resuming) {}

std::unique_ptr<TrainingSession> TrainingSession::resume(const std::string& run_path) {
  const store::RunReader reader(run_path);
  auto config =
      config::ExperimentConfig::from_json(nlohmann::json::parse(reader.header().config_json), run_path + " (config)");
  if (!reader.has_checkpoint("latest")) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, run_path, "/checkpoints/latest",
                              "no checkpoint to resume from");
  }
  SessionOptions options;
  options.run_path = run_path;
  return std::unique_ptr<TrainingSession>(new TrainingSession(std::move(config), std::move(options), true));
}

TrainingSession::~TrainingSession() {
  control_.stop();
  join();
}

std::string TrainingSession::device_name() const {
  std::lock_guard<std::mutex> lock(device_name_mutex_);
  return device_name_;
}

SessionResult TrainingSession::run() {
  const torch::Device device = resolve_device(config_.train.device);
  {
    std::lock_guard<std::mutex> lock(device_name_mutex_);
    device_name_ = device.str();
  }
  // Seeds before the model is built, so the same config gives the same run.
  torch::manual_seed(config_.train.seed);
  if (config_.is_layerwise()) {
    auto task = make_task(config_, data::default_data_root(), device);
    LayerwiseTrainer trainer(config_, *task, device);
    auto [result, summary] = run_engine(trainer, *task, config_, options_, resuming_, device, extra_sinks_, control_,
                                        on_start_, config_.name + ": " + task->describe());
    summary.extra = {
        {"test", {{"layer_loss", result.test.layer_loss}, {"descending_frequency", result.test.descending_frequency}}},
        {"lambda", result.lambda}};
    return summary;
  }
  auto task = make_sparse_task(config_, data::default_data_root(), device);
  const std::string sparsity = config_.sparsity.method == "none"
                                   ? "none (dense)"
                                   : config_.sparsity.method + " to " + std::to_string(config_.sparsity.target);
  SparseTrainer trainer(config_, *task, device);
  auto [result, summary] = run_engine(
      trainer, *task, config_, options_, resuming_, device, extra_sinks_, control_, on_start_,
      config_.name + ": " + task->describe() + "; optimizer " + config_.optimizer.name + ", sparsity " + sparsity);
  summary.extra = {
      {"optimizer", config_.optimizer.name},
      {"sparsity", result.sparsity},
      {"near_zero_share", {{"thresholds", eval::default_near_zero_thresholds()}, {"share", result.near_zero_share}}}};
  return summary;
}

void TrainingSession::start(std::function<void(const SessionResult&, const std::string& error)> done) {
  join();
  running_.store(true);
  worker_ = std::thread([this, done = std::move(done)] {
    // OpenMP's thread count is per calling thread: a new thread would use every core, not the count set once at
    // start-up (measured: the GUI's runs went 20 % faster than headless ones on 2 threads instead of 1).
    at::init_num_threads();
    SessionResult result;
    std::string error;
    try {
      result = run();
    } catch (const std::exception& failure) {
      error = failure.what();
    } catch (...) {
      error = "unknown error in the training thread";
    }
    running_.store(false);
    if (done) done(result, error);
  });
}

void TrainingSession::join() {
  if (worker_.joinable()) worker_.join();
}

}  // namespace descentlab::train
