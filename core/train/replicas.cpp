#include "core/train/replicas.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "core/config/json_reader.h"
#include "core/dist/process_group.h"
#include "core/store/checkpoint_bytes.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/random_stream.h"
#include "core/util/number_text.h"

namespace descentlab::train {
namespace {

// Rank r's own stream of random numbers (dropout, the video task's noise): rank 0 keeps the run's stream, so one
// process draws what it always drew; rank r > 0 starts from train.seed + r * 0x9E3779B97F4A7C15 (modulo 2^64) once
// the model is built (docs/scale-out.md).
uint64_t rank_seed(uint64_t seed, int rank) {
  return seed + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ULL;
}

std::string rank_section(int rank) {
  return "rank" + std::to_string(rank);
}

}  // namespace

void Replicas::join(dist::Group* group, const std::string& experiment, int64_t batch_size, int64_t dataset_size,
                    uint64_t seed) {
  group_ = group && group->size() > 1 ? group : nullptr;
  shard_weight_ = 1.0;
  if (!group_) return;
  const int64_t ranks = group_->size();
  const int64_t last = dataset_size % batch_size;
  // Every rank trains on a part of every batch (an empty part would leave it nothing to step on).
  if (batch_size < ranks || (last != 0 && last < ranks)) {
    throw config::ConfigError(experiment, "train.batch_size",
                              "is the global batch, split over the " + std::to_string(ranks) + " processes; " +
                                  std::to_string(batch_size) + " over " + std::to_string(dataset_size) +
                                  " training samples leaves " +
                                  (batch_size < ranks ? "a batch" : "a last batch of " + std::to_string(last)) +
                                  " smaller than the number of processes: choose a batch size of at least " +
                                  std::to_string(ranks) + " whose last batch is too");
  }
  if (group_->rank() > 0) {
    set_current_random_state(at::detail::createCPUGenerator(rank_seed(seed, group_->rank())).get_state());
  }
}

int Replicas::rank() const {
  return group_ ? group_->rank() : 0;
}

std::vector<int64_t> Replicas::shard_of(const std::vector<int64_t>& batch) {
  if (!group_) return batch;
  const auto n = static_cast<int64_t>(batch.size());
  const auto [begin, end] = dist::part_of(n, group_->rank(), group_->size());
  shard_weight_ = static_cast<double>(end - begin) / static_cast<double>(n);
  return std::vector<int64_t>(batch.begin() + begin, batch.begin() + end);
}

torch::Tensor Replicas::weighted(const torch::Tensor& value) const {
  return group_ ? value * shard_weight_ : value;
}

std::vector<torch::Tensor> Replicas::synchronize_gradients(torch::nn::Module& module, std::vector<torch::Tensor> sums,
                                                           int64_t step) {
  if (!group_) return sums;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> message;
  for (auto& parameter : module.parameters()) {
    if (!parameter.grad().defined()) continue;
    parameter.mutable_grad().mul_(shard_weight_);
    message.push_back(parameter.grad());
  }
  for (auto& sum : sums) message.push_back(sum);
  group_->all_reduce(message, dist::ReduceOp::sum, "the gradients of step " + std::to_string(step));
  return sums;
}

void Replicas::sum_over_ranks(std::vector<torch::Tensor> tensors, const std::string& what, int64_t step) {
  if (!group_) return;
  group_->all_reduce(tensors, dist::ReduceOp::sum, what + " at step " + std::to_string(step));
}

std::pair<int64_t, int64_t> Replicas::evaluation_range(int64_t total) const {
  if (!group_) return {0, total};
  return dist::part_of(total, group_->rank(), group_->size());
}

bool Replicas::agree_to_proceed(bool proceed, int64_t next_step) {
  if (!group_) return proceed;
  std::vector<torch::Tensor> stop{torch::full({1}, proceed ? 0 : 1, torch::kInt32)};
  group_->all_reduce(stop, dist::ReduceOp::max, "agreeing on step " + std::to_string(next_step));
  return stop.front().item<int32_t>() == 0;
}

// A checksum of all parameters, compared across ranks: a difference stops the run naming where.
void Replicas::check(torch::nn::Module& module, const std::string& when) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  torch::Tensor checksum = torch::zeros({1}, torch::kFloat64);
  double position = 1.0;
  for (const auto& parameter : module.parameters()) {
    checksum += parameter.detach().to(torch::kCPU, torch::kFloat64).sum() * position;
    position += 1.0;
  }
  // One all-reduce: the largest checksum and the largest negated one (the smallest).
  std::vector<torch::Tensor> extremes{torch::cat({checksum, -checksum})};
  group_->all_reduce(extremes, dist::ReduceOp::max, "comparing the replicas " + when);
  const double high = extremes.front()[0].item<double>(), low = -extremes.front()[1].item<double>();
  if (low != high) {
    throw dist::DistributedError("rank " + std::to_string(group_->rank()) + ": the replicas' weights differ " + when +
                                 " (checksums " + number_text(low) + " to " + number_text(high) +
                                 "): the processes do not run the same build, config or data");
  }
}

