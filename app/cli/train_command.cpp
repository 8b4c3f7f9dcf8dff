// descentlab-cli train: runs an experiment into a run file — layerwise descent (ERM or constrained) or sparse
// training (tiny ViT / GPT with AdamW, HAM or HORST, dense or AC/DC) — with a progress
// line on a terminal, Ctrl-C that stops cleanly after the current batch (the state is kept as "latest"), and
// --resume that continues a run file from its "latest" checkpoint.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "app/cli/commands.h"
#include "app/cli/launcher.h"
#include "app/cli/train_options.h"
#include "core/config/experiment_config.h"
#include "core/config/footprint.h"
#include "core/config/json_reader.h"
#include "core/data/data_file.h"
#include "core/record/checkpoint.h"
#include "core/record/metrics.h"
#include "core/session/control.h"
#include "core/session/host_sync_probe.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "core/util/number_text.h"
#include "core/util/system_memory.h"

namespace descentlab::cli {
namespace metric = record::metric;
namespace {

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
class ProgressPrinter : public record::MetricSink {
 public:
  explicit ProgressPrinter(int64_t epochs) : epochs_(epochs), terminal_(::isatty(STDERR_FILENO) != 0) {}

  // Called by the session once the task is built (on the training thread, before the first batch).
  void begin(const session::SessionStart& start) {
    total_steps_ = start.total_steps;
    first_step_ = start.first_step;
    metric_ = start.metric;
    started_ = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%s\n", start.description.c_str());
  }

