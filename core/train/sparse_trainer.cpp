#include "core/train/sparse_trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "core/config/json_reader.h"
#include "core/eval/weight_histograms.h"
#include "core/optim/mirror_adamw.h"
#include "core/store/checkpoint_tensors.h"
#include "core/store/run_writer.h"
#include "core/train/data_order.h"
#include "core/train/device_step.h"
#include "core/train/training_state.h"
#include "core/util/number_text.h"

namespace descentlab::train {

std::unique_ptr<torch::optim::AdamW> make_optimizer(std::vector<torch::Tensor> parameters,
                                                    const config::ExperimentConfig& config) {
  const auto adamw = torch::optim::AdamWOptions(config.train.lr).weight_decay(config.train.weight_decay);
  if (config.optimizer.name == "adamw") return std::make_unique<torch::optim::AdamW>(std::move(parameters), adamw);
  optim::MirrorOptions mirror;
  mirror.alpha = config.optimizer.alpha;
  mirror.beta = config.optimizer.beta;
  mirror.exponent_clamp = config.optimizer.exponent_clamp;
  mirror.min_dim = config.optimizer.min_dim;
  if (config.optimizer.name == "horst") return std::make_unique<optim::Horst>(std::move(parameters), adamw, mirror);
  if (config.optimizer.name == "ham") return std::make_unique<optim::Ham>(std::move(parameters), adamw, mirror);
  throw config::ConfigError("optimizer", "name", "unknown optimizer \"" + config.optimizer.name + "\"");
}

struct SparseTrainer::State {
  std::unique_ptr<torch::optim::AdamW> optimizer;
  DataOrder order;
  std::vector<optim::PrunableTensor> prunable;
  std::unique_ptr<AcdcSchedule> schedule;
  AcdcPhase phase = AcdcPhase::dense;
  optim::MaskSet masks;                      // while compressed
  optim::MaskSet previous_masks;             // of the previous compression (for the churn)
  std::vector<torch::Tensor> last_snapshot;  // prunable weights at the previous compression (for sign flips)
  std::vector<double> histogram_edges = eval::log_spaced_edges();
  torch::Tensor loss_sum;  // on the device: no host sync per step
  int64_t accumulated = 0;