void Replicas::gather_own_parts(const NamedSums& sums, int64_t step, record::CheckpointData* checkpoint) {
  if (!group_) return;
  record::CheckpointData mine;
  auto& part = mine.sections["rank"];
  part["rng.cpu"] = to_blob(current_random_state());
  for (const auto& [name, sum] : sums) part["progress." + name] = to_blob(sum);
  const std::vector<uint8_t> bytes = store::checkpoint_to_bytes(mine);
  const std::vector<std::string> parts = group_->all_gather_text(
      std::string(bytes.begin(), bytes.end()), "gathering the ranks' own state at step " + std::to_string(step));
  if (!checkpoint) return;
  for (size_t rank = 1; rank < parts.size(); ++rank) {
    const std::string& text = parts[rank];
    record::CheckpointData theirs = store::checkpoint_from_bytes(std::vector<uint8_t>(text.begin(), text.end()),
                                                                 "rank " + std::to_string(rank) + "'s state");
    checkpoint->sections[rank_section(static_cast<int>(rank))] = std::move(theirs.sections["rank"]);
  }
}

void Replicas::restore_own_part(const CheckpointReader& checkpoint, const NamedSums& sums, uint64_t seed) {
  const int ranks = group_ ? group_->size() : 1;
  torch::NoGradGuard no_grad;
  const auto sum_of = [&](const std::string& section, const std::string& name, const torch::Tensor& like) {
    const record::TensorBlob* found = checkpoint.find(section, "progress." + name);
    if (!found) return torch::zeros_like(like);
    return checkpoint.shaped_like(*found, section, "progress." + name, like, CheckpointReader::Values::Finite)
        .to(like.device(), like.scalar_type());
  };
  const record::CheckpointData& data = checkpoint.checkpoint();
  if (rank() > 0) {
    const std::string own = rank_section(rank());
    if (const record::TensorBlob* stream = checkpoint.find(own, "rng.cpu")) {
      set_current_random_state(to_tensor(*stream));
    } else {
      set_current_random_state(
          at::detail::createCPUGenerator(rank_seed(seed, rank()) + static_cast<uint64_t>(data.step)).get_state());
    }
    for (const auto& [name, sum] : sums) sum.copy_(sum_of(own, name, sum));
    return;
  }
  for (const auto& entry : data.sections) {
    const std::string& section = entry.first;
    if (section.rfind("rank", 0) != 0 || section.size() == 4) continue;
    int saved_rank = 0;
    try {
      saved_rank = std::stoi(section.substr(4));
    } catch (const std::exception&) {
      continue;
    }
    if (saved_rank < ranks) continue;
    for (const auto& [name, sum] : sums) sum.add_(sum_of(section, name, sum));
  }
}

}  // namespace descentlab::train
