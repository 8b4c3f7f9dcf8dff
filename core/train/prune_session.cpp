#include "core/session/prune_session.h"

#include <torch/torch.h>

#include <sstream>
#include <stdexcept>

#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/store/run_writer.h"
#include "core/train/saved_run.h"
#include "core/train/sparse_trainer.h"

namespace descentlab::session {

std::vector<double> parse_sparsities(const std::string& text) {
  std::vector<double> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) continue;
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !(value >= 0.0 && value <= 1.0)) {
      throw config::ConfigError("--sparsity", "", "\"" + item + "\" is not a sparsity in [0, 1]");
    }
    values.push_back(value);
  }
  if (values.empty()) throw config::ConfigError("--sparsity", "", "give at least one sparsity, e.g. 0.5,0.9");
  return values;
}

PruneOutcome run_prune(const PruneRequest& request, const std::function<void(const std::string&)>& on_start) {
  if (request.sparsities.empty()) throw config::ConfigError("--sparsity", "", "give at least one sparsity, e.g. 0.5");
  optim::MaskScope scope = optim::MaskScope::per_tensor;
  try {
    scope = optim::parse_mask_scope(request.scope);
  } catch (const std::invalid_argument& error) {
    throw config::ConfigError("--scope", "", error.what());
  }
  const train::SavedRun saved = train::read_saved_run(request.run_path, request.checkpoint, request.device);
  const config::ExperimentConfig& config = saved.config;
  if (config.is_layerwise()) {
    throw config::ConfigError(
        request.run_path, "task",
        "one-shot pruning applies to vit and gpt runs, this run is \"" + config::word(config.task) + "\"");
  }
  const torch::Device device = train::resolve_device(config.train.device);
  torch::manual_seed(config.train.seed);
  auto task = tasks::make_sparse_task(config, data::default_data_root(), device, saved.script_sources());
  train::load_saved_model(saved, *task->module(), request.run_path, request.checkpoint);
  optim::PruneSelection selection;
  if (config.sparsity.exclude_embeddings_and_readout) {
    selection.excluded_prefixes = task->embedding_and_readout_prefixes();
  }
  if (on_start) {
    on_start("one-shot " + optim::to_string(scope) + " magnitude pruning of " + request.run_path + " (checkpoint \"" +
             request.checkpoint + "\") at " + std::to_string(request.sparsities.size()) + " sparsities...");
  }
  const int64_t batch = train::evaluation_batch_size(config);
  const auto rows = train::one_shot_prune(*task, request.sparsities, selection, scope, batch, request.samples);
  const auto dense = train::one_shot_prune(*task, {0.0}, selection, scope, batch, request.samples);

  record::SweepResult sweep;
  sweep.name = "oneshot_pruning";
  sweep.noise = "magnitude_pruning_" + optim::to_string(scope);
  sweep.metric_name = task->metric_name();
  sweep.seeds = {0};
  PruneOutcome outcome;
  outcome.metric_name = task->metric_name();
  outcome.scope = optim::to_string(scope);
  outcome.dense_metric = dense.front().evaluation.metric;
  for (const auto& row : rows) {
    sweep.gamma.push_back(row.sparsity);
    sweep.metric.push_back(row.evaluation.metric);
    outcome.rows.push_back({row.sparsity, row.achieved, row.evaluation.metric, row.evaluation.loss});
  }
  auto writer = store::RunWriter::open(request.run_path);
  writer->sweep(sweep);
  writer->flush();
  return outcome;
}

}  // namespace descentlab::session
