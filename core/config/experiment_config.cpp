#include "core/config/experiment_config.h"

#include <fstream>
#include <limits>

#include "core/config/json_reader.h"
#include "core/generated/presets.h"

namespace descentlab::config {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();
constexpr int64_t kBig = std::numeric_limits<int32_t>::max();

}  // namespace

ExperimentConfig ExperimentConfig::from_json(const nlohmann::json& document, const std::string& source) {
  ExperimentConfig config;
  JsonReader root(document, source);
  root.read("name", config.name);
  root.read("task", config.task, {"text", "video", "vit", "gpt"});

  JsonReader data = root.child("data");
  data.read("train_limit", config.data.train_limit, 0, kBig);
  data.read("test_limit", config.data.test_limit, 0, kBig);
  data.read("max_length", config.data.max_length, 1, 4096);
  data.read("vocabulary_size", config.data.vocabulary_size, 3, 10000000);
  data.read("min_count", config.data.min_count, 1, kBig);
  data.read("split_seed", config.data.split_seed);
  data.read("train_clips", config.data.train_clips, 1, kBig);
  data.read("test_clips", config.data.test_clips, 1, kBig);
  data.read("frames", config.data.frames, 1, 1024);
  data.read("height", config.data.height, 4, 4096);
  data.read("width", config.data.width, 4, 4096);
  data.read("sprites", config.data.sprites, 0, 64);
  data.read("noise_std", config.data.noise_std, 0.0, 100.0);
  data.read("patch", config.data.patch, 1, 1024);
  if (config.data.patch.size() != 3) data.fail("patch", "expected [frames, height, width]");
  data.read("dataset", config.data.dataset, {"mnist", "fashion-mnist"});
  data.read("image_patch", config.data.image_patch, 1, 28);
  if (28 % config.data.image_patch != 0) data.fail("image_patch", "must divide 28 (the image side)");
  data.read("context", config.data.context, 2, 4096);
  data.read("evaluate_on", config.data.evaluate_on, {"test", "validation"});
  data.read("validation_size", config.data.validation_size, 1, kBig);
  data.reject_unknown_keys();

  JsonReader model = root.child("model");
  model.read("layers", config.model.layers, 1, 256);
  model.read("width", config.model.width, 1, 65536);
  model.read("heads", config.model.heads, 1, 1024);
  model.read("ff_width", config.model.ff_width, 1, 262144);
  model.read("dropout", config.model.dropout, 0.0, 0.99);
  model.read("readout", config.model.readout, {"shared", "per_layer"});
  model.read("pooling", config.model.pooling, {"mean", "first"});
  if (config.model.width % config.model.heads != 0) {
    model.fail("heads", "width (" + std::to_string(config.model.width) + ") must be a multiple of heads (" +
                            std::to_string(config.model.heads) + ")");
  }
  model.reject_unknown_keys();

  JsonReader train = root.child("train");
  train.read("epochs", config.train.epochs, 1, 100000);
  train.read("batch_size", config.train.batch_size, 1, 1 << 20);
  train.read("lr", config.train.lr, 0.0, 10.0);
  train.read("weight_decay", config.train.weight_decay, 0.0, 10.0);
  train.read("grad_clip", config.train.grad_clip, 0.0, kHuge);
  train.read("metric_interval", config.train.metric_interval, 1, kBig);
  train.read("histogram_interval", config.train.histogram_interval, 0, kBig);
  train.read("seed", config.train.seed);
  train.read("device", config.train.device, {"auto", "cpu", "cuda"});
  train.reject_unknown_keys();

  JsonReader constraints = root.child("constraints");
  constraints.read("enabled", config.constraints.enabled);
  constraints.read("alpha", config.constraints.alpha, 0.0, 1.0);
  constraints.read("alpha_schedule", config.constraints.alpha_schedule, {"constant", "linear"});
  config.constraints.alpha_final = config.constraints.alpha;
  constraints.read("alpha_final", config.constraints.alpha_final, 0.0, 1.0);
  constraints.read("dual_lr", config.constraints.dual_lr, 0.0, kHuge);
  constraints.read("dual_update", config.constraints.dual_update, {"batch", "epoch"});
  constraints.read("constraint_batch", config.constraints.constraint_batch, 1, kBig);
  constraints.read("dual_warmup_epochs", config.constraints.dual_warmup_epochs, 0, 100000);
  constraints.read("stop_gradient", config.constraints.stop_gradient);
  constraints.read("resilient", config.constraints.resilient);
  constraints.read("resilient_cost", config.constraints.resilient_cost, 0.0, kHuge);
  constraints.read("resilient_lr", config.constraints.resilient_lr, 0.0, kHuge);
  constraints.reject_unknown_keys();

  JsonReader optimizer = root.child("optimizer");
  optimizer.read("name", config.optimizer.name, {"adamw", "ham", "horst"});
  if (config.optimizer.name == "horst") config.optimizer.alpha = 5.0;
  if (config.optimizer.name == "ham") {
    config.optimizer.alpha = 200.0;
    config.optimizer.beta = 1e-3;
  }
  optimizer.read("alpha", config.optimizer.alpha, 0.0, 1e9);
  optimizer.read("beta", config.optimizer.beta, 0.0, 1e9);
  optimizer.read("exponent_clamp", config.optimizer.exponent_clamp, 1e-6, 100.0);
  optimizer.read("min_dim", config.optimizer.min_dim, 0, 8);
  optimizer.reject_unknown_keys();

  JsonReader sparsity = root.child("sparsity");
  sparsity.read("method", config.sparsity.method, {"none", "acdc"});
  sparsity.read("target", config.sparsity.target, 0.0, 1.0);
  sparsity.read("scope", config.sparsity.scope, {"global", "per_layer"});
  sparsity.read("exclude_embeddings_and_readout", config.sparsity.exclude_embeddings_and_readout);
  sparsity.read("units", config.sparsity.units, {"steps", "epochs"});
  sparsity.read("warmup", config.sparsity.warmup, 0.0, 1.0);
  sparsity.read("phase", config.sparsity.phase, 1e-6, 1.0);
  sparsity.read("alternate_until", config.sparsity.alternate_until, 0.0, 1.0);
  sparsity.read("decompressed_until", config.sparsity.decompressed_until, 0.0, 1.0);
  if (config.sparsity.alternate_until < config.sparsity.warmup) {
    sparsity.fail("alternate_until", "must be >= warmup (" + std::to_string(config.sparsity.warmup) + ")");
  }
  if (config.sparsity.decompressed_until < config.sparsity.alternate_until) {
    sparsity.fail("decompressed_until",
                  "must be >= alternate_until (" + std::to_string(config.sparsity.alternate_until) + ")");
  }
  sparsity.reject_unknown_keys();
  if (config.is_layerwise() && (config.optimizer.name != "adamw" || config.sparsity.method != "none")) {
    root.fail("optimizer", "the layerwise tasks (text, video) train with AdamW and no sparsity");
  }
  if (!config.is_layerwise() && config.constraints.enabled) {
    root.fail("constraints", "layerwise constraints apply to the text and video tasks only");
  }

  root.reject_unknown_keys();
  return config;
}

