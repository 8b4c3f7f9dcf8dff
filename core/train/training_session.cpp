#include "core/train/training_session.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <exception>

#include "core/data/catalog.h"
#include "core/runtime.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/tasks/footprint.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/random_stream.h"
#include "core/train/sparse_trainer.h"
#include "core/util/system_memory.h"

namespace descentlab::train {
namespace {

// A new run file, or the resumed one cut back to the checkpoint's step once the trainer has restored it.
std::unique_ptr<store::RunWriter> open_run(Trainer& trainer, const config::ExperimentConfig& config,
                                           const SessionOptions& options, bool resuming, const torch::Device& device) {
  store::RunWriterOptions writer_options;
  writer_options.overwrite = options.overwrite;
  writer_options.flush_interval_seconds = options.flush_interval_seconds;
  writer_options.purpose = resuming ? "resuming training" : "training";
  if (resuming) {
    // The lock first, then the checkpoint: no other writer can replace "latest" between the two.
    auto writer = store::RunWriter::open(options.run_path, writer_options);
    const record::CheckpointData state = store::RunReader(options.run_path).checkpoint("latest");
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

// The engine a config asks for, with its task (data read, model made).
struct Engine {
  std::unique_ptr<tasks::LayerwiseTask> layerwise_task;
  std::unique_ptr<tasks::SparseTask> sparse_task;
  std::unique_ptr<Trainer> trainer;
  std::string description;
};

Engine make_engine(const config::ExperimentConfig& config, const torch::Device& device) {
  Engine engine;
  if (config.is_layerwise()) {
    engine.layerwise_task = tasks::make_task(config, data::default_data_root(), device);
    engine.trainer = std::make_unique<LayerwiseTrainer>(config, *engine.layerwise_task, device);
    engine.description = config.name + ": " + engine.layerwise_task->describe();
    return engine;
  }
  engine.sparse_task = tasks::make_sparse_task(config, data::default_data_root(), device);
  engine.trainer = std::make_unique<SparseTrainer>(config, *engine.sparse_task, device);
  const std::string sparsity =
      config.sparsity.method == config::SparsityMethod::none
          ? "none (dense)"
          : config::word(config.sparsity.method) + " to " + std::to_string(config.sparsity.target);
  engine.description = config.name + ": " + engine.sparse_task->describe() + "; optimizer " +
                       config::word(config.optimizer.name) + ", sparsity " + sparsity;
  return engine;
}

// The dataset a config trains on ("" for the generated video), verified against datasets/SHA256SUMS before it is
// read: a changed or damaged file would otherwise train silently (an image label of 200 made a 201-class model).
void verify_training_data(const config::ExperimentConfig& config) {
  std::string dataset;
  if (config.task == config::Task::text) dataset = "imdb";
  if (config.task == config::Task::vit) dataset = config::word(config.data.dataset);
  if (config.task == config::Task::gpt) dataset = "moby-dick";
  if (!dataset.empty()) data::verify_dataset(data::default_data_root(), dataset);
}

// Refuses, before anything is allocated, a run whose estimated footprint exceeds the memory there is
// (DESCENTLAB_MEMORY_CHECK=0 turns the check off).
void check_memory(const config::ExperimentConfig& config, const torch::Device& device) {
  const char* setting = std::getenv("DESCENTLAB_MEMORY_CHECK");
  if (setting && std::string(setting) == "0") return;
  const auto available = available_memory();
  if (!available) return;
  tasks::require_fits(config, tasks::estimate_footprint(config), device.is_cpu(), *available);
}

}  // namespace

std::string error_text(const std::exception& error) {
  // LibTorch's errors carry a C++ stack trace of 16-24 frames after the message: the message is what a user needs.
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) return torch_error->what_without_backtrace();
  return error.what();
}

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options)
    : TrainingSession(std::move(config), std::move(options), false) {}

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options, bool resuming)
    : config_(std::move(config)), options_(std::move(options)), resuming_(resuming) {}

std::unique_ptr<TrainingSession> TrainingSession::resume(const std::string& run_path) {
  const store::RunReader reader(run_path);
  auto config = config::stored_config(reader.header().config_json, run_path);
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

TrainingResult TrainingSession::run() {
  const torch::Device device = resolve_device(config_.train.device);
  {
    std::lock_guard<std::mutex> lock(device_name_mutex_);
    device_name_ = device.str();
  }
  // This run's own stream of the CPU generator (random_stream.h): runs side by side in one process draw what each
  // draws alone. Seeded before the model is built, so the same config gives the same run.
  RandomStream random_stream;
  const CurrentRandomStream current_stream(&random_stream);
  verify_training_data(config_);
  check_memory(config_, device);
  Engine engine;
  random_stream.seed_and_initialise(config_.train.seed, [&] { engine = make_engine(config_, device); });
  Trainer& trainer = *engine.trainer;
  auto writer = open_run(trainer, config_, options_, resuming_, device);
  trainer.add_sink(writer.get());
  for (auto* sink : extra_sinks_) trainer.add_sink(sink);
  trainer.set_checkpoint_store(writer.get());
  trainer.set_control(&control_);
  // --max-steps: exactly the batches left to that step, however the metric interval and the epochs fall.
  if (step_limit_ > 0) control_.limit_batches(std::max<int64_t>(0, step_limit_ - trainer.step()));
  if (on_start_) {
    on_start_({trainer.total_steps(), trainer.step(), engine.description, device.str(), trainer.metric_name()});
  }
  TrainingResult result = trainer.run();
  writer->flush();
  return result;
}

void TrainingSession::start(std::function<void(const TrainingResult&, const std::string& error)> done) {
  join();
  running_.store(true);
  worker_ = std::thread([this, done = std::move(done)] {
    // OpenMP's thread count is per calling thread: a new thread would use every core, not the count set once at
    // start-up (measured: the GUI's runs went 20 % faster than headless ones on 2 threads instead of 1).
    at::init_num_threads();
    TrainingResult result;
    std::string error;
    try {
      result = run();
    } catch (const std::exception& failure) {
      error = error_text(failure);
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
