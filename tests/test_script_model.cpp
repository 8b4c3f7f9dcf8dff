// A user's TorchScript module as the engines' model (issue 53, items 1, 2 and 10): loaded with torch::jit::load, its
// parameters and buffers seen by their own names as the module's own tensors (an optimizer's step changes what the
// module computes), train and eval switching the module, and each bad file refused naming the file and the method.
// The modules are written by tests/python/make_script_models.py with Debian's python3-torch.

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/config/experiment_config.h"
#include "core/config/footprint.h"
#include "core/models/script_model.h"
#include "core/record/metrics.h"
#include "core/session/training_session.h"
#include "core/store/pack_run.h"
#include "core/store/run_reader.h"
#include "core/study/study.h"
#include "core/tasks/script_task.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "script_fixtures.h"
#include "test_support.h"

namespace descentlab::models {
namespace {

namespace fs = std::filesystem;

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

// Item 10: a dtype the module does not take, a module written for CUDA on a machine without, and a module saved on a
// GPU (its tensors' storage on cuda:0), which loads onto the run's device.
TEST_F(ScriptModelTest, DtypesAndDevicesTheModuleDoesNotTakeAreNamedAndAGpuSavedModuleLoads) {
  const std::string dtype = error_of(
      [&] { tasks::ScriptTask task(read_module_file(fixture("double.pt")), fixture("three.h5"), torch::kCPU); });
  EXPECT_NE(dtype.find(fixture("double.pt") + ": forward(x) with x float [4, 4] raised: "), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("a dtype the module does not take: the lab gives it x as float32"), std::string::npos) << dtype;
  if (!torch::cuda::is_available()) {
    const std::string cuda = error_of(
        [&] { tasks::ScriptTask task(read_module_file(fixture("wants_cuda.pt")), fixture("three.h5"), torch::kCPU); });
    EXPECT_NE(cuda.find(fixture("wants_cuda.pt") + ": forward(x)"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("the module asks for CUDA, which this machine or its LibTorch does not have"),
              std::string::npos)
        << cuda;
  }
  ScriptModelImpl on_gpu(fixture("blocks_cuda.pt"), torch::kCPU);
  ScriptModelImpl on_cpu(fixture("blocks.pt"), torch::kCPU);
  on_gpu.eval();
  on_cpu.eval();
  const torch::Tensor x = torch::rand({3, 4});
  EXPECT_TRUE(torch::equal(on_gpu.forward(x), on_cpu.forward(x)));
  EXPECT_TRUE(on_gpu.parameters().front().device().is_cpu());
}

// Item 10: a model too large for the memory is refused before anything is allocated, with the estimate from its
// module file and what is available.
TEST_F(ScriptModelTest, AModelTooLargeForTheMemoryIsRefusedWithItsEstimate) {
  const nlohmann::json document = {{"name", "blocks"},
                                   {"task", "torchscript"},
                                   {"model", {{"file", fixture("blocks.pt")}}},
                                   {"data", {{"file", fixture("three.h5")}, {"target", "classification"}}}};
  const auto config = config::ExperimentConfig::from_json(document, "test");
  const config::Footprint footprint = config::estimate_footprint(config);
  EXPECT_GT(footprint.parameters, 197.0);  // the module's 197 parameters, estimated from its file's bytes
  const std::string message = descentlab::testing::message_of<MemoryError>([&] {
    config::require_fits(config, footprint, true, {1000.0, "a test's limit"});
  });
  EXPECT_NE(message.find("the run \"blocks\" needs about"), std::string::npos) << message;
  EXPECT_NE(message.find("estimated from the module file " + fixture("blocks.pt")), std::string::npos) << message;
  EXPECT_NE(message.find("is available (a test's limit): train a smaller module"), std::string::npos) << message;
}

// Item 2: the contract is checked on one batch when the task is made, naming the file, the method and the shapes.
TEST_F(ScriptModelTest, TheContractIsCheckedOnOneBatchNamingTheMethodAndTheShapes) {
  const std::string mismatch = error_of(
      [&] { tasks::ScriptTask task(read_module_file(fixture("blocks.pt")), fixture("five.h5"), torch::kCPU); });
  EXPECT_NE(mismatch.find(fixture("blocks.pt") +
                          ": forward(x) returned [4, 3] for 4 rows of train/x [4, 4]; "
                          "classification on " +
                          fixture("five.h5") + " needs [4, 5]"),
            std::string::npos)
      << mismatch;
  const std::string not_finite = error_of(
      [&] { tasks::ScriptTask task(read_module_file(fixture("not_finite.pt")), fixture("three.h5"), torch::kCPU); });
  EXPECT_NE(not_finite.find("forward(x) returned non-finite values"), std::string::npos) << not_finite;
  tasks::ScriptTask task(read_module_file(fixture("blocks.pt")), fixture("three.h5"), torch::kCPU);
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

// ---- Item 5: the run file keeps what reproduces the run

// A torchscript run of `model` on `data` into `run`, stopped after `steps` steps of its 2 epochs (4 steps each).
void train_blocks(const std::string& model, const std::string& data, const std::string& run, int64_t steps) {
  const nlohmann::json document = {
      {"name", "blocks"},
      {"task", "torchscript"},
      {"model", {{"file", model}}},
      {"data", {{"file", data}, {"target", "classification"}}},
      {"train", {{"epochs", 2}, {"batch_size", 16}, {"metric_interval", 2}, {"device", "cpu"}}}};
  session::SessionOptions options;
  options.run_path = run;
  session::TrainingSession session(config::ExperimentConfig::from_json(document, "test"), options);
  session.set_step_limit(steps);
  session.run();
}

int64_t resume_blocks(const std::string& run, const session::ResumeFiles& files = {}) {
  auto session = session::TrainingSession::resume(run, {}, files);
  return session->run().steps;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The run's own files, in a folder of their own (so a test can move and change them).
struct OwnFiles {
  std::string model, data, run;
};

class RunInputsTest : public ScriptModelTest {
 protected:
  OwnFiles own(const std::string& name) {
    const fs::path folder = folder_->path() / name;
    fs::create_directories(folder);
    fs::copy_file(fixture("blocks.pt"), folder / "blocks.pt", fs::copy_options::overwrite_existing);
    fs::copy_file(fixture("three.h5"), folder / "three.h5", fs::copy_options::overwrite_existing);
    return {(folder / "blocks.pt").string(), (folder / "three.h5").string(), (folder / "run.h5").string()};
  }
};

TEST_F(RunInputsTest, ARunKeepsItsFilesAndResumesFromItsOwnCopyAfterTheModuleMovedAndChanged) {
  const OwnFiles files = own("keeps");
  train_blocks(files.model, files.data, files.run, 4);
  const std::string module = bytes_of(files.model);
  {
    const store::RunReader reader(files.run);
    ASSERT_TRUE(reader.header().model_file && reader.header().data_file);
    EXPECT_EQ(reader.header().model_file->path, files.model);
    EXPECT_EQ(reader.header().model_file->bytes, module.size());
    EXPECT_EQ(reader.header().model_file->sha256, sha256_of_file(files.model));
    EXPECT_EQ(reader.header().data_file->path, files.data);
    EXPECT_EQ(reader.header().data_file->bytes, fs::file_size(files.data));
    EXPECT_EQ(reader.header().data_file->sha256, sha256_of_file(files.data));
    EXPECT_EQ(reader.module_copy(), module);
  }
  // The module moved, and another file took its name: the run goes on with its own copy.
  fs::rename(files.model, files.model + ".moved");
  fs::copy_file(fixture("plain.pt"), files.model);
  EXPECT_EQ(resume_blocks(files.run), 8);  // the step reached
  const store::RunReader reader(files.run);
  EXPECT_EQ(reader.metric("loss").steps.back(), 8);
  EXPECT_EQ(reader.module_copy(), module);  // kept through the resume's folds
  EXPECT_EQ(reader.header().model_file->path, files.model);
}

TEST_F(RunInputsTest, AnotherDataOrModelFileIsRefusedNamingBothHashesAndNothingIsLost) {
  const OwnFiles files = own("refused");
  train_blocks(files.model, files.data, files.run, 4);
  const std::string recorded_data = sha256_of_file(files.data);
  const std::string recorded_model = sha256_of_file(files.model);
  const std::string run_before = bytes_of(files.run);

  // The data file changed in place.
  fs::rename(files.data, files.data + ".moved");
  fs::copy_file(fixture("five.h5"), files.data);
  const std::string changed = error_of([&] { resume_blocks(files.run); });
  EXPECT_NE(changed.find(files.data + ": is not the data file the run " + files.run + " trained on"), std::string::npos)
      << changed;
  EXPECT_NE(changed.find(sha256_of_file(files.data)), std::string::npos) << changed;
  EXPECT_NE(changed.find(recorded_data), std::string::npos) << changed;
  EXPECT_EQ(bytes_of(files.run), run_before);

  // Gone: named with the hash it had, and where to say it is now.
  fs::remove(files.data);
  const std::string missing = error_of([&] { resume_blocks(files.run); });
  EXPECT_NE(missing.find("is not there"), std::string::npos) << missing;
  EXPECT_NE(missing.find(recorded_data), std::string::npos) << missing;
  EXPECT_NE(missing.find("--data"), std::string::npos) << missing;
  EXPECT_EQ(bytes_of(files.run), run_before);

  // A module given on resume that is not the run's.
  const std::string other = error_of([&] { resume_blocks(files.run, {fixture("plain.pt"), files.data + ".moved"}); });
  EXPECT_NE(other.find(fixture("plain.pt") + ": is not the model file"), std::string::npos) << other;
  EXPECT_NE(other.find(sha256_of_file(fixture("plain.pt"))), std::string::npos) << other;
  EXPECT_NE(other.find(recorded_model), std::string::npos) << other;
  EXPECT_EQ(bytes_of(files.run), run_before);

  // Where the data is now: the run continues.
  EXPECT_EQ(resume_blocks(files.run, {files.model, files.data + ".moved"}), 8);
}

TEST_F(RunInputsTest, ADamagedCopyIsNamedAndAPackedRunHoldsItsCopyItself) {
  const OwnFiles files = own("damaged");
  train_blocks(files.model, files.data, files.run, 4);
  const std::string module = bytes_of(files.model);
  const std::string packed = (fs::path(files.run).parent_path() / "packed.h5").string();
  store::pack_run(files.run, packed);
  fs::remove(files.model);
  EXPECT_EQ(store::RunReader(packed).module_copy(), module);

  std::string copy;
  for (const auto& entry : fs::directory_iterator(files.run + ".checkpoints")) {
    if (entry.path().filename().string().rfind("module-", 0) == 0) copy = entry.path().string();
  }
  ASSERT_FALSE(copy.empty());
  {
    std::fstream damage(copy, std::ios::in | std::ios::out | std::ios::binary);
    damage.seekp(100);
    damage.put('\x5a');
  }
  const std::string damaged =
      descentlab::testing::message_of<store::RunFileError>([&] { store::RunReader(files.run).module_copy(); });
  EXPECT_NE(damaged.find("/inputs/model/module"), std::string::npos) << damaged;
  EXPECT_NE(damaged.find("the copy is damaged"), std::string::npos) << damaged;
  EXPECT_NE(error_of([&] { resume_blocks(files.run); }).find("the copy is damaged"), std::string::npos);
}

TEST_F(RunInputsTest, TheStudyGroupsAndFiltersByModelAndDataNotByWhereTheyWere) {
  const OwnFiles first = own("study-a");
  const OwnFiles moved = own("study-b");  // the same bytes, elsewhere
  train_blocks(first.model, first.data, first.run, 2);
  train_blocks(moved.model, moved.data, moved.run, 2);
  const study::RunEntry a = study::read_entry(first.run), b = study::read_entry(moved.run);
  EXPECT_EQ(a.config.at(study::kModelInputKey), "blocks.pt");
  EXPECT_EQ(a.config.at(study::kModelHashKey), sha256_of_file(first.model).substr(0, 12));
  EXPECT_EQ(a.config.at(study::kDataInputKey), "three.h5");
  EXPECT_NE(a.config.at("model.file"), b.config.at("model.file"));
  EXPECT_TRUE(study::default_group_keys({a, b}).empty());  // one model, one data: one group
  EXPECT_TRUE(study::RunFilter("inputs.model=blocks.pt inputs.data=three.h5").matches(a));
  EXPECT_FALSE(study::RunFilter("inputs.data=five.h5").matches(a));

  // Other data (the same rows, another attribute): another group, by the data file's hash.
  const OwnFiles other = own("study-c");
  {
    H5::H5File file(other.data, H5F_ACC_RDWR);
    H5::Group root = file.openGroup("/");
    const H5::StrType text(H5::PredType::C_S1, H5T_VARIABLE);
    const std::string note = "another copy";
    root.createAttribute("note", text, H5::DataSpace(H5S_SCALAR)).write(text, note);
  }
  train_blocks(other.model, other.data, other.run, 2);
  const study::RunEntry c = study::read_entry(other.run);
  EXPECT_EQ(c.config.at(study::kDataInputKey), "three.h5");
  EXPECT_EQ(study::default_group_keys({a, b, c}), std::vector<std::string>{study::kDataHashKey});
  EXPECT_EQ(study::group_runs({a, b, c}, study::default_group_keys({a, b, c})).size(), 2u);
  EXPECT_TRUE(study::RunFilter(std::string("inputs.data_sha256=") + c.config.at(study::kDataHashKey)).matches(c));
  EXPECT_FALSE(study::RunFilter(std::string("inputs.data_sha256=") + c.config.at(study::kDataHashKey)).matches(a));
}

// Issue 55: a branch of a user's module continues from the parent's own copy of it and keeps what the parent kept,
// so that the child resumes after the module moved and changed, and refuses another data file as its parent does.
TEST_F(RunInputsTest, ABranchOfAUsersModuleKeepsItsParentsFilesAndResumesAfterTheModuleMoved) {
  const OwnFiles files = own("branch");
  train_blocks(files.model, files.data, files.run, 4);
  const std::string module = bytes_of(files.model);
  // The module moved and another took its name before the branch: the branch trains the parent's copy.
  fs::rename(files.model, files.model + ".moved");
  fs::copy_file(fixture("plain.pt"), files.model);
  const std::string child = (fs::path(files.run).parent_path() / "child.h5").string();
  config::ExperimentConfig config = config::stored_config(store::RunReader(files.run).header().config_json, files.run);
  config.train.lr *= 0.5;
  session::SessionOptions options;
  options.run_path = child;
  auto branch = session::TrainingSession::branch(files.run, 4, config, options);
  branch->set_step_limit(6);
  EXPECT_EQ(branch->run().steps, 6);
  {
    const store::RunReader reader(child);
    ASSERT_TRUE(reader.header().model_file && reader.header().data_file);
    EXPECT_EQ(reader.header().model_file->sha256, sha256_of_bytes(module));
    EXPECT_EQ(reader.header().data_file->sha256, sha256_of_file(files.data));
    EXPECT_EQ(reader.module_copy(), module);
    ASSERT_TRUE(reader.header().lineage);
    EXPECT_EQ(reader.header().lineage->branch_step, 4);
  }
  // The child's own resume, from its own copy.
  EXPECT_EQ(resume_blocks(child), 8);
  // Another data file under the data's name: the child refuses it naming both hashes, as its parent does.
  const std::string recorded_data = sha256_of_file(files.data);
  fs::rename(files.data, files.data + ".moved");
  fs::copy_file(fixture("five.h5"), files.data);
  const std::string other = (fs::path(files.run).parent_path() / "other.h5").string();
  options.run_path = other;
  const std::string refused = error_of([&] { session::TrainingSession::branch(files.run, 4, config, options)->run(); });
  EXPECT_NE(refused.find(files.data + ": is not the data file"), std::string::npos) << refused;
  EXPECT_NE(refused.find(recorded_data), std::string::npos) << refused;
  EXPECT_FALSE(fs::exists(other));
}

// ---- Issue 55, item 1: the optimizer and the sparsity change in a branch (the sparse engine, on a user's module)

// A torchscript run of blocks.pt for 4 epochs of 4 steps, with `more` settings, stopped at `steps` into `run`.
config::ExperimentConfig blocks_config(const std::string& model, const std::string& data, nlohmann::json more) {
  nlohmann::json document = {{"name", "blocks"},
                             {"task", "torchscript"},
                             {"model", {{"file", model}}},
                             {"data", {{"file", data}, {"target", "classification"}}},
                             {"train", {{"epochs", 4}, {"batch_size", 16}, {"metric_interval", 1}, {"device", "cpu"}}}};
  document.merge_patch(more);
  return config::ExperimentConfig::from_json(document, "test");
}

int64_t run_to(session::TrainingSession& session, int64_t steps) {
  session.set_step_limit(steps);
  return session.run().steps;
}

// A branch of `parent` at its latest checkpoint under `config`, run to `steps` into `child`.
std::unique_ptr<session::TrainingSession> branch_to(const std::string& parent, const config::ExperimentConfig& config,
                                                    const std::string& child, int64_t steps) {
  session::SessionOptions options;
  options.run_path = child;
  auto branch = session::TrainingSession::branch(parent, -1, config, options);
  EXPECT_EQ(run_to(*branch, steps), steps);
  return branch;
}

// The step count AdamW keeps for the parameter `name` in the run's latest checkpoint.
int64_t adam_steps(const std::string& run, const std::string& name) {
  const record::CheckpointData latest = store::RunReader(run).checkpoint("latest");
  const record::TensorBlob& blob = latest.sections.at("optimizer").at(name + ".step");
  int64_t value = 0;
  std::memcpy(&value, blob.bytes.data(), sizeof value);
  return value;
}

// The share of the latest checkpoint's mask entries that prune (0 when it keeps no masks).
double pruned_share(const std::string& run) {
  const record::CheckpointData latest = store::RunReader(run).checkpoint("latest");
  const auto masks = latest.sections.find("masks");
  if (masks == latest.sections.end()) return 0.0;
  double pruned = 0, total = 0;
  for (const auto& [name, blob] : masks->second) {
    for (const uint8_t keep : blob.bytes) pruned += keep == 0 ? 1 : 0;
    total += static_cast<double>(blob.bytes.size());
  }
  return total > 0 ? pruned / total : 0.0;
}

TEST_F(ScriptModelTest, ABranchSwitchingAdamWToHorstCarriesItsMomentsOverAndTakesItsMirrorOptions) {
  descentlab::testing::ScratchFolder folder;
  const std::string parent = (folder / "adamw.h5").string();
  const auto adamw = blocks_config(fixture("blocks.pt"), fixture("three.h5"), nlohmann::json::object());
  {
    session::SessionOptions options;
    options.run_path = parent;
    session::TrainingSession first(adamw, options);
    ASSERT_EQ(run_to(first, 4), 4);
  }
  const auto horst =
      blocks_config(fixture("blocks.pt"), fixture("three.h5"), {{"optimizer", {{"name", "horst"}, {"alpha", 5.0}}}});
  const std::string child = (folder / "horst.h5").string(), same = (folder / "same.h5").string();
  auto switched = branch_to(parent, horst, child, 6);
  branch_to(parent, adamw, same, 6);
  EXPECT_EQ(switched->branch_changes(), "optimizer.alpha 0.0 -> 5.0; optimizer.name adamw -> horst");
  ASSERT_FALSE(switched->branch_notes().empty());
  EXPECT_NE(switched->branch_notes()[0].find("optimizer adamw -> horst: the moments and step counts carry over"),
            std::string::npos)
      << switched->branch_notes()[0];
  // The moments carried over: AdamW's step count goes on from the parent's 4, not from a fresh 0.
  const std::string weight = store::RunReader(child).checkpoint("latest").sections.at("model").begin()->first;
  EXPECT_EQ(adam_steps(child, weight), 6);
  EXPECT_EQ(adam_steps(same, weight), 6);
  // HORST's mirror step acted: the weights part from the unchanged branch's.
  const auto weights_of = [&](const std::string& run) {
    const record::CheckpointData latest = store::RunReader(run).checkpoint("latest");
    const auto& blob = latest.sections.at("model").at(weight);
    return std::string(blob.bytes.begin(), blob.bytes.end());
  };
  EXPECT_NE(weights_of(child), weights_of(same));
  const auto mirror = nlohmann::json::parse(store::RunReader(child).checkpoint("latest").extra_json).at("mirror");
  EXPECT_EQ(mirror.at("groups").at(0).at("alpha").get<double>(), 5.0) << mirror.dump();

  // HORST to HORST with another alpha: the child steps with its own, not the one the parent's archive held.
  const auto gentler =
      blocks_config(fixture("blocks.pt"), fixture("three.h5"), {{"optimizer", {{"name", "horst"}, {"alpha", 1.0}}}});
  const std::string grandchild = (folder / "gentler.h5").string();
  branch_to(child, gentler, grandchild, 7);
  const auto again = nlohmann::json::parse(store::RunReader(grandchild).checkpoint("latest").extra_json).at("mirror");
  EXPECT_EQ(again.at("groups").at(0).at("alpha").get<double>(), 1.0) << again.dump();
}

TEST_F(ScriptModelTest, ABranchChangingTheSparsityTargetCompressesAgainAndOneSwitchingAcdcOffLetsTheMasksGo) {
  descentlab::testing::ScratchFolder folder;
  // 16 steps: dense [0, 4), compressed [4, 8), decompressed [8, 12), compressed [12, 16).
  const auto acdc = [&](double target, const char* method) {
    return blocks_config(fixture("blocks.pt"), fixture("three.h5"),
                         {{"sparsity",
                           {{"method", method},
                            {"target", target},
                            {"warmup", 0.25},
                            {"phase", 0.25},
                            {"alternate_until", 0.75},
                            {"decompressed_until", 0.75}}}});
  };
  const std::string parent = (folder / "half.h5").string();
  {
    session::SessionOptions options;
    options.run_path = parent;
    session::TrainingSession first(acdc(0.5, "acdc"), options);
    ASSERT_EQ(run_to(first, 5), 5);
  }
  EXPECT_NEAR(pruned_share(parent), 0.5, 0.02);
  const std::string denser = (folder / "denser.h5").string(), same = (folder / "same.h5").string();
  const auto more = branch_to(parent, acdc(0.8, "acdc"), denser, 6);
  branch_to(parent, acdc(0.5, "acdc"), same, 6);
  EXPECT_NEAR(pruned_share(denser), 0.8, 0.02) << "compressed again at the new target at the branch";
  EXPECT_NEAR(pruned_share(same), 0.5, 0.02);
  ASSERT_FALSE(more->branch_notes().empty());
  EXPECT_NE(more->branch_notes().back().find("compressed again"), std::string::npos);
  // The child's own rows say it compressed at its first step.
  EXPECT_FALSE(store::RunReader(denser).metric(record::compression_series("accuracy", true)).steps.empty());

  const std::string dense = (folder / "dense.h5").string();
  const auto off = branch_to(parent, acdc(0.5, "none"), dense, 6);
  EXPECT_EQ(pruned_share(dense), 0.0) << "AC/DC off: the masks are let go";
  ASSERT_FALSE(off->branch_notes().empty());
  EXPECT_NE(off->branch_notes().back().find("AC/DC is off from the branch"), std::string::npos);
}

}  // namespace
}  // namespace descentlab::models
