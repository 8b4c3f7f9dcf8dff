#pragma once
// One-shot layerwise magnitude pruning of a finished ViT or GPT run (SCIENCE.md §2), behind a torch-free door: the
// run's checkpoint is loaded into a freshly built task, pruned at each sparsity on a copy of its weights and
// evaluated without retraining, and the table is stored in the run file as the sweep "oneshot_pruning"
// (gamma = sparsity, metric = accuracy or validation perplexity). `descentlab-cli prune` runs it.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/record/checkpoint.h"

namespace descentlab::session {

struct PruneRequest {
  std::string run_path;
  std::string checkpoint = record::checkpoint_label::kLatest;
  std::vector<double> sparsities;   // each in [0, 1]
  std::string scope = "per_layer";  // "per_layer" (the paper's) or "global"
  std::string device;               // "" = the run's own
  int64_t samples = 0;              // evaluate on the first N test (or validation) samples; 0 = all
};

struct PruneRow {
  double sparsity = 0.0;
  double achieved = 0.0;  // exact-zero share of the prunable weights after pruning
  double metric = 0.0;
  double loss = 0.0;
};

struct PruneOutcome {
  std::string metric_name;  // "accuracy" or "perplexity"
  std::string scope;        // as stored: "per_layer" or "global"
  double dense_metric = 0.0;
  std::vector<PruneRow> rows;
};

// Parses "0.5,0.9": each a number in [0, 1], at least one (config::ConfigError naming --sparsity otherwise).
std::vector<double> parse_sparsities(const std::string& text);

// Runs the request and stores its table; `on_start` (if given) hears one line before the evaluations begin. Errors
// name the run file, the checkpoint or the option at fault (a layerwise run is refused).
PruneOutcome run_prune(const PruneRequest& request, const std::function<void(const std::string&)>& on_start = {});

}  // namespace descentlab::session
