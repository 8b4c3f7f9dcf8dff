#pragma once
// What a finished (or stopped) training run reports, for either engine: plain data, no LibTorch, so the CLI, the
// GUI and tests read it alike.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace descentlab::session {

struct TrainingResult {
  bool stopped = false;  // stopped by the control before the last step (the state is kept as "latest")
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  double seconds = 0.0;
  double steps_per_second = 0.0;  // over the steps this call ran
  std::string metric;             // "accuracy", "rmse" or "perplexity"
  bool evaluated = false;         // an epoch's test evaluation ran in this call (false: stopped before it)
  double test_metric = 0.0;       // at the last completed epoch; meaningless when !evaluated
  double test_loss = 0.0;
  // The engine's own summary: layerwise {"test": {"layer_loss", "descending_frequency"}, "lambda"}; sparse
  // {"optimizer", "sparsity", "near_zero_share": {"thresholds", "share"}}.
  nlohmann::json extra = nlohmann::json::object();
};

}  // namespace descentlab::session
