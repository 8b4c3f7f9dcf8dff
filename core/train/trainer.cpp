#include "core/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/config/json_reader.h"
#include "core/dist/process_group.h"
#include "core/eval/weight_histograms.h"
#include "core/record/metrics.h"
#include "core/store/checkpoint_bytes.h"
#include "core/store/run_file.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/random_stream.h"
#include "core/train/training_state.h"
#include "core/util/number_text.h"

namespace descentlab::train {
namespace metric = record::metric;

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) throw Error("device \"cuda\" was asked for, but LibTorch sees no CUDA device");
    return torch::kCUDA;
  }
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  throw Error("unknown device \"" + name + "\" (known: auto, cpu, cuda)");
}

torch::Device resolve_device(config::Device device) {
  return resolve_device(config::word(device));
}

// The samples and wall time of the metric interval in progress (throughput).
struct Trainer::Interval {
  double started = record::wall_clock_seconds();
  double held_at_start = 0.0;  // the control's paused seconds when the interval began
  int64_t samples = 0;
};

Trainer::Trainer(config::ExperimentConfig config, torch::Device device, int64_t samples)
    : config_(std::move(config)),
      device_(device),
      order_(config_.train.seed, samples),
      histogram_edges_(eval::log_spaced_edges()) {
  // The schedule over this run's steps: a warm-up in steps can only be checked against the run's length here.
  const auto& t = config_.train;
  try {
    lr_schedule_ = LrSchedule{t.lr_schedule, t.lr, warmup_steps_from(t.warmup, total_steps()), total_steps()};
    lr_schedule_.validate();
  } catch (const std::invalid_argument& error) {
    throw config::ConfigError(config_.name, "train.warmup", error.what());
  }
}

Trainer::~Trainer() = default;

int64_t Trainer::total_steps() const {
  return config_.train.epochs * order_.batches_per_epoch(config_.train.batch_size);
}

void Trainer::emit_histograms() {
  histograms(eval::weight_histograms(module(), step_, histogram_edges_));
}

namespace {

// Rank r's own stream of random numbers (dropout, the video task's noise) in a data-parallel run: rank 0 keeps the
// run's stream, so one process draws what it always drew; rank r > 0 starts from train.seed + r * 0x9E3779B97F4A7C15
// (modulo 2^64) once the model is built (docs/scale-out.md).
uint64_t rank_seed(uint64_t seed, int rank) {
  return seed + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ULL;
}

// A data-parallel checkpoint keeps, beside rank 0's state, each other rank's own part: its random stream and its
// partial interval sums, in the section "rank<r>" ("rng.cpu", "progress.<sum>").
std::string rank_section(int rank) {
  return "rank" + std::to_string(rank);
}

}  // namespace

void Trainer::set_data_parallel(dist::Group* group) {
  group_ = group && group->size() > 1 ? group : nullptr;
  if (!group_) return;
  const int64_t ranks = group_->size();
  const int64_t batch = config_.train.batch_size;
  const int64_t last = order_.dataset_size() % batch;
  // Every rank trains on a part of every batch (an empty part would leave it nothing to step on).
  if (batch < ranks || (last != 0 && last < ranks)) {
    throw config::ConfigError(config_.name, "train.batch_size",
                              "is the global batch, split over the " + std::to_string(ranks) + " processes; " +
                                  std::to_string(batch) + " over " + std::to_string(order_.dataset_size()) +
                                  " training samples leaves " +
                                  (batch < ranks ? "a batch" : "a last batch of " + std::to_string(last)) +
                                  " smaller than the number of processes: choose a batch size of at least " +
                                  std::to_string(ranks) + " whose last batch is too");
  }
  if (group_->rank() > 0) {
    set_current_random_state(at::detail::createCPUGenerator(rank_seed(config_.train.seed, group_->rank())).get_state());
  }
}