  State(std::vector<torch::Tensor> parameters, const config::ExperimentConfig& config, int64_t samples)
      : optimizer(make_optimizer(std::move(parameters), config)), order(config.train.seed, samples) {}
};

namespace {

double phase_code(AcdcPhase phase) {
  return phase == AcdcPhase::dense ? 0.0 : (phase == AcdcPhase::compressed ? 1.0 : 2.0);
}

AcdcPhase phase_from_code(int64_t code) {
  return code == 1 ? AcdcPhase::compressed : (code == 2 ? AcdcPhase::decompressed : AcdcPhase::dense);
}

void store_masks(store::CheckpointData& data, const std::string& section, const optim::MaskSet& masks,
                 const std::vector<optim::PrunableTensor>& prunable) {
  for (size_t i = 0; i < masks.keep.size(); ++i) {
    data.sections[section][prunable[i].name] = store::to_blob(masks.keep[i].to(torch::kUInt8));
  }
}

// Reads masks saved by store_masks; empty when the section is absent. Shapes are checked against the tensors.
optim::MaskSet load_masks(const store::CheckpointData& checkpoint, const std::string& section,
                          const std::vector<optim::PrunableTensor>& prunable, const std::string& path,
                          const std::string& label, torch::Device device) {
  optim::MaskSet masks;
  const auto found = checkpoint.sections.find(section);
  if (found == checkpoint.sections.end() || found->second.empty()) return masks;
  for (const auto& tensor : prunable) {
    const auto blob = found->second.find(tensor.name);
    const std::string object = "/checkpoints/" + label + "/" + section + "/" + tensor.name;
    if (blob == found->second.end()) {
      throw store::RunFileError(store::RunFileError::Kind::MissingObject, path, object, "the mask is missing");
    }
    torch::Tensor keep = store::to_tensor(blob->second).to(torch::kBool);
    if (keep.sizes() != tensor.parameter.sizes()) {
      throw store::RunFileError(store::RunFileError::Kind::ShapeMismatch, path, object,
                                "does not match the parameter's shape " + c10::str(tensor.parameter.sizes()));
    }
    masks.total += keep.numel();
    masks.pruned += keep.numel() - keep.sum().item<int64_t>();
    masks.keep.push_back(keep.to(device));
  }
  return masks;
}

}  // namespace

SparseTrainer::SparseTrainer(config::ExperimentConfig config, SparseTask& task, torch::Device device)
    : config_(std::move(config)), task_(task), device_(device) {
  if (task_.train_size() < 1) throw TrainingError("the training set is empty");
  state_ = std::make_unique<State>(task_.module()->parameters(), config_, task_.train_size());
  optim::PruneSelection selection;
  if (config_.sparsity.exclude_embeddings_and_readout)
    selection.excluded_prefixes = task_.embedding_and_readout_prefixes();
  state_->prunable = optim::select_prunable(*task_.module(), selection);
  if (config_.sparsity.method == "acdc") {
    if (state_->prunable.empty()) throw TrainingError("AC/DC: the model has no prunable weights under this selection");
    AcdcFractions fractions;
    fractions.warmup = config_.sparsity.warmup;
    fractions.phase = config_.sparsity.phase;
    fractions.alternate_until = config_.sparsity.alternate_until;
    fractions.decompressed_until = config_.sparsity.decompressed_until;
    const int64_t units = config_.sparsity.units == "epochs" ? config_.train.epochs : total_steps();
    state_->schedule = std::make_unique<AcdcSchedule>(units, fractions);
  }
  state_->loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
}

SparseTrainer::~SparseTrainer() = default;

int64_t SparseTrainer::total_steps() const {
  return config_.train.epochs * state_->order.batches_per_epoch(config_.train.batch_size);
}

torch::optim::AdamW& SparseTrainer::optimizer() {
  return *state_->optimizer;
}
const std::vector<optim::PrunableTensor>& SparseTrainer::prunable() const {
  return state_->prunable;
}
const AcdcSchedule* SparseTrainer::schedule() const {
  return state_->schedule.get();
}
AcdcPhase SparseTrainer::phase() const {
  return state_->phase;
}

void SparseTrainer::emit_scalar(const std::string& name, double value) {
  sinks_.scalar(name, step_, value);
}

void SparseTrainer::emit_vector(const std::string& name, const std::vector<double>& values) {
  sinks_.vector(name, step_, values);
}

void SparseTrainer::emit_histograms() {
  sinks_.histograms(eval::weight_histograms(*task_.module(), step_, state_->histogram_edges));
  emit_vector("near_zero_share", eval::near_zero_shares(*task_.module(), eval::default_near_zero_thresholds()));
}

void SparseTrainer::enter_phase(AcdcPhase phase) {
  State& s = *state_;
  if (phase == AcdcPhase::compressed) {
    s.masks =
        optim::magnitude_masks(s.prunable, config_.sparsity.target, optim::parse_mask_scope(config_.sparsity.scope));
    const std::vector<torch::Tensor> now = optim::snapshot(s.prunable);
    if (!s.previous_masks.empty())
      emit_scalar("mask_churn", static_cast<double>(optim::mask_hamming_distance(s.previous_masks, s.masks)));
    if (!s.last_snapshot.empty())
      emit_scalar("sign_flips", static_cast<double>(optim::count_sign_flips(s.last_snapshot, now)));
    optim::apply_masks(s.prunable, s.masks);
    s.last_snapshot = now;
  } else if (phase == AcdcPhase::decompressed && s.phase == AcdcPhase::compressed) {
    // Pruned weights come back as the zeros they are; the optimizer starts from fresh moments.
    s.previous_masks = std::move(s.masks);
    s.masks = optim::MaskSet{};
    s.optimizer->state().clear();
  }
  s.phase = phase;
}

void SparseTrainer::checkpoint(const std::vector<std::string>& labels) {
  if (!writer_ || labels.empty()) return;
  State& s = *state_;
  store::CheckpointData data = capture_training_state(*task_.module(), *s.optimizer, s.order, step_, s.order.epoch());
  data.sections["progress"]["loss_sum"] = store::to_blob(s.loss_sum);
  data.sections["progress"]["accumulated"] = store::to_blob(torch::tensor(s.accumulated, torch::kInt64));
  data.sections["acdc"]["phase"] =
      store::to_blob(torch::tensor(static_cast<int64_t>(phase_code(s.phase)), torch::kInt64));
  store_masks(data, "masks", s.masks, s.prunable);
  store_masks(data, "previous_masks", s.previous_masks, s.prunable);
  for (size_t i = 0; i < s.last_snapshot.size(); ++i) {
    data.sections["compression_snapshot"][s.prunable[i].name] = store::to_blob(s.last_snapshot[i]);
  }
  nlohmann::json extra = {{"experiment", config_.name},
                          {"optimizer", config_.optimizer.name},
                          {"lr", config_.train.lr},
                          {"weight_decay", config_.train.weight_decay},
                          {"best_metric", has_best_ ? nlohmann::json(best_metric_) : nlohmann::json()}};
  if (auto* mirrored = dynamic_cast<optim::MirroredAdamW*>(s.optimizer.get())) {
    extra["mirror"] = nlohmann::json::parse(mirrored->describe_json());
  }
  data.extra_json = extra.dump();
  for (size_t i = 0; i + 1 < labels.size(); ++i) writer_->save_checkpoint(labels[i], data, /*wait=*/false);
  writer_->save_checkpoint(labels.back(), std::move(data));
}

void SparseTrainer::resume_from(const store::CheckpointData& checkpoint, const std::string& path,
                                const std::string& label) {
  State& s = *state_;
  restore_training_state(checkpoint, *task_.module(), *s.optimizer, s.order, path, label);
  const auto section = [&](const char* name) -> const std::map<std::string, store::TensorBlob>* {
    const auto found = checkpoint.sections.find(name);
    return found == checkpoint.sections.end() ? nullptr : &found->second;
  };
  if (const auto* progress = section("progress")) {
    if (progress->count("loss_sum")) s.loss_sum.copy_(store::to_tensor(progress->at("loss_sum")).reshape({}));
    if (progress->count("accumulated")) s.accumulated = store::to_tensor(progress->at("accumulated")).item<int64_t>();
  }
  if (const auto* acdc = section("acdc")) {
    if (acdc->count("phase")) s.phase = phase_from_code(store::to_tensor(acdc->at("phase")).item<int64_t>());
  }
  s.masks = load_masks(checkpoint, "masks", s.prunable, path, label, device_);
  s.previous_masks = load_masks(checkpoint, "previous_masks", s.prunable, path, label, device_);
  if (s.phase == AcdcPhase::compressed && s.masks.empty()) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, path, "/checkpoints/" + label + "/masks",
                              "the run was compressed but its masks are missing");
  }
  s.last_snapshot.clear();
  if (const auto* snapshot = section("compression_snapshot")) {
    for (const auto& tensor : s.prunable) {
      if (snapshot->count(tensor.name))
        s.last_snapshot.push_back(store::to_tensor(snapshot->at(tensor.name)).to(device_));
    }
    if (s.last_snapshot.size() != s.prunable.size()) s.last_snapshot.clear();
  }
  step_ = checkpoint.step;
  const auto extra = nlohmann::json::parse(checkpoint.extra_json, nullptr, false);
  if (extra.is_object() && extra.contains("best_metric") && extra["best_metric"].is_number()) {
    best_metric_ = extra["best_metric"].get<double>();
    has_best_ = true;
  }
}

