// The layer probe (issue 17): one test sample's per-layer outputs equal the engine's per-layer evaluation of that
// sample (tasks::per_sample_layer_losses on the batch the sweep builds), at γ = 0 and under the sweeps' noise with
// the sweeps' seed; the mean of every sample's probe is the sweep's per-layer loss; run files are probed through the
// cached session, which reloads only what changed, and bad requests are named.

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/config/experiment_config.h"
#include "core/data/reviews.h"
#include "core/eval/layer_probe.h"
#include "core/eval/robustness.h"
#include "core/session/layer_probe_session.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/tasks/layerwise_task.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/saved_run.h"
#include "run_file_samples.h"
#include "test_support.h"
#include "tiny_video.h"

namespace descentlab::train {
namespace {

using descentlab::testing::fixture;
using descentlab::testing::ScratchFolder;

config::ExperimentConfig tiny_video_config(bool constrained) {
  nlohmann::json document = descentlab::testing::tiny_video_document();
  document["train"] = {{"epochs", 2}, {"batch_size", 6}, {"lr", 3e-3}, {"metric_interval", 2}, {"device", "cpu"}};
  document["constraints"] = {{"enabled", constrained}, {"alpha", 0.1}, {"dual_lr", 0.5}};
  return config::ExperimentConfig::from_json(document, "test config");
}

config::ExperimentConfig tiny_text_config() {
  nlohmann::json document = {{"task", "text"},
                             {"data", {{"max_length", 12}, {"min_count", 1}}},
                             {"model", {{"layers", 2}, {"width", 8}, {"heads", 2}, {"ff_width", 16}}},
                             {"train", {{"epochs", 2}, {"batch_size", 3}, {"device", "cpu"}}},
                             {"constraints", {{"enabled", true}}}};
  return config::ExperimentConfig::from_json(document, "test config");
}

std::vector<data::Review> fixture_reviews() {
  return data::read_reviews(fixture("reviews.json").string());
}

std::unique_ptr<tasks::LayerwiseTask> make_fixture_task(const config::ExperimentConfig& config) {
  if (config.task == config::Task::text) {
    return std::make_unique<tasks::TextTask>(config, fixture_reviews(), torch::kCPU);
  }
  return std::make_unique<tasks::VideoTask>(config, torch::kCPU);
}

// Trains `config` into a run file at `path`, as a training session does (checkpoints every epoch).
void train_into(const std::string& path, const config::ExperimentConfig& config) {
  torch::manual_seed(config.train.seed);
  auto task = make_fixture_task(config);
  LayerwiseTrainer trainer(config, *task, torch::kCPU);
  store::RunHeader header = testing::sample_header();
  header.config_json = config.to_json().dump();
  auto writer = store::RunWriter::create(path, header, testing::manual_flush());
  trainer.add_sink(writer.get());
  trainer.set_checkpoint_store(writer.get());
  trainer.run();
  writer->flush();
}

// The run file's checkpoint loaded into a freshly built task: the engine's side of every comparison.
std::unique_ptr<tasks::LayerwiseTask> load_task(const std::string& path, const std::string& label = "latest") {
  const SavedRun saved = read_saved_run(path, label, "cpu");
  auto task = make_fixture_task(saved.config);
  load_saved_model(saved, *task->module(), path, label);
  task->module()->eval();
  return task;
}

// A data folder holding the fixture reviews where the catalog looks for IMDb.
std::string fixture_data_root(const ScratchFolder& folder) {
  const auto root = folder / "data";
  std::filesystem::create_directories(root / "imdb");
  std::filesystem::copy_file(fixture("reviews.json"), root / "imdb" / "reviews.json");
  return root.string();
}

void expect_column(const std::vector<double>& probe, const torch::Tensor& losses, int64_t sample,
                   const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(probe.size()), losses.size(0)) << what;
  for (int64_t l = 0; l < losses.size(0); ++l) {
    EXPECT_NEAR(probe[static_cast<size_t>(l)], losses[l][sample].item<double>(), 1e-6)
        << what << ", sample " << sample << ", layer " << l;
  }
}

TEST(LayerProbe, VideoPerLayerOutputsEqualTheEnginesPerSampleEvaluation) {
  ScratchFolder folder;
  const std::string path = (folder / "video.h5").string();
  train_into(path, tiny_video_config(true));
  auto task = load_task(path);
  auto& video = dynamic_cast<tasks::VideoTask&>(*task);
  torch::NoGradGuard no_grad;
  session::LayerProbeSession session;
  for (const double gamma : {0.0, 1.5}) {
    const int64_t seed = 1;
    // The batch the sweep builds for cell (γ, seed 1): the whole test set is one batch of the sweeps' size.
    const tasks::Batch batch = video.noisy_test_batch(0, video.test_size(), gamma, eval::sweep_noise_seed(seed));
    const torch::Tensor losses = tasks::per_sample_layer_losses(video, batch);
    const auto states = video.model().states(batch.input);
    for (int64_t sample = 0; sample < video.test_size(); ++sample) {
      session::LayerProbeRequest request;
      request.run_path = path;
      request.settings = {sample, "video", gamma, seed};
      const session::RunProbe result = session.probe(request);
      const record::LayerProbe& probe = result.probe;
      expect_column(probe.loss, losses, sample, "gamma " + std::to_string(gamma));
      ASSERT_EQ(probe.layers, 3);
      ASSERT_EQ(probe.frames * probe.height * probe.width, 4 * 8 * 8);
      const int64_t pixels = probe.frames * probe.height * probe.width;
      ASSERT_EQ(static_cast<int64_t>(probe.predictions.size()), 4 * pixels);
      // The input and target are the sweep batch's, and each layer's prediction is the readout R(Φ_l) of that row.
      const torch::Tensor input = torch::tensor(probe.input).reshape({probe.frames, probe.height, probe.width});
      EXPECT_TRUE(torch::allclose(input.to(torch::kFloat32), batch.input[sample], 0, 1e-7));
      const torch::Tensor target = torch::tensor(probe.target).reshape({probe.frames, probe.height, probe.width});
      EXPECT_TRUE(torch::equal(target.to(torch::kFloat32), batch.target[sample]));
      for (int64_t l = 0; l <= 3; ++l) {
        const torch::Tensor engine = video.model().readout(l, states[static_cast<size_t>(l)], batch.input)[sample];
        const torch::Tensor mine = torch::tensor(std::vector<double>(probe.predictions.begin() + l * pixels,
                                                                     probe.predictions.begin() + (l + 1) * pixels))
                                       .reshape(engine.sizes());
        EXPECT_TRUE(torch::allclose(mine.to(torch::kFloat32), engine, 1e-5, 1e-6)) << "layer " << l;
        double squared = 0.0;
        for (int64_t p = 0; p < pixels; ++p) {
          const double error =
              probe.predictions[static_cast<size_t>(l * pixels + p)] - probe.target[static_cast<size_t>(p)];
          squared += error * error;
        }
        EXPECT_NEAR(squared / static_cast<double>(pixels), probe.loss[static_cast<size_t>(l)], 1e-6);
      }
    }
  }
}

TEST(LayerProbe, TextPerLayerOutputsEqualTheEnginesPerSampleEvaluation) {
  ScratchFolder folder;
  const std::string path = (folder / "text.h5").string();
  train_into(path, tiny_text_config());
  auto task = load_task(path);
  auto& text = dynamic_cast<tasks::TextTask&>(*task);
  torch::NoGradGuard no_grad;
  session::LayerProbeSession session;
  const std::string data_root = fixture_data_root(folder);
  const tasks::Batch clean = text.test_batch(0, text.test_size());
  const int64_t seed = 2;
  struct Case {
    std::string noise;
    double gamma;
    tasks::Batch batch;  // what the sweep evaluates for the cell (γ, seed 2)
  };
  std::vector<Case> cases = {{"gaussian", 0.0, clean}, {"discrete", 0.0, clean}};
  for (const double gamma : {1.0, 3.0}) {
    at::Generator generator = at::detail::createCPUGenerator(eval::sweep_noise_seed(seed));
    cases.push_back({"discrete",
                     gamma,
                     {tasks::substitute_tokens(clean.input, gamma, text.vocabulary_size(), generator), clean.target}});
  }
  for (const Case& each : cases) {
    const torch::Tensor losses = tasks::per_sample_layer_losses(text, each.batch);
    for (int64_t sample = 0; sample < text.test_size(); ++sample) {
      session::LayerProbeRequest request;
      request.run_path = path;
      request.data_root = data_root;
      request.settings = {sample, each.noise, each.gamma, seed};
      const record::LayerProbe probe = session.probe(request).probe;
      const std::string what = each.noise + " gamma " + std::to_string(each.gamma);
      expect_column(probe.loss, losses, sample, what);
      ASSERT_EQ(probe.classes, 2);
      EXPECT_EQ(probe.label, clean.target[sample].item<int64_t>());
      for (int64_t l = 0; l <= probe.layers; ++l) {
        const double total =
            probe.probabilities[static_cast<size_t>(2 * l)] + probe.probabilities[static_cast<size_t>(2 * l + 1)];
        EXPECT_NEAR(total, 1.0, 1e-12);
        // Cross-entropy is -log P(true class).
        EXPECT_NEAR(-std::log(probe.probability_of_label(l)), probe.loss[static_cast<size_t>(l)], 1e-5) << what;
      }
      // What the model read, in words: the (noisy) row's tokens without padding.
      const torch::Tensor row = each.batch.input[sample];
      const torch::Tensor real = row.masked_select(row.ne(0));
      ASSERT_EQ(static_cast<int64_t>(probe.token_ids.size()), real.numel());
      for (int64_t t = 0; t < real.numel(); ++t)
        EXPECT_EQ(probe.token_ids[static_cast<size_t>(t)], real[t].item<int64_t>());
      EXPECT_EQ(probe.words.size(), probe.token_ids.size());
      EXPECT_FALSE(probe.text.empty());
      if (each.gamma == 0.0) {
        // A clean review's known words read as in its text.
        const auto tokens = data::tokenize_review(data::normalize_review(probe.text));
        for (size_t t = 0; t < probe.words.size() && t < tokens.size(); ++t) {
          if (probe.words[t] != "<unk>") {
            EXPECT_EQ(probe.words[t], tokens[t]);
          }
        }
      }
    }
  }
}

// The sweep's own path for embedding noise (robustness.cpp): perturb the batch's token embeddings, then every layer.
torch::Tensor embedding_noise_losses(tasks::TextTask& text, const tasks::Batch& clean, const std::string& noise,
                                     double gamma, int64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(eval::sweep_noise_seed(seed));
  auto& model = text.text_model();
  const torch::Tensor embeddings =
      tasks::perturb_embeddings(model.token_embeddings(clean.input), clean.input, noise, gamma, generator);
  const auto states = model.states_from(model.embed_tokens(embeddings, clean.input));
  std::vector<torch::Tensor> losses;
  for (size_t l = 0; l < states.size(); ++l) {
    losses.push_back(text.per_sample_loss(model.readout(static_cast<int64_t>(l), states[l], clean.input), clean));
  }
  return torch::stack(losses);
}

TEST(LayerProbe, TextEmbeddingNoiseIsTheSweepsForTheSample) {
  ScratchFolder folder;
  const std::string path = (folder / "text.h5").string();
  train_into(path, tiny_text_config());
  auto task = load_task(path);
  auto& text = dynamic_cast<tasks::TextTask&>(*task);
  torch::NoGradGuard no_grad;
  const tasks::Batch clean = text.test_batch(0, text.test_size());
  eval::LayerProber prober(text);
  for (const std::string noise : {"gaussian", "uniform"}) {
    for (const double gamma : {0.5, 2.0}) {
      const torch::Tensor losses = embedding_noise_losses(text, clean, noise, gamma, 1);
      for (int64_t sample = 0; sample < text.test_size(); ++sample) {
        const record::LayerProbe probe = prober.probe({sample, noise, gamma, 1});
        expect_column(probe.loss, losses, sample, noise + " " + std::to_string(gamma));
      }
    }
  }
}

// Over batches smaller than the test set (the generator advanced over earlier batches, σ per batch, the video seed
// per batch start), the mean of every sample's probe is the sweep's per-layer loss of the same cell.
TEST(LayerProbe, MeansOfEverySamplesProbeAreTheSweepsPerLayerLosses) {
  ScratchFolder folder;
  const std::string text_path = (folder / "text.h5").string();
  const std::string video_path = (folder / "video.h5").string();
  train_into(text_path, tiny_text_config());
  train_into(video_path, tiny_video_config(false));
  for (const auto& [path, noises] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {text_path, {"gaussian", "uniform", "discrete"}}, {video_path, {"video"}}}) {
    auto task = load_task(path);
    for (const auto& noise : noises) {
      eval::SweepOptions options;
      options.noise = noise;
      options.gamma = {0.0, 0.75, 2.0};
      options.seeds = 3;
      options.batch_size = 4;  // 6 reviews, 8 clips: two batches
      const record::SweepResult sweep = eval::run_sweep(*task, options);
      eval::LayerProber prober(*task, options.batch_size);
      for (size_t g = 0; g < options.gamma.size(); ++g) {
        for (int64_t s = 0; s < options.seeds; ++s) {
          std::vector<double> mean(static_cast<size_t>(sweep.layers), 0.0);
          for (int64_t sample = 0; sample < task->test_size(); ++sample) {
            const auto probe = prober.probe({sample, noise, options.gamma[g], s});
            for (size_t l = 0; l < mean.size(); ++l) mean[l] += probe.loss[l] / static_cast<double>(task->test_size());
          }
          const size_t cell = g * static_cast<size_t>(options.seeds) + static_cast<size_t>(s);
          for (size_t l = 0; l < mean.size(); ++l) {
            EXPECT_NEAR(mean[l], sweep.layer_loss[cell * mean.size() + l], 1e-6)
                << noise << " gamma " << options.gamma[g] << " seed " << s << " layer " << l;
          }
        }
      }
    }
  }
}

