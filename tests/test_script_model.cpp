// A user's TorchScript module as the engines' model (issue 53, items 1, 2 and 10): loaded with torch::jit::load, its
// parameters and buffers seen by their own names as the module's own tensors (an optimizer's step changes what the
// module computes), train and eval switching the module, and each bad file refused naming the file and the method.
// The modules are written by tests/python/make_script_models.py with Debian's python3-torch.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/config/experiment_config.h"
#include "core/models/script_model.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "core/tasks/script_task.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab::models {
namespace {

namespace fs = std::filesystem;

// The fixtures, written once per test binary into a scratch folder.
class ScriptModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = new descentlab::testing::ScratchFolder();
    const std::string command = std::string(DESCENTLAB_PYTHON3) + " " + DESCENTLAB_SOURCE_DIR +
                                "/tests/python/make_script_models.py " + folder_->path().string();
    written_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete folder_;
    folder_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(written_) << "tests/python/make_script_models.py failed (python3-torch?)"; }
  static std::string fixture(const std::string& name) { return (folder_->path() / name).string(); }

  static descentlab::testing::ScratchFolder* folder_;
  static bool written_;
};
descentlab::testing::ScratchFolder* ScriptModelTest::folder_ = nullptr;
bool ScriptModelTest::written_ = false;

std::string error_of(const std::function<void()>& action) {
  return descentlab::testing::message_of<DataError>(action);
}

TEST_F(ScriptModelTest, ParametersAreTheModulesOwnByTheirNamesAndForwardMatchesPyTorch) {
  const nlohmann::json expected = nlohmann::json::parse(std::ifstream(fixture("blocks.json")));
  ScriptModelImpl model(fixture("blocks.pt"), torch::kCPU);
  std::vector<std::string> names, buffers;
  for (const auto& parameter : model.named_parameters()) names.push_back(parameter.key());
  for (const auto& buffer : model.named_buffers()) buffers.push_back(buffer.key());
  std::sort(names.begin(), names.end());
  std::sort(buffers.begin(), buffers.end());
  auto python_names = expected["parameters"].get<std::vector<std::string>>();
  auto python_buffers = expected["buffers"].get<std::vector<std::string>>();
  std::sort(python_names.begin(), python_names.end());
  std::sort(python_buffers.begin(), python_buffers.end());
  EXPECT_EQ(names, python_names);
  EXPECT_EQ(buffers, python_buffers);

  model.eval();
  const torch::Tensor x = torch::tensor(expected["input"].get<std::vector<float>>()).reshape({2, 4});
  const torch::Tensor wanted = torch::tensor(expected["output"].get<std::vector<float>>()).reshape({2, 3});
  EXPECT_TRUE(torch::allclose(model.forward(x), wanted, 1e-5, 1e-6)) << model.forward(x) << wanted;
  ASSERT_TRUE(model.has_layer_outputs());
  const std::vector<torch::Tensor> outputs = model.layer_outputs(x);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_TRUE(torch::allclose(outputs.back(), wanted, 1e-5, 1e-6));

  // An AdamW step on the registered parameters changes what the module itself computes.
  model.train();
  torch::optim::AdamW optimizer(model.parameters(), torch::optim::AdamWOptions(0.1));
  const torch::Tensor batch = torch::randn({8, 4});
  model.forward(batch).pow(2).mean().backward();
  optimizer.step();
  model.eval();
  EXPECT_FALSE(torch::allclose(model.forward(x), wanted)) << "the step did not reach the module's weights";
}

TEST_F(ScriptModelTest, TrainAndEvalSwitchTheModule) {
  ScriptModelImpl model(fixture("blocks.pt"), torch::kCPU);
  const torch::Tensor x = torch::randn({16, 4});
  model.eval();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(model.forward(x), model.forward(x))) << "eval: no dropout";
  model.train();
  EXPECT_FALSE(torch::equal(model.forward(x), model.forward(x))) << "train: dropout draws";
}

