// descentlab-cli train: runs an experiment into a run file — layerwise descent (ERM or constrained) or sparse
// training (tiny ViT / GPT with AdamW, HAM or HORST, dense or AC/DC) — with a progress
// line on a terminal, Ctrl-C that stops cleanly after the current batch (the state is kept as "latest"), and
// --resume that continues a run file from its "latest" checkpoint.

#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "app/cli/commands.h"
#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/eval/weight_histograms.h"
#include "core/runtime.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/sparse_trainer.h"

namespace descentlab::cli {
namespace {

struct TrainOptions {
  std::string preset;
  std::string size = "quick";
  std::string config_file;
  std::vector<std::string> overrides;
  std::string out;
  std::string resume;
  std::string device;
  int64_t max_steps = 0;
  bool json = false;
  bool overwrite = false;
};

std::atomic<bool> interrupted{false};
extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto total = static_cast<int64_t>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return text;
}

// Prints progress: a rewritten line on a terminal, one line per epoch otherwise. Writes to stderr, so stdout
// carries only the JSON summary.
class ProgressPrinter : public train::MetricSink {
 public:
  ProgressPrinter(int64_t total_steps, int64_t epochs, int64_t first_step, std::string metric)
      : total_steps_(total_steps),
        epochs_(epochs),
        first_step_(first_step),
        metric_(std::move(metric)),
        terminal_(::isatty(STDERR_FILENO) != 0),
        started_(std::chrono::steady_clock::now()) {}

  void scalar(const std::string& name, int64_t step, double, double value) override {
    if (name == "loss") loss_ = value;
    if (name == "epoch") epoch_ = value;
    if (name == "throughput") {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      const double rate = elapsed > 0 ? static_cast<double>(step - first_step_) / elapsed : 0.0;
      const double eta = rate > 0 ? static_cast<double>(total_steps_ - step) / rate : -1.0;
      if (terminal_) {
        std::fprintf(stderr, "\r  epoch %.2f/%lld  step %lld/%lld  loss %.4f  %.1f steps/s  ETA %s   ", epoch_,
                     static_cast<long long>(epochs_), static_cast<long long>(step),
                     static_cast<long long>(total_steps_), loss_, rate, clock_text(eta).c_str());
        std::fflush(stderr);
      }
    }
    if (name == "test_" + metric_) {
      std::fprintf(stderr, "%s  epoch %.0f  step %lld  train loss %.4f  test %s %.4f\n", terminal_ ? "\r" : "", epoch_,
                   static_cast<long long>(step), loss_, metric_.c_str(), value);
    }
  }
  void vector(const std::string&, int64_t, double, const std::vector<double>&) override {}
  void histogram(const train::HistogramSnapshot&) override {}
  void sweep(const train::SweepResult&) override {}

