// Data-parallel pieces that need no second process (issue 19): reading a launcher's environment, and the checkpoint
// bytes rank 0 sends to the other ranks. The multi-process behaviour is checked through the CLI (cli.data_parallel).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/dist/process_group.h"
#include "core/store/checkpoint_bytes.h"

namespace descentlab {
namespace {

std::optional<dist::LaunchEnvironment> launch_from(const std::map<std::string, std::string>& variables) {
  return dist::launch_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(LaunchEnvironment, NoWorldSizeIsOneProcess) {
  EXPECT_FALSE(launch_from({}).has_value());
  EXPECT_FALSE(launch_from({{"RANK", "3"}}).has_value());
}

TEST(LaunchEnvironment, ReadsWhatTorchrunSets) {
  const auto launch = launch_from(
      {{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "29501"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->world_size, 4);
  EXPECT_EQ(launch->rank, 3);
  EXPECT_EQ(launch->local_rank, 1);
  EXPECT_EQ(launch->master_addr, "10.0.0.7");
  EXPECT_EQ(launch->master_port, 29501);
  // torchrun's single-node defaults: the loopback, LOCAL_RANK = RANK.
  const auto local = launch_from({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->master_addr, "127.0.0.1");
  EXPECT_EQ(local->local_rank, 1);
}

TEST(LaunchEnvironment, MpiLaunchersNamesStandIn) {
  const auto open_mpi = launch_from({{"OMPI_COMM_WORLD_SIZE", "3"},
                                     {"OMPI_COMM_WORLD_RANK", "2"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                     {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(open_mpi.has_value());
  EXPECT_EQ(open_mpi->world_size, 3);
  EXPECT_EQ(open_mpi->rank, 2);
  EXPECT_EQ(open_mpi->local_rank, 0);
  const auto pmi = launch_from({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}, {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(pmi.has_value());
  EXPECT_EQ(pmi->rank, 1);
  // PyTorch's own names win when both are there.
  const auto both =
      launch_from({{"WORLD_SIZE", "4"}, {"RANK", "0"}, {"PMI_SIZE", "2"}, {"PMI_RANK", "1"}, {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->world_size, 4);
  EXPECT_EQ(both->rank, 0);
}

TEST(LaunchEnvironment, NamesTheVariableAtFault) {
  const auto message = [](const std::map<std::string, std::string>& variables) {
    try {
      launch_from(variables);
    } catch (const dist::DistributedError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}}).find("RANK is not set"), std::string::npos);
  EXPECT_NE(message({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_PORT", "1"}}).find("RANK=\"2\" must be"),
            std::string::npos);
  EXPECT_NE(message({{"WORLD_SIZE", "two"}, {"RANK", "0"}}).find("WORLD_SIZE=\"two\""), std::string::npos);
  EXPECT_NE(message({{"WORLD_SIZE", "2"}, {"RANK", "0"}}).find("MASTER_PORT is not set"), std::string::npos);
  EXPECT_NE(message({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "70000"}}).find("MASTER_PORT=\"70000\""),
            std::string::npos);
}

TEST(LaunchEnvironment, BackendChoice) {
  EXPECT_EQ(dist::choose_backend("auto", false), dist::Backend::gloo);
  EXPECT_EQ(dist::choose_backend("gloo", true), dist::Backend::gloo);
  EXPECT_THROW(dist::choose_backend("nccl", true), dist::DistributedError);
  EXPECT_THROW(dist::choose_backend("mpi", false), dist::DistributedError);
}

record::CheckpointData sample_checkpoint() {
  record::CheckpointData checkpoint;
  checkpoint.step = 1234;
  checkpoint.epoch = 5;
  checkpoint.created = "2026-12-02T07:00:00Z";
  checkpoint.extra_json = R"({"optimizer":"horst"})";
  record::TensorBlob weights{"float32", {2, 3}, std::vector<uint8_t>(24, 7)};
  record::TensorBlob empty{"int64", {0}, {}};
  checkpoint.sections["model"]["blocks.0.weight"] = weights;
  checkpoint.sections["model"]["nothing"] = empty;
  checkpoint.sections["rank1"]["rng.cpu"] = record::TensorBlob{"uint8", {5}, {1, 2, 3, 4, 5}};
  return checkpoint;
}

TEST(CheckpointBytes, RoundTripKeepsEveryField) {
  const auto checkpoint = sample_checkpoint();
  const auto back = store::checkpoint_from_bytes(store::checkpoint_to_bytes(checkpoint), "test");
  EXPECT_EQ(back.step, 1234);
  EXPECT_EQ(back.epoch, 5);
  EXPECT_EQ(back.created, checkpoint.created);
  EXPECT_EQ(back.extra_json, checkpoint.extra_json);
  ASSERT_EQ(back.sections.size(), 2u);
  const auto& weights = back.sections.at("model").at("blocks.0.weight");
  EXPECT_EQ(weights.dtype, "float32");
  EXPECT_EQ(weights.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(weights.bytes, std::vector<uint8_t>(24, 7));
  EXPECT_EQ(back.sections.at("model").at("nothing").shape, std::vector<int64_t>{0});
  EXPECT_EQ(back.sections.at("rank1").at("rng.cpu").bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
}

TEST(CheckpointBytes, CutOrDamagedBytesAreNamed) {
  const auto bytes = store::checkpoint_to_bytes(sample_checkpoint());
  for (size_t keep : {size_t{0}, size_t{7}, size_t{30}, bytes.size() - 1}) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep));
    try {
      store::checkpoint_from_bytes(cut, "rank 0's checkpoint");
      ADD_FAILURE() << "accepted " << keep << " of " << bytes.size() << " bytes";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()).rfind("rank 0's checkpoint: ", 0), 0u) << error.what();
    }
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(store::checkpoint_from_bytes(longer, "x"), Error);
}

}  // namespace
}  // namespace descentlab