namespace {

SparseEvaluation evaluate_task(SparseTask& task, int64_t batch_size) {
  torch::NoGradGuard no_grad;
  auto& module = *task.module();
  const bool was_training = module.is_training();
  module.eval();
  const int64_t total = task.test_size();
  torch::Tensor metric_sum, loss_sum;
  int64_t terms = 0, samples = 0;
  for (int64_t start = 0; start < total; start += batch_size) {
    const int64_t count = std::min(batch_size, total - start);
    const Batch batch = task.test_batch(start, count);
    const torch::Tensor logits = task.forward(batch.input);
    auto [sum, n] = task.metric_terms(logits, batch);
    const torch::Tensor loss = task.loss(logits, batch).to(torch::kFloat64) * static_cast<double>(count);
    metric_sum = metric_sum.defined() ? metric_sum + sum : sum;
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    terms += n;
    samples += count;
  }
  if (was_training) module.train();
  SparseEvaluation evaluation;
  if (samples == 0) return evaluation;
  evaluation.loss = loss_sum.item<double>() / static_cast<double>(samples);
  evaluation.metric = task.finish_metric(metric_sum.item<double>() / static_cast<double>(terms));
  return evaluation;
}

}  // namespace

SparseEvaluation SparseTrainer::evaluate() {
  return evaluate_task(task_, std::max<int64_t>(config_.train.batch_size, 128));
}

