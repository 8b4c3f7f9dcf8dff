#include "core/config/footprint.h"

#include <filesystem>

#include <algorithm>
#include <cstdio>

#include "core/util/error.h"

namespace descentlab::config {
namespace {

constexpr double kFloat = 4.0;  // bytes of a float32
constexpr double kIndex = 8.0;  // bytes of an int64
constexpr double kImageSide = 28.0;
constexpr double kImageClasses = 10.0;
constexpr double kImageSamples = 70000.0;      // MNIST and Fashion-MNIST: 60,000 train + 10,000 test
constexpr double kImdbReviews = 25000.0;       // per split
constexpr double kMobyDickCharacters = 1.2e6;  // train + validation
constexpr double kMaxCharacters = 256.0;

double as_double(int64_t value) {
  return static_cast<double>(value);
}

// One pre-norm block: two LayerNorms (2w each), attention (in_proj 3w² + 3w, out_proj w² + w), feed-forward
// (w·ff + ff, ff·w + w).
double block_parameters(const config::ModelConfig& m) {
  const double w = as_double(m.width), ff = as_double(m.ff_width);
  return 4.0 * w + (4.0 * w * w + 4.0 * w) + (w * ff + ff + ff * w + w);
}

// Tokens one sample is cut into.
double tokens(const config::ExperimentConfig& c) {
  const auto& d = c.data;
  switch (c.task) {
    case config::Task::text: return as_double(d.max_length);
    case config::Task::video:
      return as_double(d.frames / d.patch[0]) * as_double(d.height / d.patch[1]) * as_double(d.width / d.patch[2]);
    case config::Task::vit: {
      const double side = kImageSide / as_double(d.image_patch);
      return side * side + 1.0;  // patches and the class token
    }
    case config::Task::gpt: return as_double(d.context);
    case config::Task::torchscript:
    case config::Task::torchscript_layerwise: break;  // the module decides
  }
  return 0.0;
}

// The size of the file `path` on disk (0 when it cannot be read: the run then names the file).
double file_bytes(const std::string& path) {
  std::error_code status;
  const auto size = std::filesystem::file_size(path, status);
  return status ? 0.0 : static_cast<double>(size);
}

double readouts(const config::ExperimentConfig& c) {
  return c.model.readout == config::Readout::per_layer ? as_double(c.model.layers) + 1.0 : 1.0;
}

// The samples a training batch can hold: batch_size, or the whole training set when that is smaller (a batch of
// 1,048,576 on a quick preset is every one of its 256 clips; issue 38 item 2: it was estimated at 11 TiB).
double batch_samples(const config::ExperimentConfig& c) {
  const auto& d = c.data;
  double training = 0.0;
  switch (c.task) {
    case config::Task::text: training = d.train_limit > 0 ? as_double(d.train_limit) : kImdbReviews; break;
    case config::Task::video: training = as_double(d.train_clips); break;
    case config::Task::vit: training = d.train_limit > 0 ? as_double(d.train_limit) : kImageSamples; break;
    case config::Task::gpt: {  // non-overlapping windows of context + 1 characters
      const double windows = kMobyDickCharacters / (as_double(d.context) + 1.0);
      training = d.train_limit > 0 && as_double(d.train_limit) < windows ? as_double(d.train_limit) : windows;
      break;
    }
    case config::Task::torchscript:
    case config::Task::torchscript_layerwise: break;
  }
  const double batch = as_double(c.train.batch_size);
  return training > 0.0 && training < batch ? training : batch;
}

// The activations a training batch keeps for the backward pass, per block: the LayerNorms' inputs and outputs,
// q, k, v, the attention output and its projection, the residual (8 BTw), the feed-forward's hidden layer before
// and after its activation (2 BT·ff), and the attention scores and weights (2 B·heads·T²); then each layer's
// readout where every layer is read out (layerwise descent).
double activation_floats(const config::ExperimentConfig& c) {
  const double b = batch_samples(c), t = tokens(c), w = as_double(c.model.width);
  const double ff = as_double(c.model.ff_width), heads = as_double(c.model.heads), layers = as_double(c.model.layers);
  double per_layer = b * t * (8.0 * w + 2.0 * ff) + 2.0 * b * heads * t * t;
  if (c.task == config::Task::video) {
    const auto& p = c.data.patch;
    per_layer += b * t * (w + as_double(p[0] * p[1] * p[2]));
  } else if (c.task == config::Task::text) {
    per_layer += b * t * w;
  }
  return layers * per_layer + b * t * w;  // and the embedding
}

// The dataset's tensors, with a staging copy (the host vectors they are made from, the normalized or shuffled
// copies).
double data_bytes(const config::ExperimentConfig& c) {
  const auto& d = c.data;
  switch (c.task) {
    case config::Task::text: {
      const double train = d.train_limit > 0 ? as_double(d.train_limit) : kImdbReviews;
      const double test = d.test_limit > 0 ? as_double(d.test_limit) : kImdbReviews;
      return 2.0 * (train + test) * (as_double(d.max_length) + 2.0) * kIndex;
    }
    case config::Task::video: {
      const double pixels = as_double(d.frames) * as_double(d.height) * as_double(d.width);
      return 2.0 * (as_double(d.train_clips) + 2.0 * as_double(d.test_clips)) * pixels * kFloat;
    }
    case config::Task::vit: return 3.0 * kImageSamples * kImageSide * kImageSide * kFloat;
    case config::Task::gpt: return 2.0 * kMobyDickCharacters * kIndex;
    case config::Task::torchscript:
    case config::Task::torchscript_layerwise: {
      // As stored, and a staging copy; a file larger than data.memory_mb is read a window at a time (twice that:
      // the training rows' window and the test rows').
      return std::min(2.0 * file_bytes(d.file), 2.0 * as_double(d.memory_mb) * 1048576.0);
    }
  }
  return 0.0;
}

std::string count_text(double count) {
  char text[32];
  if (count >= 1e9) {
    std::snprintf(text, sizeof text, "%.1f billion", count / 1e9);
  } else if (count >= 1e6) {
    std::snprintf(text, sizeof text, "%.1f million", count / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.0f", count);
  }
  return text;
}

}  // namespace

double parameter_count(const config::ExperimentConfig& c) {
  const auto& m = c.model;
  const double w = as_double(m.width), t = tokens(c);
  const double blocks = as_double(m.layers) * block_parameters(m);
  switch (c.task) {
    case config::Task::text:  // token and position embeddings, readouts LayerNorm + Linear(w, 2)
      return as_double(c.data.vocabulary_size) * w + t * w + blocks + readouts(c) * (2.0 * w + 2.0 * w + 2.0);
    case config::Task::video: {  // patch embedding, positions, readouts LayerNorm + Linear(w, patch pixels)
      const auto& p = c.data.patch;
      const double pixels = as_double(p[0] * p[1] * p[2]);
      return pixels * w + w + t * w + blocks + readouts(c) * (2.0 * w + w * pixels + pixels);
    }
    case config::Task::vit: {  // patch embedding, class token, positions, blocks, norm, head
      const double patch = as_double(c.data.image_patch);
      return patch * patch * w + w + w + t * w + blocks + 2.0 * w + w * kImageClasses + kImageClasses;
    }
    case config::Task::gpt:  // characters, positions, blocks, norm, head
      return kMaxCharacters * w + t * w + blocks + 2.0 * w + w * kMaxCharacters + kMaxCharacters;
    case config::Task::torchscript:
    case config::Task::torchscript_layerwise:  // the module file holds its tensors uncompressed, float32 mostly
      return file_bytes(c.model.file) / kFloat;
  }
  return 0.0;
}

Footprint estimate_footprint(const config::ExperimentConfig& c) {
  Footprint footprint;
  footprint.parameters = parameter_count(c);
  // Weights, gradients, AdamW's two moments (HAM and HORST: room for one more), and a checkpoint's copy of the
  // weights and the optimizer state.
  const double optimizer_copies = c.optimizer.name == config::OptimizerName::adamw ? 2.0 : 3.0;
  footprint.model_bytes = footprint.parameters * kFloat * (1.0 + 1.0 + optimizer_copies + (1.0 + optimizer_copies));
  // A user's module's activations are its own affair: not estimated (0).
  footprint.activation_bytes = config::is_user_model(c.task) ? 0.0 : activation_floats(c) * kFloat;
  if (c.task == config::Task::gpt) footprint.activation_bytes += tokens(c) * tokens(c) * kFloat;  // causal mask
  footprint.data_bytes = data_bytes(c);
  return footprint;
}

std::string Footprint::describe(int64_t batch_size) const {
  return count_text(parameters) +
         " parameters; weights, gradients, optimizer state and a checkpoint copy: " + byte_text(model_bytes) +
         "; activations of a batch of " + std::to_string(batch_size) + ": " + byte_text(activation_bytes) +
         "; data: " + byte_text(data_bytes);
}

void require_fits(const config::ExperimentConfig& config, const Footprint& footprint, bool model_on_host,
                  const MemoryAvailability& available) {
  const double needed = model_on_host ? footprint.total() : footprint.data_bytes;
  if (needed <= available.bytes) return;
  if (config::is_user_model(config.task)) {
    // A user's module: its size is its own (the parameters estimated from the module file's bytes).
    throw MemoryError("the run \"" + config.name + "\" needs about " + byte_text(needed) + " of host memory (" +
                      footprint.describe(config.train.batch_size) + ", estimated from the module file " +
                      config.model.file + " and the data file " + config.data.file + ") but " +
                      byte_text(available.bytes) + " is available (" + available.source +
                      "): train a smaller module, or set data.memory_mb lower to read the data file chunk by chunk, "
                      "or use a machine with more memory");
  }
  throw MemoryError("the run \"" + config.name + "\" needs about " + byte_text(needed) + " of host memory (" +
                    footprint.describe(config.train.batch_size) + ") but " + byte_text(available.bytes) +
                    " is available (" + available.source +
                    "); make model.layers, model.width, model.ff_width or train.batch_size smaller");
}

std::string out_of_memory_message(const config::ExperimentConfig& config, const Footprint& footprint,
                                  const std::string& failed, const std::string& device) {
  const std::string more = failed.find("GPU") != std::string::npos
                               ? "use a GPU with more free memory"
                               : "give the process more memory (ulimit -v, its cgroup's memory.max)";
  return "out of memory: " + failed + " in the run \"" + config.name + "\"" + (device.empty() ? "" : " on " + device) +
         ", estimated to need about " + byte_text(footprint.total()) + " (" +
         footprint.describe(config.train.batch_size) +
         "); make model.width, model.layers, model.ff_width or train.batch_size smaller, or " + more;
}

}  // namespace descentlab::config