// After the shared state: a data-parallel rank r > 0 takes its own random stream and partial interval sums from the
// checkpoint's "rank<r>" (or starts its own stream and empty sums when the run was saved with fewer processes);
// rank 0 (and a single process) adds the partial sums of ranks this launch no longer has to its own, so a run
// resumed with fewer processes loses no sample of the interval in progress.
void Trainer::restore_rank_parts(const record::CheckpointData& checkpoint, const std::string& path,
                                 const std::string& label) {
  const int rank = group_ ? group_->rank() : 0;
  const int ranks = group_ ? group_->size() : 1;
  torch::NoGradGuard no_grad;
  const auto sum_of = [&](const std::map<std::string, record::TensorBlob>& part, const std::string& name,
                          const torch::Tensor& like, const std::string& section) {
    const auto found = part.find("progress." + name);
    if (found == part.end()) return torch::zeros_like(like);
    torch::Tensor value = train::to_tensor(found->second);
    if (value.sizes() != like.sizes()) {
      throw store::RunFileError(store::RunFileError::Kind::ShapeMismatch, path,
                                "/checkpoints/" + label + "/" + section + "/progress." + name,
                                "does not match this run's interval sums");
    }
    return value.to(like.device(), like.scalar_type());
  };
  if (rank > 0) {
    const auto own = checkpoint.sections.find(rank_section(rank));
    if (own != checkpoint.sections.end() && own->second.count("rng.cpu")) {
      set_current_random_state(train::to_tensor(own->second.at("rng.cpu")));
    } else {
      set_current_random_state(
          at::detail::createCPUGenerator(rank_seed(config_.train.seed, rank) + static_cast<uint64_t>(checkpoint.step))
              .get_state());
    }
    for (auto& [name, sum] : interval_sums()) {
      sum.copy_(own != checkpoint.sections.end() ? sum_of(own->second, name, sum, own->first) : torch::zeros_like(sum));
    }
    return;
  }
  for (const auto& [section, part] : checkpoint.sections) {
    if (section.rfind("rank", 0) != 0 || section.size() == 4) continue;
    int saved_rank = 0;
    try {
      saved_rank = std::stoi(section.substr(4));
    } catch (const std::exception&) {
      continue;
    }
    if (saved_rank < ranks) continue;
    for (auto& [name, sum] : interval_sums()) sum.add_(sum_of(part, name, sum, section));
  }
}

torch::Tensor Trainer::weighted(const torch::Tensor& value) const {
  return group_ ? value * shard_weight_ : value;
}

std::vector<torch::Tensor> Trainer::synchronize_gradients(std::vector<torch::Tensor> sums) {
  if (!group_) return sums;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> message;
  for (auto& parameter : module().parameters()) {
    if (!parameter.grad().defined()) continue;
    parameter.mutable_grad().mul_(shard_weight_);
    message.push_back(parameter.grad());
  }
  for (auto& sum : sums) message.push_back(sum);
  group_->all_reduce(message, dist::ReduceOp::sum, "the gradients of step " + std::to_string(step_ + 1));
  return sums;
}

void Trainer::sum_over_ranks(std::vector<torch::Tensor> tensors, const std::string& what) {
  if (!group_) return;
  group_->all_reduce(tensors, dist::ReduceOp::sum, what + " at step " + std::to_string(step_));
}

std::pair<int64_t, int64_t> Trainer::evaluation_range(int64_t total) const {
  if (!group_) return {0, total};
  return dist::part_of(total, group_->rank(), group_->size());
}

// The part of a global batch this rank trains on: contiguous, as even as can be (sizes differ by at most one).
std::vector<int64_t> Trainer::shard_of(const std::vector<int64_t>& batch) {
  const auto n = static_cast<int64_t>(batch.size());
  const auto [begin, end] = dist::part_of(n, group_->rank(), group_->size());
  shard_weight_ = static_cast<double>(end - begin) / static_cast<double>(n);
  return std::vector<int64_t>(batch.begin() + begin, batch.begin() + end);
}

