#include "core/config/experiment_config.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/config/json_reader.h"

namespace descentlab::config {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();
constexpr int64_t kBig = std::numeric_limits<int32_t>::max();

// Each section's keys, once. `Section` is the section or its const; `v` reads (FieldReader), writes (FieldWriter) or
// lists the choices (ChoiceLister). Bounds are inclusive; checks across keys follow in validate().
template <typename Data, typename Visitor>
void fields(Data& d, Visitor& v, DataConfig*) {
  v.field("train_limit",
          "Training samples to use: IMDb reviews (text) or windows (gpt), a balanced seeded subsample; 0 = all",
          d.train_limit, 0, kBig);
  v.field("test_limit", "Test samples to use, as train_limit; 0 = all", d.test_limit, 0, kBig);
  v.field("max_length", "Tokens kept per review (text); longer reviews are cut", d.max_length, 1, 4096);
  v.field("vocabulary_size", "Largest vocabulary built from the training reviews (text), most frequent words first",
          d.vocabulary_size, 3, 10000000);
  v.field("min_count", "Words seen fewer times than this in training become <unk> (text)", d.min_count, 1, kBig);
  v.field("split_seed", "Seed of the data subsample and of the validation hold-out", d.split_seed);
  v.field("train_clips", "Moving-sprite training clips (video)", d.train_clips, 1, kBig);
  v.field("test_clips", "Moving-sprite test clips (video)", d.test_clips, 1, kBig);
  v.field("frames", "Frames per clip (video)", d.frames, 1, 1024);
  v.field("height", "Frame height in pixels (video)", d.height, 4, 4096);
  v.field("width", "Frame width in pixels (video)", d.width, 4, 4096);
  v.field("sprites", "Moving sprites per clip (video)", d.sprites, 0, 64);
  v.field("noise_std",
          "σ of the pixel noise added to the input clip in training (video); the robustness sweep scales it by γ",
          d.noise_std, 0.0, 100.0);
  v.field("patch", "Video patch size [frames, height, width]; each must divide the clip's size", d.patch, 1, 1024);
  v.field("dataset", "Image dataset of the vit task", d.dataset);
  v.field("image_patch", "Side of the square image patches in pixels (vit); divides 28", d.image_patch, 1, 28);
  v.field("context", "Characters per training window (gpt)", d.context, 2, 4096);
  v.field("evaluate_on", "Evaluate on the test split, or on validation_size samples held out of training (for tuning)",
          d.evaluate_on);
  v.field("validation_size", "Samples held out of training when evaluate_on = validation", d.validation_size, 1, kBig);
  v.field("file", "The HDF5 data file of the torchscript task (docs/your-model.md)", d.file);
  v.field("target", "What the torchscript task's data file trains (its attribute task; checked against the file)",
          d.target);
  v.field("memory_mb",
          "Memory the torchscript task's training rows may take (MiB); a larger data file is read chunk by chunk, its "
          "chunks in a seeded order and the rows of each memory-full of chunks shuffled together (docs/your-model.md)",
          d.memory_mb, 1, kBig);
}

template <typename Model, typename Visitor>
void fields(Model& m, Visitor& v, ModelConfig*) {
  v.field("file", "The TorchScript module file of the torchscript task (docs/your-model.md)", m.file);
  v.field("layers", "Transformer blocks L (the layers f_0..f_L are read after each)", m.layers, 1, 256);
  v.field("width", "Model width (embedding size); a multiple of heads", m.width, 1, 65536);
  v.field("heads", "Attention heads per block", m.heads, 1, 1024);
  v.field("ff_width", "Hidden width of each block's feed-forward layer", m.ff_width, 1, 262144);
  v.field("dropout", "Dropout probability inside the blocks", m.dropout, 0.0, 0.99);
  v.field("readout",
          "One readout head shared by every layer, or a head per layer (the per-layer loss f_l reads through it)",
          m.readout);
  v.field("pooling", "How a review becomes one vector for the readout (text): mean of the tokens, or the first token",
          m.pooling);
}

template <typename Train, typename Visitor>
void fields(Train& t, Visitor& v, TrainConfig*) {
  v.field("epochs", "Passes over the training data", t.epochs, 1, 100000);
  v.field("batch_size", "Samples per optimizer step", t.batch_size, 1, 1 << 20);
  v.field("lr", "Learning rate η of AdamW (also inside HAM and HORST); the peak when scheduled", t.lr, 0.0, 10.0);
  v.field("lr_schedule",
          "The rate after the warm-up: constant, or cosine or linear decay to 0 at the last step (every optimizer, "
          "HORST's mirror factor included)",
          t.lr_schedule);
  v.field("warmup", "Linear warm-up of the rate from 0: a fraction of the run's steps (< 1) or whole steps (>= 1)",
          t.warmup, 0.0, 1e9);
  v.field("weight_decay", "Decoupled weight decay λ of AdamW", t.weight_decay, 0.0, 10.0);
  v.field("grad_clip", "Clip the gradient norm to this; 0 = off", t.grad_clip, 0.0, 1e6);
  v.field("metric_interval", "Steps between metric reads (the device is never waited on in between)", t.metric_interval,
          1, kBig);
  v.field("histogram_interval", "Steps between weight-magnitude histograms; 0 = once per epoch", t.histogram_interval,
          0, kBig);
  v.field("keep_interval",
          "Keep the training state every this many steps, to branch from it later (checkpoints step-N); 0 = only "
          "latest and best",
          t.keep_interval, 0, kBig);
  v.field("keep_count", "At most this many states kept by keep_interval; the oldest goes first", t.keep_count, 1,
          100000);
  v.field("keep_megabytes", "At most this many megabytes of states kept by keep_interval; the oldest goes first",
          t.keep_megabytes, 1, kBig);
  v.field("seed", "Seed of the initial weights and the data order", t.seed);
  v.field("device", "Where to train: auto picks CUDA when present, else the CPU", t.device);
}

template <typename Constraints, typename Visitor>
void fields(Constraints& c, Visitor& v, ConstraintConfig*) {
  v.field("enabled",
          "Train with the layerwise descent constraints f_l <= (1 - α) f_(l-1) (primal-dual); off = ERM on f_L",
          c.enabled);
  v.field("alpha", "Required relative decrease α of the loss from layer to layer", c.alpha, 0.0, 1.0);
  v.field("alpha_schedule", "α constant, or moving linearly from alpha to alpha_final over the epochs",
          c.alpha_schedule);
  v.field("alpha_final", "α at the last epoch when alpha_schedule = linear; absent = alpha", c.alpha_final, 0.0, 1.0);
  v.field("dual_lr", "Step size η_λ of the dual ascent on the multipliers λ", c.dual_lr, 0.0, 100.0);
  v.field("dual_update", "Dual step after every batch, or once per epoch on a held-out constraint batch",
          c.dual_update);
  v.field("constraint_batch", "Samples held out for the per-epoch dual step (dual_update = epoch)", c.constraint_batch,
          1, kBig);
  v.field("dual_warmup_epochs", "Epochs with λ held at 0 before the dual ascent starts", c.dual_warmup_epochs, 0,
          100000);
  v.field("stop_gradient",
          "Treat f_(l-1) as a constant inside each constraint, so it cannot be met by making earlier layers worse",
          c.stop_gradient);
  v.field("resilient", "Relax each constraint by a slack u_l >= 0 that costs (a/2) u² (resilient constrained learning)",
          c.resilient);
  v.field("resilient_cost", "Cost a of the resilient relaxation", c.resilient_cost, 0.0, 1e6);
  v.field("resilient_lr", "Step size η_u of the relaxation u", c.resilient_lr, 0.0, 100.0);
}

template <typename Optimizer, typename Visitor>
void fields(Optimizer& o, Visitor& v, OptimizerConfig*) {
  v.field("name",
          "AdamW; HAM (AdamW, then a hyperbolic mirror step on the raw gradient); HORST (AdamW composed with a mirror "
          "step on its own update)",
          o.name);
  v.field("alpha", "Sparsity bias α of the mirror step (default 5 for HORST, 200 for HAM); 0 = AdamW exactly", o.alpha,
          0.0, 1e9);
  v.field("beta", "Shrinkage β of the mirror step (default 0 for HORST, 1e-3 for HAM)", o.beta, 0.0, 1e9);
  v.field("exponent_clamp", "Clamp of the mirror step's exponent (±)", o.exponent_clamp, 1e-6, 100.0);
  v.field("min_dim", "Tensors with fewer dimensions (biases, norms) get plain AdamW", o.min_dim, 0, 8);
}

template <typename Sparsity, typename Visitor>
void fields(Sparsity& s, Visitor& v, SparsityConfig*) {
  v.field("method", "No pruning, or AC/DC: alternating compressed (magnitude top-k) and decompressed phases", s.method);
  v.field("target", "Share of the prunable weights set to zero in compressed phases", s.target, 0.0, 1.0);
  v.field("scope", "Magnitude threshold across all prunable tensors, or per tensor", s.scope);
  v.field("exclude_embeddings_and_readout", "Never prune the embeddings and the readout head",
          s.exclude_embeddings_and_readout);
  v.field("units", "Whether the schedule's fractions below count steps or epochs", s.units);
  v.field("warmup", "Fraction of the run trained dense before the first compression", s.warmup, 0.0, 1.0);
  v.field("phase", "Length of each compressed or decompressed phase, as a fraction of the run", s.phase, 1e-6, 1.0);
  v.field("alternate_until", "Fraction of the run until which phases alternate", s.alternate_until, 0.0, 1.0);
  v.field("decompressed_until",
          "Fraction of the run until which the last decompressed phase lasts; compressed after it",
          s.decompressed_until, 0.0, 1.0);
  v.field("compression_samples",
          "Test (or validation) samples evaluated just before and right after each compression's mask (the first "
          "ones, always the same); 0 = all, as at epoch ends",
          s.compression_samples, 0, kBig);
  v.field("frontier_interval",
          "Steps between evaluations of the live sparsity frontier (vit, gpt): a copy of the weights pruned one-shot "
          "per tensor by magnitude at each frontier sparsity, evaluated on a fixed small batch; also at the run's "
          "last step; 0 = off",
          s.frontier_interval, 0, kBig);
  v.field("frontier_sparsities", "The sparsities the live frontier prunes to, each in [0, 1], ascending",
          s.frontier_sparsities, 0.0, 1.0);
  v.field("frontier_samples", "Test (or validation) samples the frontier evaluates on: the first ones, always the same",
          s.frontier_samples, 1, kBig);
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
  void field(const char* key, const char*, T& value, Bounds... bounds) {
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
  void field(const char* key, const char*, const T& value, Bounds...) {
    if constexpr (std::is_enum_v<T>) {
      out[key] = word(value);
    } else {
      out[key] = value;
    }
  }
};

// Lists every key with its explanation, type, range, choices and default (the schema).
struct SchemaLister {
  std::vector<KeyInfo>& out;
  std::string prefix;
  template <typename T, typename... Bounds>
  void field(const char* key, const char* about, const T& value, Bounds... bounds) {
    KeyInfo info;
    info.key = prefix + key;
    info.about = about;
    if constexpr (std::is_enum_v<T>) {
      info.type = "choice";
      info.choices = choice_words<T>();
      info.default_value = word(value);
    } else {
      info.default_value = value;
      if constexpr (std::is_same_v<T, bool>) info.type = "true or false";
      if constexpr (std::is_same_v<T, std::string>) info.type = "text";
      if constexpr (std::is_same_v<T, double>) info.type = "number";
      if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) info.type = "integer";
      if constexpr (std::is_same_v<T, std::vector<int64_t>>) info.type = "list of integers";
      if constexpr (std::is_same_v<T, std::vector<double>>) info.type = "list of numbers";
      if constexpr (sizeof...(bounds) == 2) {
        using Number =
            std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, std::vector<double>>, double, int64_t>;
        info.range = range_text(static_cast<Number>(bounds)...);
      }
    }
    out.push_back(std::move(info));
  }
  template <typename Section>
  void section(const char* key, const Section& part) {
    SchemaLister inner{out, prefix + key + "."};
    section_fields(part, inner);
  }
  static std::string range_text(double low, double high) {
    const auto text = [](double value) {
      if (value >= kHuge) return std::string("∞");
      std::ostringstream stream;
      stream << value;
      return stream.str();
    };
    return text(low) + " … " + text(high);
  }
  static std::string range_text(int64_t low, int64_t high) {
    return std::to_string(low) + " … " + (high >= kBig ? std::string("∞") : std::to_string(high));
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

void validate(const TrainConfig& train, const JsonReader& reader) {
  if (train.warmup >= 1.0 && train.warmup != std::floor(train.warmup)) {
    reader.fail("warmup", "a fraction of the run must be below 1, a number of steps whole (got " +
                              std::to_string(train.warmup) + ")");
  }
}

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
  if (sparsity.frontier_interval > 0 && sparsity.frontier_sparsities.empty()) {
    reader.fail("frontier_sparsities", "give at least one sparsity (or set frontier_interval to 0)");
  }
  for (size_t i = 1; i < sparsity.frontier_sparsities.size(); ++i) {
    if (!(sparsity.frontier_sparsities[i] > sparsity.frontier_sparsities[i - 1])) {
      reader.fail("frontier_sparsities", "must be ascending without repeats");
    }
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

// A config file's JSON: a missing file, a folder or bad JSON is the user's to fix (ConfigError); a file the system
// will not read is an IoError. Both name the file.
nlohmann::json read_config_file(const std::string& path) {
  std::error_code status_error;
  const auto status = std::filesystem::status(path, status_error);
  if (status.type() == std::filesystem::file_type::not_found) throw ConfigError(path, "", "no such config file");
  if (status.type() == std::filesystem::file_type::directory) {
    throw ConfigError(path, "", "is a folder; --config takes a JSON file");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open the config file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError(path, "cannot read the config file");
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& error) {  // parse_error, and out_of_range for 1e99999
    throw ConfigError(path, "", std::string("not valid JSON: ") + error.what());
  }
}

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
  if (config.task == Task::video) {
    const auto& d = config.data;
    const int64_t sides[] = {d.frames, d.height, d.width};
    const char* names[] = {"frames", "height", "width"};
    for (size_t i = 0; i < 3; ++i) {
      if (sides[i] % d.patch[i] != 0) {
        root.fail("data.patch", "patch " + std::to_string(d.patch[i]) + " must divide data." + names[i] + " (" +
                                    std::to_string(sides[i]) + ")");
      }
    }
  }
  if (is_user_model(config.task) && (config.model.file.empty() || config.data.file.empty())) {
    root.fail(config.model.file.empty() ? "model.file" : "data.file",
              "the torchscript task trains a module file on a data file: give both (train --model M.pt --data D.h5)");
  }
  if (!config.is_layerwise() && config.constraints.enabled) {
    root.fail("constraints", "layerwise constraints apply to the text, video and torchscript-layerwise tasks only");
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

std::vector<KeyInfo> config_schema() {
  std::vector<KeyInfo> out;
  const ExperimentConfig defaults;
  SchemaLister lister{out, ""};
  lister.field("name", "The run's name (presets: PRESET-SIZE)", defaults.name);
  lister.field("task",
               "text: IMDb sentiment and video: moving-sprite denoising (layerwise descent); vit: Fashion-MNIST/MNIST "
               "images and gpt: Moby Dick characters (sparse training with HORST); torchscript: your own module "
               "(model.file) on your own data (data.file), trained like vit and gpt; torchscript-layerwise: the same "
               "by layerwise descent (the module needs layer_outputs)",
               defaults.task);
  sections(defaults, lister);
  return out;
}

std::map<std::string, std::vector<std::string>> choice_keys() {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& info : config_schema()) {
    if (!info.choices.empty()) out[info.key] = info.choices;
  }
  return out;
}

ExperimentConfig stored_config(const std::string& config_json, const std::string& path) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and out_of_range for 1e99999
    throw DataError(path,
                    std::string("the stored configuration (attribute \"config\") is not valid JSON: ") + error.what());
  }
  return ExperimentConfig::from_json(document, path + " (stored configuration)");
}

ExperimentConfig load_experiment(const std::string& preset, const std::string& size, const std::string& config_file,
                                 const std::vector<std::string>& overrides) {
  nlohmann::json document;
  std::string source;
  if (!config_file.empty()) {
    document = read_config_file(config_file);
    source = config_file;
  } else {
    document = preset_document(preset, size);
    source = "preset " + preset + " (" + size + ")";
  }
  for (const auto& assignment : overrides) apply_assignment(document, assignment);
  if (!overrides.empty()) source += " with --set overrides";
  return ExperimentConfig::from_json(document, source);
}

std::string dataset_of(const ExperimentConfig& config) {
  switch (config.task) {
    case Task::text: return "imdb";
    case Task::vit: return word(config.data.dataset);
    case Task::gpt: return "moby-dick";
    case Task::video:
    case Task::torchscript:
    case Task::torchscript_layerwise: return "";
  }
  return "";
}

}  // namespace descentlab::config
