#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::train {
namespace {

using descentlab::testing::sample_header;
using descentlab::testing::ScratchFolder;
using store::RunFileError;
using store::RunReader;
using store::RunWriter;
using store::RunWriterOptions;

struct TinyNetImpl : torch::nn::Module {
  TinyNetImpl(int64_t hidden) {
    first = register_module("first", torch::nn::Linear(4, hidden));
    norm = register_module("norm", torch::nn::BatchNorm1d(hidden));
    last = register_module("last", torch::nn::Linear(hidden, 2));
  }
  torch::nn::Linear first{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
  torch::nn::Linear last{nullptr};
};
TORCH_MODULE(TinyNet);

TEST(CheckpointTensors, EveryStorableDtypeRoundTrips) {
  for (const auto type : {torch::kFloat32, torch::kFloat64, torch::kFloat16, torch::kBFloat16, torch::kInt64,
                          torch::kInt32, torch::kInt16, torch::kInt8, torch::kUInt8, torch::kBool}) {
    const torch::Tensor original = (torch::arange(12) - 5).reshape({3, 4}).to(type);
    const torch::Tensor back = to_tensor(to_blob(original));
    EXPECT_EQ(back.scalar_type(), type);
    EXPECT_TRUE(torch::equal(back, original)) << c10::toString(type);
  }
  const torch::Tensor scalar = torch::tensor(7.5);
  EXPECT_EQ(to_blob(scalar).shape.size(), 0u);
  EXPECT_EQ(to_tensor(to_blob(scalar)).item<float>(), 7.5f);
  const torch::Tensor strided = torch::arange(6, torch::kFloat32).reshape({2, 3}).t();  // not contiguous
  EXPECT_TRUE(torch::equal(to_tensor(to_blob(strided)), strided));
}

TEST(CheckpointTensors, ModuleStateRoundTripsThroughTheRunFileUnderTorchNames) {
  torch::manual_seed(1);
  TinyNet saved(8);
  saved->norm->running_mean.fill_(0.25);  // buffers are part of the state
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  {
    RunWriterOptions options;
    options.flush_interval_seconds = 0;
    auto writer = RunWriter::create(path, sample_header(), options);
    record::CheckpointData checkpoint;
    checkpoint.sections["model"] = module_state(*saved);
    writer->save_checkpoint("latest", checkpoint);
  }
  const auto stored = RunReader(path).checkpoint("latest").sections.at("model");
  for (const char* name :
       {"first.weight", "first.bias", "norm.running_mean", "norm.num_batches_tracked", "last.weight"}) {
    EXPECT_TRUE(stored.count(name)) << name;
  }
  torch::manual_seed(2);
  TinyNet loaded(8);
  load_module_state(*loaded, stored, path, "/checkpoints/latest/model");
  for (const auto& item : saved->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), loaded->named_parameters()[item.key()])) << item.key();
  }
  EXPECT_TRUE(torch::equal(loaded->norm->running_mean, saved->norm->running_mean));
}

TEST(CheckpointTensors, ShapeMismatchNamesFileAndObjectAndLeavesTheModelAlone) {
  TinyNet saved(8);
  const auto state = module_state(*saved);
  TinyNet other(5);
  const torch::Tensor before = other->last->weight.clone();
  try {
    load_module_state(*other, state, "run.h5", "/checkpoints/latest/model");
    FAIL() << "expected RunFileError";
  } catch (const RunFileError& error) {
    EXPECT_EQ(error.kind(), RunFileError::Kind::ShapeMismatch);
    const std::string message = error.what();
    EXPECT_NE(message.find("run.h5"), std::string::npos) << message;
    EXPECT_NE(message.find("/checkpoints/latest/model/first.bias"), std::string::npos) << message;
    EXPECT_NE(message.find("shape [8] in the checkpoint, [5] in the model"), std::string::npos) << message;
  }
  EXPECT_TRUE(torch::equal(other->last->weight, before));

  auto missing = state;
  missing.erase("last.bias");
  EXPECT_THROW(load_module_state(*saved, missing, "run.h5", "/m"), RunFileError);
  auto extra = state;
  extra["head.weight"] = to_blob(torch::zeros({2}));
  EXPECT_THROW(load_module_state(*saved, extra, "run.h5", "/m"), RunFileError);
}

}  // namespace
}  // namespace descentlab::train