SparseTrainingResult SparseTrainer::run() {
  State& s = *state_;
  const auto& t = config_.train;
  auto& module = *task_.module();
  module.train();
  const int64_t batches_per_epoch = s.order.batches_per_epoch(t.batch_size);
  const bool by_epochs = config_.sparsity.units == "epochs";
  const auto started = std::chrono::steady_clock::now();
  const int64_t first_step = step_;
  SparseTrainingResult result;
  double interval_start = wall_clock_seconds();
  int64_t interval_samples = 0;

  if (step_ == 0 && writer_) emit_histograms();

  int64_t epoch = s.order.position() >= s.order.dataset_size() ? s.order.epoch() + 1 : s.order.epoch();
  for (; epoch < t.epochs; ++epoch) {
    const int64_t first_batch = s.order.epoch() == epoch ? (s.order.position() + t.batch_size - 1) / t.batch_size : 0;
    for (int64_t b = first_batch; b < batches_per_epoch; ++b) {
      if (control_ && !control_->proceed()) {
        result.stopped = true;
        break;
      }
      if (s.schedule) {
        const AcdcPhase phase = s.schedule->phase_at(by_epochs ? epoch : step_);
        if (phase != s.phase) enter_phase(phase);
      }
      const std::vector<int64_t> indices = s.order.next_batch(t.batch_size);
      const Batch batch = task_.train_batch(indices);
      const torch::Tensor loss = task_.loss(task_.forward(batch.input), batch);
      s.optimizer->zero_grad();
      loss.backward();
      if (t.grad_clip > 0) clip_gradient_norm(module.parameters(), t.grad_clip);
      s.optimizer->step();
      if (s.phase == AcdcPhase::compressed) optim::apply_masks(s.prunable, s.masks);
      ++step_;
      {
        torch::NoGradGuard no_grad;
        s.loss_sum += loss.detach().to(torch::kFloat64);
      }
      ++s.accumulated;
      interval_samples += static_cast<int64_t>(indices.size());
      if (step_ % t.metric_interval == 0 || b + 1 == batches_per_epoch) {
        const double mean_loss = s.loss_sum.item<double>() / static_cast<double>(s.accumulated);
        if (!std::isfinite(mean_loss)) {
          sinks_.flush();
          throw TrainingError("the training loss became " + number_text(mean_loss) + " at step " +
                              std::to_string(step_) + " with " + config_.optimizer.name +
                              " (try a smaller lr or alpha); the last good state is the checkpoint \"latest\"");
        }
        const double elapsed = wall_clock_seconds() - interval_start;
        emit_scalar("loss", mean_loss);
        emit_scalar("lr", t.lr);
        emit_scalar("epoch",
                    static_cast<double>(epoch) + static_cast<double>(b + 1) / static_cast<double>(batches_per_epoch));
        emit_scalar("throughput", elapsed > 0 ? static_cast<double>(interval_samples) / elapsed : 0.0);
        if (!s.prunable.empty()) emit_scalar("sparsity", optim::count_zeros(s.prunable).share());
        if (s.schedule) emit_scalar("acdc_phase", phase_code(s.phase));
        s.loss_sum.zero_();
        s.accumulated = 0;
        interval_samples = 0;
        interval_start = wall_clock_seconds();
      }
      if (t.histogram_interval > 0 && step_ % t.histogram_interval == 0) emit_histograms();
    }
    if (result.stopped) break;

    const SparseEvaluation test = evaluate();
    emit_scalar("test_loss", test.loss);
    emit_scalar("test_" + task_.metric_name(), test.metric);
    // Histograms and near-zero shares at every epoch end too, unless this step just had them.
    if (t.histogram_interval == 0 || step_ % t.histogram_interval != 0) emit_histograms();
    result.test = test;
    result.epochs_completed = epoch + 1;
    const bool better = task_.higher_is_better() ? test.metric > best_metric_ : test.metric < best_metric_;
    std::vector<std::string> labels{"latest"};
    // "best" only among models at the run's final sparsity regime: during AC/DC a dense phase would always win.
    const bool comparable = !s.schedule || s.phase == AcdcPhase::compressed;
    if (comparable && (!has_best_ || better)) {
      best_metric_ = test.metric;
      has_best_ = true;
      labels.insert(labels.begin(), "best");
    }
    checkpoint(labels);
    sinks_.flush();
  }
  if (result.stopped) {
    checkpoint({"latest"});
    sinks_.flush();
  }
  result.steps = step_;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.steps_per_second = result.seconds > 0 ? static_cast<double>(step_ - first_step) / result.seconds : 0.0;
  result.sparsity = s.prunable.empty() ? 0.0 : optim::count_zeros(s.prunable).share();
  result.near_zero_share = eval::near_zero_shares(module, eval::default_near_zero_thresholds());
  return result;
}

std::vector<OneShotRow> one_shot_prune(SparseTask& task, const std::vector<double>& sparsities,
                                       const optim::PruneSelection& selection, optim::MaskScope scope,
                                       int64_t batch_size) {
  const std::vector<optim::PrunableTensor> prunable = optim::select_prunable(*task.module(), selection);
  if (prunable.empty()) throw Error("one-shot pruning: the model has no prunable weights under this selection");
  const std::vector<torch::Tensor> original = optim::snapshot(prunable);
  std::vector<OneShotRow> rows;
  for (double sparsity : sparsities) {
    OneShotRow row;
    row.sparsity = sparsity;
    optim::apply_masks(prunable, optim::magnitude_masks(prunable, sparsity, scope));
    row.achieved = optim::count_zeros(prunable).share();
    row.evaluation = evaluate_task(task, batch_size);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < prunable.size(); ++i) {
      torch::Tensor parameter = prunable[i].parameter;
      parameter.copy_(original[i]);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace descentlab::train
