// Cost of HORST and HAM against LibTorch's AdamW, in one process, on the preset models (issue 5's benchmark):
//   step       a whole training step: forward, cross-entropy, backward, gradient clipping, optimizer step
//   optimizer  the optimizer's step() alone (same gradients every time)
// Each optimizer trains its own copy of the same model and batch. Timings are interleaved in rounds (AdamW, HAM,
// HORST, AdamW, ...) so that drifts of the machine's speed hit all three alike; each figure is the median over
// rounds of the mean over the steps of a round.
// Usage: descentlab_bench_optimizer_step [--model vit|gpt|both] [--rounds R] [--steps-per-round S]

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/models/sparse_models.h"
#include "core/optim/mirror_adamw.h"
#include "core/runtime.h"

namespace {

using namespace descentlab;
using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;
  std::function<std::shared_ptr<torch::nn::Module>()> make_model;
  std::function<torch::Tensor(torch::nn::Module&)> loss;
};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name, torch::nn::Module& model) {
  const auto options = torch::optim::AdamWOptions(1e-3).weight_decay(0.05);
  if (name == "adamw") return std::make_unique<torch::optim::AdamW>(model.parameters(), options);
  if (name == "ham") return std::make_unique<optim::Ham>(model.parameters(), options);
  optim::MirrorOptions horst = optim::default_horst_options();
  horst.alpha = 50.0;
  return std::make_unique<optim::Horst>(model.parameters(), options, horst);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "both";
  int64_t rounds = 15, steps_per_round = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--model")
      which = argv[i + 1];
    else if (flag == "--rounds")
      rounds = std::stoll(argv[i + 1]);
    else if (flag == "--steps-per-round")
      steps_per_round = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  configure_process(threads_from_environment(1));
  const auto info = runtime_info();
  std::printf("LibTorch %s, %d torch thread(s), BLAS: %s\n", info.torch_version.c_str(), info.threads,
              info.blas.c_str());

  // The full presets' models and batches (resources/presets/vit-*.json, gpt-*.json).
  models::TransformerOptions vit_options;
  vit_options.layers = 4;
  vit_options.width = 64;
  vit_options.heads = 4;
  vit_options.ff_width = 128;
  vit_options.dropout = 0.0;
  models::TransformerOptions gpt_options = vit_options;
  gpt_options.width = 128;
  gpt_options.ff_width = 512;
  torch::manual_seed(0);
  const torch::Tensor images = torch::randn({64, 1, 28, 28});
  const torch::Tensor labels = torch::randint(0, 10, {64});
  const torch::Tensor text = torch::randint(0, 80, {32, 65});
  std::vector<Case> cases;
  if (which == "vit" || which == "both") {
    cases.push_back({"vit (4x64, batch 64)", [&] { return models::TinyVit(vit_options, 28, 7, 10).ptr(); },
                     [&](torch::nn::Module& module) {
                       auto& vit = dynamic_cast<models::TinyVitImpl&>(module);
                       return torch::nn::functional::cross_entropy(vit.forward(images), labels);
                     }});
  }
  if (which == "gpt" || which == "both") {
    cases.push_back(
        {"gpt (4x128, batch 32x64)", [&] { return models::TinyGpt(gpt_options, 80, 64).ptr(); },
         [&](torch::nn::Module& module) {
           auto& gpt = dynamic_cast<models::TinyGptImpl&>(module);
           const torch::Tensor logits = gpt.forward(text.slice(1, 0, 64));
           return torch::nn::functional::cross_entropy(logits.reshape({-1, 80}), text.slice(1, 1).reshape({-1}));
         }});
  }
  const std::vector<std::string> names = {"adamw", "ham", "horst"};
  for (const auto& c : cases) {
    std::map<std::string, std::shared_ptr<torch::nn::Module>> model;
    std::map<std::string, std::unique_ptr<torch::optim::Optimizer>> optimizer;
    for (const auto& name : names) {
      torch::manual_seed(1);
      model[name] = c.make_model();
      optimizer[name] = make_optimizer(name, *model[name]);
    }
    std::map<std::string, std::vector<double>> step_times, optimizer_times;
    auto full_step = [&](const std::string& name) {
      optimizer[name]->zero_grad();
      c.loss(*model[name]).backward();
      torch::nn::utils::clip_grad_norm_(model[name]->parameters(), 1.0);
      optimizer[name]->step();
    };
    for (const auto& name : names) {
      for (int i = 0; i < 3; ++i) full_step(name);  // warm-up: allocations, optimizer state
    }
    for (int64_t round = 0; round < rounds; ++round) {
      for (const auto& name : names) {
        auto start = Clock::now();
        for (int64_t s = 0; s < steps_per_round; ++s) full_step(name);
        step_times[name].push_back(std::chrono::duration<double>(Clock::now() - start).count() /
                                   static_cast<double>(steps_per_round));
        // The optimizer alone, on the gradients the last step left.
        start = Clock::now();
        for (int64_t s = 0; s < steps_per_round; ++s) optimizer[name]->step();
        optimizer_times[name].push_back(std::chrono::duration<double>(Clock::now() - start).count() /
                                        static_cast<double>(steps_per_round));
      }
    }
    int64_t parameters = 0;
    for (const auto& p : model["adamw"]->parameters()) parameters += p.numel();
    std::printf("\n%s, %lld parameters, %lld rounds x %lld steps\n", c.name.c_str(), static_cast<long long>(parameters),
                static_cast<long long>(rounds), static_cast<long long>(steps_per_round));
    std::printf("  %-6s %12s %10s %16s %10s\n", "", "step (ms)", "/ AdamW", "optimizer (ms)", "/ AdamW");
    const double base_step = median(step_times["adamw"]);
    const double base_optimizer = median(optimizer_times["adamw"]);
    for (const auto& name : names) {
      const double step = median(step_times[name]);
      const double opt = median(optimizer_times[name]);
      std::printf("  %-6s %12.3f %10.3f %16.3f %10.3f\n", name.c_str(), step * 1e3, step / base_step, opt * 1e3,
                  opt / base_optimizer);
    }
  }
  return 0;
}
