// The one epoch loop (core/train/trainer.h) with a toy engine: least squares on 12 points. What every engine gets
// from the loop is checked here once: interval metrics and their timing, evaluation and "best" by the engine's own
// direction, the checkpoints of each epoch, the NaN guard, and stop + resume giving the uninterrupted run.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <limits>
#include <optional>
#include <thread>

#include "core/session/training_session.h"
#include "core/store/run_file.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/trainer.h"
#include "run_file_samples.h"
#include "test_sinks.h"
#include "test_support.h"

namespace descentlab::train {
namespace {

using descentlab::testing::RecordingSink;
using descentlab::testing::StopAfter;

config::ExperimentConfig toy_config(int64_t epochs) {
  config::ExperimentConfig config;
  config.name = "toy";
  config.train.epochs = epochs;
  config.train.batch_size = 4;  // 12 samples: 3 batches per epoch
  config.train.metric_interval = 2;
  config.train.lr = 0.05;
  config.train.seed = 11;
  return config;
}

// Fits y = 2x + 1 with SGD; evaluate_epoch returns scripted metrics when given, so "best" can be checked.
class ToyEngine : public Trainer {
 public:
  explicit ToyEngine(config::ExperimentConfig config, std::vector<double> scripted = {}, bool higher = false)
      : Trainer(std::move(config), torch::kCPU, 12),
        scripted_(std::move(scripted)),
        higher_(higher),
        optimizer_(model_->parameters(), torch::optim::SGDOptions(config_.train.lr)) {
    torch::manual_seed(5);
    torch::NoGradGuard no_grad;
    model_->weight.fill_(0.0);
    model_->bias.fill_(0.0);
    x_ = torch::linspace(-1, 1, 12).unsqueeze(1);
    y_ = 2 * x_ + 1;
    loss_sum_ = &add_meter("loss_sum", {});  // the loop saves, restores and clears it: the engine only adds
  }

  std::string metric_name() const override { return "rmse"; }
  bool higher_is_better() const override { return higher_; }
  std::vector<std::vector<int64_t>> batches;  // the data order's indices, batch by batch
  std::optional<int64_t> nan_from_step;
  bool comparable = true;

 private:
  torch::nn::Module& module() override { return *model_; }
  torch::optim::Optimizer& optimizer() override { return optimizer_; }
  std::string optimizer_name() const override { return "sgd"; }
  void train_step(const std::vector<int64_t>& indices, int64_t) override {
    batches.push_back(indices);
    const torch::Tensor rows = torch::tensor(indices, torch::kInt64);
    torch::Tensor loss = torch::mse_loss(model_->forward(x_.index_select(0, rows)), y_.index_select(0, rows));
    optimizer_.zero_grad();
    loss.backward();
    optimizer_.step();
    if (nan_from_step && step() + 1 >= *nan_from_step) loss = loss * std::numeric_limits<double>::quiet_NaN();
    add(*loss_sum_, loss);
  }
  void report_interval(int64_t steps, int64_t) override {
    const double loss = loss_sum_->mean(steps).front();
    require_finite(loss, "toy loss", "(a toy hint)");
    scalar("loss", loss);
  }
  EpochTest evaluate_epoch() override {
    torch::NoGradGuard no_grad;
    const double loss = torch::mse_loss(model_->forward(x_), y_).item<double>();
    const size_t epoch = evaluations_++;
    return {epoch < scripted_.size() ? scripted_[epoch] : std::sqrt(loss), loss};
  }
  bool best_is_comparable() const override { return comparable; }
  void emit_histograms() override { ++histogram_calls_; }
  void save_state(record::CheckpointData&) const override {}
  void restore_state(const CheckpointReader&) override {}
  nlohmann::json summary() const override { return {{"weight", model_->weight.item<double>()}}; }

