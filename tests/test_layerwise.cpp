#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include <cerrno>
#include <cmath>
#include <limits>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/eval/robustness.h"
#include "core/session/host_sync_probe.h"
#include "core/store/durable_file.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/layerwise_math.h"
#include "core/train/layerwise_trainer.h"
#include "resume_parts.h"
#include "run_file_samples.h"
#include "test_sinks.h"
#include "test_support.h"
#include "tiny_video.h"

namespace descentlab::train {
namespace {

using descentlab::testing::fixture;
using descentlab::testing::ScratchFolder;

TEST(LayerwiseMath, SlackForKnownLosses) {
  const torch::Tensor f = torch::tensor({1.0, 0.9, 0.8, 0.85}, torch::kFloat64);
  const torch::Tensor g = constraint_slack(f, torch::full({3}, 0.05, torch::kFloat64), false);
  // g_l = f_l - (1 - 0.05) f_{l-1}
  EXPECT_NEAR(g[0].item<double>(), 0.9 - 0.95 * 1.0, 1e-12);
  EXPECT_NEAR(g[1].item<double>(), 0.8 - 0.95 * 0.9, 1e-12);
  EXPECT_NEAR(g[2].item<double>(), 0.85 - 0.95 * 0.8, 1e-12);  // violated: > 0
  EXPECT_GT(g[2].item<double>(), 0.0);
}

TEST(LayerwiseMath, StopGradientHoldsThePreviousLayerConstant) {
  for (const bool stop : {false, true}) {
    const torch::Tensor f = torch::tensor({1.0, 0.9, 0.8}, torch::requires_grad());
    constraint_slack(f, torch::full({2}, 0.1), stop).sum().backward();
    const auto grad = f.grad();
    // Without stop-gradient, df_0 = -(1 - α) and df_1 = 1 - (1 - α); with it, each f_l only counts as f_l.
    EXPECT_NEAR(grad[0].item<float>(), stop ? 0.0f : -0.9f, 1e-6);
    EXPECT_NEAR(grad[1].item<float>(), stop ? 1.0f : 0.1f, 1e-6);
    EXPECT_NEAR(grad[2].item<float>(), 1.0f, 1e-6);
  }
}

TEST(LayerwiseMath, LagrangianAddsLambdaWeightedSlackWithLambdaDetached) {
  const torch::Tensor f = torch::tensor({1.0, 0.5, 0.4}, torch::requires_grad());
  const torch::Tensor lambda = torch::tensor({2.0, 0.0}, torch::requires_grad());
  const torch::Tensor g = constraint_slack(f, torch::full({2}, 0.0), false);
  const torch::Tensor value = lagrangian(f, g, lambda);
  EXPECT_NEAR(value.item<float>(), 0.4f + 2.0f * (0.5f - 1.0f), 1e-6);
  value.backward();
  EXPECT_FALSE(lambda.grad().defined());
}

TEST(LayerwiseMath, DualStepStaysNonNegativeGrowsWhileViolatedAndShrinksToZero) {
  torch::Tensor lambda = torch::tensor({0.0, 0.5, 0.2});
  const torch::Tensor slack = torch::tensor({0.3, -1.0, -0.1});
  dual_step(lambda, slack, torch::Tensor(), 1.0);
  EXPECT_NEAR(lambda[0].item<float>(), 0.3f, 1e-6);  // violated: grows
  EXPECT_EQ(lambda[1].item<float>(), 0.0f);          // satisfied: projected to 0, never negative
  EXPECT_NEAR(lambda[2].item<float>(), 0.1f, 1e-6);  // satisfied: shrinks
  for (int i = 0; i < 5; ++i) dual_step(lambda, slack, torch::Tensor(), 1.0);
  EXPECT_EQ(lambda[2].item<float>(), 0.0f);
  EXPECT_TRUE((lambda >= 0).all().item<bool>());
  // With a resilient slack, the ascent direction is g - u.
  torch::Tensor relaxed = torch::tensor({1.0});
  dual_step(relaxed, torch::tensor({0.3}), torch::tensor({0.5}), 1.0);
  EXPECT_NEAR(relaxed[0].item<float>(), 0.8f, 1e-6);
}

TEST(LayerwiseMath, ResilientSlackMovesTowardLambdaOverCost) {
  torch::Tensor u = torch::zeros({1});
  const torch::Tensor lambda = torch::tensor({0.6});
  resilient_step(u, lambda, 2.0, 0.1);
  EXPECT_NEAR(u[0].item<float>(), 0.06f, 1e-6);  // u - η(a u - λ) = 0 - 0.1 (0 - 0.6)
  for (int i = 0; i < 500; ++i) resilient_step(u, lambda, 2.0, 0.1);
  EXPECT_NEAR(u[0].item<float>(), 0.3f, 1e-4);  // fixed point u = λ / a
  torch::Tensor negative = torch::tensor({0.01});
  resilient_step(negative, torch::zeros({1}), 1.0, 2.0);
  EXPECT_EQ(negative[0].item<float>(), 0.0f);  // projected to u >= 0
}

TEST(LayerwiseMath, AlphaScheduleAndDescendingFrequency) {
  EXPECT_DOUBLE_EQ(scheduled_alpha(config::AlphaSchedule::constant, 0.05, 0.2, 3, 5), 0.05);
  EXPECT_DOUBLE_EQ(scheduled_alpha(config::AlphaSchedule::linear, 0.05, 0.25, 0, 5), 0.05);
  EXPECT_DOUBLE_EQ(scheduled_alpha(config::AlphaSchedule::linear, 0.05, 0.25, 4, 5), 0.25);
  EXPECT_NEAR(scheduled_alpha(config::AlphaSchedule::linear, 0.05, 0.25, 2, 5), 0.15, 1e-12);
  // 3 layers x 4 samples: layer 1 descends for samples 0, 1, 3; layer 2 for samples 0, 3 (ties count).
  const torch::Tensor losses = torch::tensor({{1.0, 1.0, 1.0, 1.0}, {0.5, 1.0, 2.0, 0.9}, {0.4, 1.1, 2.5, 0.9}});
  const torch::Tensor frequency = descending_frequency(losses);
  EXPECT_NEAR(frequency[0].item<double>(), 0.75, 1e-12);
  EXPECT_NEAR(frequency[1].item<double>(), 0.5, 1e-12);
  // Per sample, at how many layers it descends: 2, 1, 0, 2.
  EXPECT_TRUE(torch::equal(descending_layers(losses), torch::tensor({2, 1, 0, 2}, torch::kInt64)));
}

config::ExperimentConfig tiny_video_config() {
  nlohmann::json document = testing::tiny_video_document();
  document["train"] = {{"epochs", 3}, {"batch_size", 5}, {"lr", 3e-3}, {"metric_interval", 2}};
  document["constraints"] = {{"enabled", true}, {"alpha", 0.1}, {"dual_lr", 0.5}, {"resilient", true}};
  return config::ExperimentConfig::from_json(document, "test config");
}

std::vector<double> lambda_of(const session::TrainingResult& result) {
  return result.extra.at("lambda").get<std::vector<double>>();
}

std::vector<double> test_layer_loss_of(const session::TrainingResult& result) {
  return result.extra.at("test").at("layer_loss").get<std::vector<double>>();
}

// Runs `config` on a fresh task and returns the trained model's parameters.
std::vector<torch::Tensor> train_parameters(const config::ExperimentConfig& config,
                                            session::TrainingResult* result = nullptr) {
  torch::manual_seed(config.train.seed);
  tasks::VideoTask task(config, torch::kCPU);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  const session::TrainingResult outcome = trainer.run();
  if (result) *result = outcome;
  std::vector<torch::Tensor> parameters;
  for (const auto& parameter : task.module()->parameters()) parameters.push_back(parameter.detach().clone());
  return parameters;
}

TEST(LayerwiseTrainer, ErmEqualsConstrainedTrainingWithLambdaFrozenAtZero) {
  auto erm = tiny_video_config();
  erm.constraints.enabled = false;
  auto frozen = tiny_video_config();
  frozen.constraints.dual_lr = 0.0;  // λ stays 0
  frozen.constraints.resilient = false;
  session::TrainingResult frozen_result;
  const auto a = train_parameters(erm);
  const auto b = train_parameters(frozen, &frozen_result);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  for (double lambda : lambda_of(frozen_result)) EXPECT_EQ(lambda, 0.0);
  // And the dual variables do move when they may: asking every layer to halve the loss cannot be met here.
  auto demanding = tiny_video_config();
  demanding.constraints.alpha = 0.5;
  demanding.constraints.resilient = false;
  session::TrainingResult active;
  train_parameters(demanding, &active);
  double total = 0;
  for (double lambda : lambda_of(active)) total += lambda;
  EXPECT_GT(total, 0.0);
}

TEST(LayerwiseTrainer, PerLayerLossesEqualSeparateForwardPasses) {
  const auto config = tiny_video_config();
  torch::manual_seed(3);
  tasks::VideoTask task(config, torch::kCPU);
  task.module()->eval();
  const tasks::Batch batch = task.test_batch(0, 6);
  const torch::Tensor together = tasks::per_sample_layer_losses(task, batch);
  ASSERT_EQ(together.sizes(), (std::vector<int64_t>{4, 6}));
  for (int64_t l = 0; l <= 3; ++l) {
    const torch::Tensor state = task.model().state_at(batch.input, l);
    const torch::Tensor alone = task.per_sample_loss(task.model().readout(l, state, batch.input), batch);
    EXPECT_TRUE(torch::allclose(together[l], alone, 1e-6, 1e-7)) << "layer " << l;
  }
}

TEST(LayerwiseTrainer, TextTaskTrainsOnFixtureReviews) {
  nlohmann::json document = {
      {"task", "text"},
      {"data", {{"max_length", 12}, {"min_count", 1}}},
      {"model", {{"layers", 2}, {"width", 8}, {"heads", 2}, {"ff_width", 16}, {"readout", "per_layer"}}},
      {"train", {{"epochs", 2}, {"batch_size", 3}}},
      {"constraints", {{"enabled", true}, {"dual_update", "epoch"}, {"constraint_batch", 2}}}};
  const auto config = config::ExperimentConfig::from_json(document, "test");
  const auto reviews = data::read_reviews(fixture("reviews.json").string());
  tasks::TextTask task(config, reviews, torch::kCPU);
  EXPECT_EQ(task.train_size(), 6);
  EXPECT_EQ(task.test_size(), 6);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  const session::TrainingResult result = trainer.run();
  EXPECT_EQ(result.epochs_completed, 2);
  EXPECT_EQ(test_layer_loss_of(result).size(), 3u);
  EXPECT_EQ(result.extra["test"]["descending_frequency"].size(), 2u);
  EXPECT_EQ(result.metric, "accuracy");
  EXPECT_GE(result.test_metric, 0.0);
  EXPECT_LE(result.test_metric, 1.0);
}

// The descent certificate's counts (issue 17): n_k test samples descend at exactly k layers, as the per-sample
// losses of the trained model say, and they agree with the per-layer shares.
TEST(LayerwiseTrainer, DescentCountsMatchThePerSampleLossesOfTheTestSet) {
  const auto config = tiny_video_config();
  torch::manual_seed(config.train.seed);
  tasks::VideoTask task(config, torch::kCPU);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  descentlab::testing::RecordingSink sink;
  trainer.add_sink(&sink);
  trainer.run();
  const auto& counts = sink.vectors.at("test_descent_counts");
  ASSERT_EQ(counts.size(), 3u);  // one per epoch
  const std::vector<double>& last = counts.back().second;
  ASSERT_EQ(last.size(), 4u);  // k = 0..3
  torch::NoGradGuard no_grad;
  task.module()->eval();
  const torch::Tensor losses =
      tasks::per_sample_layer_losses(task, task.test_batch(0, task.test_size())).to(torch::kFloat64);
  const torch::Tensor expected = torch::bincount(descending_layers(losses), {}, 4);
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(last[k], expected[k].item<double>()) << k;
  double samples = 0, descending = 0;
  for (size_t k = 0; k < last.size(); ++k) {
    samples += last[k];
    descending += static_cast<double>(k) * last[k];
  }
  EXPECT_EQ(samples, 8.0);
  double from_shares = 0;
  for (double share : sink.vectors.at("test_descending_frequency").back().second) from_shares += share * samples;
  EXPECT_NEAR(descending, from_shares, 1e-9);
}

using descentlab::testing::StopAfter;

TEST(LayerwiseTrainer, StoppedAndResumedRunIsBitwiseIdenticalToAnUninterruptedOne) {
  const auto config = tiny_video_config();
  session::TrainingResult straight_result;
  const auto straight = train_parameters(config, &straight_result);

  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  {
    torch::manual_seed(config.train.seed);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    auto writer = store::RunWriter::create(path, testing::sample_header(), options);
    session::TrainingControl control;
    StopAfter stopper(control, 7);  // mid-epoch: 5 batches per epoch
    trainer.add_sink(writer.get());
    trainer.add_sink(&stopper);
    trainer.set_checkpoint_store(writer.get());
    trainer.set_control(&control);
    const session::TrainingResult partial = trainer.run();
    EXPECT_TRUE(partial.stopped);
    EXPECT_EQ(partial.steps, 8);  // the stop is honoured before the next batch
  }
  torch::manual_seed(12345);  // a new process: other weights and generator state until restored
  tasks::VideoTask task(config, torch::kCPU);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  const store::RunReader reader(path);
  trainer.resume_from(reader.checkpoint("latest"), path, "latest");
  const session::TrainingResult rest = trainer.run();
  EXPECT_FALSE(rest.stopped);
  EXPECT_EQ(rest.steps, straight_result.steps);
  const auto parameters = task.module()->parameters();
  ASSERT_EQ(parameters.size(), straight.size());
  for (size_t i = 0; i < straight.size(); ++i) EXPECT_TRUE(torch::equal(parameters[i], straight[i])) << i;
  EXPECT_EQ(lambda_of(rest), lambda_of(straight_result));
  EXPECT_EQ(test_layer_loss_of(rest), test_layer_loss_of(straight_result));
}

// Issue 18: the layerwise engine follows the same schedule (linear decay after a warm-up of a quarter of the 15
// steps, 4 steps): the `lr` series shows the scheduled rates, and a run stopped inside the warm-up (after step 2) and
// inside the decay (after step 8), each time resumed by a new engine, ends bitwise as an uninterrupted run, λ too.
TEST(LayerwiseTrainer, AScheduledRunStoppedInItsWarmupAndItsDecayResumesBitwiseIdentical) {
  auto config = tiny_video_config();
  config.train.lr_schedule = config::LrShape::linear;
  config.train.warmup = 0.25;
  session::TrainingResult straight_result;
  const auto straight = train_parameters(config, &straight_result);
  const LrSchedule schedule{config::LrShape::linear, 3e-3, 4, 15};

  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  session::TrainingResult last;
  for (const auto& [stop_at, stopped_steps] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {7, 8}, {0, 15}}) {
    // The first part starts as the straight run; each resumed part is a new process, with other weights and
    // generator state until the checkpoint restores them.
    torch::manual_seed(stop_at == 2 ? config.train.seed : 12345);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    EXPECT_EQ(trainer.learning_rate_schedule().warmup_steps, 4);
    last = testing::run_part(trainer, path, stop_at == 2 ? testing::Part::First : testing::Part::Resumed, stop_at);
    EXPECT_EQ(last.steps, stopped_steps) << stop_at;
    if (stop_at == 0) {
      const auto parameters = task.module()->parameters();
      ASSERT_EQ(parameters.size(), straight.size());
      for (size_t i = 0; i < straight.size(); ++i) EXPECT_TRUE(torch::equal(parameters[i], straight[i])) << i;
    }
  }
  EXPECT_EQ(lambda_of(last), lambda_of(straight_result));
  EXPECT_EQ(test_layer_loss_of(last), test_layer_loss_of(straight_result));
  // Metric rows at steps 2, 4, 5 (epoch end), 6, 8, 10, ...: each the rate of the step just taken.
  const store::MetricSeries rates = store::RunReader(path).metric("lr");
  ASSERT_FALSE(rates.steps.empty());
  for (size_t row = 0; row < rates.rows(); ++row) {
    EXPECT_DOUBLE_EQ(rates.values[row], schedule.at(rates.steps[row] - 1)) << rates.steps[row];
  }
  EXPECT_DOUBLE_EQ(rates.values.front(), 3e-3 * 2 / 4);                 // step 2: the warm-up's second step
  EXPECT_NEAR(rates.values.back(), 3e-3 * (1.0 - 10.0 / 11.0), 1e-15);  // step 15: the last of 11 decaying steps
  // Against the constant rate the schedule changed the training.
  auto constant = config;
  constant.train.lr_schedule = config::LrShape::constant;
  constant.train.warmup = 0;
  EXPECT_FALSE(torch::equal(train_parameters(constant)[0], straight[0]));
}

// A warm-up longer than the run is refused when the engine is built, naming the key and both lengths.
TEST(LayerwiseTrainer, AWarmupLongerThanTheRunIsNamed) {
  auto config = tiny_video_config();
  config.train.warmup = 16;  // the run has 15 steps
  tasks::VideoTask task(config, torch::kCPU);
  try {
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    FAIL() << "a warm-up of 16 steps was accepted for a run of 15";
  } catch (const config::ConfigError& error) {
    EXPECT_EQ(error.key(), "train.warmup");
    EXPECT_NE(std::string(error.what()).find("16 steps"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("15 steps"), std::string::npos) << error.what();
  }
}

// A full disk at an epoch end's checkpoint, staying full until the process ends: the run stops with the disk's error,
// the file keeps the previous epoch's state, and resuming from it ends exactly where an uninterrupted run ends.
TEST(LayerwiseTrainer, AFullDiskAtACheckpointStopsTheRunAndResumeEndsAsAnUninterruptedRun) {
  const auto config = tiny_video_config();  // 5 batches per epoch
  session::TrainingResult straight_result;
  const auto straight = train_parameters(config, &straight_result);

  struct FillDiskAt : record::MetricSink {
    int64_t at_step;
    bool filled = false;
    explicit FillDiskAt(int64_t step) : at_step(step) {}
    void scalar(const std::string&, int64_t step, double, double) override {
      if (filled || step < at_step) return;
      filled = true;
      store::fault::inject(store::fault::Point::Write, ENOSPC);  // the epoch end's checkpoint commit
      store::fault::inject(store::fault::Point::Fsync, ENOSPC);  // and the writer's last commit at exit
    }
    void vector(const std::string&, int64_t, double, const std::vector<double>&) override {}
    void histogram(const record::HistogramSnapshot&) override {}
    void sweep(const record::SweepResult&) override {}
  };
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  {
    torch::manual_seed(config.train.seed);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    auto writer = store::RunWriter::create(path, testing::sample_header(), testing::manual_flush());
    FillDiskAt filler(7);  // during epoch 2
    trainer.add_sink(writer.get());
    trainer.add_sink(&filler);
    trainer.set_checkpoint_store(writer.get());
    try {
      trainer.run();
      ADD_FAILURE() << "the run went on past a failed checkpoint";
    } catch (const store::RunFileError& error) {
      EXPECT_NE(std::string(error.what()).find("the disk is full"), std::string::npos) << error.what();
    }
  }
  store::fault::clear();
  EXPECT_EQ(store::RunReader(path).checkpoint("latest").step, 5) << "the file must keep epoch 1's state";
  torch::manual_seed(12345);
  tasks::VideoTask task(config, torch::kCPU);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  {
    auto writer = store::RunWriter::open(path, testing::manual_flush());
    trainer.resume_from(store::RunReader(path).checkpoint("latest"), path, "latest");
    writer->truncate_after(5);
    trainer.add_sink(writer.get());
    trainer.set_checkpoint_store(writer.get());
    const session::TrainingResult rest = trainer.run();
    EXPECT_EQ(rest.steps, straight_result.steps);
    EXPECT_EQ(lambda_of(rest), lambda_of(straight_result));
  }
  const auto parameters = task.module()->parameters();
  ASSERT_EQ(parameters.size(), straight.size());
  for (size_t i = 0; i < straight.size(); ++i) EXPECT_TRUE(torch::equal(parameters[i], straight[i])) << i;
  const store::RunReader reader(path);
  const auto loss = reader.metric("loss");
  for (size_t i = 1; i < loss.rows(); ++i) EXPECT_LT(loss.steps[i - 1], loss.steps[i]) << "rows written twice";
}

// Restored values are checked against the model and the config before anything is changed: each damage below used
// to resume silently (or fail with a LibTorch stack trace) and is now refused naming the object.
TEST(LayerwiseTrainer, DamagedRestoredValuesAreRefusedNamingTheObject) {
  const auto config = tiny_video_config();
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  {
    torch::manual_seed(config.train.seed);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    auto writer = store::RunWriter::create(path, testing::sample_header(), testing::manual_flush());
    session::TrainingControl control;
    StopAfter stopper(control, 7);
    trainer.add_sink(&stopper);
    trainer.set_checkpoint_store(writer.get());
    trainer.set_control(&control);
    trainer.run();
  }
  const record::CheckpointData good = store::RunReader(path).checkpoint("latest");
  const auto float_blob = [](std::vector<float> values, std::vector<int64_t> shape) {
    return train::to_blob(torch::tensor(values).reshape(shape));
  };
  const int64_t layers = train::to_tensor(good.sections.at("dual").at("lambda")).numel();
  struct Damage {
    const char* what;
    std::function<void(record::CheckpointData&)> apply;
    const char* object;
  };
  const std::vector<Damage> damages = {
      {"negative lambda",
       [&](record::CheckpointData& c) {
         c.sections["dual"]["lambda"] = float_blob(std::vector<float>(layers, -1.0f), {layers});
       },
       "/checkpoints/latest/dual/lambda"},
      {"NaN lambda",
       [&](record::CheckpointData& c) {
         c.sections["dual"]["lambda"] = float_blob(std::vector<float>(layers, NAN), {layers});
       },
       "/checkpoints/latest/dual/lambda"},
      {"wrong-shape slack",
       [&](record::CheckpointData& c) {
         c.sections["dual"]["resilient_slack"] = float_blob({0.f, 0.f}, {2});
       },
       "/checkpoints/latest/dual/resilient_slack"},
      {"short RNG state",
       [&](record::CheckpointData& c) {
         auto& rng = c.sections["rng"]["cpu"];
         rng.bytes.resize(100);
         rng.shape = {100};
       },
       "/checkpoints/latest/rng/cpu"},
      {"another seed",
       [&](record::CheckpointData& c) {
         c.sections["data"]["order"] = train::to_blob(torch::tensor({int64_t{999}, int64_t{1}, int64_t{8}}));
       },
       "/checkpoints/latest/data/order"},
      {"accumulated out of range",
       [&](record::CheckpointData& c) {
         c.sections["progress"]["accumulated"] = train::to_blob(torch::scalar_tensor(int64_t{-5}, torch::kInt64));
       },
       "/checkpoints/latest/progress/accumulated"},
  };
  for (const auto& damage : damages) {
    record::CheckpointData damaged = good;
    damage.apply(damaged);
    torch::manual_seed(1);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    try {
      trainer.resume_from(damaged, path, "latest");
      ADD_FAILURE() << damage.what << " was accepted";
    } catch (const store::RunFileError& error) {
      EXPECT_EQ(error.object(), damage.object) << damage.what << ": " << error.what();
      EXPECT_EQ(std::string(error.what()).find("Exception raised from"), std::string::npos) << error.what();
    }
  }
}

TEST(Robustness, EmbeddingNoiseHasStandardDeviationGammaSigma) {
  at::Generator generator = at::detail::createCPUGenerator(5);
  const torch::Tensor embeddings = torch::randn({64, 50, 16}, generator) * 0.7;
  torch::Tensor token_ids = torch::randint(2, 100, {64, 50}, generator);
  token_ids.slice(1, 40, 50).fill_(0);  // padding at the end of every row
  const double sigma = embeddings.slice(1, 0, 40).std().item<double>();
  for (const std::string noise : {"gaussian", "uniform"}) {
    const torch::Tensor noisy = tasks::perturb_embeddings(embeddings, token_ids, noise, 1.5, generator);
    const torch::Tensor added = (noisy - embeddings).slice(1, 0, 40);
    EXPECT_NEAR(added.std().item<double>(), 1.5 * sigma, 0.02 * 1.5 * sigma) << noise;
    EXPECT_NEAR(added.mean().item<double>(), 0.0, 0.01) << noise;
    EXPECT_TRUE(torch::equal(noisy.slice(1, 40, 50), embeddings.slice(1, 40, 50))) << "padding is left alone";
    if (noise == "uniform") {
      EXPECT_LE(added.abs().max().item<double>(), 1.5 * sigma * std::sqrt(3.0) + 1e-5);
    }
  }
  EXPECT_TRUE(torch::equal(tasks::perturb_embeddings(embeddings, token_ids, "gaussian", 0.0, generator), embeddings));
}

TEST(Robustness, DiscreteNoiseReplacesTokensAtRateGammaOverFour) {
  at::Generator generator = at::detail::createCPUGenerator(9);
  torch::Tensor token_ids = torch::randint(2, 500, {200, 100}, generator);
  token_ids.slice(1, 90, 100).fill_(0);
  for (const double gamma : {0.5, 2.0, 6.0}) {
    const torch::Tensor noisy = tasks::substitute_tokens(token_ids, gamma, 500, generator);
    const double rate = noisy.slice(1, 0, 90).ne(token_ids.slice(1, 0, 90)).to(torch::kFloat64).mean().item<double>();
    // A replacement may draw the same token (1 in 498), hence the small allowance.
    EXPECT_NEAR(rate, std::min(1.0, gamma / 4.0) * (1.0 - 1.0 / 498.0), 0.01) << gamma;
    EXPECT_TRUE(noisy.slice(1, 90, 100).eq(0).all().item<bool>());
    EXPECT_TRUE(noisy.slice(1, 0, 90).ge(2).all().item<bool>());  // never <pad> or <unk>
  }
}

TEST(Robustness, GammaGridsAndASweepOverAVideoModel) {
  EXPECT_EQ(eval::parse_gamma_grid("0:1:0.25"), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(eval::parse_gamma_grid("0.5,2"), (std::vector<double>{0.5, 2.0}));
  EXPECT_THROW(eval::parse_gamma_grid("1:0:0.1"), Error);
  EXPECT_THROW(eval::parse_gamma_grid("a,b"), Error);
  // Strict numbers (issue 16 points 8-9): "1e999" was an internal stod error, "inf" stored NaN, "1abc" read as 1.
  for (const char* bad : {"1e999", "0,inf", "0:inf:1", "nan", "1abc", "0,,1", "", "-1,2", "0:1:0", "0:1e9:1e-6"}) {
    try {
      eval::parse_gamma_grid(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("\"") + bad + "\""), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(eval::parse_gamma_grid(" 0.5 , 2 "), (std::vector<double>{0.5, 2.0}));
  const auto config = tiny_video_config();
  torch::manual_seed(1);
  tasks::VideoTask task(config, torch::kCPU);
  eval::SweepOptions options;
  options.noise = "video";
  options.gamma = {0.0, 1.0, 3.0};
  options.seeds = 2;
  const record::SweepResult sweep = eval::run_sweep(task, options);
  ASSERT_EQ(sweep.metric.size(), 6u);
  ASSERT_EQ(sweep.layer_loss.size(), 6u * 4u);
  EXPECT_EQ(sweep.metric_name, "rmse");
  EXPECT_EQ(sweep.metric[0], sweep.metric[1]);  // no noise: the seeds agree
  EXPECT_NE(sweep.metric[2], sweep.metric[3]);  // with noise, the seeds draw different noise
  EXPECT_NE(sweep.metric[4], sweep.metric[0]);  // and the noise changes the result
  options.noise = "gaussian";
  EXPECT_THROW(eval::run_sweep(task, options), Error);
}

// Every kind is honoured or refused by name, never drawn as another: the video task draws "video" only, the text
// kinds are refused naming the kinds it takes, and a vocabulary row no task draws is refused as such.
TEST(Robustness, ATaskDrawsOnlyTheKindsItTakes) {
  const auto config = tiny_video_config();
  torch::manual_seed(1);
  tasks::VideoTask task(config, torch::kCPU);
  EXPECT_EQ(task.noise_kinds(), record::noise_kinds(/*video=*/true));
  tasks::NoiseStream stream(eval::sweep_noise_seed(0));
  const tasks::PerturbedBatch noisy = task.perturbed_test_batch(2, 3, "video", 1.0, stream);
  EXPECT_TRUE(torch::equal(noisy.batch.input, task.noisy_test_batch(2, 3, 1.0, eval::sweep_noise_seed(0) + 2).input));
  EXPECT_FALSE(noisy.token_embeddings.defined());
  EXPECT_FALSE(stream.drew_running());  // a video batch draws on its own: the probe need not replay the ones before
  for (const char* kind : {"gaussian", "uniform", "discrete", "salt"}) {
    try {
      task.perturbed_test_batch(0, 2, kind, 1.0, stream);
      ADD_FAILURE() << "drew " << kind << " on a video model";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what())
                    .find(std::string("\"") + kind + "\" does not apply to a video model (known: video)"),
                std::string::npos)
          << error.what();
    }
  }
  try {
    tasks::refuse_noise("video", "video", {"video"});
    ADD_FAILURE() << "refuse_noise returned";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("the video task does not draw it"), std::string::npos) << error.what();
  }
}

// A video task whose loss turns into NaN after a number of training batches.
class PoisonedVideoTask : public tasks::VideoTask {
 public:
  PoisonedVideoTask(const config::ExperimentConfig& config, int64_t healthy_batches)
      : tasks::VideoTask(config, torch::kCPU), healthy_batches_(healthy_batches) {}
  tasks::Batch train_batch(const std::vector<int64_t>& indices) override {
    tasks::Batch batch = tasks::VideoTask::train_batch(indices);
    if (++batches_ > healthy_batches_) batch.input = batch.input * std::numeric_limits<float>::quiet_NaN();
    return batch;
  }

 private:
  int64_t healthy_batches_;
  int64_t batches_ = 0;
};

// A training step never waits for the device: host reads happen at metric intervals, evaluations and the end of
// the run, so doubling the steps between two metric reads adds none. (On the CPU a `.item()` costs nothing, but
// the same call would stall a GPU once per step; the probe counts it on any device.)
TEST(LayerwiseTrainer, StepsReadNothingBackFromTheDeviceBetweenMetricIntervals) {
  auto host_reads = [](int64_t batch_size) {
    auto config = tiny_video_config();  // 24 clips, gradient clipping on, constrained with per-batch dual steps
    config.train.epochs = 1;
    config.train.batch_size = batch_size;
    config.train.metric_interval = 1000;  // one metric read: at the end of the epoch
    config.train.grad_clip = 1.0;
    torch::manual_seed(0);
    tasks::VideoTask task(config, torch::kCPU);
    LayerwiseTrainer trainer(config, task, torch::kCPU);
    session::HostSyncProbe probe;
    const session::TrainingResult result = trainer.run();
    return std::make_pair(result.steps, probe.counts());
  };
  const auto [steps_few, few] = host_reads(6);
  const auto [steps_many, many] = host_reads(3);
  ASSERT_EQ(steps_few, 4);
  ASSERT_EQ(steps_many, 8);
  EXPECT_GT(few.scalar_reads, 0);  // the probe sees the reads that do happen
  EXPECT_EQ(many.scalar_reads, few.scalar_reads) << "host reads grew with the number of steps";
  EXPECT_EQ(many.total(), few.total());
}

TEST(LayerwiseTrainer, NanLossStopsWithAClearErrorAndKeepsTheLastGoodCheckpoint) {
  const auto config = tiny_video_config();  // 5 batches per epoch
  torch::manual_seed(0);
  PoisonedVideoTask task(config, 7);
  LayerwiseTrainer trainer(config, task, torch::kCPU);
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  auto writer = store::RunWriter::create(path, testing::sample_header(), options);
  trainer.add_sink(writer.get());
  trainer.set_checkpoint_store(writer.get());
  try {
    trainer.run();
    FAIL() << "expected TrainingError";
  } catch (const TrainingError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("became nan"), std::string::npos) << message;
    EXPECT_NE(message.find("step 8"), std::string::npos) << message;  // the first metric read after batch 8
  }
  const store::RunReader reader(path);
  const auto latest = reader.checkpoint("latest");
  EXPECT_EQ(latest.step, 5);  // the end of the first epoch, before the NaN
  const torch::Tensor weight = train::to_tensor(latest.sections.at("model").begin()->second);
  EXPECT_TRUE(torch::isfinite(weight).all().item<bool>());
}

TEST(ExperimentConfig, PresetsLoadAndUnknownKeysAreNamed) {
  for (const auto& name : config::preset_names()) {
    for (const std::string size : {"quick", "full", "large"}) {
      const auto config = config::load_experiment(name, size, "", {});
      EXPECT_EQ(config.name, name + "-" + size);
    }
  }
  EXPECT_TRUE(config::load_experiment("text-constrained", "quick", "", {}).constraints.enabled);
  const auto changed = config::load_experiment("text-erm", "quick", "", {"model.layers=6", "constraints.enabled=true"});
  EXPECT_EQ(changed.model.layers, 6);
  EXPECT_TRUE(changed.constraints.enabled);
  try {
    config::load_experiment("text-erm", "quick", "", {"model.layerz=6"});
    FAIL() << "expected ConfigError";
  } catch (const config::ConfigError& error) {
    EXPECT_EQ(error.key(), "model.layerz");
    EXPECT_NE(std::string(error.what()).find("unknown key"), std::string::npos) << error.what();
  }
  EXPECT_THROW(config::load_experiment("text-erm", "quick", "", {"model.heads=5"}), config::ConfigError);
  EXPECT_THROW(config::load_experiment("text-erm", "quick", "", {"train.lr=-1"}), config::ConfigError);
  EXPECT_THROW(config::load_experiment("text-erm", "huge", "", {}), config::ConfigError);
  EXPECT_THROW(config::load_experiment("nope", "quick", "", {}), config::ConfigError);
  const auto round_trip = config::ExperimentConfig::from_json(changed.to_json(), "round trip");
  EXPECT_EQ(round_trip.to_json(), changed.to_json());
}

}  // namespace
}  // namespace descentlab::train
