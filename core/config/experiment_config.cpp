#include "core/config/experiment_config.h"

#include <fstream>
#include <limits>
#include <type_traits>

#include "core/config/json_reader.h"
#include "core/generated/presets.h"

namespace descentlab::config {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();
constexpr int64_t kBig = std::numeric_limits<int32_t>::max();

// Each section's keys, once. `Section` is the section or its const; `v` reads (FieldReader), writes (FieldWriter) or
// lists the choices (ChoiceLister). Bounds are inclusive; checks across keys follow in validate().
template <typename Data, typename Visitor>
void fields(Data& d, Visitor& v, DataConfig*) {
  v.field("train_limit", d.train_limit, 0, kBig);
  v.field("test_limit", d.test_limit, 0, kBig);
  v.field("max_length", d.max_length, 1, 4096);
  v.field("vocabulary_size", d.vocabulary_size, 3, 10000000);
  v.field("min_count", d.min_count, 1, kBig);
  v.field("split_seed", d.split_seed);
  v.field("train_clips", d.train_clips, 1, kBig);
  v.field("test_clips", d.test_clips, 1, kBig);
  v.field("frames", d.frames, 1, 1024);
  v.field("height", d.height, 4, 4096);
  v.field("width", d.width, 4, 4096);
  v.field("sprites", d.sprites, 0, 64);
  v.field("noise_std", d.noise_std, 0.0, 100.0);
  v.field("patch", d.patch, 1, 1024);
  v.field("dataset", d.dataset);
  v.field("image_patch", d.image_patch, 1, 28);
  v.field("context", d.context, 2, 4096);
  v.field("evaluate_on", d.evaluate_on);
  v.field("validation_size", d.validation_size, 1, kBig);
}

template <typename Model, typename Visitor>
void fields(Model& m, Visitor& v, ModelConfig*) {
  v.field("layers", m.layers, 1, 256);
  v.field("width", m.width, 1, 65536);
  v.field("heads", m.heads, 1, 1024);
  v.field("ff_width", m.ff_width, 1, 262144);
  v.field("dropout", m.dropout, 0.0, 0.99);
  v.field("readout", m.readout);
  v.field("pooling", m.pooling);
}

template <typename Train, typename Visitor>
void fields(Train& t, Visitor& v, TrainConfig*) {
  v.field("epochs", t.epochs, 1, 100000);
  v.field("batch_size", t.batch_size, 1, 1 << 20);
  v.field("lr", t.lr, 0.0, 10.0);
  v.field("weight_decay", t.weight_decay, 0.0, 10.0);
  v.field("grad_clip", t.grad_clip, 0.0, kHuge);
  v.field("metric_interval", t.metric_interval, 1, kBig);
  v.field("histogram_interval", t.histogram_interval, 0, kBig);
  v.field("seed", t.seed);
  v.field("device", t.device);
}

template <typename Constraints, typename Visitor>
void fields(Constraints& c, Visitor& v, ConstraintConfig*) {
  v.field("enabled", c.enabled);
  v.field("alpha", c.alpha, 0.0, 1.0);
  v.field("alpha_schedule", c.alpha_schedule);
  v.field("alpha_final", c.alpha_final, 0.0, 1.0);
  v.field("dual_lr", c.dual_lr, 0.0, kHuge);
  v.field("dual_update", c.dual_update);
  v.field("constraint_batch", c.constraint_batch, 1, kBig);
  v.field("dual_warmup_epochs", c.dual_warmup_epochs, 0, 100000);
  v.field("stop_gradient", c.stop_gradient);
  v.field("resilient", c.resilient);
  v.field("resilient_cost", c.resilient_cost, 0.0, kHuge);
  v.field("resilient_lr", c.resilient_lr, 0.0, kHuge);
}

template <typename Optimizer, typename Visitor>
void fields(Optimizer& o, Visitor& v, OptimizerConfig*) {
  v.field("name", o.name);
  v.field("alpha", o.alpha, 0.0, 1e9);
  v.field("beta", o.beta, 0.0, 1e9);
  v.field("exponent_clamp", o.exponent_clamp, 1e-6, 100.0);
  v.field("min_dim", o.min_dim, 0, 8);
}

template <typename Sparsity, typename Visitor>
void fields(Sparsity& s, Visitor& v, SparsityConfig*) {
  v.field("method", s.method);
  v.field("target", s.target, 0.0, 1.0);
  v.field("scope", s.scope);
  v.field("exclude_embeddings_and_readout", s.exclude_embeddings_and_readout);
  v.field("units", s.units);
  v.field("warmup", s.warmup, 0.0, 1.0);
  v.field("phase", s.phase, 1e-6, 1.0);
  v.field("alternate_until", s.alternate_until, 0.0, 1.0);
  v.field("decompressed_until", s.decompressed_until, 0.0, 1.0);
}

// The sections in their JSON order, with their keys.
template <typename Experiment, typename Visitor>
void sections(Experiment& e, Visitor& v) {
  v.section("data", e.data);
  v.section("model", e.model);
  v.section("train", e.train);
  v.section("constraints", e.constraints);
  v.section("optimizer", e.optimizer);
  v.section("sparsity", e.sparsity);
}

template <typename Section, typename Visitor>
void section_fields(Section& section, Visitor& v) {
  fields(section, v, static_cast<std::remove_const_t<Section>*>(nullptr));
}

// Reads a section's keys through a JsonReader (which checks types and bounds and names the key in errors).
struct FieldReader {
  JsonReader& reader;
  template <typename T, typename... Bounds>
  void field(const char* key, T& value, Bounds... bounds) {
    if constexpr (std::is_enum_v<T>) {
      reader.read_choice(key, value);
    } else {
      reader.read(key, value, bounds...);
    }
  }
};

// Writes a section's keys as JSON: enums as their words, the rest as they are.
struct FieldWriter {
  nlohmann::json& out;
  template <typename T, typename... Bounds>
  void field(const char* key, const T& value, Bounds...) {
    if constexpr (std::is_enum_v<T>) {
      out[key] = word(value);
    } else {
      out[key] = value;
    }
  }
};

// Collects "section.key" -> words for every closed choice.
struct ChoiceLister {
  std::map<std::string, std::vector<std::string>>& out;
  std::string prefix;
  template <typename T, typename... Bounds>
  void field(const char* key, const T&, Bounds...) {
    if constexpr (std::is_enum_v<T>) out[prefix + key] = choice_words<T>();
  }
  template <typename Section>
  void section(const char* key, const Section& part) {
    ChoiceLister inner{out, prefix + key + "."};
    section_fields(part, inner);
  }
};

// Checks that span keys of one section, once its keys are read.
void validate(const DataConfig& data, const JsonReader& reader) {
  if (data.patch.size() != 3) reader.fail("patch", "expected [frames, height, width]");
  if (28 % data.image_patch != 0) reader.fail("image_patch", "must divide 28 (the image side)");
}

void validate(const ModelConfig& model, const JsonReader& reader) {
  if (model.width % model.heads != 0) {
    reader.fail("heads", "width (" + std::to_string(model.width) + ") must be a multiple of heads (" +
                             std::to_string(model.heads) + ")");
  }
}

void validate(const TrainConfig&, const JsonReader&) {}

void validate(ConstraintConfig& constraints, const JsonReader& reader) {
  if (!reader.has("alpha_final")) constraints.alpha_final = constraints.alpha;
}

void validate(OptimizerConfig& optimizer, const JsonReader& reader) {
  // HORST and HAM's defaults (SCIENCE.md §2) when the file leaves alpha or beta out.
  const bool horst = optimizer.name == OptimizerName::horst;
  const bool ham = optimizer.name == OptimizerName::ham;
  if (!reader.has("alpha")) optimizer.alpha = horst ? 5.0 : (ham ? 200.0 : 0.0);
  if (!reader.has("beta")) optimizer.beta = ham ? 1e-3 : 0.0;
}

void validate(const SparsityConfig& sparsity, const JsonReader& reader) {
  if (sparsity.alternate_until < sparsity.warmup) {
    reader.fail("alternate_until", "must be >= warmup (" + std::to_string(sparsity.warmup) + ")");
  }
  if (sparsity.decompressed_until < sparsity.alternate_until) {
    reader.fail("decompressed_until", "must be >= alternate_until (" + std::to_string(sparsity.alternate_until) + ")");
  }
}

struct SectionReader {
  JsonReader& root;
  template <typename Section>
  void section(const char* key, Section& part) {
    JsonReader reader = root.child(key);
    FieldReader visitor{reader};
    section_fields(part, visitor);
    validate(part, reader);
    reader.reject_unknown_keys();
  }
};

struct SectionWriter {
  nlohmann::json& out;
  template <typename Section>
  void section(const char* key, const Section& part) {
    nlohmann::json object = nlohmann::json::object();
    FieldWriter visitor{object};
    section_fields(part, visitor);
    out[key] = std::move(object);
  }
};

}  // namespace

ExperimentConfig ExperimentConfig::from_json(const nlohmann::json& document, const std::string& source) {
  ExperimentConfig config;
  JsonReader root(document, source);
  root.read("name", config.name);
  root.read_choice("task", config.task);
  SectionReader reader{root};
  sections(config, reader);
  if (config.is_layerwise() &&
      (config.optimizer.name != OptimizerName::adamw || config.sparsity.method != SparsityMethod::none)) {
    root.fail("optimizer", "the layerwise tasks (text, video) train with AdamW and no sparsity");
  }
  if (!config.is_layerwise() && config.constraints.enabled) {
    root.fail("constraints", "layerwise constraints apply to the text and video tasks only");
  }
  root.reject_unknown_keys();
  return config;
}

nlohmann::json ExperimentConfig::to_json() const {
  nlohmann::json out = {{"name", name}, {"task", word(task)}};
  SectionWriter writer{out};
  sections(*this, writer);
  return out;
}

std::map<std::string, std::vector<std::string>> choice_keys() {
  std::map<std::string, std::vector<std::string>> out;
  const ExperimentConfig defaults;
  ChoiceLister lister{out, ""};
  sections(defaults, lister);
  out["task"] = choice_words<Task>();
  return out;
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