  std::vector<double> scripted_;
  bool higher_;
  torch::nn::Linear model_{1, 1};
  torch::optim::SGD optimizer_;
  torch::Tensor x_, y_;
  Meter* loss_sum_ = nullptr;
  size_t evaluations_ = 0;
  int histogram_calls_ = 0;
};

// Keeps every saved checkpoint with its labels.
struct RecordingStore : record::CheckpointStore {
  void save_checkpoints(const std::vector<std::string>& labels, record::CheckpointData data) override {
    saves.emplace_back(labels, std::move(data));
  }
  std::vector<std::pair<std::vector<std::string>, record::CheckpointData>> saves;
};

TEST(Trainer, IntervalMetricsComeAtTheirStepsAndAtEveryEpochEnd) {
  ToyEngine engine(toy_config(2));
  RecordingSink sink;
  engine.add_sink(&sink);
  const session::TrainingResult result = engine.run();
  EXPECT_EQ(result.steps, 6);
  EXPECT_EQ(result.epochs_completed, 2);
  EXPECT_FALSE(result.stopped);
  EXPECT_EQ(result.metric, "rmse");
  // metric_interval 2 over 3 batches per epoch: steps 2, 3 (epoch end), 4, 6.
  for (const char* name : {"loss", "lr", "epoch", "throughput"}) {
    std::vector<int64_t> steps;
    for (const auto& [step, value] : sink.scalars.at(name)) steps.push_back(step);
    EXPECT_EQ(steps, (std::vector<int64_t>{2, 3, 4, 6})) << name;
  }
  EXPECT_DOUBLE_EQ(sink.scalars.at("epoch")[1].second, 1.0);
  EXPECT_NEAR(sink.scalars.at("epoch")[2].second, 1.0 + 1.0 / 3.0, 1e-12);
  EXPECT_EQ(sink.scalars.at("test_rmse").size(), 2u);
  EXPECT_EQ(sink.scalars.at("test_loss").size(), 2u);
  EXPECT_DOUBLE_EQ(result.test_metric, sink.scalars.at("test_rmse").back().second);
  EXPECT_GT(result.extra.at("weight").get<double>(), 0.0);  // the engine's summary, learning towards 2
}

// Issue 34: a run whose test perplexity became inf finished as if all were well. A non-finite evaluation stops the
// run with the words a non-finite loss gets; the value is recorded, and that epoch saves no checkpoint.
TEST(Trainer, ANonFiniteEvaluationStopsTheRun) {
  ToyEngine engine(toy_config(3), {1.0, std::numeric_limits<double>::infinity(), 0.5});
  RecordingSink sink;
  engine.add_sink(&sink);
  RecordingStore store;
  engine.set_checkpoint_store(&store);
  try {
    engine.run();
    FAIL() << "an inf test metric must stop the run";
  } catch (const TrainingError& error) {
    EXPECT_STREQ(error.what(),
                 "the test rmse became inf at step 6 (try a smaller lr, or a grad_clip); the last good state is the "
                 "checkpoint \"latest\" (step 3)");
  }
  ASSERT_EQ(store.saves.size(), 1u);  // epoch 1's only
  ASSERT_EQ(sink.scalars.at("test_rmse").size(), 2u);
  EXPECT_TRUE(std::isinf(sink.scalars.at("test_rmse").back().second));

  // NaN at the first evaluation: no checkpoint yet, and the message says so (an inf or NaN was never "best").
  ToyEngine early(toy_config(3), {std::numeric_limits<double>::quiet_NaN()});
  RecordingStore early_store;
  early.set_checkpoint_store(&early_store);
  try {
    early.run();
    FAIL() << "a NaN test metric must stop the run";
  } catch (const TrainingError& error) {
    EXPECT_NE(std::string(error.what()).find("the test rmse became nan at step 3"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("no checkpoint was saved before it"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(early_store.saves.empty());
}

TEST(Trainer, BestFollowsTheTasksOwnDirection) {
  const auto labels_per_epoch = [](const std::vector<double>& metrics, bool higher, bool comparable) {
    ToyEngine engine(toy_config(3), metrics, higher);
    engine.comparable = comparable;
    RecordingStore store;
    engine.set_checkpoint_store(&store);
    engine.run();
    std::vector<std::vector<std::string>> labels;
    for (const auto& save : store.saves) labels.push_back(save.first);
    return labels;
  };
  using Labels = std::vector<std::vector<std::string>>;
  const Labels lower_wins = {{"best", "latest"}, {"best", "latest"}, {"latest"}};
  EXPECT_EQ(labels_per_epoch({3.0, 1.0, 2.0}, false, true), lower_wins);
  const Labels higher_wins = {{"best", "latest"}, {"latest"}, {"best", "latest"}};
  EXPECT_EQ(labels_per_epoch({3.0, 1.0, 4.0}, true, true), higher_wins);
  const Labels never = {{"latest"}, {"latest"}, {"latest"}};
  EXPECT_EQ(labels_per_epoch({3.0, 1.0, 4.0}, true, false), never);
}

TEST(Trainer, ANonFiniteLossStopsWithTheEnginesWordsAndTheStep) {
  ToyEngine engine(toy_config(2));
  engine.nan_from_step = 4;
  RecordingSink sink;
  engine.add_sink(&sink);
  RecordingStore store;
  engine.set_checkpoint_store(&store);
  try {
    engine.run();
    FAIL() << "a NaN loss must stop the run";
  } catch (const TrainingError& error) {
    EXPECT_STREQ(error.what(),
                 "the toy loss became nan at step 4 (a toy hint); the last good state is the checkpoint "
                 "\"latest\" (step 3)");
  }
  EXPECT_EQ(sink.scalars.at("loss").size(), 2u);  // steps 2 and 3; nothing emitted for the bad interval

  // Issue 52 item 6: resumed from "latest" and non-finite before the next checkpoint, the state resumed from is not
  // called good (a damaged optimizer state does exactly this).
  ToyEngine resumed(toy_config(2));
  resumed.nan_from_step = 4;
  RecordingStore resumed_store;
  resumed.set_checkpoint_store(&resumed_store);
  resumed.resume_from(store.saves.front().second, "run.h5", "latest");
  try {
    resumed.run();
    FAIL() << "a NaN loss must stop the run";
  } catch (const TrainingError& error) {
    EXPECT_EQ(std::string(error.what()).find("last good state"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("may itself be bad"), std::string::npos) << error.what();
  }

  // Before the first checkpoint there is no last good state to point to, and the message must not invent one.
  ToyEngine early(toy_config(2));
  early.nan_from_step = 2;
  RecordingStore early_store;
  early.set_checkpoint_store(&early_store);
  try {
    early.run();
    FAIL() << "a NaN loss must stop the run";
  } catch (const TrainingError& error) {
    EXPECT_EQ(std::string(error.what()).find("\"latest\""), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("no checkpoint was saved"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(early_store.saves.empty());
}

TEST(Trainer, AStoppedAndResumedRunVisitsTheSameBatchesAndEndsInTheSameState) {
  ToyEngine straight(toy_config(3));
  RecordingSink straight_sink;
  straight.add_sink(&straight_sink);
  const session::TrainingResult whole = straight.run();

  ToyEngine first(toy_config(3));
  session::TrainingControl control;
  StopAfter stopper(control, 4);  // the interval report at step 4, mid-epoch 2
  RecordingStore store;
  first.add_sink(&stopper);
  first.set_control(&control);
  first.set_checkpoint_store(&store);
  const session::TrainingResult partial = first.run();
  ASSERT_TRUE(partial.stopped);
  EXPECT_EQ(partial.steps, 4);
  ASSERT_EQ(store.saves.back().first, (std::vector<std::string>{"latest"}));

  ToyEngine second(toy_config(3));
  RecordingSink resumed_sink;
  second.add_sink(&resumed_sink);
  second.resume_from(store.saves.back().second, "memory", "latest");
  EXPECT_EQ(second.step(), 4);
  const session::TrainingResult rest = second.run();
  EXPECT_EQ(rest.steps, whole.steps);
  EXPECT_EQ(rest.epochs_completed, whole.epochs_completed);
  std::vector<std::vector<int64_t>> batches = first.batches;
  batches.insert(batches.end(), second.batches.begin(), second.batches.end());
  EXPECT_EQ(batches, straight.batches);
  EXPECT_EQ(rest.extra, whole.extra);  // the same weight, bit for bit
  EXPECT_EQ(rest.test_metric, whole.test_metric);
  EXPECT_EQ(resumed_sink.scalars.at("loss").back(), straight_sink.scalars.at("loss").back());
}

// Pauses the run at its first interval report (step 2 of 6).
class PauseAt : public record::MetricSink {
 public:
  PauseAt(session::TrainingControl& control, int64_t step) : control_(control), step_(step) {}
  void scalar(const std::string&, int64_t step, double, double) override {
    if (step == step_) control_.pause();
  }
  void vector(const std::string&, int64_t, double, const std::vector<double>&) override {}
  void histogram(const record::HistogramSnapshot&) override {}
  void sweep(const record::SweepResult&) override {}

 private:
  session::TrainingControl& control_;
  int64_t step_;
};

TEST(Trainer, TimeHeldByAPauseIsNotTrainingTime) {
  ToyEngine engine(toy_config(2));
  session::TrainingControl control;
  PauseAt pauser(control, 2);
  RecordingSink sink;
  engine.add_sink(&pauser);
  engine.add_sink(&sink);
  engine.set_control(&control);
  constexpr double kPauseSeconds = 0.5;
  const auto began = std::chrono::steady_clock::now();
  std::thread releaser([&] {
    // Waits (with a deadline) until the trainer is held, keeps it held for kPauseSeconds, then lets it go.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!control.holding() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::duration<double>(kPauseSeconds));  // the pause being measured
    control.resume();
  });
  const session::TrainingResult result = engine.run();
  releaser.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_GE(control.held_seconds(), kPauseSeconds);
  EXPECT_EQ(result.steps, 6);
  // The run's time and speed count running time only.
  EXPECT_LT(result.seconds, wall - kPauseSeconds + 0.05);
  EXPECT_NEAR(result.seconds, wall - control.held_seconds(), 0.25);
  // So does the throughput of the interval the pause fell in (steps 3-4): far above 4 samples per 0.5 s.
  ASSERT_GE(sink.scalars["throughput"].size(), 2u);
  EXPECT_GT(sink.scalars["throughput"][1].second, 4.0 / kPauseSeconds * 4);
}

TEST(Trainer, ResumeRefusesACheckpointWhoseStepDisagreesWithItsDataOrder) {
  ToyEngine first(toy_config(3));
  session::TrainingControl control;
  StopAfter stopper(control, 4);
  RecordingStore store;
  first.add_sink(&stopper);
  first.set_control(&control);
  first.set_checkpoint_store(&store);
  ASSERT_TRUE(first.run().stopped);
  const record::CheckpointData good = store.saves.back().second;
  for (const int64_t damaged : {int64_t{-5}, int64_t{3}, int64_t{5}, int64_t{1000000}}) {
    record::CheckpointData checkpoint = good;
    checkpoint.step = damaged;
    ToyEngine second(toy_config(3));
    try {
      second.resume_from(checkpoint, "run.h5", "latest");
      ADD_FAILURE() << "step " << damaged << " was accepted";
    } catch (const store::RunFileError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("run.h5"), std::string::npos) << message;
      EXPECT_NE(message.find("/checkpoints/latest/step"), std::string::npos) << message;
      EXPECT_NE(message.find(std::to_string(damaged)), std::string::npos) << message;
      EXPECT_NE(message.find("step 4 of 9"), std::string::npos) << message;
    }
  }
  ToyEngine third(toy_config(3));
  third.resume_from(good, "run.h5", "latest");  // the undamaged one resumes
  EXPECT_EQ(third.step(), 4);
}

// Issue 38 items 3 and 4: a resume of a run another process is writing, before that writer's first checkpoint, was
// refused as "no checkpoint to resume from" (exit 2) instead of naming the holder (exit 3); and a refused resume
// left a killed writer's temporary beside the file.
TEST(TrainingSessionResume, ARunBeingWrittenIsRefusedNamingItsWriterEvenBeforeItsFirstCheckpoint) {
  descentlab::testing::ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  store::RunWriterOptions options = descentlab::testing::manual_flush();
  options.purpose = "training";
  auto writer = store::RunWriter::create(path, descentlab::testing::sample_header(), options);
  try {
    session::TrainingSession::resume(path);
    ADD_FAILURE() << "a resume of a run being written was not refused";
  } catch (const store::RunFileError& error) {
    EXPECT_EQ(error.kind(), store::RunFileError::Kind::Busy) << error.what();
    EXPECT_NE(std::string(error.what()).find("is being written by"), std::string::npos) << error.what();
  }
}

TEST(TrainingSessionResume, ARefusedResumeStillRemovesAKilledWritersTemporary) {
  descentlab::testing::ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  store::RunWriter::create(path, descentlab::testing::sample_header(), descentlab::testing::manual_flush()).reset();
  const std::string temporary = path + ".tmp-999999999";
  descentlab::testing::write_bytes(temporary, "half a commit of a killed writer");
  EXPECT_THROW(session::TrainingSession::resume(path), std::exception);  // no checkpoint (and not a preset's config)
  EXPECT_FALSE(std::filesystem::exists(temporary));
  EXPECT_FALSE(std::filesystem::exists(store::RunFileLock::lock_path_for(path))) << "the check left its lock file";
}

}  // namespace
}  // namespace descentlab::train