  void scalar(const std::string& name, int64_t step, double, double value) override {
    if (name == metric::kLoss) loss_ = value;
    if (name == metric::kEpoch) epoch_ = value;
    if (name == metric::kThroughput) {
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
  void histogram(const record::HistogramSnapshot&) override {}
  void sweep(const record::SweepResult&) override {}

 private:
  int64_t total_steps_ = 0, epochs_, first_step_ = 0;
  std::string metric_;
  bool terminal_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  double loss_ = 0.0, epoch_ = 0.0;
};

// Runs a session with progress, --max-steps and Ctrl-C/SIGTERM wired in; returns its result.
session::TrainingResult run_controlled(session::TrainingSession& session, const TrainOptions& options) {
  ProgressPrinter progress(session.config().train.epochs);
  session.add_sink(&progress);
  session.on_start([&](const session::SessionStart& start) {
    progress.begin(start);
    if (start.first_step > 0) {
      std::fprintf(stderr, "%s %s at step %lld\n", options.branch.empty() ? "resuming" : "continuing the branch",
                   session.run_path().c_str(), static_cast<long long>(start.first_step));
    }
  });
  session.set_step_limit(options.max_steps);  // exact: not at the next metric interval or epoch end
  interrupted.store(false);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    while (!finished.load()) {
      if (interrupted.load()) {
        session.stop();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  session::TrainingResult result;
  try {
    result = session.run();
  } catch (...) {
    finished.store(true);
    watcher.join();
    throw;
  }
  finished.store(true);
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return result;
}

// The step, value and loss of a run file's last test evaluation (the loss NaN when the file has none); nothing when
// the file has no evaluation of `metric`.
struct LastTest {
  int64_t step = 0;
  double value = 0.0;
  double loss = 0.0;
};

std::optional<LastTest> last_test_of(const std::string& run_path, const std::string& metric) {
  const store::RunReader reader(run_path);
  const auto names = reader.metric_names();
  const std::string value_name = record::test_series(metric);
  if (std::find(names.begin(), names.end(), value_name) == names.end()) return std::nullopt;
  const auto values = reader.metric(value_name);
  if (values.rows() == 0) return std::nullopt;
  double loss = std::numeric_limits<double>::quiet_NaN();
  if (std::find(names.begin(), names.end(), metric::kTestLoss) != names.end()) {
    const auto losses = reader.metric(metric::kTestLoss);
    if (losses.rows() > 0) loss = losses.values.back();
  }
  return LastTest{values.steps.back(), values.values.back(), loss};
}

// The summary's "test": this call's evaluation, the run file's last one (already finished), or none yet.
nlohmann::json test_summary(const session::TrainingResult& result, bool already_finished,
                            const std::optional<LastTest>& last_test) {
  if (last_test) {  // already finished: the run file's last evaluation, marked as such
    return {{"metric", result.metric},
            {"value", last_test->value},
            {"loss", std::isfinite(last_test->loss) ? nlohmann::json(last_test->loss) : nlohmann::json()},
            {"step", last_test->step},
            {"note", "no new evaluation in this call: the run file's last evaluation"}};
  }
  if (!result.evaluated) {  // stopped before its first evaluation: no number is better than a 0
    return {{"metric", result.metric},
            {"value", nullptr},
            {"loss", nullptr},
            {"note", already_finished ? "no new evaluation in this call" : "not evaluated yet"}};
  }
  return {{"metric", result.metric}, {"value", result.test_metric}, {"loss", result.test_loss}};
}

// What the memory check estimated (core/config/footprint.h) beside what this process used: its peak resident size
// less what it held before the run was set up (the libraries). scripts/memory_estimate.sh compares them.
nlohmann::json memory_summary(const config::ExperimentConfig& config, long long resident_before) {
  const config::Footprint footprint = config::estimate_footprint(config);
  const long long peak = resident_memory().peak;
  return {{"estimated_bytes", footprint.total()},
          {"estimated_model_bytes", footprint.model_bytes},
          {"estimated_activation_bytes", footprint.activation_bytes},
          {"estimated_data_bytes", footprint.data_bytes},
          {"resident_before_bytes", resident_before},
          {"peak_resident_bytes", peak},
          {"used_bytes", peak - resident_before}};
}

// --json: the fields every run has, merged with the engine's own.
nlohmann::json run_summary(const session::TrainingResult& result, const session::TrainingSession& session,
                           const TrainOptions& options, const session::HostSyncProbe* probe, bool already_finished,
                           const std::optional<LastTest>& last_test) {
  const auto& data_parallel = session.data_parallel();
  nlohmann::json summary = {
      {"run", session.run_path()},
      {"experiment", session.config().name},
      {"device", session.device_name()},
      {"steps", result.steps},
      {"epochs_completed", result.epochs_completed},
      {"stopped", result.stopped},
      {"seconds", result.seconds},
      {"steps_per_second", result.steps_per_second},
      {"test", test_summary(result, already_finished, last_test)},
  };
  if (already_finished) summary["already_finished"] = true;
  if (data_parallel.world_size > 1) {
    summary["data_parallel"] = {{"world_size", data_parallel.world_size},
                                {"backend", session::data_parallel_backend(data_parallel)},
                                {"communication_seconds", session.communication_seconds()}};
  }
  summary.merge_patch(result.extra);
  summary["memory"] = memory_summary(session.config(), options.resident_before);
  if (probe) {
    const auto counts = probe->counts();
    summary["host_syncs"] = {{"scalar_reads", counts.scalar_reads},
                             {"device_to_host_copies", counts.device_to_host_copies},
                             {"blocking_host_to_device_copies", counts.blocking_host_to_device_copies},
                             {"device_nonzero", counts.device_nonzero},
                             {"total", counts.total()}};
  }
  return summary;
}

// Reports a stop, prints the JSON summary with --json, and returns the exit code: 130 when Ctrl-C stopped the run.
int finish_run(const session::TrainingResult& result, const session::TrainingSession& session,
               const TrainOptions& options, const session::HostSyncProbe* probe) {
  // In a data-parallel run rank 0 speaks for all (every rank holds the same result).
  if (session.data_parallel().rank > 0) return result.stopped && interrupted.load() ? kInterrupted : kOk;
  if (result.stopped) {
    std::fprintf(stderr, "\nstopped at step %lld; resume with: descentlab-cli train --resume %s\n",
                 static_cast<long long>(result.steps), session.run_path().c_str());
  }
  // A resumed run that was already finished trains and evaluates nothing: say so, and give its last evaluation
  // from the run file rather than no number (or a 0).
  const bool already_finished = !result.stopped && !result.evaluated && result.steps > 0;
  std::optional<LastTest> last_test;
  if (already_finished) {
    last_test = last_test_of(session.run_path(), result.metric);
    if (last_test) {
      std::fprintf(stderr,
                   "the run was already finished at step %lld: nothing to train and no new evaluation in this call; "
                   "its last test %s is %s (step %lld)\n",
                   static_cast<long long>(result.steps), result.metric.c_str(), number_text(last_test->value).c_str(),
                   static_cast<long long>(last_test->step));
    } else {
      std::fprintf(stderr, "the run was already finished at step %lld: nothing to train in this call\n",
                   static_cast<long long>(result.steps));
    }
  }
  if (options.json) {
    std::cout << run_summary(result, session, options, probe, already_finished, last_test).dump(2) << "\n";
  }
  if (probe) {
    const auto counts = probe->counts();
    std::fprintf(stderr,
                 "host syncs: %lld in %lld steps (scalar reads %lld, device-to-host copies %lld, blocking "
                 "host-to-device copies %lld, nonzero on the device %lld)\n",
                 static_cast<long long>(counts.total()), static_cast<long long>(result.steps),
                 static_cast<long long>(counts.scalar_reads), static_cast<long long>(counts.device_to_host_copies),
                 static_cast<long long>(counts.blocking_host_to_device_copies),
                 static_cast<long long>(counts.device_nonzero));
  }
  return result.stopped && interrupted.load() ? kInterrupted : kOk;
}

int run_train(const TrainOptions& given) {
  TrainOptions options = given;
  options.resident_before = resident_memory().resident;
  if (!options.resume.empty()) {
    check_resume_options(options, session::data_parallel_from_environment().rank == 0);
  }
  if (options.nproc > 1) return launch_local_processes(options.nproc, options.timeout_seconds);
  // A rank of a data-parallel launch (torchrun, srun, mpirun wrappers, --nproc): its place from the environment.
  session::DataParallelOptions data_parallel = session::data_parallel_from_environment();
  // A rank talks to the others over sockets. When one dies, a write to it must fail with EPIPE, which the collective
  // turns into an error naming itself, not kill this rank with SIGPIPE before it can say anything (CI saw it once:
  // "rank 0 was killed by signal 13" after rank 1 was killed, instead of rank 0's own error).
  if (data_parallel.world_size > 1) std::signal(SIGPIPE, SIG_IGN);
  data_parallel.backend = options.backend;
  data_parallel.timeout_seconds = options.timeout_seconds;
  std::unique_ptr<session::TrainingSession> session;
  if (!options.branch.empty()) {
    BranchRequest request = branch_request(options);
    session::SessionOptions session_options;
    session_options.run_path = options.out;
    session_options.overwrite = options.overwrite;
    session_options.model_file = absolute_or_empty(options.model_file);
    session_options.data_file = absolute_or_empty(options.data_file);
    session =
        session::TrainingSession::branch(request.parent, request.step, std::move(request.config), session_options);
    std::fprintf(stderr, "branching %s into %s: %s\n", request.parent.c_str(), options.out.c_str(),
                 session->branch_changes().empty() ? "nothing changed" : session->branch_changes().c_str());
    for (const auto& note : session->branch_notes()) std::fprintf(stderr, "  %s\n", note.c_str());
  } else if (!options.resume.empty()) {
    session = session::TrainingSession::resume(
        options.resume, data_parallel, {absolute_or_empty(options.model_file), absolute_or_empty(options.data_file)});
  } else {
    if (options.out.empty()) throw config::ConfigError("train", "--out", "the run file to write is required");
    auto config = experiment_of(options);
    session::SessionOptions session_options;
    session_options.run_path = options.out;
    session_options.overwrite = options.overwrite;
    session = std::make_unique<session::TrainingSession>(std::move(config), session_options);
    session->set_data_parallel(data_parallel);
  }
  if (!options.device.empty()) session->set_device(options.device);
  std::unique_ptr<session::HostSyncProbe> probe;
  if (options.count_host_syncs) probe = std::make_unique<session::HostSyncProbe>();
  const session::TrainingResult result = run_controlled(*session, options);
  return finish_run(result, *session, options, probe.get());
}

// Every config key with its explanation, type, range and default, then the presets: `train --help-config`, and
// docs/config.md (which is this text; the check cli.help_config keeps the two equal).
std::string config_help_text() {
  std::ostringstream out;
  out << "# Experiment config keys\n\n"
         "A run is configured by a preset (--preset NAME --size quick|full|large) or a JSON file (--config FILE), "
         "then\n"
         "--set KEY=VALUE overrides. Keys are grouped in sections; a key a file leaves out keeps its default.\n"
         "Sizes: quick (the default: small data, a minute or two on 2 CPU cores), full (the studies' data and\n"
         "epochs), large (full's data, 8 layers of width 512 with 8 heads and ff_width 2048: 25.3 M parameters for\n"
         "vit, 25.4 M video, 25.5 M gpt, 30.4 M text; sized for one GPU, about 10 s a step on one CPU core).\n";
  std::string section;
  for (const auto& info : config::config_schema()) {
    const auto dot = info.key.find('.');
    const std::string here = dot == std::string::npos ? "experiment" : info.key.substr(0, dot);
    if (here != section) {
      section = here;
      out << "\n## " << section << "\n\n";
    }
    std::string kind = info.type;
    if (!info.choices.empty()) {
      kind.clear();
      for (const auto& word : info.choices) kind += (kind.empty() ? "" : " | ") + word;
    }
    if (!info.range.empty()) kind += ", " + info.range;
    const std::string fallback =
        info.default_value.is_string() ? info.default_value.get<std::string>() : info.default_value.dump();
    out << "- `" << info.key << "` (" << kind << "; default " << fallback << "): " << info.about << "\n";
  }
  out << "\n## Presets\n\n";
  for (const auto& name : config::preset_names()) {
    out << "- `" << name << "`: " << config::preset_description(name) << "\n";
  }
  return out.str();
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* train = app.add_subcommand(
      "train", "Train an experiment (layerwise descent, or sparse training with HORST) into a run file");
  train->add_option("--preset", options->preset,
                    "A built-in preset: text-erm, text-constrained, video-erm, video-constrained, vit-adamw, vit-ham, "
                    "vit-horst, gpt-adamw, gpt-ham, gpt-horst");
  CLI::Option* size =
      train->add_option("--size", options->size, "Preset size")->check(CLI::IsMember({"quick", "full", "large"}));
  train->add_option("--config", options->config_file, "An experiment config file (JSON)");
  train->add_option(
      "--model", options->model_file,
      "Your own model: a TorchScript module file (with --data; docs/your-model.md). With --resume or --branch: "
      "where the run's module is now (checked against the SHA-256 it recorded)");
  train->add_option(
      "--data", options->data_file,
      "Your own data: an HDF5 file with train/x, train/y, test/x, test/y and a task attribute. With --resume or "
      "--branch: where the run's data file is now (checked against the SHA-256 it recorded)");
  train->add_flag("--layerwise", options->layerwise,
                  "With --model: train it by layerwise descent (the module's layer_outputs(x); ERM, or constrained "
                  "with --set constraints.enabled=true) instead of the sparse engine");
  train->add_option("--optimizer", options->optimizer, "The optimizer (optimizer.name): adamw, ham or horst")
      ->check(CLI::IsMember({"adamw", "ham", "horst"}));
  train->add_option("--set", options->overrides, "Override a config key, e.g. --set model.layers=6 (repeatable)");
  train->add_option("--out", options->out, "The run file to write (.h5)");
  train->add_flag("--overwrite", options->overwrite, "Replace an existing run file");
  train->add_option("--resume", options->resume, "Continue this run file from its \"latest\" checkpoint");
  train->add_option("--branch", options->branch,
                    "RUN.h5[@STEP]: a new run (--out CHILD.h5) that continues RUN's checkpoint at STEP (default its "
                    "\"latest\") exactly, with the settings --set changes (those that may change mid-run: "
                    "docs/cli.md); RUN is only read");
  train->add_option("--device", options->device, "auto, cpu or cuda (overrides the config)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  train->add_flag("--json", options->json, "Print a JSON summary at the end");
  train
      ->add_option("--nproc", options->nproc,
                   "Train with this many processes on this machine (data parallel over c10d/Gloo; train.batch_size "
                   "is the global batch, split over them). Under a launcher (torchrun, srun) leave it out: RANK, "
                   "WORLD_SIZE, MASTER_ADDR and MASTER_PORT say the same (docs/scale-out.md)")
      ->check(CLI::Range(1, 1024));
  train->add_option("--backend", options->backend, "The data-parallel backend: auto (Gloo), gloo or nccl")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  train
      ->add_option("--timeout", options->timeout_seconds,
                   "Seconds a data-parallel rank waits for the others (rendezvous and each collective) before it "
                   "gives up with an error naming the collective")
      ->check(CLI::Range(1.0, 86400.0));
  train
      ->add_option("--max-steps", options->max_steps,
                   "Stop once the run has done exactly this many steps in all (the state at that step is kept as "
                   "\"latest\"; --resume continues). 0 keeps a new run's initial state, its seeded initial weights, "
                   "as \"latest\" without training a step (examples/export_builtin_vit.py reads them)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000000}));
  train->add_flag("--count-host-syncs", options->count_host_syncs,
                  "Count the operations that make the host wait for the device (scalar reads, device-to-host and "
                  "blocking host-to-device copies) over the whole run, and report them (slows the run a little)");
  train->add_flag_callback(
      "--help-config",
      [] {
        std::cout << config_help_text();
        throw CLI::Success();
      },
      "Print every config key (what it does, type, range, default) and the presets, then exit");
  train->callback([options, size, &exit_code]() {
    options->size_given = size->count() > 0;
    exit_code = run_train(*options);
  });
}

}  // namespace descentlab::cli
