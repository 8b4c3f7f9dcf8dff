// descentlab-cli probe RUN.h5 --sample N: one test sample's prediction at every layer of a layerwise run (issue 17):
// per layer the sample's loss and P(class) (text) or the RMSE of the denoised clip to the clean one (video), under
// the robustness sweeps' noise at strength γ with the sweeps' seed (core/session/layer_probe_session.h).

#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "core/record/checkpoint.h"
#include "core/record/noise.h"
#include "core/session/layer_probe_session.h"

namespace descentlab::cli {
namespace {

struct ProbeOptions {
  std::string run;
  int64_t sample = 0;
  std::string checkpoint = record::checkpoint_label::kLatest;
  std::string noise;  // empty: the model's default kind (record::default_noise)
  double gamma = 0.0;
  int64_t seed = 0;
  std::string device = "cpu";
  bool json = false;
};

// The RMSE of layer l's prediction (or of the input, layer -1) to the clean clip.
double rmse_of(const record::LayerProbe& probe, int64_t layer) {
  const size_t pixels = probe.target.size();
  double squared = 0.0;
  for (size_t p = 0; p < pixels; ++p) {
    const double value = layer < 0 ? probe.input[p] : probe.predictions[static_cast<size_t>(layer) * pixels + p];
    squared += (value - probe.target[p]) * (value - probe.target[p]);
  }
  return std::sqrt(squared / static_cast<double>(pixels));
}

// IMDb's two classes by name; a user's classes by number.
std::string class_name(int64_t label, const std::string& task) {
  if (task != "text") return "class " + std::to_string(label);
  return label == 0 ? "negative" : label == 1 ? "positive" : "class " + std::to_string(label);
}

nlohmann::json to_json(const session::RunProbe& result, const ProbeOptions& options) {
  const record::LayerProbe& probe = result.probe;
  nlohmann::json layers = nlohmann::json::array();
  for (int64_t l = 0; l <= probe.layers; ++l) {
    nlohmann::json layer = {{"layer", l}, {"loss", probe.loss[static_cast<size_t>(l)]}};
    if (probe.classes > 0) {  // text, or a user's classification
      layer["probabilities"] = std::vector<double>(probe.probabilities.begin() + l * probe.classes,
                                                   probe.probabilities.begin() + (l + 1) * probe.classes);
      layer["p_label"] = probe.probability_of_label(l);
    } else if (probe.task == "video") {
      const auto pixels = static_cast<int64_t>(probe.target.size());
      layer["rmse"] = rmse_of(probe, l);
      layer["prediction"] =
          std::vector<double>(probe.predictions.begin() + l * pixels, probe.predictions.begin() + (l + 1) * pixels);
    }
    layers.push_back(layer);
  }
  nlohmann::json out = {{"run", options.run},     {"checkpoint", result.checkpoint},
                        {"step", result.step},    {"epoch", result.epoch},
                        {"task", probe.task},     {"metric", result.metric},
                        {"sample", probe.sample}, {"test_size", probe.test_size},
                        {"noise", probe.noise},   {"gamma", probe.gamma},
                        {"seed", probe.seed},     {"layers", layers}};
  if (probe.classes > 0) {
    out["label"] = probe.label;
    out["classes"] = probe.classes;
  }
  if (probe.task == "text") {
    out["token_ids"] = probe.token_ids;
    out["words"] = probe.words;
    out["text"] = probe.text;
  } else if (probe.task == "video") {
    out["shape"] = {probe.frames, probe.height, probe.width};
    out["input"] = probe.input;
    out["target"] = probe.target;
    out["input_rmse"] = rmse_of(probe, -1);
  }
  return out;
}

void print_table(const session::RunProbe& result, const ProbeOptions& options) {
  const record::LayerProbe& probe = result.probe;
  std::printf(
      "%s, checkpoint \"%s\" (step %lld, epoch %lld): test sample %lld of %lld, noise %s at gamma %g, seed %lld\n",
      options.run.c_str(), result.checkpoint.c_str(), static_cast<long long>(result.step),
      static_cast<long long>(result.epoch), static_cast<long long>(probe.sample),
      static_cast<long long>(probe.test_size), probe.noise.c_str(), probe.gamma, static_cast<long long>(probe.seed));
  if (probe.classes > 0) {
    std::string words;
    for (size_t w = 0; w < probe.words.size() && w < 30; ++w) words += (w ? " " : "") + probe.words[w];
    if (probe.words.size() > 30) words += " ...";
    if (probe.words.empty()) {
      for (size_t w = 0; w < probe.token_ids.size() && w < 30; ++w) {
        words += (w ? " " : "") + std::to_string(probe.token_ids[w]);
      }
    }
    if (probe.task == "text") {
      std::printf("label: %s; the model reads (%zu tokens): %s\n", class_name(probe.label, probe.task).c_str(),
                  probe.token_ids.size(), words.c_str());
    } else {
      std::printf("label: %s\n", class_name(probe.label, probe.task).c_str());
    }
    std::printf("%6s %10s", "layer", "loss");
    for (int64_t c = 0; c < probe.classes; ++c) std::printf(" %12s", ("P(" + class_name(c, probe.task) + ")").c_str());
    std::printf("\n");
    for (int64_t l = 0; l <= probe.layers; ++l) {
      std::printf("%6lld %10.4f", static_cast<long long>(l), probe.loss[static_cast<size_t>(l)]);
      for (int64_t c = 0; c < probe.classes; ++c) {
        std::printf(" %12.4f", probe.probabilities[static_cast<size_t>(l * probe.classes + c)]);
      }
      std::printf("\n");
    }
  } else if (probe.task == "video") {
    std::printf("clip %lldx%lldx%lld; the noisy input's RMSE to the clean clip: %.4f\n",
                static_cast<long long>(probe.frames), static_cast<long long>(probe.height),
                static_cast<long long>(probe.width), rmse_of(probe, -1));
    std::printf("%6s %10s %10s\n", "layer", "loss", "rmse");
    for (int64_t l = 0; l <= probe.layers; ++l) {
      std::printf("%6lld %10.5f %10.4f\n", static_cast<long long>(l), probe.loss[static_cast<size_t>(l)],
                  rmse_of(probe, l));
    }
  } else {  // a user's regression or next-token model: the loss at each layer
    std::printf("%6s %10s\n", "layer", "loss");
    for (int64_t l = 0; l <= probe.layers; ++l) {
      std::printf("%6lld %10.5f\n", static_cast<long long>(l), probe.loss[static_cast<size_t>(l)]);
    }
  }
}

int run_probe(const ProbeOptions& options) {
  session::LayerProbeRequest request;
  request.run_path = options.run;
  request.checkpoint = options.checkpoint;
  request.device = options.device;
  request.settings = {options.sample, options.noise, options.gamma, options.seed};
  const session::RunProbe result = session::probe_run(request);
  if (options.json) {
    std::cout << to_json(result, options).dump(2) << "\n";
  } else {
    print_table(result, options);
  }
  return kOk;
}

}  // namespace

void add_probe_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ProbeOptions>();
  CLI::App* probe = app.add_subcommand(
      "probe",
      "One test sample's prediction at every layer of a layerwise run (text, video, or your own model's), "
      "under noise");
  probe->add_option("run", options->run, "The run file (.h5) of a layerwise run")->required();
  probe->add_option("--sample", options->sample, "The test sample's index (0-based)")->required();
  probe->add_option("--checkpoint", options->checkpoint, "Checkpoint to probe: latest or best");
  probe
      ->add_option("--noise", options->noise,
                   record::noise_list(false) + " (text; default " + record::default_noise(false) + "); " +
                       record::noise_list(true) + " (video)")
      ->check(CLI::IsMember(record::all_noise_kinds()));
  probe->add_option("--gamma", options->gamma, "Noise strength (0: the clean sample), as in sweep's --gamma")
      ->check(CLI::NonNegativeNumber);
  probe->add_option("--seed", options->seed, "The sweep's seed number whose noise is drawn (0, 1, 2, ...)")
      ->check(CLI::NonNegativeNumber);
  probe->add_option("--device", options->device, "auto, cpu or cuda (default cpu)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  probe->add_flag("--json", options->json,
                  "Print everything as JSON: per layer the loss and the class probabilities (text) or the RMSE "
                  "and the predicted clip (video), and the sample itself");
  probe->callback([options, &exit_code]() { exit_code = run_probe(*options); });
}

}  // namespace descentlab::cli
