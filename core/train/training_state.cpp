#include "core/train/training_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstring>
#include <mutex>

#include "core/optim/state_key.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/random_stream.h"

namespace descentlab::train {
namespace {

using optim::state_key;

template <typename ParamState>
bool export_moments(const torch::optim::OptimizerParamState& state, const std::string& name,
                    std::map<std::string, record::TensorBlob>& out) {
  const auto* typed = dynamic_cast<const ParamState*>(&state);
  if (!typed) return false;
  out[name + ".exp_avg"] = train::to_blob(typed->exp_avg());
  out[name + ".exp_avg_sq"] = train::to_blob(typed->exp_avg_sq());
  out[name + ".step"] = train::to_blob(torch::tensor(static_cast<int64_t>(typed->step()), torch::kInt64));
  return true;
}

// Adam/AdamW first and second moments and step counts under the parameter names.
void export_readable_optimizer_state(const torch::nn::Module& model, const torch::optim::Optimizer& optimizer,
                                     std::map<std::string, record::TensorBlob>& out) {
  const auto& states = optimizer.state();
  for (const auto& item : model.named_parameters(true)) {
    const auto found = states.find(state_key(states, item.value()));
    if (found == states.end()) continue;
    if (!export_moments<torch::optim::AdamWParamState>(*found->second, item.key(), out)) {
      export_moments<torch::optim::AdamParamState>(*found->second, item.key(), out);
    }
  }
}

}  // namespace

record::CheckpointData capture_training_state(const torch::nn::Module& model, const torch::optim::Optimizer& optimizer,
                                              const data::DataOrder& order, int64_t step, int64_t epoch) {
  record::CheckpointData checkpoint;
  checkpoint.step = step;
  checkpoint.epoch = epoch;
  checkpoint.sections["model"] = train::module_state(model);

  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  record::TensorBlob optimizer_blob;
  optimizer_blob.dtype = "uint8";
  optimizer_blob.shape = {static_cast<int64_t>(bytes.size())};
  optimizer_blob.bytes.assign(bytes.begin(), bytes.end());
  checkpoint.sections["optimizer"]["torch_archive"] = std::move(optimizer_blob);
  export_readable_optimizer_state(model, optimizer, checkpoint.sections["optimizer"]);

  // The run's own stream of the CPU generator (random_stream.h), or the generator's state when it has none.
  const torch::Tensor rng_state = current_random_state();
  checkpoint.sections["rng"]["cpu"] = train::to_blob(rng_state);

  const torch::Tensor cursor =
      torch::tensor({static_cast<int64_t>(order.seed()), order.epoch(), order.position()}, torch::kInt64);
  checkpoint.sections["data"]["order"] = train::to_blob(cursor);
  return checkpoint;
}

void restore_training_state(const CheckpointReader& checkpoint, torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer, data::DataOrder& order) {
  const std::string needed = "missing: this checkpoint cannot resume training";
  const auto& optimizer_blob = checkpoint.require("optimizer", "torch_archive", needed);
  const auto& rng_blob = checkpoint.require("rng", "cpu", needed);
  const auto& order_blob = checkpoint.require("data", "order", needed);
  const auto& model_state = checkpoint.require_section("model", "missing");
  const torch::Tensor cursor = train::to_tensor(order_blob);
  if (cursor.numel() != 3 || cursor.scalar_type() != torch::kInt64) {
    checkpoint.corrupt("data/order", "expected 3 int64 values: seed, epoch, position");
  }
  const auto values = cursor.accessor<int64_t, 1>();
  if (static_cast<uint64_t>(values[0]) != order.seed()) {
    checkpoint.corrupt("data/order", "its data-order seed " + std::to_string(static_cast<uint64_t>(values[0])) +
                                         " is not the run's seed " + std::to_string(order.seed()) + " (train.seed)");
  }
  // The generator's state has one fixed size; a shorter or longer blob is damage, refused before anything changes
  // (LibTorch's own refusal would arrive as a stack trace, after the model was already overwritten).
  const torch::Tensor current_rng = current_random_state();
  if (rng_blob.dtype != "uint8" || rng_blob.numel() != current_rng.numel()) {
    checkpoint.corrupt("rng/cpu", "holds " + std::to_string(rng_blob.numel()) + " " + rng_blob.dtype +
                                      " values; the random generator's state is " +
                                      std::to_string(current_rng.numel()) + " uint8 values");
  }
  // Checks model shapes first; nothing is changed if they do not fit.
  train::load_module_state(model, model_state, checkpoint.path(), checkpoint.object("model"));

  torch::serialize::InputArchive archive;
  try {
    archive.load_from(reinterpret_cast<const char*>(optimizer_blob.bytes.data()), optimizer_blob.bytes.size());
    optimizer.load(archive);
  } catch (const c10::Error& error) {
    checkpoint.corrupt("optimizer/torch_archive",
                       std::string("the optimizer state does not load: ") + error.what_without_backtrace());
  } catch (const std::exception& error) {
    checkpoint.corrupt("optimizer/torch_archive", std::string("the optimizer state does not load: ") + error.what());
  }
  try {
    set_current_random_state(train::to_tensor(rng_blob));
  } catch (const c10::Error& error) {
    checkpoint.corrupt("rng/cpu",
                       std::string("the random generator's state does not load: ") + error.what_without_backtrace());
  }
  order.restore(static_cast<uint64_t>(values[0]), values[1], values[2]);
}

}  // namespace descentlab::train
