// descentlab-cli prune RUN.h5: one-shot layerwise magnitude pruning of a trained ViT or GPT at several sparsities,
// evaluated without retraining (SCIENCE.md §2). The table is printed and stored in the run file as the sweep
// "oneshot_pruning" (gamma = sparsity, metric = accuracy or validation perplexity).

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "core/record/checkpoint.h"
#include "core/session/prune_session.h"

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

int run_prune(const PruneOptions& options) {
  session::PruneRequest request;
  request.run_path = options.run;
  request.checkpoint = options.checkpoint;
  request.sparsities = session::parse_sparsities(options.sparsity);
  request.scope = options.scope;
  request.device = options.device;
  request.samples = options.samples;
  const session::PruneOutcome outcome =
      session::run_prune(request, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });

  if (options.json) {
    nlohmann::json table = nlohmann::json::array();
    for (const auto& row : outcome.rows) {
      table.push_back({{"sparsity", row.sparsity},
                       {"achieved", row.achieved},
                       {outcome.metric_name, row.metric},
                       {"loss", row.loss}});
    }
    std::cout << nlohmann::json{{"run", options.run},
                                {"checkpoint", options.checkpoint},
                                {"scope", outcome.scope},
                                {"samples", options.samples},
                                {"metric", outcome.metric_name},
                                {"dense", outcome.dense_metric},
                                {"rows", table}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("dense: %s %.4f\n", outcome.metric_name.c_str(), outcome.dense_metric);
    std::printf("%10s %10s %12s %10s\n", "sparsity", "achieved", outcome.metric_name.c_str(), "loss");
    for (const auto& row : outcome.rows) {
      std::printf("%10.3f %10.4f %12.4f %10.4f\n", row.sparsity, row.achieved, row.metric, row.loss);
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