nlohmann::json ExperimentConfig::to_json() const {
  return {
      {"name", name},
      {"task", task},
      {"data",
       {{"train_limit", data.train_limit},
        {"test_limit", data.test_limit},
        {"max_length", data.max_length},
        {"vocabulary_size", data.vocabulary_size},
        {"min_count", data.min_count},
        {"split_seed", data.split_seed},
        {"train_clips", data.train_clips},
        {"test_clips", data.test_clips},
        {"frames", data.frames},
        {"height", data.height},
        {"width", data.width},
        {"sprites", data.sprites},
        {"noise_std", data.noise_std},
        {"patch", data.patch},
        {"dataset", data.dataset},
        {"image_patch", data.image_patch},
        {"context", data.context},
        {"evaluate_on", data.evaluate_on},
        {"validation_size", data.validation_size}}},
      {"model",
       {{"layers", model.layers},
        {"width", model.width},
        {"heads", model.heads},
        {"ff_width", model.ff_width},
        {"dropout", model.dropout},
        {"readout", model.readout},
        {"pooling", model.pooling}}},
      {"train",
       {{"epochs", train.epochs},
        {"batch_size", train.batch_size},
        {"lr", train.lr},
        {"weight_decay", train.weight_decay},
        {"grad_clip", train.grad_clip},
        {"metric_interval", train.metric_interval},
        {"histogram_interval", train.histogram_interval},
        {"seed", train.seed},
        {"device", train.device}}},
      {"constraints",
       {{"enabled", constraints.enabled},
        {"alpha", constraints.alpha},
        {"alpha_schedule", constraints.alpha_schedule},
        {"alpha_final", constraints.alpha_final},
        {"dual_lr", constraints.dual_lr},
        {"dual_update", constraints.dual_update},
        {"constraint_batch", constraints.constraint_batch},
        {"dual_warmup_epochs", constraints.dual_warmup_epochs},
        {"stop_gradient", constraints.stop_gradient},
        {"resilient", constraints.resilient},
        {"resilient_cost", constraints.resilient_cost},
        {"resilient_lr", constraints.resilient_lr}}},
      {"optimizer",
       {{"name", optimizer.name},
        {"alpha", optimizer.alpha},
        {"beta", optimizer.beta},
        {"exponent_clamp", optimizer.exponent_clamp},
        {"min_dim", optimizer.min_dim}}},
      {"sparsity",
       {{"method", sparsity.method},
        {"target", sparsity.target},
        {"scope", sparsity.scope},
        {"exclude_embeddings_and_readout", sparsity.exclude_embeddings_and_readout},
        {"units", sparsity.units},
        {"warmup", sparsity.warmup},
        {"phase", sparsity.phase},
        {"alternate_until", sparsity.alternate_until},
        {"decompressed_until", sparsity.decompressed_until}}},
  };
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : generated::kPresets) names.emplace_back(preset.name);
  return names;
}