TEST(LayerProbe, TheSessionKeepsTheTaskAndReloadsOnlyWhatChanged) {
  ScratchFolder folder;
  const std::string path = (folder / "video.h5").string();
  const auto config = tiny_video_config(true);
  train_into(path, config);
  session::LayerProbeSession session;
  session::LayerProbeRequest request;
  request.run_path = path;
  request.settings = {3, "", 1.0, 0};
  const session::RunProbe first = session.probe(request);
  EXPECT_TRUE(first.reloaded);
  EXPECT_EQ(first.probe.noise, "video");
  EXPECT_EQ(first.metric, "rmse");
  EXPECT_EQ(first.checkpoint, "latest");
  EXPECT_EQ(first.step, 8);  // 24 clips in batches of 6, two epochs
  // Another γ: from the cache, and fast.
  request.settings.gamma = 1.7;
  const auto started = std::chrono::steady_clock::now();
  const session::RunProbe second = session.probe(request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_FALSE(second.reloaded);
  EXPECT_LT(seconds, 1.0);
  EXPECT_NE(second.probe.loss, first.probe.loss);
  // The best checkpoint is another load; so is a new "latest" (a live run's next epoch), and only then.
  request.checkpoint = "best";
  EXPECT_TRUE(session.probe(request).reloaded);
  request.checkpoint = "latest";
  EXPECT_TRUE(session.probe(request).reloaded);
  EXPECT_FALSE(session.probe(request).reloaded);
  {
    auto writer = store::RunWriter::open(path, testing::manual_flush());
    record::CheckpointData checkpoint = store::RunReader(path).checkpoint("latest");
    checkpoint.step = 9;
    checkpoint.created.clear();
    writer->save_checkpoints({"latest"}, checkpoint);
  }
  const session::RunProbe after = session.probe(request);
  EXPECT_TRUE(after.reloaded);
  EXPECT_EQ(after.step, 9);
  EXPECT_EQ(after.probe.loss, second.probe.loss);  // the same weights
  // probe_run, the CLI's one-shot call, gives the same numbers.
  EXPECT_EQ(session::probe_run(request).probe.loss, second.probe.loss);
}

std::string error_of(session::LayerProbeSession& session, const session::LayerProbeRequest& request) {
  try {
    session.probe(request);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(LayerProbe, BadRequestsAreNamed) {
  ScratchFolder folder;
  const std::string path = (folder / "video.h5").string();
  train_into(path, tiny_video_config(false));
  session::LayerProbeSession session;
  session::LayerProbeRequest request;
  request.run_path = path;
  request.settings.sample = 8;
  std::string message = error_of(session, request);
  EXPECT_NE(message.find("sample 8 is out of range"), std::string::npos) << message;
  EXPECT_NE(message.find("has 8 samples"), std::string::npos) << message;
  request.settings = {0, "gaussian", 1.0, 0};
  message = error_of(session, request);
  EXPECT_NE(message.find("\"gaussian\" does not apply to a video model"), std::string::npos) << message;
  request.settings = {0, "video", -1.0, 0};
  EXPECT_NE(error_of(session, request).find("gamma"), std::string::npos);
  request.settings = {0, "video", 1.0, 0};
  request.checkpoint = "nope";
  message = error_of(session, request);
  EXPECT_NE(message.find("/checkpoints/nope"), std::string::npos) << message;
  // A sparse-training run is refused by name, before anything is loaded.
  const std::string sparse = (folder / "vit.h5").string();
  {
    store::RunHeader header = testing::sample_header();
    header.config_json = config::load_experiment("vit-adamw", "quick", "", {}).to_json().dump();
    store::RunWriter::create(sparse, header, testing::manual_flush())->flush();
  }
  request.run_path = sparse;
  request.checkpoint = "latest";
  message = error_of(session, request);
  EXPECT_NE(message.find("layerwise-descent runs"), std::string::npos) << message;
  EXPECT_NE(message.find("\"vit\""), std::string::npos) << message;
  request.run_path = (folder / "absent.h5").string();
  EXPECT_NE(error_of(session, request).find("absent.h5"), std::string::npos);
}

}  // namespace
}  // namespace descentlab::train
