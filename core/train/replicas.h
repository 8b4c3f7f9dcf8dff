#pragma once
// Data-parallel training's replicas (core/dist, docs/scale-out.md), apart from the loop: this process is one of
// group->size() replicas. Each global batch (one global data order) is split by rank; gradients, interval sums and
// evaluations are summed over ranks, so every replica takes the same step and reports the same numbers. Every rank
// runs every collective in the same order. In one process (no group) each call is a no-op or the identity.

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/record/checkpoint.h"
#include "core/train/checkpoint_reader.h"

namespace torch::nn {
class Module;
}
namespace descentlab::dist {
class Group;
}

namespace descentlab::train {

// An engine's interval sums by name (its meters: Trainer::add_meter, core/train/meters.h).
using NamedSums = std::vector<std::pair<std::string, torch::Tensor>>;

class Replicas {
 public:
  // Joins `group` (nullptr or a group of one: a single process). Refuses (config::ConfigError on `experiment`'s
  // train.batch_size) a global batch that would leave a rank nothing to train on, and gives rank r > 0 its own
  // random stream, seeded from `seed`.
  void join(dist::Group* group, const std::string& experiment, int64_t batch_size, int64_t dataset_size, uint64_t seed);

  dist::Group* group() const { return group_; }
  int rank() const;

  // This rank's contiguous part of a global batch (sizes differ by at most one); sets shard_weight().
  std::vector<int64_t> shard_of(const std::vector<int64_t>& batch);
  // This rank's share of the global batch in the step in progress (1 in one process).
  double shard_weight() const { return shard_weight_; }
  torch::Tensor weighted(const torch::Tensor& value) const;
  // Every gradient of `module` weighted by shard_weight() and summed over ranks, with `sums` (already weighted) in
  // the same messages; returns `sums` summed. `step` names the step in errors.
  std::vector<torch::Tensor> synchronize_gradients(torch::nn::Module& module, std::vector<torch::Tensor> sums,
                                                   int64_t step);
  // Sums `tensors` over ranks in place; `what` and `step` name them in errors.
  void sum_over_ranks(std::vector<torch::Tensor> tensors, const std::string& what, int64_t step);
  // The test samples [first, end) of `total` this rank evaluates.
  std::pair<int64_t, int64_t> evaluation_range(int64_t total) const;
  // Whether every rank goes on: any rank's stop stops all, at the same step (one small all-reduce).
  bool agree_to_proceed(bool proceed, int64_t next_step);
  // Stops the run (dist::DistributedError) when the replicas' weights differ; `when` says where.
  void check(torch::nn::Module& module, const std::string& when);

  // ---- each rank's own part of a checkpoint: its random stream and its partial interval sums, kept beside rank 0's
  // state in the section "rank<r>" ("rng.cpu", "progress.<sum>"). A collective: every rank calls it.
  // Gathers every rank's part; rank 0 adds the other ranks' to `checkpoint` (nullptr on the other ranks).
  void gather_own_parts(const NamedSums& sums, int64_t step, record::CheckpointData* checkpoint);
  // After the shared state: rank r > 0 takes its own stream and partial sums (or starts its own stream, seeded from
  // `seed` and the step, and empty sums when the run was saved with fewer processes); rank 0 (and a single process)
  // adds the partial sums of ranks this launch no longer has to its own, so no sample of the interval is lost.
  void restore_own_part(const CheckpointReader& checkpoint, const NamedSums& sums, uint64_t seed);

 private:
  dist::Group* group_ = nullptr;
  double shard_weight_ = 1.0;
};

}  // namespace descentlab::train