nlohmann::json preset_document(const std::string& name, const std::string& size) {
  for (const auto& preset : generated::kPresets) {
    if (name != preset.name) continue;
    const std::string source = std::string("preset ") + preset.name;
    nlohmann::json document = nlohmann::json::parse(preset.json, nullptr, false);
    if (document.is_discarded() || !document.is_object()) throw ConfigError(source, "", "is not a JSON object");
    nlohmann::json sizes = document.value("sizes", nlohmann::json::object());
    document.erase("sizes");
    if (!sizes.contains(size)) {
      std::string known;
      for (const auto& [key, unused] : sizes.items()) known += (known.empty() ? "" : ", ") + key;
      throw ConfigError(source, "sizes", "has no size \"" + size + "\" (known: " + known + ")");
    }
    document.merge_patch(sizes[size]);
    document["name"] = std::string(preset.name) + "-" + size;
    return document;
  }
  std::string known;
  for (const auto& preset_name : preset_names()) known += (known.empty() ? "" : ", ") + preset_name;
  throw ConfigError("--preset", "", "unknown preset \"" + name + "\" (known: " + known + ")");
}

ExperimentConfig load_experiment(const std::string& preset, const std::string& size, const std::string& config_file,
                                 const std::vector<std::string>& overrides) {
  nlohmann::json document;
  std::string source;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) throw ConfigError(config_file, "", "cannot open the config file");
    document = nlohmann::json::parse(in, nullptr, false);
    if (document.is_discarded()) throw ConfigError(config_file, "", "not valid JSON");
    source = config_file;
  } else {
    document = preset_document(preset, size);
    source = "preset " + preset + " (" + size + ")";
  }
  for (const auto& assignment : overrides) apply_assignment(document, assignment);
  if (!overrides.empty()) source += " with --set overrides";
  return ExperimentConfig::from_json(document, source);
}

}  // namespace descentlab::config
