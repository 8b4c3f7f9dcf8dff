// descentlab-cli sweep RUN.h5: robustness sweeps of a trained model, stored in the run file.
// descentlab-cli compare A.h5 B.h5: per-layer test losses, metric and sweep tables side by side.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/study_command.h"
#include "core/config/experiment_config.h"
#include "core/data/catalog.h"
#include "core/data/data_file.h"
#include "core/record/checkpoint.h"
#include "core/record/descent_certificate.h"
#include "core/record/metrics.h"
#include "core/record/noise.h"
#include "core/record/sweep_statistics.h"
#include "core/session/sweep_session.h"
#include "core/store/run_reader.h"

namespace descentlab::cli {
namespace {

struct SweepCommandOptions {
  std::string run;
  std::string noise;  // empty: every kind the run's model takes (core/record/noise.h)
  std::string gamma = "0:2:0.25";
  int64_t seeds = 3;
  int64_t limit = 0;
  std::string checkpoint = record::checkpoint_label::kLatest;
  std::string device;
  bool json = false;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// Mean and standard deviation over seeds, and the per-layer loss mean, for each gamma.
nlohmann::json sweep_table(const record::SweepResult& sweep) {
  const size_t seeds = sweep.seeds.size();
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : record::sweep_statistics(sweep)) {
    rows.push_back({{"gamma", row.gamma},
                    {"mean", row.metric.mean},
                    {"std", row.metric.std},
                    {"layer_loss", row.layer_loss_mean}});
  }
  return {{"noise", sweep.noise}, {"metric", sweep.metric_name}, {"seeds", seeds}, {"rows", rows}};
}

void print_sweep_table(const nlohmann::json& table) {
  std::printf("\n%s noise: %s (mean ± std over %zu seeds), per-layer loss f_0..f_L\n",
              table["noise"].get<std::string>().c_str(), table["metric"].get<std::string>().c_str(),
              table["seeds"].get<size_t>());
  for (const auto& row : table["rows"]) {
    std::string layers;
    for (const auto& value : row["layer_loss"]) {
      char cell[16];
      std::snprintf(cell, sizeof cell, " %.3f", value.get<double>());
      layers += cell;
    }
    std::printf("  gamma %5.2f   %.4f ± %.4f   %s\n", row["gamma"].get<double>(), row["mean"].get<double>(),
                row["std"].get<double>(), layers.c_str());
  }
}

int run_sweep_command(const SweepCommandOptions& options) {
  // The desktop lab's sweep, on this thread: one noise after another, each stored once it is whole.
  nlohmann::json tables = nlohmann::json::object();
  std::vector<std::string> noises = split_list(options.noise);
  if (noises.empty()) {
    const auto config = config::stored_config(store::RunReader(options.run).header().config_json, options.run);
    // A user's module: the noise its inputs take (tokens: discrete; floats: gaussian and uniform).
    if (config::is_user_model(config.task)) {
      noises = data::has_integer_inputs(config.data.file)
                   ? std::vector<std::string>{record::noise::kDiscrete}
                   : std::vector<std::string>{record::noise::kGaussian, record::noise::kUniform};
    } else {
      noises = record::noise_kinds(config.task == config::Task::video);
    }
  }
  for (const auto& noise : noises) {
    session::SweepRequest request;
    request.run_path = options.run;
    request.checkpoint = options.checkpoint;
    request.noise = noise;
    request.gamma = options.gamma;
    request.seeds = options.seeds;
    request.limit = options.limit;
    request.device = options.device;
    session::SweepSession session(request);
    bool announced = false;
    session.on_progress([&](const session::SweepProgress& progress) {
      if (announced) return;
      announced = true;
      std::fprintf(stderr, "sweeping %s noise over %zu strengths x %lld seeds...\n", noise.c_str(), progress.gammas,
                   static_cast<long long>(options.seeds));
    });
    const record::SweepResult sweep = session.run();
    tables[noise] = sweep_table(sweep);
    if (!options.json) print_sweep_table(tables[noise]);
  }
  if (options.json) {
    std::cout << nlohmann::json{{"run", options.run}, {"checkpoint", options.checkpoint}, {"sweeps", tables}}.dump(2)
              << "\n";
  }
  return 0;
}

// The series `compare` sets side by side: each run's last row.
constexpr const char* kCompared[] = {record::metric::kTestAccuracy, record::metric::kTestRmse,
                                     record::metric::kTestLayerLoss, record::metric::kTestDescendingFrequency,
                                     record::metric::kLambda};

nlohmann::json last_row(const store::RunReader& reader, const std::string& name) {
  const auto names = reader.metric_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return nullptr;
  const auto series = reader.metric(name);
  if (series.rows() == 0) return nullptr;
  const auto last = series.values.end() - series.width;
  return series.shape == record::SeriesShape::Scalar ? nlohmann::json(*last)
                                                     : nlohmann::json(std::vector<double>(last, series.values.end()));
}

// The descent certificate of the run's last evaluation (core/record/descent_certificate.h); null for sparse runs and
// for layerwise runs recorded before the per-sample counts existed.
nlohmann::json certificate_json(const nlohmann::json& frequency, const nlohmann::json& counts,
                                const nlohmann::json& layer_loss) {
  if (!frequency.is_array() || !counts.is_array()) return nullptr;
  const auto certificate = record::descent_certificate(
      frequency.get<std::vector<double>>(), counts.get<std::vector<double>>(),
      layer_loss.is_array() ? layer_loss.get<std::vector<double>>() : std::vector<double>{});
  if (!certificate.valid()) return nullptr;
  const auto interval = [](const record::ShareInterval& share) {
    return nlohmann::json{{"share", share.share},
                          {"low", share.low},
                          {"high", share.high},
                          {"descending", share.count},
                          {"pairs", share.total}};
  };
  nlohmann::json layers = nlohmann::json::array();
  for (size_t l = 0; l < certificate.per_layer.size(); ++l) {
    nlohmann::json entry = interval(certificate.per_layer[l]);
    entry["layer"] = l + 1;
    layers.push_back(entry);
  }
  return {{"samples", certificate.samples},
          {"overall", interval(certificate.overall)},
          {"per_layer", layers},
          {"interval", "95 %: per layer Wilson score over samples; overall percentile bootstrap over samples (2000)"},
          {"mean_curve_monotone", certificate.mean_monotone},
          {"mean_curve_rises_at", certificate.mean_rises}};
}

// constraints.enabled of a stored config; false when the config has no such key (never operator[] on a const json:
// a missing key is undefined behaviour there).
bool constrained(const nlohmann::json& config) {
  const auto constraints = config.is_object() ? config.find("constraints") : config.end();
  if (constraints == config.end() || !constraints->is_object()) return false;
  const auto enabled = constraints->find("enabled");
  return enabled != constraints->end() && enabled->is_boolean() && enabled->get<bool>();
}

nlohmann::json run_summary(const std::string& path) {
  const store::RunReader reader(path);
  const auto config = nlohmann::json::parse(reader.header().config_json, nullptr, false);
  nlohmann::json summary = {{"run", path},
                            {"experiment", config.is_object() ? config.value("name", "") : ""},
                            {"constrained", constrained(config)}};
  for (const char* name : kCompared) summary[name] = last_row(reader, name);
  summary["descent_certificate"] =
      certificate_json(summary[record::metric::kTestDescendingFrequency],
                       last_row(reader, record::metric::kTestDescentCounts), summary[record::metric::kTestLayerLoss]);
  nlohmann::json sweeps = nlohmann::json::object();
  for (const auto& name : reader.sweep_names()) sweeps[name] = sweep_table(reader.sweep(name));
  summary["sweeps"] = sweeps;
  return summary;
}

int run_compare(const std::string& a, const std::string& b, bool json) {
  const nlohmann::json left = run_summary(a);
  const nlohmann::json right = run_summary(b);
  if (json) {
    std::cout << nlohmann::json{{"a", left}, {"b", right}}.dump(2) << "\n";
    return 0;
  }
  const auto show = [](const nlohmann::json& value) { return value.is_null() ? std::string("-") : value.dump(); };
  std::printf("%-28s %-40s %s\n", "", a.c_str(), b.c_str());
  std::printf("%-28s %-40s %s\n", "experiment", show(left["experiment"]).c_str(), show(right["experiment"]).c_str());
  for (const char* key : kCompared) {
    std::printf("%-28s %-40s %s\n", key, show(left[key]).c_str(), show(right[key]).c_str());
  }
  const auto certificate = [](const nlohmann::json& summary) {
    const auto& c = summary["descent_certificate"];
    if (c.is_null()) return std::string("-");
    char text[160];
    std::snprintf(text, sizeof text, "%.1f %% [%.1f, %.1f], mean curve %s", 100.0 * c["overall"]["share"].get<double>(),
                  100.0 * c["overall"]["low"].get<double>(), 100.0 * c["overall"]["high"].get<double>(),
                  c["mean_curve_monotone"].get<bool>() ? "monotone" : "rises");
    return std::string(text);
  };
  std::printf("%-28s %-40s %s\n", "descent certificate", certificate(left).c_str(), certificate(right).c_str());
  for (const auto& [name, table] : left["sweeps"].items()) {
    if (!right["sweeps"].contains(name)) continue;
    std::printf("\n%s noise (%s):  gamma   A mean ± std   B mean ± std\n", name.c_str(),
                table["metric"].get<std::string>().c_str());
    const auto& rows_a = table["rows"];
    const auto& rows_b = right["sweeps"][name]["rows"];
    for (size_t i = 0; i < std::min(rows_a.size(), rows_b.size()); ++i) {
      std::printf("  %5.2f   %.4f ± %.4f   %.4f ± %.4f\n", rows_a[i]["gamma"].get<double>(),
                  rows_a[i]["mean"].get<double>(), rows_a[i]["std"].get<double>(), rows_b[i]["mean"].get<double>(),
                  rows_b[i]["std"].get<double>());
    }
  }
  return 0;
}

}  // namespace

void add_analysis_commands(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SweepCommandOptions>();
  CLI::App* sweep =
      app.add_subcommand("sweep", "Robustness sweep of a trained run; stored under /sweeps in the run file");
  sweep->add_option("run", options->run, "The run file")->required();
  sweep->add_option("--noise", options->noise,
                    "Comma-separated kinds: " + record::noise_list(false) + " (text), " + record::noise_list(true) +
                        " (video); default: every kind the run's model takes");
  sweep->add_option("--gamma", options->gamma, "Strengths: start:stop:step or a,b,c");
  sweep->add_option("--seeds", options->seeds, "Seeds per strength (1 to 1000)")->check(CLI::Range(1, 1000));
  sweep->add_option("--limit", options->limit, "Test samples to use (0: all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000000}));
  sweep->add_option("--checkpoint", options->checkpoint, "Which checkpoint to evaluate (latest, best, ...)");
  sweep->add_option("--device", options->device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sweep->add_flag("--json", options->json, "Print JSON");
  sweep->callback([options, &exit_code]() { exit_code = run_sweep_command(*options); });

  auto study = std::make_shared<StudyCompareOptions>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Two run files side by side (per-layer test losses, metric, sweeps); or a study: the run files below folders "
      "grouped by configuration, each group's final metric, and two groups paired by seed (--pair)");
  compare->add_option("runs", study->inputs, "Two run files, or run files and folders of them")->required();
  compare->add_option("--group-by", study->group_by,
                      "Comma-separated config keys to group by (default: every key that differs but the seeds)");
  compare->add_option("--pair", study->pair, "Two groups to pair seed by seed, each as key=value[,key=value]")
      ->expected(2);
  compare->add_option("--metric", study->metric, "The final metric to compare (default: the runs' test metric)");
  compare->add_flag("--json", study->json, "Print JSON");
  compare->callback([study, compare, &exit_code]() {
    const bool two_files = study->inputs.size() == 2 && !std::filesystem::is_directory(study->inputs[0]) &&
                           !std::filesystem::is_directory(study->inputs[1]);
    const bool as_study = !two_files || compare->count("--group-by") > 0 || compare->count("--pair") > 0 ||
                          compare->count("--metric") > 0;
    exit_code = as_study ? run_study_compare(*study) : run_compare(study->inputs[0], study->inputs[1], study->json);
  });
}

}  // namespace descentlab::cli
