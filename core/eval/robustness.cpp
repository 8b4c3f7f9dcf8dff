#include "core/eval/robustness.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "core/eval/test_pass.h"
#include "core/util/error.h"

namespace descentlab::eval {

torch::Tensor perturb_embeddings(const torch::Tensor& embeddings, const torch::Tensor& token_ids,
                                 const std::string& noise, double gamma, at::Generator& generator) {
  const torch::Tensor real = token_ids.ne(0).unsqueeze(-1).expand_as(embeddings);
  const torch::Tensor values = embeddings.masked_select(real);
  const double sigma = values.numel() > 1 ? values.std().item<double>() : 0.0;
  // Draws on the CPU with the given generator, so a sweep is reproducible whatever the device.
  torch::Tensor draw;
  if (noise == record::noise::kGaussian) {
    draw = torch::randn(embeddings.sizes(), generator, torch::kFloat32);
  } else if (noise == record::noise::kUniform) {
    draw = (torch::rand(embeddings.sizes(), generator, torch::kFloat32) * 2.0 - 1.0) * std::sqrt(3.0);
  } else {
    throw Error("unknown embedding noise \"" + noise + "\" (known: " + record::noise::kGaussian + ", " +
                record::noise::kUniform + ")");
  }
  return embeddings + (gamma * sigma) * draw.to(embeddings.device()) * real.to(embeddings.scalar_type());
}

torch::Tensor substitute_tokens(const torch::Tensor& token_ids, double gamma, int64_t vocabulary,
                                at::Generator& generator) {
  if (vocabulary <= 2) throw Error("discrete noise needs a vocabulary with words beyond <pad> and <unk>");
  const double probability = std::min(1.0, gamma / 4.0);
  const torch::Tensor chance = torch::rand(token_ids.sizes(), generator, torch::kFloat32).to(token_ids.device());
  const torch::Tensor replacement =
      torch::randint(2, vocabulary, token_ids.sizes(), generator, torch::kInt64).to(token_ids.device());
  const torch::Tensor replace = chance.lt(probability).logical_and(token_ids.ne(0));
  return torch::where(replace, replacement, token_ids);
}

uint64_t sweep_noise_seed(int64_t seed) {
  return 1000003ULL * static_cast<uint64_t>(seed) + 17;
}

std::vector<double> parse_gamma_grid(const std::string& text) {
  const std::string expected = "gamma grid \"" + text + "\": ";
  const auto fail = [&](const std::string& why) { throw Error(expected + why); };
  // One strength: the whole part a finite number ("1e999", "inf", "1abc" and "" are refused by name).
  const auto strength = [&](std::string part) {
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    size_t used = 0;
    double value = 0.0;
    try {
      value = std::stod(part, &used);
    } catch (const std::invalid_argument&) {
      fail("\"" + part + "\" is not a number (expected start:stop:step or a,b,c)");
    } catch (const std::out_of_range&) {
      fail("\"" + part + "\" is out of range");
    }
    if (used != part.size()) fail("\"" + part + "\" is not a number (expected start:stop:step or a,b,c)");
    if (!std::isfinite(value)) fail("\"" + part + "\" is not finite");
    if (value < 0) fail("\"" + part + "\" is negative: strengths are >= 0");
    return value;
  };
  constexpr int64_t kMostStrengths = 10000;  // a sweep evaluates the test set once per strength and seed
  std::vector<double> values;
  std::vector<std::string> parts;
  const char separator = text.find(':') != std::string::npos ? ':' : ',';
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  if (separator == ':') {
    if (parts.size() != 3) fail("expected start:stop:step");
    const double start = strength(parts[0]), stop = strength(parts[1]), step = strength(parts[2]);
    if (step <= 0) fail("the step must be > 0");
    if (stop < start) fail("stop is below start");
    const double count = std::floor((stop - start) / step + 1e-9);
    if (count + 1 > kMostStrengths) fail("more than " + std::to_string(kMostStrengths) + " strengths");
    for (int64_t i = 0; i <= static_cast<int64_t>(count); ++i) values.push_back(start + static_cast<double>(i) * step);
  } else {
    for (const auto& each : parts) values.push_back(strength(each));
    if (static_cast<int64_t>(values.size()) > kMostStrengths) {
      fail("more than " + std::to_string(kMostStrengths) + " strengths");
    }
  }
  if (values.empty()) fail("no strength (expected start:stop:step or a,b,c)");
  return values;
}

namespace {

// Per-layer per-sample losses and the final prediction for one perturbed batch.
torch::Tensor perturbed_losses(tasks::LayerwiseTask& task, const tasks::Batch& clean, const std::string& noise,
                               double gamma, at::Generator& generator, torch::Tensor& prediction, tasks::Batch& used) {
  auto* text = dynamic_cast<tasks::TextTask*>(&task);
  used = clean;
  if (text && noise == record::noise::kDiscrete) {
    used.input = substitute_tokens(clean.input, gamma, text->vocabulary_size(), generator);
    return tasks::per_sample_layer_losses(task, used, &prediction);
  }
  if (text) {
    auto& model = text->text_model();
    const torch::Tensor embeddings =
        perturb_embeddings(model.token_embeddings(clean.input), clean.input, noise, gamma, generator);
    const auto states = model.states_from(model.embed_tokens(embeddings, clean.input));
    std::vector<torch::Tensor> losses;
    for (size_t l = 0; l < states.size(); ++l) {
      const torch::Tensor output = model.readout(static_cast<int64_t>(l), states[l], clean.input);
      losses.push_back(task.per_sample_loss(output, clean));
      if (l + 1 == states.size()) prediction = output;
    }
    return torch::stack(losses);
  }
  throw Error("noise \"" + noise + "\" does not apply to this task");
}

}  // namespace

record::SweepResult run_sweep(tasks::LayerwiseTask& task, const SweepOptions& options) {
  torch::NoGradGuard no_grad;
  auto& module = *task.module();
  module.eval();
  auto* video = dynamic_cast<tasks::VideoTask*>(&task);
  if (!record::noise_applies(options.noise, video != nullptr)) {
    throw Error("noise \"" + options.noise + "\" does not apply to a " + (video ? "video" : "text") +
                " model (known: " + record::noise_list(video != nullptr) + ")");
  }
  const int64_t total = options.limit > 0 ? std::min(options.limit, task.test_size()) : task.test_size();
  const int64_t layers = task.model().layers() + 1;

