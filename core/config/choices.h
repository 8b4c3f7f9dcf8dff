#pragma once
// The closed choices of an experiment config ("task": text | video | vit | gpt, ...) as enums, each with its words
// in one table. The config is parsed into these once; code compares enums, and the words appear only here (and in
// the JSON, the CLI's messages and the window's menus, which all take them from here).

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/error.h"

namespace descentlab::config {

// torchscript: a user's TorchScript module on a user's HDF5 data file (model.file, data.file; docs/your-model.md),
// trained by the sparse engine (AdamW, HAM, HORST, AC/DC); torchscript-layerwise: the same by layerwise descent (ERM
// or constrained, λ, per-layer loss), for a module with layer_outputs(x).
enum class Task { text, video, vit, gpt, torchscript, torchscript_layerwise };
// What a user's data file trains (its root attribute "task"): the loss and the metric follow from it.
enum class DataTarget { classification, regression, next_token };
enum class Readout { shared, per_layer };
enum class Pooling { mean, first };
enum class Device { automatic, cpu, cuda };
enum class AlphaSchedule { constant, linear };
enum class DualUpdate { batch, epoch };
enum class OptimizerName { adamw, ham, horst };
enum class SparsityMethod { none, acdc };
enum class SparsityScope { global, per_layer };
enum class PhaseUnits { steps, epochs };
enum class ImageDataset { fashion_mnist, mnist };
enum class EvaluateOn { test, validation };
enum class LrShape { constant, cosine, linear };  // train.lr_schedule (core/train/lr_schedule.h)

// Choices<E>::words lists every value of E with its word, the default's first where the window offers a list.
template <typename E>
struct Choices;

#define DESCENTLAB_CHOICES(E, N, ...)                                                    \
  template <>                                                                            \
  struct Choices<E> {                                                                    \
    static constexpr std::array<std::pair<E, std::string_view>, N> words{{__VA_ARGS__}}; \
  }

DESCENTLAB_CHOICES(Task, 6, {Task::text, "text"}, {Task::video, "video"}, {Task::vit, "vit"}, {Task::gpt, "gpt"},
                   {Task::torchscript, "torchscript"}, {Task::torchscript_layerwise, "torchscript-layerwise"});
DESCENTLAB_CHOICES(DataTarget, 3, {DataTarget::classification, "classification"},
                   {DataTarget::regression, "regression"}, {DataTarget::next_token, "next-token"});
DESCENTLAB_CHOICES(Readout, 2, {Readout::shared, "shared"}, {Readout::per_layer, "per_layer"});
DESCENTLAB_CHOICES(Pooling, 2, {Pooling::mean, "mean"}, {Pooling::first, "first"});
DESCENTLAB_CHOICES(Device, 3, {Device::automatic, "auto"}, {Device::cpu, "cpu"}, {Device::cuda, "cuda"});
DESCENTLAB_CHOICES(AlphaSchedule, 2, {AlphaSchedule::constant, "constant"}, {AlphaSchedule::linear, "linear"});
DESCENTLAB_CHOICES(DualUpdate, 2, {DualUpdate::batch, "batch"}, {DualUpdate::epoch, "epoch"});
DESCENTLAB_CHOICES(OptimizerName, 3, {OptimizerName::adamw, "adamw"}, {OptimizerName::ham, "ham"},
                   {OptimizerName::horst, "horst"});
DESCENTLAB_CHOICES(SparsityMethod, 2, {SparsityMethod::none, "none"}, {SparsityMethod::acdc, "acdc"});
DESCENTLAB_CHOICES(SparsityScope, 2, {SparsityScope::global, "global"}, {SparsityScope::per_layer, "per_layer"});
DESCENTLAB_CHOICES(PhaseUnits, 2, {PhaseUnits::steps, "steps"}, {PhaseUnits::epochs, "epochs"});
DESCENTLAB_CHOICES(ImageDataset, 2, {ImageDataset::fashion_mnist, "fashion-mnist"}, {ImageDataset::mnist, "mnist"});
DESCENTLAB_CHOICES(EvaluateOn, 2, {EvaluateOn::test, "test"}, {EvaluateOn::validation, "validation"});
DESCENTLAB_CHOICES(LrShape, 3, {LrShape::constant, "constant"}, {LrShape::cosine, "cosine"},
                   {LrShape::linear, "linear"});

#undef DESCENTLAB_CHOICES

// The word of a value ("per_layer").
template <typename E>
std::string word(E value) {
  for (const auto& [candidate, text] : Choices<E>::words) {
    if (candidate == value) return std::string(text);
  }
  return "?";
}

// The value of a word; false, leaving `value` alone, when the word is not one of E's.
template <typename E>
bool parse_choice(std::string_view text, E& value) {
  for (const auto& [candidate, candidate_text] : Choices<E>::words) {
    if (candidate_text == text) {
      value = candidate;
      return true;
    }
  }
  return false;
}

// Every word of E, in the table's order.
template <typename E>
std::vector<std::string> choice_words();

// The value of a word, or an Error naming `what` (a key or an option) and the words it accepts.
template <typename E>
E require_choice(std::string_view text, const std::string& what) {
  E value{};
  if (parse_choice(text, value)) return value;
  std::string known;
  for (const auto& entry : Choices<E>::words) known += (known.empty() ? "" : ", ") + std::string(entry.second);
  throw Error(what + ": unknown value \"" + std::string(text) + "\" (known: " + known + ")");
}

template <typename E>
std::vector<std::string> choice_words() {
  std::vector<std::string> words;
  for (const auto& entry : Choices<E>::words) words.emplace_back(entry.second);
  return words;
}

// The layerwise tasks (SCIENCE.md §1) and the sparse-training tasks (§2).
inline bool is_layerwise(Task task) {
  return task == Task::text || task == Task::video || task == Task::torchscript_layerwise;
}

// A user's module on a user's data file, by either engine (docs/your-model.md).
inline bool is_user_model(Task task) {
  return task == Task::torchscript || task == Task::torchscript_layerwise;
}

// The task's test metric, the one definition (the tasks' metric_name() return it): the name of its series is
// "test_" + this (core/record/metrics.h).
// For torchscript the data file decides (data_target_metric).
inline const char* task_metric(Task task) {
  switch (task) {
    case Task::text:
    case Task::vit:
    case Task::torchscript:
    case Task::torchscript_layerwise: return "accuracy";
    case Task::video: return "rmse";
    case Task::gpt: break;
  }
  return "perplexity";
}

// The test metric of a user's data file's target.
inline const char* data_target_metric(DataTarget target) {
  switch (target) {
    case DataTarget::classification: return "accuracy";
    case DataTarget::regression: return "rmse";
    case DataTarget::next_token: break;
  }
  return "perplexity";
}

}  // namespace descentlab::config
