#include "core/eval/layer_probe.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/eval/robustness.h"
#include "core/tasks/layerwise_task.h"
#include "core/util/error.h"

namespace descentlab::eval {

namespace {

std::vector<double> to_doubles(const torch::Tensor& tensor) {
  const torch::Tensor flat = tensor.detach().to(torch::kCPU, torch::kFloat64).contiguous().flatten();
  const double* begin = flat.data_ptr<double>();
  return std::vector<double>(begin, begin + flat.numel());
}

// A new CPU generator in the state `source` is in. Not Generator::clone(): LibTorch 1.13's GeneratorImpl::clone()
// takes one reference too many, so every clone leaks (LeakSanitizer sees it); get_state/set_state copy the same state.
at::Generator copy_of(const at::Generator& source) {
  at::Generator copy = at::detail::createCPUGenerator();
  copy.set_state(source.get_state());
  return copy;
}

// What the probe shows of the sample `used` besides its per-layer loss: the video's frames, the text's words and
// class probabilities, or a user's classification's probabilities (a user's regression or next-token: the loss
// alone).
void read_out(config::Task kind, const tasks::Batch& used, const std::vector<torch::Tensor>& outputs,
              record::LayerProbe& probe) {
  const bool classifies = outputs.front().dim() == 2 && used.target.dim() == 1 && !used.target.is_floating_point();
  if (kind == config::Task::video) {
    probe.frames = used.target.size(1);
    probe.height = used.target.size(2);
    probe.width = used.target.size(3);
    probe.input = to_doubles(used.input);
    probe.target = to_doubles(used.target);
    probe.predictions = to_doubles(torch::cat(outputs, 0));
    return;
  }
  if (!classifies) return;
  probe.label = used.target[0].item<int64_t>();
  probe.classes = outputs.front().size(1);
  probe.probabilities = to_doubles(torch::softmax(torch::cat(outputs, 0).to(torch::kFloat64), 1));
  if (kind != config::Task::text) return;
  const torch::Tensor tokens = used.input[0].to(torch::kCPU);
  const torch::Tensor real = tokens.masked_select(tokens.ne(0)).contiguous();
  probe.token_ids.assign(real.data_ptr<int64_t>(), real.data_ptr<int64_t>() + real.numel());
}

}  // namespace

struct LayerProber::State {
  tasks::LayerwiseTask* task = nullptr;
  int64_t batch_size = 0;
  // Per (noise, seed): the running generator's state at the start of batch k, for the batches reached. A kind whose
  // batches each draw on their own (the stream's running generator unused) needs no replay: `independent`.
  struct Replay {
    std::vector<at::Generator> generators;
    bool independent = false;
  };
  std::map<std::pair<std::string, int64_t>, Replay> replays;

  // The sweep's noise stream of `seed` as it stands at the start of the batch that begins at `start`: the batches
  // before it are drawn as run_sweep draws them (their values are not kept).
  tasks::NoiseStream stream_at(const std::string& noise, int64_t seed, int64_t start) {
    const uint64_t base = sweep_noise_seed(seed);
    Replay& replay = replays[{noise, seed}];
    if (replay.generators.empty()) replay.generators.push_back(at::detail::createCPUGenerator(base));
    const auto wanted = static_cast<size_t>(start / batch_size);
    while (!replay.independent && replay.generators.size() <= wanted) {
      const auto before = static_cast<int64_t>(replay.generators.size() - 1) * batch_size;
      tasks::NoiseStream replayed(base, copy_of(replay.generators.back()));
      task->perturbed_test_batch(before, std::min(batch_size, task->test_size() - before), noise, 0.0, replayed);
      replay.independent = !replayed.drew_running();
      replay.generators.push_back(copy_of(replayed.running()));
    }
    if (replay.independent) return tasks::NoiseStream(base);
    return tasks::NoiseStream(base, copy_of(replay.generators[wanted]));
  }
};

LayerProber::LayerProber(tasks::LayerwiseTask& task, int64_t batch_size) : state_(std::make_unique<State>()) {
  state_->task = &task;
  state_->batch_size = batch_size > 0 ? batch_size : SweepOptions().batch_size;
}

LayerProber::~LayerProber() = default;

record::LayerProbe LayerProber::probe(const record::ProbeSettings& settings) {
  tasks::LayerwiseTask& task = *state_->task;
  record::LayerProbe probe;
  probe.task = config::word(task.kind());
  probe.test_size = task.test_size();
  probe.layers = task.layers();
  probe.sample = settings.sample;
  probe.gamma = settings.gamma;
  probe.seed = settings.seed;
  const std::vector<std::string> kinds = task.noise_kinds();
  probe.noise = settings.noise.empty() && !kinds.empty() ? kinds.front() : settings.noise;
  if (settings.sample < 0 || settings.sample >= probe.test_size) {
    throw Error("sample " + std::to_string(settings.sample) + " is out of range: the test set has " +
                std::to_string(probe.test_size) + " samples (0.." + std::to_string(probe.test_size - 1) + ")");
  }
  if (!(settings.gamma >= 0.0) || !std::isfinite(settings.gamma)) {
    throw Error("gamma " + std::to_string(settings.gamma) + " is not a strength >= 0");
  }
  if (settings.seed < 0) throw Error("seed " + std::to_string(settings.seed) + " is negative");
  if (std::find(kinds.begin(), kinds.end(), probe.noise) == kinds.end()) {
    tasks::refuse_noise(probe.noise, task.noise_subject(), kinds);
  }

  torch::NoGradGuard no_grad;
  task.module()->eval();
  const int64_t batch_size = state_->batch_size;
  const int64_t start = settings.sample / batch_size * batch_size;
  const int64_t count = std::min(batch_size, probe.test_size - start);
  const int64_t row = settings.sample - start;

  tasks::NoiseStream stream = state_->stream_at(probe.noise, settings.seed, start);
  const tasks::PerturbedBatch sample =
      task.perturbed_test_batch(start, count, probe.noise, settings.gamma, stream).rows(row, 1);
  const tasks::Batch& used = sample.batch;  // the sample alone, as the model reads it
  std::vector<torch::Tensor> outputs;
  const torch::Tensor losses = tasks::perturbed_layer_losses(task, sample, &outputs);
  for (int64_t l = 0; l < losses.size(0); ++l) probe.loss.push_back(losses[l][0].item<double>());
  read_out(task.kind(), used, outputs, probe);
  return probe;
}

}  // namespace descentlab::eval
