#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "core/data/data_order.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/training_state.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::train {
namespace {

using descentlab::testing::ScratchFolder;

TEST(DataOrder, EachEpochIsAPermutationAndEpochsDiffer) {
  data::DataOrder order(5, 10);
  std::vector<int64_t> first_epoch;
  for (int i = 0; i < 3; ++i) {
    const auto batch = order.next_batch(4);
    first_epoch.insert(first_epoch.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(first_epoch.size(), 10u);  // 4 + 4 + 2: the last batch of an epoch is short
  EXPECT_EQ(std::set<int64_t>(first_epoch.begin(), first_epoch.end()).size(), 10u);
  const auto second = order.next_batch(10);
  EXPECT_EQ(order.epoch(), 1);
  EXPECT_NE(second, first_epoch);
  EXPECT_EQ(data::epoch_permutation(5, 1, 10), second);
  EXPECT_EQ(data::epoch_permutation(5, 0, 10), first_epoch);
}

TEST(DataOrder, RestoreContinuesMidEpoch) {
  data::DataOrder original(9, 17);
  original.next_batch(5);
  original.next_batch(5);
  data::DataOrder resumed(0, 17);
  resumed.restore(original.seed(), original.epoch(), original.position());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(resumed.next_batch(5), original.next_batch(5));
  EXPECT_THROW(resumed.restore(9, 0, 18), Error);
}

// A tiny model with dropout, so that the random generator matters too.
struct TinyImpl : torch::nn::Module {
  TinyImpl() {
    hidden = register_module("hidden", torch::nn::Linear(6, 16));
    dropout = register_module("dropout", torch::nn::Dropout(0.3));
    out = register_module("out", torch::nn::Linear(16, 1));
  }
  torch::Tensor forward(const torch::Tensor& x) { return out(dropout(torch::gelu(hidden(x)))); }
  torch::nn::Linear hidden{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear out{nullptr};
};
TORCH_MODULE(Tiny);

struct TinyRun {
  Tiny model;
  torch::optim::AdamW optimizer;
  data::DataOrder order;
  std::vector<float> losses;

  explicit TinyRun(int64_t init_seed)
      : model((torch::manual_seed(init_seed), Tiny())),
        optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2).weight_decay(0.05)),
        order(77, 50) {}

  void train_steps(int64_t steps, const torch::Tensor& inputs, const torch::Tensor& targets) {
    model->train();
    for (int64_t i = 0; i < steps; ++i) {
      const auto batch = torch::tensor(order.next_batch(8), torch::kInt64);
      optimizer.zero_grad();
      const auto loss = torch::mse_loss(model->forward(inputs.index_select(0, batch)), targets.index_select(0, batch));
      loss.backward();
      optimizer.step();
      losses.push_back(loss.item<float>());
    }
  }
};

TEST(TrainingState, ResumedRunIsBitwiseIdenticalToAnUninterruptedOne) {
  torch::manual_seed(123);
  const torch::Tensor inputs = torch::randn({50, 6});
  const torch::Tensor targets = inputs.sum(1, /*keepdim=*/true).sin();

  torch::manual_seed(7);
  TinyRun straight(7);
  straight.train_steps(40, inputs, targets);

  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  std::vector<float> first_losses;
  {
    torch::manual_seed(7);
    TinyRun first(7);
    first.train_steps(17, inputs, targets);  // stops mid-epoch (50 samples, batches of 8)
    first_losses = first.losses;
    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    auto writer = store::RunWriter::create(path, testing::sample_header(), options);
    writer->save_checkpoint("latest", capture_training_state(*first.model, first.optimizer, first.order, 17, 2));
  }
  // A "new process": different initial weights and generator state, then everything restored from the file.
  torch::manual_seed(999);
  TinyRun resumed(999);
  torch::randn({100});
  const store::RunReader reader(path);
  const record::CheckpointData latest = reader.checkpoint("latest");
  restore_training_state(CheckpointReader(latest, path, "latest"), *resumed.model, resumed.optimizer, resumed.order);
  resumed.train_steps(23, inputs, targets);

  std::vector<float> joined = first_losses;
  joined.insert(joined.end(), resumed.losses.begin(), resumed.losses.end());
  EXPECT_EQ(joined, straight.losses);
  for (const auto& item : straight.model->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), resumed.model->named_parameters()[item.key()])) << item.key();
  }
  const auto straight_state = capture_training_state(*straight.model, straight.optimizer, straight.order, 40, 0);
  const auto resumed_state = capture_training_state(*resumed.model, resumed.optimizer, resumed.order, 40, 0);
  EXPECT_EQ(straight_state.sections.at("rng").at("cpu").bytes, resumed_state.sections.at("rng").at("cpu").bytes);
  EXPECT_EQ(straight_state.sections.at("data").at("order").bytes, resumed_state.sections.at("data").at("order").bytes);
}

TEST(TrainingState, AdamMomentsAreStoredReadablyUnderParameterNames) {
  torch::manual_seed(123);
  const torch::Tensor inputs = torch::randn({50, 6});
  TinyRun run(3);
  run.train_steps(4, inputs, inputs.sum(1, true));
  const auto state = capture_training_state(*run.model, run.optimizer, run.order, 4, 0);
  const auto& optimizer = state.sections.at("optimizer");
  const auto& moments = run.optimizer.state();
  const auto& adamw = static_cast<const torch::optim::AdamWParamState&>(
      *moments.begin()->second);  // any one parameter's state: all have step 4
  EXPECT_EQ(adamw.step(), 4);
  const torch::Tensor step = train::to_tensor(optimizer.at("hidden.weight.step"));
  EXPECT_EQ(step.item<int64_t>(), 4);
  EXPECT_EQ(train::to_tensor(optimizer.at("hidden.weight.exp_avg")).sizes(), run.model->hidden->weight.sizes());
  EXPECT_TRUE(optimizer.count("out.bias.exp_avg_sq"));
}

TEST(TrainingState, CheckpointWithoutOptimizerStateCannotResume) {
  TinyRun run(1);
  auto state = capture_training_state(*run.model, run.optimizer, run.order, 0, 0);
  state.sections.erase("optimizer");
  try {
    restore_training_state(CheckpointReader(state, "run.h5", "best"), *run.model, run.optimizer, run.order);
    FAIL() << "expected RunFileError";
  } catch (const store::RunFileError& error) {
    EXPECT_NE(std::string(error.what()).find("/checkpoints/best/optimizer/torch_archive"), std::string::npos);
  }
}

}  // namespace
}  // namespace descentlab::train