 private:
  int64_t total_steps_, epochs_, first_step_;
  std::string metric_;
  bool terminal_;
  std::chrono::steady_clock::time_point started_;
  double loss_ = 0.0, epoch_ = 0.0;
};

// Runs a trainer with the run file, progress, --max-steps and Ctrl-C/SIGTERM wired in; returns its result.
template <typename Trainer>
auto run_controlled(Trainer& trainer, store::RunWriter& writer, const TrainOptions& options, int64_t epochs,
                    const std::string& metric) -> decltype(trainer.run()) {
  ProgressPrinter progress(trainer.total_steps(), epochs, trainer.step(), metric);
  trainer.add_sink(&writer);
  trainer.add_sink(&progress);
  trainer.set_run_writer(&writer);
  train::TrainingControl control;
  trainer.set_control(&control);
  train::StepBudget budget(control, options.max_steps);
  trainer.add_sink(&budget);
  interrupted.store(false);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    while (!finished.load()) {
      if (interrupted.load()) {
        control.stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  decltype(trainer.run()) result;
  try {
    result = trainer.run();
  } catch (...) {
    finished.store(true);
    watcher.join();
    throw;
  }
  finished.store(true);
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  writer.flush();
  return result;
}

// A new run file, or the resumed one cut back to the checkpoint's step once the trainer has restored it.
template <typename Trainer>
std::unique_ptr<store::RunWriter> open_run(Trainer& trainer, const config::ExperimentConfig& config,
                                           const TrainOptions& options, const std::string& run_path,
                                           const store::CheckpointData* resume_state, const torch::Device& device) {
  if (resume_state) {
    auto writer = store::RunWriter::open(run_path);
    trainer.resume_from(*resume_state, run_path, "latest");
    writer->truncate_after(resume_state->step);
    std::fprintf(stderr, "resuming %s at step %lld\n", run_path.c_str(), static_cast<long long>(resume_state->step));
    return writer;
  }
  const auto info = runtime_info();
  store::RunHeader header;
  header.app_version = info.descentlab_version;
  header.torch_version = info.torch_version;
  header.device = device.str();
  header.config_json = config.to_json().dump();
  store::RunWriterOptions writer_options;
  writer_options.overwrite = options.overwrite;
  return store::RunWriter::create(run_path, header, writer_options);
}

// Reports a stop, prints the JSON summary with --json (the fields every run has, merged with the engine's
// `extra`), and returns the exit code: 130 when Ctrl-C stopped the run.
template <typename Result>
int finish_run(const Result& result, const config::ExperimentConfig& config, const TrainOptions& options,
               const std::string& run_path, const torch::Device& device, const std::string& metric,
               const nlohmann::json& extra) {
  if (result.stopped) {
    std::fprintf(stderr, "\nstopped at step %lld; resume with: descentlab-cli train --resume %s\n",
                 static_cast<long long>(result.steps), run_path.c_str());
  }
  if (options.json) {
    nlohmann::json summary = {
        {"run", run_path},
        {"experiment", config.name},
        {"device", device.str()},
        {"steps", result.steps},
        {"epochs_completed", result.epochs_completed},
        {"stopped", result.stopped},
        {"seconds", result.seconds},
        {"steps_per_second", result.steps_per_second},
        {"test", {{"metric", metric}, {"value", result.test.metric}, {"loss", result.test.loss}}},
    };
    summary.merge_patch(extra);
    std::cout << summary.dump(2) << "\n";
  }
  return result.stopped && interrupted.load() ? 130 : 0;
}

int train_layerwise(const config::ExperimentConfig& config, const TrainOptions& options, const std::string& run_path,
                    const store::CheckpointData* resume_state, const torch::Device& device) {
  auto task = train::make_task(config, data::default_data_root(), device);
  std::fprintf(stderr, "%s: %s\n", config.name.c_str(), task->describe().c_str());
  train::LayerwiseTrainer trainer(config, *task, device);
  auto writer = open_run(trainer, config, options, run_path, resume_state, device);
  const train::TrainingResult result =
      run_controlled(trainer, *writer, options, config.train.epochs, task->metric_name());
  return finish_run(
      result, config, options, run_path, device, task->metric_name(),
      {{"test", {{"layer_loss", result.test.layer_loss}, {"descending_frequency", result.test.descending_frequency}}},
       {"lambda", result.lambda}});
}

int train_sparse(const config::ExperimentConfig& config, const TrainOptions& options, const std::string& run_path,
                 const store::CheckpointData* resume_state, const torch::Device& device) {
  auto task = train::make_sparse_task(config, data::default_data_root(), device);
  std::fprintf(stderr, "%s: %s; optimizer %s, sparsity %s\n", config.name.c_str(), task->describe().c_str(),
               config.optimizer.name.c_str(),
               config.sparsity.method == "none"
                   ? "none (dense)"
                   : (config.sparsity.method + " to " + std::to_string(config.sparsity.target)).c_str());
  train::SparseTrainer trainer(config, *task, device);
  auto writer = open_run(trainer, config, options, run_path, resume_state, device);
  const train::SparseTrainingResult result =
      run_controlled(trainer, *writer, options, config.train.epochs, task->metric_name());
  return finish_run(
      result, config, options, run_path, device, task->metric_name(),
      {{"optimizer", config.optimizer.name},
       {"sparsity", result.sparsity},
       {"near_zero_share", {{"thresholds", eval::default_near_zero_thresholds()}, {"share", result.near_zero_share}}}});
}

int run_train(const TrainOptions& options) {
  config::ExperimentConfig config;
  std::unique_ptr<store::CheckpointData> resume_state;
  std::string run_path;
  if (!options.resume.empty()) {
    if (!options.preset.empty() || !options.config_file.empty() || !options.overrides.empty()) {
      throw config::ConfigError("--resume", "",
                                "a resumed run keeps its own configuration; drop --preset/--config/--set");
    }
    run_path = options.resume;
    const store::RunReader reader(run_path);
    config =
        config::ExperimentConfig::from_json(nlohmann::json::parse(reader.header().config_json), run_path + " (config)");
    if (!reader.has_checkpoint("latest")) {
      throw store::RunFileError(store::RunFileError::Kind::MissingObject, run_path, "/checkpoints/latest",
                                "no checkpoint to resume from");
    }
    resume_state = std::make_unique<store::CheckpointData>(reader.checkpoint("latest"));
  } else {
    if (options.preset.empty() == options.config_file.empty()) {
      throw config::ConfigError("train", "", "give exactly one of --preset NAME or --config FILE");
    }
    if (options.out.empty()) throw config::ConfigError("train", "--out", "the run file to write is required");
    config = config::load_experiment(options.preset, options.size, options.config_file, options.overrides);
    run_path = options.out;
  }
  if (!options.device.empty()) config.train.device = options.device;
  const torch::Device device = train::resolve_device(config.train.device);

  // Seeds before the model is built, so the same config gives the same run.
  torch::manual_seed(config.train.seed);
  if (config.is_layerwise()) return train_layerwise(config, options, run_path, resume_state.get(), device);
  return train_sparse(config, options, run_path, resume_state.get(), device);
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* train = app.add_subcommand(
      "train", "Train an experiment (layerwise descent, or sparse training with HORST) into a run file");
  train->add_option("--preset", options->preset,
                    "A built-in preset: text-erm, text-constrained, video-erm, video-constrained, vit-adamw, vit-ham, "
                    "vit-horst, gpt-adamw, gpt-ham, gpt-horst");
  train->add_option("--size", options->size, "Preset size")->check(CLI::IsMember({"quick", "full"}));
  train->add_option("--config", options->config_file, "An experiment config file (JSON)");
  train->add_option("--set", options->overrides, "Override a config key, e.g. --set model.layers=6 (repeatable)");
  train->add_option("--out", options->out, "The run file to write (.h5)");
  train->add_flag("--overwrite", options->overwrite, "Replace an existing run file");
  train->add_option("--resume", options->resume, "Continue this run file from its \"latest\" checkpoint");
  train->add_option("--device", options->device, "auto, cpu or cuda (overrides the config)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  train->add_flag("--json", options->json, "Print a JSON summary at the end");
  train
      ->add_option("--max-steps", options->max_steps,
                   "Stop once this many steps are done (the state is kept as \"latest\"; --resume continues)")
      ->check(CLI::PositiveNumber);
  train->callback([options, &exit_code]() { exit_code = run_train(*options); });
}

}  // namespace descentlab::cli
