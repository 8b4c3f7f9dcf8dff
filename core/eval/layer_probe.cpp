#include "core/eval/layer_probe.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

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

}  // namespace

struct LayerProber::State {
  tasks::LayerwiseTask* task = nullptr;
  int64_t batch_size = 0;
  // Text noise: per (noise, seed), the sweep generator's state at the start of batch k, for the batches reached.
  std::map<std::pair<std::string, int64_t>, std::vector<at::Generator>> generators;

  // Advances `generator` over batch `start` exactly as run_sweep's draws for it do (the values are not kept).
  void skip_batch(tasks::TextTask& text, const std::string& noise, int64_t start, at::Generator& generator) {
    const int64_t count = std::min(batch_size, text.test_size() - start);
    const tasks::Batch batch = text.test_batch(start, count);
    if (noise == record::noise::kDiscrete) {
      substitute_tokens(batch.input, 0.0, text.vocabulary_size(), generator);
    } else {
      perturb_embeddings(text.text_model().token_embeddings(batch.input), batch.input, noise, 0.0, generator);
    }
  }

  // A copy of the sweep generator as it stands at the start of the batch that begins at `start`.
  at::Generator generator_at(tasks::TextTask& text, const std::string& noise, int64_t seed, int64_t start) {
    auto& states = generators[{noise, seed}];
    if (states.empty()) states.push_back(at::detail::createCPUGenerator(sweep_noise_seed(seed)));
    const auto wanted = static_cast<size_t>(start / batch_size);
    while (states.size() <= wanted) {
      at::Generator next = copy_of(states.back());
      skip_batch(text, noise, static_cast<int64_t>(states.size() - 1) * batch_size, next);
      states.push_back(std::move(next));
    }
    return copy_of(states[wanted]);
  }
};

LayerProber::LayerProber(tasks::LayerwiseTask& task, int64_t batch_size) : state_(std::make_unique<State>()) {
  state_->task = &task;
  state_->batch_size = batch_size > 0 ? batch_size : SweepOptions().batch_size;
}

LayerProber::~LayerProber() = default;

record::LayerProbe LayerProber::probe(const record::ProbeSettings& settings) {
  tasks::LayerwiseTask& task = *state_->task;
  auto* video = dynamic_cast<tasks::VideoTask*>(&task);
  auto* text = dynamic_cast<tasks::TextTask*>(&task);
  if (!video && !text) throw Error("the layer probe applies to text and video (layerwise) tasks");
  record::LayerProbe probe;
  probe.task = video ? "video" : "text";
  probe.test_size = task.test_size();
  probe.layers = task.model().layers();
  probe.sample = settings.sample;
  probe.gamma = settings.gamma;
  probe.seed = settings.seed;
  probe.noise = settings.noise.empty() ? record::default_noise(video != nullptr) : settings.noise;
  if (settings.sample < 0 || settings.sample >= probe.test_size) {
    throw Error("sample " + std::to_string(settings.sample) + " is out of range: the test set has " +
                std::to_string(probe.test_size) + " samples (0.." + std::to_string(probe.test_size - 1) + ")");
  }
  if (!(settings.gamma >= 0.0) || !std::isfinite(settings.gamma)) {
    throw Error("gamma " + std::to_string(settings.gamma) + " is not a strength >= 0");
  }
  if (settings.seed < 0) throw Error("seed " + std::to_string(settings.seed) + " is negative");
  if (!record::noise_applies(probe.noise, video != nullptr)) {
    throw Error("noise \"" + probe.noise + "\" does not apply to a " + probe.task +
                " model (known: " + record::noise_list(video != nullptr) + ")");
  }

  torch::NoGradGuard no_grad;
  task.module()->eval();
  auto& model = task.model();
  const int64_t batch_size = state_->batch_size;
  const int64_t start = settings.sample / batch_size * batch_size;
  const int64_t count = std::min(batch_size, probe.test_size - start);
  const int64_t row = settings.sample - start;

  std::vector<torch::Tensor> states;
  tasks::Batch used;  // the sample alone, as the model reads it
  if (video) {
    const uint64_t seed = sweep_noise_seed(settings.seed) + static_cast<uint64_t>(start);
    const tasks::Batch noisy = video->noisy_test_batch(start, count, settings.gamma, seed);
    used = tasks::Batch{noisy.input.narrow(0, row, 1), noisy.target.narrow(0, row, 1)};
    states = model.states(used.input);
  } else {
    const tasks::Batch clean = text->test_batch(start, count);
    at::Generator generator = state_->generator_at(*text, probe.noise, settings.seed, start);
    if (probe.noise == record::noise::kDiscrete) {
      const torch::Tensor tokens = substitute_tokens(clean.input, settings.gamma, text->vocabulary_size(), generator);
      used = tasks::Batch{tokens.narrow(0, row, 1), clean.target.narrow(0, row, 1)};
      states = model.states(used.input);
    } else {
      auto& text_model = text->text_model();
      const torch::Tensor embeddings = perturb_embeddings(text_model.token_embeddings(clean.input), clean.input,
                                                          probe.noise, settings.gamma, generator);
      used = tasks::Batch{clean.input.narrow(0, row, 1), clean.target.narrow(0, row, 1)};
      states = text_model.states_from(text_model.embed_tokens(embeddings.narrow(0, row, 1), used.input));
    }
  }

  std::vector<torch::Tensor> outputs;
  for (size_t l = 0; l < states.size(); ++l) {
    const torch::Tensor output = model.readout(static_cast<int64_t>(l), states[l], used.input);
    probe.loss.push_back(task.per_sample_loss(output, used).item<double>());
    outputs.push_back(output);
  }
  if (video) {
    probe.frames = used.target.size(1);
    probe.height = used.target.size(2);
    probe.width = used.target.size(3);
    probe.input = to_doubles(used.input);
    probe.target = to_doubles(used.target);
    probe.predictions = to_doubles(torch::cat(outputs, 0));
  } else {
    probe.label = used.target[0].item<int64_t>();
    probe.classes = outputs.front().size(1);
    probe.probabilities = to_doubles(torch::softmax(torch::cat(outputs, 0).to(torch::kFloat64), 1));
    const torch::Tensor tokens = used.input[0].to(torch::kCPU);
    const torch::Tensor real = tokens.masked_select(tokens.ne(0)).contiguous();
    probe.token_ids.assign(real.data_ptr<int64_t>(), real.data_ptr<int64_t>() + real.numel());
  }
  return probe;
}

}  // namespace descentlab::eval