  record::SweepResult sweep;
  sweep.name = options.noise;
  sweep.noise = options.noise;
  sweep.metric_name = task.metric_name();
  sweep.gamma = options.gamma;
  sweep.layers = layers;
  for (int64_t s = 0; s < options.seeds; ++s) sweep.seeds.push_back(s);
  const size_t cells = sweep.gamma.size() * sweep.seeds.size();
  sweep.metric.assign(cells, 0.0);
  sweep.layer_loss.assign(cells * static_cast<size_t>(layers), 0.0);

  const auto proceed = [&](size_t done) {
    if (options.on_cell && !options.on_cell(done, cells)) {
      module.train();
      throw SweepCancelled();
    }
  };
  for (size_t g = 0; g < sweep.gamma.size(); ++g) {
    for (size_t s = 0; s < sweep.seeds.size(); ++s) {
      proceed(g * sweep.seeds.size() + s);
      const uint64_t seed = sweep_noise_seed(static_cast<int64_t>(s));
      at::Generator generator = at::detail::createCPUGenerator(seed);
      torch::Tensor loss_sum = torch::zeros({layers}, torch::kFloat64);
      double metric_sum = 0.0;
      test_pass(module, 0, total, options.batch_size, [&](int64_t start, int64_t count) {
        torch::Tensor prediction;
        torch::Tensor losses;
        tasks::Batch used;
        if (video) {
          used = video->noisy_test_batch(start, count, sweep.gamma[g], seed + static_cast<uint64_t>(start));
          losses = tasks::per_sample_layer_losses(task, used, &prediction);
        } else {
          losses = perturbed_losses(task, task.test_batch(start, count), options.noise, sweep.gamma[g], generator,
                                    prediction, used);
        }
        loss_sum += losses.to(torch::kCPU, torch::kFloat64).sum(1);
        metric_sum += task.metric_terms(prediction, used).sum().item<double>();
      });
      const size_t cell = g * sweep.seeds.size() + s;
      sweep.metric[cell] = task.finish_metric(metric_sum / static_cast<double>(total));
      for (int64_t l = 0; l < layers; ++l) {
        sweep.layer_loss[cell * static_cast<size_t>(layers) + static_cast<size_t>(l)] =
            loss_sum[l].item<double>() / static_cast<double>(total);
      }
    }
  }
  proceed(cells);
  module.train();
  return sweep;
}

}  // namespace descentlab::eval
