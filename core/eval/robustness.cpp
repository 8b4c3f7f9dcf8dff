#include "core/eval/robustness.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/eval/test_pass.h"
#include "core/util/error.h"

namespace descentlab::eval {

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

record::SweepResult run_sweep(tasks::LayerwiseTask& task, const SweepOptions& options) {
  torch::NoGradGuard no_grad;
  auto& module = *task.module();
  module.eval();
  const std::vector<std::string> kinds = task.noise_kinds();
  if (std::find(kinds.begin(), kinds.end(), options.noise) == kinds.end()) {
    tasks::refuse_noise(options.noise, task.noise_subject(), kinds);
  }
  const int64_t total = options.limit > 0 ? std::min(options.limit, task.test_size()) : task.test_size();
  const int64_t layers = task.layers() + 1;

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
      tasks::NoiseStream stream(sweep_noise_seed(static_cast<int64_t>(s)));
      torch::Tensor loss_sum = torch::zeros({layers}, torch::kFloat64);
      double metric_sum = 0.0;
      test_pass(module, 0, total, options.batch_size, [&](int64_t start, int64_t count) {
        const tasks::PerturbedBatch perturbed =
            task.perturbed_test_batch(start, count, options.noise, sweep.gamma[g], stream);
        std::vector<torch::Tensor> predictions;
        const torch::Tensor losses = tasks::perturbed_layer_losses(task, perturbed, &predictions);
        loss_sum += losses.to(torch::kCPU, torch::kFloat64).sum(1);
        metric_sum += task.metric_terms(predictions.back(), perturbed.batch).sum().item<double>();
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