TEST_F(ScriptModelTest, BadFilesAreRefusedNamingTheFileAndWhatIsWrong) {
  const auto refused = [&](const std::string& name) {
    return error_of([&] { ScriptModelImpl model(fixture(name), torch::kCPU); });
  };
  for (const char* name : {"state_dict.pt", "text.pt"}) {
    const std::string error = refused(name);
    EXPECT_NE(error.find(fixture(name) + ": is not a TorchScript module"), std::string::npos) << error;
  }
  const std::string newer = refused("newer.pt");
  EXPECT_NE(newer.find("was saved by a newer PyTorch than this LibTorch " + std::string(TORCH_VERSION)),
            std::string::npos)
      << newer;
  EXPECT_NE(newer.find("file format version 99"), std::string::npos) << newer;

  ScriptModelImpl raising(fixture("raising.pt"), torch::kCPU);
  const std::string raised = error_of([&] { raising.forward(torch::zeros({2, 4})); });
  EXPECT_NE(raised.find(fixture("raising.pt") + ": forward(x) with x float [2, 4] raised: ValueError: this module "
                                                "wants 5 features, got 4"),
            std::string::npos)
      << raised;

  ScriptModelImpl plain(fixture("plain.pt"), torch::kCPU);
  EXPECT_FALSE(plain.has_layer_outputs());
  EXPECT_NE(error_of([&] {
              plain.layer_outputs(torch::zeros({2, 4}));
            }).find("has no layer_outputs(x) method"),
            std::string::npos);
}

// Item 2: the contract is checked on one batch when the task is made, naming the file, the method and the shapes.
TEST_F(ScriptModelTest, TheContractIsCheckedOnOneBatchNamingTheMethodAndTheShapes) {
  const std::string mismatch =
      error_of([&] { tasks::ScriptTask task(fixture("blocks.pt"), fixture("five.h5"), torch::kCPU); });
  EXPECT_NE(mismatch.find(fixture("blocks.pt") +
                          ": forward(x) returned [4, 3] for 4 rows of train/x [4, 4]; "
                          "classification on " +
                          fixture("five.h5") + " needs [4, 5]"),
            std::string::npos)
      << mismatch;
  const std::string not_finite =
      error_of([&] { tasks::ScriptTask task(fixture("not_finite.pt"), fixture("three.h5"), torch::kCPU); });
  EXPECT_NE(not_finite.find("forward(x) returned non-finite values"), std::string::npos) << not_finite;
  tasks::ScriptTask task(fixture("blocks.pt"), fixture("three.h5"), torch::kCPU);
  EXPECT_EQ(task.metric_name(), "accuracy");
  EXPECT_EQ(task.train_size(), 64);
  EXPECT_EQ(task.test_size(), 32);
}

// Item 1: a user's module trains with HORST through the one door the CLI and the window use, into a run file that
// holds its rows, its test metric and a checkpoint of the module's own parameters by their names.
TEST_F(ScriptModelTest, AUsersModuleTrainsWithHorstIntoARunFile) {
  const nlohmann::json document = {
      {"name", "blocks"},
      {"task", "torchscript"},
      {"model", {{"file", fixture("blocks.pt")}}},
      {"data", {{"file", fixture("three.h5")}, {"target", "classification"}}},
      {"optimizer", {{"name", "horst"}}},
      {"train", {{"epochs", 2}, {"batch_size", 16}, {"metric_interval", 2}, {"device", "cpu"}}}};
  auto config = config::ExperimentConfig::from_json(document, "test");
  session::SessionOptions options;
  options.run_path = (folder_->path() / "blocks-run.h5").string();
  options.overwrite = true;
  session::TrainingSession session(config, options);
  const session::TrainingResult result = session.run();
  EXPECT_EQ(result.steps, 8);
  const store::RunReader reader(options.run_path);
  EXPECT_EQ(reader.metric("loss").rows(), 4u);
  EXPECT_EQ(reader.metric("test_accuracy").rows(), 2u);
  const record::CheckpointData latest = reader.checkpoint("latest");
  EXPECT_EQ(latest.sections.at("model").count("blocks.0.weight"), 1u);
  EXPECT_EQ(latest.sections.at("model").count("norm.running_mean"), 1u);
}

}  // namespace
}  // namespace descentlab::models
