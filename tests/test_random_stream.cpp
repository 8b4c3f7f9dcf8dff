// Issue 17: runs side by side in one process (the window, a tour's pair) each draw from their own stream of the CPU
// generator (core/train/random_stream.h), so each is the run its config gives alone, bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/session/training_session.h"
#include "core/train/random_stream.h"
#include "test_support.h"
#include "tiny_video.h"

namespace descentlab::train {
namespace {

using testing::ScratchFolder;

// Dropout in every block and the video task's training noise: both draw from the CPU generator at every step.
config::ExperimentConfig video_config(int64_t seed) {
  nlohmann::json document = testing::tiny_video_document();
  document["model"]["dropout"] = 0.2;
  document["train"] = {{"epochs", 6}, {"batch_size", 4}, {"lr", 3e-3}, {"metric_interval", 2}, {"seed", seed}};
  document["constraints"] = {{"enabled", true}, {"alpha", 0.1}, {"dual_lr", 0.5}};
  return config::ExperimentConfig::from_json(document, "test config");
}

std::vector<double> layer_loss(const session::TrainingResult& result) {
  return result.extra.at("test").at("layer_loss").get<std::vector<double>>();
}

TEST(RandomStream, RunsSideBySideDrawWhatEachDrawsAlone) {
  ScratchFolder folder;
  const auto alone = [&](int64_t seed) {
    session::SessionOptions options;
    options.run_path = (folder / ("alone-" + std::to_string(seed) + ".h5")).string();
    session::TrainingSession session(video_config(seed), options);
    return session.run();
  };
  const session::TrainingResult first_alone = alone(1);
  const session::TrainingResult second_alone = alone(2);
  // The two alone differ (a test of streams between identical runs would prove nothing).
  ASSERT_NE(layer_loss(first_alone), layer_loss(second_alone));

  // Side by side, each on its own worker thread, as the window runs them. Every run of several hundred dropout and
  // noise draws overlaps the other's: before streams, one shared generator mixed their draws.
  std::mutex results_mutex;
  std::vector<session::TrainingResult> results(2);
  std::vector<std::string> errors(2);
  std::vector<std::unique_ptr<session::TrainingSession>> sessions;
  for (int64_t seed : {1, 2}) {
    session::SessionOptions options;
    options.run_path = (folder / ("pair-" + std::to_string(seed) + ".h5")).string();
    sessions.push_back(std::make_unique<session::TrainingSession>(video_config(seed), options));
  }
  for (size_t i = 0; i < sessions.size(); ++i) {
    sessions[i]->start([&, i](const session::TrainingResult& result, const std::string& error) {
      std::lock_guard<std::mutex> lock(results_mutex);
      results[i] = result;
      errors[i] = error;
    });
  }
  for (auto& session : sessions) session->join();
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(layer_loss(results[0]), layer_loss(first_alone));
  EXPECT_EQ(layer_loss(results[1]), layer_loss(second_alone));
  EXPECT_EQ(results[0].extra.at("lambda"), first_alone.extra.at("lambda"));
  EXPECT_EQ(results[1].extra.at("lambda"), second_alone.extra.at("lambda"));
}

TEST(RandomStream, ALeaseSwapsTheStreamInAndKeepsWhatItDrew) {
  RandomStream stream;
  stream.seed_and_initialise(7, nullptr);
  torch::manual_seed(99);  // someone else's draws in between
  torch::Tensor first;
  {
    const CurrentRandomStream current(&stream);
    RandomStream::Lease lease = lease_random_stream();
    first = torch::rand({4});
  }
  torch::manual_seed(7);
  const torch::Tensor expected = torch::rand({8});
  EXPECT_TRUE(torch::equal(first, expected.slice(0, 0, 4)));
  torch::manual_seed(123);
  {
    const CurrentRandomStream current(&stream);
    RandomStream::Lease lease = lease_random_stream();
    EXPECT_TRUE(torch::equal(torch::rand({4}), expected.slice(0, 4, 8)));  // continues where it stopped
  }
  // A damaged state is refused when set, not at the next lease.
  const CurrentRandomStream current(&stream);
  EXPECT_THROW(set_current_random_state(torch::zeros({3}, torch::kUInt8)), c10::Error);
}

}  // namespace
}  // namespace descentlab::train