// Whether to train the next batch. In one process: the control's answer. In a data-parallel run every rank must stop
// at the same step, whatever stopped one of them (Ctrl-C reaches each at a different moment): the ranks' answers are
// combined (any stop stops all) in one small all-reduce per step.
bool Trainer::agree_to_proceed() {
  const bool proceed = !control_ || control_->proceed();
  if (!group_) return proceed;
  std::vector<torch::Tensor> stop{torch::full({1}, proceed ? 0 : 1, torch::kInt32)};
  group_->all_reduce(stop, dist::ReduceOp::max, "agreeing on step " + std::to_string(step_ + 1));
  return stop.front().item<int32_t>() == 0;
}

// Every replica must hold the same weights (the same gradients, the same steps): a checksum of all parameters,
// compared across ranks, at the start and at each epoch end; a difference stops the run naming the step.
void Trainer::check_replicas(const std::string& when) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  torch::Tensor checksum = torch::zeros({1}, torch::kFloat64);
  double position = 1.0;
  for (const auto& parameter : module().parameters()) {
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

void Trainer::require_finite(double value, const std::string& what, const std::string& hint) {
  if (std::isfinite(value)) return;
  sinks_.flush();
  const std::string last_good =
      latest_step_ >= 0 ? "the last good state is the checkpoint \"latest\" (step " + std::to_string(latest_step_) + ")"
                        : "no checkpoint was saved before it (the first comes at the end of epoch 1): start again";
  throw TrainingError("the " + what + " became " + number_text(value) + " at step " + std::to_string(step_) + " " +
                      hint + "; " + last_good);
}

// Every parameter group (they share train.lr) takes the rate of the step about to run, so AdamW's step, its
// decoupled weight decay and HORST's mirror factor all use the scheduled η. A constant schedule sets train.lr itself.
void Trainer::apply_scheduled_learning_rate() {
  const double rate = lr_schedule_.at(step_);
  for (auto& group : optimizer().param_groups()) group.options().set_lr(rate);
}

void Trainer::checkpoint(const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  // Every rank's own part (random stream, partial interval sums), so that each resumes its own: a collective.
  std::vector<std::string> rank_parts;
  if (group_) {
    record::CheckpointData mine;
    auto& part = mine.sections["rank"];
    part["rng.cpu"] = train::to_blob(current_random_state());
    for (const auto& [name, sum] : interval_sums()) part["progress." + name] = train::to_blob(sum);
    const std::vector<uint8_t> bytes = store::checkpoint_to_bytes(mine);
    rank_parts = group_->all_gather_text(std::string(bytes.begin(), bytes.end()),
                                         "gathering the ranks' own state at step " + std::to_string(step_));
  }
  if (!checkpoints_) return;
  record::CheckpointData data = capture_training_state(module(), optimizer(), order_, step_, order_.epoch());
  for (size_t rank = 1; rank < rank_parts.size(); ++rank) {
    const std::string& text = rank_parts[rank];
    record::CheckpointData theirs = store::checkpoint_from_bytes(std::vector<uint8_t>(text.begin(), text.end()),
                                                                 "rank " + std::to_string(rank) + "'s state");
    data.sections[rank_section(static_cast<int>(rank))] = std::move(theirs.sections["rank"]);
  }
  data.sections["progress"]["accumulated"] = train::to_blob(torch::scalar_tensor(accumulated_, torch::kInt64));
  save_state(data);
  nlohmann::json extra = {{"experiment", config_.name},
                          {"optimizer", optimizer_name()},
                          {"lr", config_.train.lr},
                          {"weight_decay", config_.train.weight_decay},
                          {"best_metric", has_best_ ? nlohmann::json(best_metric_) : nlohmann::json()}};
  describe_checkpoint(extra);
  if (group_) extra["data_parallel"] = {{"world_size", group_->size()}, {"backend", dist::word(group_->backend())}};
  data.extra_json = extra.dump();
  checkpoints_->save_checkpoints(labels, std::move(data));
  if (std::find(labels.begin(), labels.end(), "latest") != labels.end()) latest_step_ = step_;
}

void Trainer::resume_from(const record::CheckpointData& checkpoint, const std::string& path, const std::string& label) {
  restore_training_state(checkpoint, module(), optimizer(), order_, path, label);
  restore_state(checkpoint, path, label);
  restore_rank_parts(checkpoint, path, label);
  accumulated_ = 0;
  const auto progress = checkpoint.sections.find("progress");
  if (progress != checkpoint.sections.end() && progress->second.count("accumulated")) {
    const torch::Tensor accumulated = train::to_tensor(progress->second.at("accumulated"));
    if (accumulated.numel() != 1 || accumulated.scalar_type() != torch::kInt64) {
      throw store::RunFileError(store::RunFileError::Kind::ShapeMismatch, path,
                                "/checkpoints/" + label + "/progress/accumulated", "must be one int64 value");
    }
    accumulated_ = accumulated.item<int64_t>();
    // The steps summed since the last metric row: never more than one metric interval.
    if (accumulated_ < 0 || accumulated_ > config_.train.metric_interval) {
      throw store::RunFileError(store::RunFileError::Kind::Corrupt, path,
                                "/checkpoints/" + label + "/progress/accumulated",
                                "is " + std::to_string(accumulated_) + ", outside 0.." +
                                    std::to_string(config_.train.metric_interval) + " (the metric interval)");
    }
  }
  // The step must be where the restored data order stands: a checkpoint whose step was damaged would resume at a
  // wrong step and truncate (or skip) every metric row after it. Refused, naming the object and both numbers.
  const int64_t batch = config_.train.batch_size;
  const int64_t expected = order_.epoch() * order_.batches_per_epoch(batch) + (order_.position() + batch - 1) / batch;
  if (checkpoint.step != expected || checkpoint.step < 0 || checkpoint.step > total_steps()) {
    throw store::RunFileError(store::RunFileError::Kind::Corrupt, path, "/checkpoints/" + label + "/step",
                              "is " + std::to_string(checkpoint.step) + ", but its data order stands at epoch " +
                                  std::to_string(order_.epoch()) + ", sample " + std::to_string(order_.position()) +
                                  ", which is step " + std::to_string(expected) + " of " +
                                  std::to_string(total_steps()));
  }
  step_ = checkpoint.step;
  latest_step_ = label == "latest" ? step_ : -1;
  has_best_ = false;
  const auto extra = nlohmann::json::parse(checkpoint.extra_json, nullptr, false);
  if (extra.is_object() && extra.contains("best_metric") && extra["best_metric"].is_number()) {
    best_metric_ = extra["best_metric"].get<double>();
    has_best_ = std::isfinite(best_metric_);
  }
}

TrainingResult Trainer::run() {
  module().train();
  const int64_t batches_per_epoch = order_.batches_per_epoch(config_.train.batch_size);
  const auto started = std::chrono::steady_clock::now();
  const double held_before = held_seconds();
  const int64_t first_step = step_;
  TrainingResult result;
  result.metric = metric_name();
  Interval interval;
  interval.held_at_start = held_before;

  check_replicas("before step " + std::to_string(step_ + 1));
  if (step_ == 0) histograms_now();
  // A checkpoint taken at the end of an epoch resumes at the start of the next one.
  int64_t epoch = order_.position() >= order_.dataset_size() ? order_.epoch() + 1 : order_.epoch();
  for (; epoch < config_.train.epochs; ++epoch) {
    if (!train_epoch(epoch, batches_per_epoch, interval)) {
      result.stopped = true;
      break;
    }
    finish_epoch(epoch, result);
  }
  if (result.stopped) {
    checkpoint({"latest"});  // a cancelled run loses nothing: resume continues mid-epoch
    sinks_.flush();
  }
  result.steps = step_;
  // Running time only: the time a pause held the run is not training time.
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() -
                   (held_seconds() - held_before);
  result.steps_per_second = result.seconds > 0 ? static_cast<double>(step_ - first_step) / result.seconds : 0.0;
  result.extra = summary();
  return result;
}

// The batches of one epoch from where the data order stands; false when the control stopped the run.
bool Trainer::train_epoch(int64_t epoch, int64_t batches_per_epoch, Interval& interval) {
  const auto& t = config_.train;
  const int64_t first_batch = order_.epoch() == epoch ? (order_.position() + t.batch_size - 1) / t.batch_size : 0;
  for (int64_t b = first_batch; b < batches_per_epoch; ++b) {
    if (!agree_to_proceed()) return false;
    before_batch(epoch);
    const std::vector<int64_t> batch = order_.next_batch(t.batch_size);
    apply_scheduled_learning_rate();
    train_step(group_ ? shard_of(batch) : batch, epoch);
    ++step_;
    ++accumulated_;
    interval.samples += static_cast<int64_t>(batch.size());
    if (step_ % t.metric_interval == 0 || b + 1 == batches_per_epoch) {
      if (group_) {  // the interval's sums over every rank's part of the batches
        std::vector<torch::Tensor> sums;
        for (auto& named : interval_sums()) sums.push_back(named.second);
        sum_over_ranks(sums, "the interval's training sums");
      }
      report_interval(accumulated_, epoch);  // reads the device: the interval's time includes its queued work
      const double elapsed =
          record::wall_clock_seconds() - interval.started - (held_seconds() - interval.held_at_start);
      scalar(metric::kLearningRate, lr_schedule_.at(step_ - 1));  // the rate of the step just taken
      scalar(metric::kEpoch,
             static_cast<double>(epoch) + static_cast<double>(b + 1) / static_cast<double>(batches_per_epoch));
      scalar(metric::kThroughput, elapsed > 0 ? static_cast<double>(interval.samples) / elapsed : 0.0);
      accumulated_ = 0;
      interval = Interval{};
      interval.held_at_start = held_seconds();
    }
    if (t.histogram_interval > 0 && step_ % t.histogram_interval == 0) histograms_now();
    const int64_t periodic = periodic_interval();
    if (periodic > 0 && step_ % periodic == 0) periodic_evaluation();
  }
  return true;
}

// Evaluation, histograms, the best model and the epoch's checkpoints.
void Trainer::finish_epoch(int64_t epoch, TrainingResult& result) {
  end_epoch(epoch);
  const EpochTest test = evaluate_epoch();
  scalar(metric::kTestLoss, test.loss);
  scalar(record::test_series(metric_name()), test.metric);
  // A non-finite evaluation stops the run as a non-finite loss does (a GPT at lr 10 without clipping finished
  // with a test perplexity of inf as if all were well). Recorded first, so the file shows the value; this epoch
  // saves no checkpoint.
  const std::string hint = "(try a smaller lr, or a grad_clip)";
  require_finite(test.loss, "test loss", hint);
  require_finite(test.metric, "test " + metric_name(), hint);
  // Histograms at every epoch end too, unless this step just had them.
  const int64_t every = config_.train.histogram_interval;
  if (every == 0 || step_ % every != 0) histograms_now();
  // The periodic evaluation at the run's last step too (before the checkpoint, so the final "latest" holds the
  // weights it saw). Not at every epoch end: on a short run those would cost more than the interval's.
  const int64_t periodic = periodic_interval();
  if (periodic > 0 && step_ % periodic != 0 && epoch + 1 == config_.train.epochs) periodic_evaluation();
  result.evaluated = true;
  result.test_metric = test.metric;
  result.test_loss = test.loss;
  result.epochs_completed = epoch + 1;
  const bool better = higher_is_better() ? test.metric > best_metric_ : test.metric < best_metric_;
  std::vector<std::string> labels{"latest"};
  if (best_is_comparable() && (!has_best_ || better)) {
    best_metric_ = test.metric;
    has_best_ = true;
    labels.insert(labels.begin(), "best");
  }
  check_replicas("after epoch " + std::to_string(epoch + 1));
  checkpoint(labels);
  sinks_.flush();
}

// Histograms are only recorded: in a data-parallel run only rank 0 (which records) computes them.
void Trainer::histograms_now() {
  if (!group_ || group_->rank() == 0) emit_histograms();
}

}  // namespace descentlab::train
