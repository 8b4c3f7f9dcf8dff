#pragma once
// The metric vocabulary: every series a trainer emits, in one table. The trainers name their series with these
// constants, the run file stores each series' shape (docs/run-file.md, format version 2), and the CLI and the
// window take display words, units and direction from here instead of keeping lists of their own.
// Plain data: no LibTorch, no Qt (widgets/ may include this header).

#include <string>
#include <string_view>

namespace descentlab::record {

// What one row of a series holds.
enum class SeriesShape {
  Scalar,        // one value
  PerLayer,      // one value per layer l = 0..L (or per constraint l = 1..L)
  PerThreshold,  // one value per threshold (near_zero_share: |w| < 1e-4, 1e-3, 1e-2)
  PerSparsity,   // one value per pruning sparsity of the live frontier (sparsity.frontier_sparsities)
  Vector,        // a vector series this table does not know (written by a newer build, or a test)
};

// Which way is better; Neither for series that describe rather than score (λ, learning rate, phase).
enum class Direction { Higher, Lower, Neither };

struct MetricInfo {
  std::string_view name;     // the series' name in the run file and in sinks
  std::string_view display;  // words for a person: axis titles, menus, legends
  std::string_view unit;     // "" when dimensionless or the task's own (a loss)
  SeriesShape shape;
  Direction better;
  std::string_view meaning;  // one sentence for tooltips and `inspect`
  // A noisy mean over a metric interval (the training loss): plots may smooth it. Evaluations (test values, the
  // accuracy around a compression), set values (the learning rate) and states (λ) are drawn as they are.
  bool smoothable = false;
};

namespace metric {
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kTestLoss = "test_loss";
inline constexpr const char* kTestAccuracy = "test_accuracy";
inline constexpr const char* kTestRmse = "test_rmse";
inline constexpr const char* kTestPerplexity = "test_perplexity";
inline constexpr const char* kLearningRate = "lr";
inline constexpr const char* kEpoch = "epoch";
inline constexpr const char* kThroughput = "throughput";
inline constexpr const char* kLagrangian = "lagrangian";
inline constexpr const char* kLayerLoss = "layer_loss";
inline constexpr const char* kTestLayerLoss = "test_layer_loss";
inline constexpr const char* kTestDescendingFrequency = "test_descending_frequency";
inline constexpr const char* kTestDescentCounts = "test_descent_counts";
inline constexpr const char* kLambda = "lambda";
inline constexpr const char* kSlack = "slack";
inline constexpr const char* kResilientSlack = "resilient_slack";
inline constexpr const char* kAlpha = "alpha";
inline constexpr const char* kSparsity = "sparsity";
inline constexpr const char* kAcdcPhase = "acdc_phase";
inline constexpr const char* kMaskChurn = "mask_churn";
inline constexpr const char* kSignFlips = "sign_flips";
inline constexpr const char* kTestAccuracyBeforeCompression = "test_accuracy_before_compression";
inline constexpr const char* kTestAccuracyAfterCompression = "test_accuracy_after_compression";
inline constexpr const char* kTestPerplexityBeforeCompression = "test_perplexity_before_compression";
inline constexpr const char* kTestPerplexityAfterCompression = "test_perplexity_after_compression";
inline constexpr const char* kNearZeroShare = "near_zero_share";
inline constexpr const char* kFrontierSparsity = "frontier_sparsity";
inline constexpr const char* kFrontierAchieved = "frontier_achieved";
inline constexpr const char* kFrontierAccuracy = "frontier_accuracy";
inline constexpr const char* kFrontierPerplexity = "frontier_perplexity";
inline constexpr const char* kFrontierLoss = "frontier_loss";
}  // namespace metric

inline constexpr MetricInfo kMetricVocabulary[] = {
    {metric::kLoss, "training loss", "", SeriesShape::Scalar, Direction::Lower,
     "Mean training loss over the last interval (the last layer's loss for the layerwise engine).", true},
    {metric::kTestLoss, "test loss", "", SeriesShape::Scalar, Direction::Lower, "Loss on the test set."},
    {metric::kTestAccuracy, "test accuracy", "", SeriesShape::Scalar, Direction::Higher,
     "Share of test samples classified correctly."},
    {metric::kTestRmse, "test RMSE", "", SeriesShape::Scalar, Direction::Lower,
     "Root mean squared error of the predicted frame on the test set."},
    {metric::kTestPerplexity, "test perplexity", "", SeriesShape::Scalar, Direction::Lower,
     "exp(test loss) of the language model."},
    {metric::kLearningRate, "learning rate", "", SeriesShape::Scalar, Direction::Neither,
     "The optimizer's step size η at this step, as train.lr_schedule and train.warmup set it."},
    {metric::kEpoch, "epoch", "epochs", SeriesShape::Scalar, Direction::Neither,
     "Epochs done, counting the current one's share of batches."},
    {metric::kThroughput, "throughput", "samples/s", SeriesShape::Scalar, Direction::Higher,
     "Training samples per second of wall time over the last interval.", true},
    {metric::kLagrangian, "Lagrangian", "", SeriesShape::Scalar, Direction::Neither,
     "Mean primal-dual Lagrangian: the loss plus the λ-weighted constraint slacks.", true},
    {metric::kLayerLoss, "per-layer training loss fₗ", "", SeriesShape::PerLayer, Direction::Lower,
     "Training loss of the readout after each layer l = 0..L.", true},
    {metric::kTestLayerLoss, "per-layer test loss fₗ", "", SeriesShape::PerLayer, Direction::Lower,
     "Test loss of the readout after each layer l = 0..L."},
    {metric::kTestDescendingFrequency, "share of test samples descending", "", SeriesShape::PerLayer, Direction::Higher,
     "For each layer l, the share of test samples whose loss falls from layer l-1 to l."},
    {metric::kTestDescentCounts, "test samples descending at k layers", "samples", SeriesShape::PerLayer,
     Direction::Neither,
     "n_k for k = 0..L: how many test samples have a loss that falls (or stays) at exactly k of the L layers; the "
     "descent certificate's interval over all (layer, sample) pairs is bootstrapped from it."},
    {metric::kLambda, "Lagrange multiplier λₗ", "", SeriesShape::PerLayer, Direction::Neither,
     "Dual variable of each layer's descent constraint; non-zero where the constraint binds."},
    {metric::kSlack, "constraint slack gₗ", "", SeriesShape::PerLayer, Direction::Neither,
     "f(l) - (1 - α) f(l-1) averaged over the interval; positive means the constraint is violated.", true},
    {metric::kResilientSlack, "resilient relaxation uₗ", "", SeriesShape::PerLayer, Direction::Neither,
     "How far each constraint is relaxed (resilient constrained learning)."},
    {metric::kAlpha, "descent factor α", "", SeriesShape::Scalar, Direction::Neither,
     "Each layer must cut the loss by this share: f(l) <= (1 - α) f(l-1), at this epoch."},
    {metric::kSparsity, "sparsity", "share", SeriesShape::Scalar, Direction::Neither,
     "Share of the prunable weights that are exactly zero."},
    {metric::kAcdcPhase, "AC/DC phase", "", SeriesShape::Scalar, Direction::Neither,
     "AC/DC schedule phase: 0 dense, 1 compressed, 2 decompressed."},
    {metric::kMaskChurn, "mask churn", "weights", SeriesShape::Scalar, Direction::Lower,
     "Weights whose kept/pruned state changed since the previous compressed phase."},
    {metric::kSignFlips, "sign flips", "weights", SeriesShape::Scalar, Direction::Lower,
     "Weights kept at this and the previous compression whose sign changed between them."},
    {metric::kTestAccuracyBeforeCompression, "test accuracy before compression", "", SeriesShape::Scalar,
     Direction::Higher, "Test accuracy of the dense model at an AC/DC compression, just before its mask is applied."},
    {metric::kTestAccuracyAfterCompression, "test accuracy after compression", "", SeriesShape::Scalar,
     Direction::Higher, "Test accuracy right after an AC/DC compression applies its mask, before any further step."},
    {metric::kTestPerplexityBeforeCompression, "test perplexity before compression", "", SeriesShape::Scalar,
     Direction::Lower, "Test perplexity of the dense model at an AC/DC compression, just before its mask is applied."},
    {metric::kTestPerplexityAfterCompression, "test perplexity after compression", "", SeriesShape::Scalar,
     Direction::Lower, "Test perplexity right after an AC/DC compression applies its mask, before any further step."},
    {metric::kNearZeroShare, "share of |w| near zero", "share", SeriesShape::PerThreshold, Direction::Neither,
     "Share of prunable weights with |w| below 1e-4, 1e-3 and 1e-2."},
    {metric::kFrontierSparsity, "pruned sparsity", "share", SeriesShape::PerSparsity, Direction::Neither,
     "The sparsities at which the live frontier prunes a copy of the weights, one column each."},
    {metric::kFrontierAchieved, "achieved sparsity", "share", SeriesShape::PerSparsity, Direction::Neither,
     "Share of the prunable weights exactly zero after the frontier's pruning at each sparsity."},
    {metric::kFrontierAccuracy, "accuracy after one-shot pruning", "", SeriesShape::PerSparsity, Direction::Higher,
     "Accuracy of a copy of the model pruned layer by layer by magnitude to each sparsity, on a fixed small batch."},
    {metric::kFrontierPerplexity, "perplexity after one-shot pruning", "", SeriesShape::PerSparsity, Direction::Lower,
     "Perplexity of a copy of the model pruned layer by layer by magnitude to each sparsity, on a fixed small batch."},
    {metric::kFrontierLoss, "loss after one-shot pruning", "", SeriesShape::PerSparsity, Direction::Lower,
     "Cross-entropy of the frontier's pruned copy at each sparsity, on its fixed small batch."},
};

// The entry for `name`, or nullptr when the vocabulary does not know it.
inline const MetricInfo* find_metric(std::string_view name) {
  for (const auto& info : kMetricVocabulary) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

// Display words for `name`: the table's, or the name with '_' as spaces when unknown.
inline std::string display_name(std::string_view name) {
  if (const auto* info = find_metric(name)) return std::string(info->display);
  std::string words(name);
  for (auto& c : words) {
    if (c == '_') c = ' ';
  }
  return words;
}

// The test series of a task's metric ("accuracy" -> "test_accuracy").
inline std::string test_series(std::string_view task_metric) {
  return "test_" + std::string(task_metric);
}

// The live sparsity frontier's series of a task's metric ("accuracy" -> "frontier_accuracy").
inline std::string frontier_series(std::string_view task_metric) {
  return "frontier_" + std::string(task_metric);
}

// The series of a task's metric at each AC/DC compression, just before and right after the mask is applied
// ("accuracy", false -> "test_accuracy_before_compression").
inline std::string compression_series(std::string_view task_metric, bool after_mask) {
  return test_series(task_metric) + (after_mask ? "_after_compression" : "_before_compression");
}

// The word the run file stores for a shape ("scalar", "per_layer", "per_threshold", "per_sparsity", "vector").
inline const char* shape_word(SeriesShape shape) {
  switch (shape) {
    case SeriesShape::Scalar: return "scalar";
    case SeriesShape::PerLayer: return "per_layer";
    case SeriesShape::PerThreshold: return "per_threshold";
    case SeriesShape::PerSparsity: return "per_sparsity";
    case SeriesShape::Vector: break;
  }
  return "vector";
}

// The shape for a stored word; false when the word is none of shape_word's.
inline bool parse_shape_word(std::string_view word, SeriesShape& shape) {
  for (auto candidate : {SeriesShape::Scalar, SeriesShape::PerLayer, SeriesShape::PerThreshold,
                         SeriesShape::PerSparsity, SeriesShape::Vector}) {
    if (word == shape_word(candidate)) {
      shape = candidate;
      return true;
    }
  }
  return false;
}

// The shape a series has: the table's when it knows the name, otherwise what the writer was given (a scalar or
// a vector row).
inline SeriesShape shape_of(std::string_view name, bool written_as_scalar) {
  if (const auto* info = find_metric(name)) return info->shape;
  return written_as_scalar ? SeriesShape::Scalar : SeriesShape::Vector;
}

}  // namespace descentlab::record
