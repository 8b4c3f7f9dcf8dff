// descentlab-cli prune RUN.h5: one-shot layerwise magnitude pruning of a trained ViT or GPT at several sparsities,
// evaluated without retraining (SCIENCE.md §2). The table is printed and stored in the run file as the sweep
// "oneshot_pruning" (gamma = sparsity, metric = accuracy or validation perplexity).

#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "app/cli/commands.h"
#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/record/checkpoint.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/saved_run.h"
#include "core/train/sparse_trainer.h"

namespace descentlab::cli {
namespace {

struct PruneOptions {
  std::string run;
  std::string sparsity = "0.5,0.6,0.7,0.8,0.9";
  std::string checkpoint = record::checkpoint_label::kLatest;
  std::string scope = "per_layer";
  std::string device;
  int64_t samples = 0;
  bool json = false;
};

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

int run_prune(const PruneOptions& options) {
  const std::vector<double> sparsities = parse_sparsities(options.sparsity);
  const optim::MaskScope scope = optim::parse_mask_scope(options.scope);
  const train::SavedRun saved = train::read_saved_run(options.run, options.checkpoint, options.device);
  const config::ExperimentConfig& config = saved.config;
  if (config.is_layerwise()) {
    throw config::ConfigError(
        options.run, "task",
        "one-shot pruning applies to vit and gpt runs, this run is \"" + config::word(config.task) + "\"");
  }
  const torch::Device device = train::resolve_device(config.train.device);
  torch::manual_seed(config.train.seed);
  auto task = tasks::make_sparse_task(config, data::default_data_root(), device);
  train::load_saved_model(saved, *task->module(), options.run, options.checkpoint);
  optim::PruneSelection selection;
  if (config.sparsity.exclude_embeddings_and_readout)
    selection.excluded_prefixes = task->embedding_and_readout_prefixes();
  std::fprintf(stderr, "one-shot %s magnitude pruning of %s (checkpoint \"%s\") at %zu sparsities...\n",
               optim::to_string(scope).c_str(), options.run.c_str(), options.checkpoint.c_str(), sparsities.size());
  const int64_t batch = train::evaluation_batch_size(config);
  const auto rows = train::one_shot_prune(*task, sparsities, selection, scope, batch, options.samples);
  const auto dense = train::one_shot_prune(*task, {0.0}, selection, scope, batch, options.samples);

  record::SweepResult sweep;
  sweep.name = "oneshot_pruning";
  sweep.noise = "magnitude_pruning_" + optim::to_string(scope);
  sweep.metric_name = task->metric_name();
  sweep.seeds = {0};
  for (const auto& row : rows) {
    sweep.gamma.push_back(row.sparsity);
    sweep.metric.push_back(row.evaluation.metric);
  }
  auto writer = store::RunWriter::open(options.run);
  writer->sweep(sweep);
  writer->flush();

  nlohmann::json table = nlohmann::json::array();
  for (const auto& row : rows) {
    table.push_back({{"sparsity", row.sparsity},
                     {"achieved", row.achieved},
                     {task->metric_name(), row.evaluation.metric},
                     {"loss", row.evaluation.loss}});
  }
  if (options.json) {
    std::cout << nlohmann::json{{"run", options.run},
                                {"checkpoint", options.checkpoint},
                                {"scope", optim::to_string(scope)},
                                {"samples", options.samples},
                                {"metric", task->metric_name()},
                                {"dense", dense.front().evaluation.metric},
                                {"rows", table}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("dense: %s %.4f\n", task->metric_name().c_str(), dense.front().evaluation.metric);
    std::printf("%10s %10s %12s %10s\n", "sparsity", "achieved", task->metric_name().c_str(), "loss");
    for (const auto& row : rows) {
      std::printf("%10.3f %10.4f %12.4f %10.4f\n", row.sparsity, row.achieved, row.evaluation.metric,
                  row.evaluation.loss);
    }
  }
  return 0;
}

}  // namespace

void add_prune_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PruneOptions>();
  CLI::App* prune = app.add_subcommand(
      "prune", "One-shot magnitude pruning of a trained ViT or GPT run at several sparsities (no retraining)");
  prune->add_option("run", options->run, "The run file (.h5)")->required();
  prune->add_option("--sparsity", options->sparsity, "Comma-separated sparsities in [0, 1]");
  prune->add_option("--checkpoint", options->checkpoint, "Checkpoint to prune: latest or best");
  prune->add_option("--scope", options->scope, "per_layer (layerwise, the paper's) or global")
      ->check(CLI::IsMember({"per_layer", "global"}));
  prune->add_option("--device", options->device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  prune
      ->add_option("--samples", options->samples,
                   "Evaluate on the first N test (or validation) samples only; 0 = all. With the run's "
                   "sparsity.frontier_samples this gives the live frontier's numbers for that checkpoint")
      ->check(CLI::NonNegativeNumber);
  prune->add_flag("--json", options->json, "Print the table as JSON");
  prune->callback([options, &exit_code]() { exit_code = run_prune(*options); });
}

}  // namespace descentlab::cli
