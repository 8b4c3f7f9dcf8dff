// Time per training step of the layerwise-descent trainer's inner loop, on one model and batch, in one process:
//   plain        forward to the last layer, cross-entropy, backward, AdamW (what any transformer does;
//                bench/python_step.py times the same step in Python PyTorch)
//   erm          the trainer's ERM step: every layer's readout is evaluated (for the per-layer curves) but only
//                f_L is minimised
//   constrained  the primal-dual step: Lagrangian over all layers, backward, AdamW, dual ascent
//   plain with LibTorch's MultiheadAttention module instead of scaled_dot_product (the fused kernel on 2.x)
// The four are timed in interleaved rounds (each round: --steps-per-round steps of each), so a slow stretch of the
// machine hits all three alike; each time is the median over every timed step, each ratio the median of the
// rounds' ratios.
// Usage: descentlab_bench_layerwise_step [--rounds R] [--steps-per-round N] [--width D] [--layers L] [--batch B]
//                                        [--length T]

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/models/unrolled_transformer.h"
#include "core/runtime.h"
#include "core/train/layerwise_math.h"

namespace {

using namespace descentlab;
using Clock = std::chrono::steady_clock;

struct Shape {
  int64_t rounds = 10, steps_per_round = 3, width = 64, layers = 4, batch = 32, length = 128, vocabulary = 10000;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Seconds of each of `steps` calls of `step`.
template <typename Step>
std::vector<double> time_steps(int64_t steps, Step step) {
  std::vector<double> times;
  for (int64_t i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    step();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  Shape shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::stoll(argv[i + 1]);
    if (flag == "--rounds") shape.rounds = value;
    if (flag == "--steps-per-round") shape.steps_per_round = value;
    if (flag == "--width") shape.width = value;
    if (flag == "--layers") shape.layers = value;
    if (flag == "--batch") shape.batch = value;
    if (flag == "--length") shape.length = value;
  }
  configure_process(threads_from_environment(1));
  torch::manual_seed(0);
  models::TransformerOptions options;
  options.layers = shape.layers;
  options.width = shape.width;
  options.heads = 4;
  options.ff_width = 2 * shape.width;
  options.dropout = 0.1;
  auto model = std::make_shared<models::TextTransformerImpl>(options, shape.vocabulary, shape.length, 2, false);
  model->train();
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  // Token ids with padding at the end of each row (lengths from 50% to 100%), labels 0/1.
  torch::Tensor tokens = torch::randint(2, shape.vocabulary, {shape.batch, shape.length});
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t keep = shape.length / 2 + (b * shape.length / 2) / shape.batch;
    tokens[b].slice(0, keep).fill_(0);
  }
  const torch::Tensor labels = torch::randint(0, 2, {shape.batch});
  torch::Tensor lambda = torch::zeros({shape.layers});
  const torch::Tensor alphas = torch::full({shape.layers}, 0.05);

  const auto layer_losses = [&] {
    const auto states = model->states(tokens);
    std::vector<torch::Tensor> losses;
    for (size_t l = 0; l < states.size(); ++l) {
      losses.push_back(
          torch::nn::functional::cross_entropy(model->readout(static_cast<int64_t>(l), states[l], tokens), labels));
    }
    return torch::stack(losses);
  };
  const auto plain_step = [&] {
    const auto states = model->states(tokens);
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(model->readout(shape.layers, states.back(), tokens), labels);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  };
  const auto erm_step = [&] {
    const torch::Tensor f = layer_losses();
    optimizer.zero_grad();
    f[-1].backward();
    optimizer.step();
  };
  const auto constrained_step = [&] {
    const torch::Tensor f = layer_losses();
    const torch::Tensor slack = train::constraint_slack(f, alphas, false);
    optimizer.zero_grad();
    train::lagrangian(f, slack, lambda).backward();
    optimizer.step();
    train::dual_step(lambda, slack, torch::Tensor(), 0.01);
  };
  // The plain step once more with LibTorch's MultiheadAttention module instead of scaled_dot_product: what the
  // fused kernel (LibTorch 2.x) changes; on 1.13 the two are the same arithmetic.
  const auto module_attention_step = [&] {
    models::set_attention_path(models::AttentionPath::libtorch_module);
    plain_step();
    models::set_attention_path(models::AttentionPath::scaled_dot_product);
  };
  time_steps(3, plain_step);  // warm-up
  time_steps(3, erm_step);
  time_steps(3, constrained_step);
  time_steps(3, module_attention_step);
  std::vector<double> plain, erm, constrained, module_attention, round_ratios, attention_ratios;
  for (int64_t round = 0; round < shape.rounds; ++round) {
    const auto p = time_steps(shape.steps_per_round, plain_step);
    const auto e = time_steps(shape.steps_per_round, erm_step);
    const auto c = time_steps(shape.steps_per_round, constrained_step);
    const auto m = time_steps(shape.steps_per_round, module_attention_step);
    plain.insert(plain.end(), p.begin(), p.end());
    erm.insert(erm.end(), e.begin(), e.end());
    constrained.insert(constrained.end(), c.begin(), c.end());
    module_attention.insert(module_attention.end(), m.begin(), m.end());
    round_ratios.push_back(median(c) / median(e));
    attention_ratios.push_back(median(p) / median(m));
  }
  std::printf("model: %lld layers x width %lld, batch %lld x %lld tokens, vocabulary %lld, threads %d\n",
              static_cast<long long>(shape.layers), static_cast<long long>(shape.width),
              static_cast<long long>(shape.batch), static_cast<long long>(shape.length),
              static_cast<long long>(shape.vocabulary), at::get_num_threads());
  std::printf("rounds %lld x %lld steps of each, interleaved\n", static_cast<long long>(shape.rounds),
              static_cast<long long>(shape.steps_per_round));
  std::printf("cpp_plain_ms %.2f\ncpp_erm_ms %.2f\ncpp_constrained_ms %.2f\n", 1e3 * median(plain), 1e3 * median(erm),
              1e3 * median(constrained));
  std::printf("ratio_constrained_over_erm %.3f\n", median(round_ratios));
  std::printf("cpp_plain_module_attention_ms %.2f\nratio_sdpa_over_module_attention %.3f (fused kernel: %s)\n",
              1e3 * median(module_attention), median(attention_ratios),
              models::fused_attention_available() ? "yes" : "no, LibTorch 1.x");
  return 0;
}
