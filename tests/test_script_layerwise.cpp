// A user's module by layerwise descent (issue 53, items 2 and 4): a TorchScript module with layer_outputs(x) trained
// ERM or constrained like the text and video presets (λ, the per-layer loss), swept for robustness with noise its
// inputs take, and probed layer by layer; a module without layer_outputs is refused naming the file and the method.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/eval/layer_probe.h"
#include "core/session/sweep_session.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "core/tasks/script_layerwise_task.h"
#include "core/util/error.h"
#include "script_fixtures.h"
#include "test_support.h"

namespace descentlab::models {
namespace {

config::ExperimentConfig layerwise_config(const std::string& model, const std::string& data, bool constrained) {
  const nlohmann::json document = {
      {"name", "blocks"},
      {"task", "torchscript-layerwise"},
      {"model", {{"file", model}}},
      {"data", {{"file", data}, {"target", "classification"}}},
      {"constraints", {{"enabled", constrained}, {"alpha", 0.5}, {"dual_lr", 0.5}}},
      {"train", {{"epochs", 2}, {"batch_size", 16}, {"metric_interval", 2}, {"device", "cpu"}, {"lr", 0.01}}}};
  return config::ExperimentConfig::from_json(document, "test");
}

TEST_F(ScriptModelTest, LayerwiseDescentTrainsAUsersModuleByItsLayerOutputs) {
  for (const bool constrained : {false, true}) {
    session::SessionOptions options;
    options.run_path = (folder_->path() / (constrained ? "lw-constrained.h5" : "lw-erm.h5")).string();
    options.overwrite = true;
    session::TrainingSession session(layerwise_config(fixture("blocks.pt"), fixture("three.h5"), constrained), options);
    EXPECT_EQ(session.run().steps, 8);
    const store::RunReader reader(options.run_path);
    // blocks.pt reads out after its input and each of its two blocks: L = 2.
    const store::MetricSeries layer_loss = reader.metric("test_layer_loss");
    EXPECT_EQ(layer_loss.width, 3);
    EXPECT_EQ(layer_loss.rows(), 2u);
    // Constrained: α = 0.5 asks each layer to halve the loss, which this module does not, so λ (one per layer
    // after the first readout) rises from 0; ERM has no λ.
    const std::vector<std::string> names = reader.metric_names();
    const bool has_lambda = std::find(names.begin(), names.end(), "lambda") != names.end();
    EXPECT_EQ(has_lambda, constrained);
    if (constrained) {
      const store::MetricSeries lambda = reader.metric("lambda");
      EXPECT_EQ(lambda.width, 2);
      EXPECT_GT(*std::max_element(lambda.values.begin(), lambda.values.end()), 0.0);
    }
    EXPECT_EQ(reader.metric("test_accuracy").rows(), 2u);
  }
}

TEST_F(ScriptModelTest, AModuleWithoutLayerOutputsIsRefusedForLayerwiseDescent) {
  const std::string message = descentlab::testing::message_of<DataError>([&] {
    tasks::ScriptLayerwiseTask task(read_module_file(fixture("plain.pt")), fixture("three.h5"), torch::kCPU);
  });
  EXPECT_NE(message.find(fixture("plain.pt") + ": has no layer_outputs(x) method, which layerwise descent needs"),
            std::string::npos)
      << message;
}

TEST_F(ScriptModelTest, SweepsAndTheProbeTakeTheNoiseAUsersInputsTake) {
  const std::string run = (folder_->path() / "lw-swept.h5").string();
  {
    session::SessionOptions options;
    options.run_path = run;
    options.overwrite = true;
    session::TrainingSession(layerwise_config(fixture("blocks.pt"), fixture("three.h5"), true), options).run();
  }
  tasks::ScriptLayerwiseTask task(read_module_file(fixture("blocks.pt")), fixture("three.h5"), torch::kCPU);
  EXPECT_EQ(task.noise_kinds(), (std::vector<std::string>{"gaussian", "uniform"}));
  // Noise of strength γ has the standard deviation γ·σ of the training inputs.
  tasks::NoiseStream stream(7);
  const tasks::PerturbedBatch noisy = task.perturbed_test_batch(0, 32, "gaussian", 2.0, stream);
  const double drawn = (noisy.batch.input - task.test_batch(0, 32).input).std().item<double>();
  EXPECT_NEAR(drawn, 2.0 * task.data().input_std, 0.25 * 2.0 * task.data().input_std);
  const std::string refused =
      descentlab::testing::message_of<Error>([&] { task.perturbed_test_batch(0, 4, "discrete", 1.0, stream); });
  EXPECT_NE(refused.find("noise \"discrete\" does not apply to a float-input model (known: gaussian, uniform)"),
            std::string::npos)
      << refused;

  session::SweepRequest request;
  request.run_path = run;
  request.noise = "uniform";
  request.gamma = "0,1";
  request.seeds = 2;
  const record::SweepResult sweep = session::SweepSession(request).run();
  EXPECT_EQ(sweep.gamma.size(), 2u);
  EXPECT_EQ(sweep.layers, 3);
  EXPECT_EQ(store::RunReader(run).sweep_names().size(), 1u);

  eval::LayerProber prober(task);
  record::ProbeSettings settings;
  settings.sample = 5;
  settings.noise = "gaussian";
  settings.gamma = 0.5;
  const record::LayerProbe probe = prober.probe(settings);
  EXPECT_EQ(probe.loss.size(), 3u);
  EXPECT_EQ(probe.classes, 3);
  EXPECT_EQ(probe.probabilities.size(), 9u);
  EXPECT_TRUE(probe.token_ids.empty());
}

// Item 4 for the sparse engine: a torchscript run (AdamW or HORST, no layerwise descent) is swept for robustness too,
// through its module's layer_outputs when it has them, else through its prediction alone.
TEST_F(ScriptModelTest, ARunOfTheSparseEngineIsSweptThroughItsReadoutsOrItsPredictionAlone) {
  for (const auto& [module, readouts] : {std::pair<std::string, int64_t>{"plain.pt", 1}, {"blocks.pt", 3}}) {
    const std::string run = (folder_->path() / ("sparse-swept-" + module + ".h5")).string();
    const nlohmann::json document = {
        {"name", "sparse"},
        {"task", "torchscript"},
        {"model", {{"file", fixture(module)}}},
        {"data", {{"file", fixture("three.h5")}, {"target", "classification"}}},
        {"train", {{"epochs", 10}, {"batch_size", 16}, {"metric_interval", 8}, {"device", "cpu"}, {"lr", 0.03}}}};
    session::SessionOptions options;
    options.run_path = run;
    options.overwrite = true;
    session::TrainingSession(config::ExperimentConfig::from_json(document, "test"), options).run();

    session::SweepRequest request;
    request.run_path = run;
    request.noise = "gaussian";
    request.gamma = "0,4";
    request.seeds = 2;
    const record::SweepResult sweep = session::SweepSession(request).run();
    EXPECT_EQ(sweep.layers, readouts) << module;
    EXPECT_EQ(sweep.metric_name, "accuracy");
    ASSERT_EQ(sweep.metric.size(), 4u);
    // γ = 0 is the clean test set, the same for both seeds; γ = 4 (noise four times the inputs' spread) costs accuracy.
    EXPECT_EQ(sweep.metric[0], sweep.metric[1]);
    EXPECT_LT(sweep.metric[2] + sweep.metric[3], sweep.metric[0] + sweep.metric[1]) << module;
    EXPECT_EQ(store::RunReader(run).sweep_names().size(), 1u);
    request.noise = "discrete";
    const std::string refused = descentlab::testing::message_of<Error>([&] { session::SweepSession(request).run(); });
    EXPECT_NE(refused.find("does not apply to a float-input model"), std::string::npos) << refused;
  }
}

}  // namespace
}  // namespace descentlab::models
