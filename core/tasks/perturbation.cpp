#include "core/tasks/perturbation.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/models/unrolled_transformer.h"
#include "core/record/noise.h"
#include "core/util/error.h"

namespace descentlab::tasks {

NoiseStream::NoiseStream(uint64_t seed) : seed_(seed), running_(at::detail::createCPUGenerator(seed)) {}

NoiseStream::NoiseStream(uint64_t seed, at::Generator running) : seed_(seed), running_(std::move(running)) {}

at::Generator& NoiseStream::running() {
  drew_running_ = true;
  return running_;
}

uint64_t NoiseStream::batch_seed(int64_t start) const {
  return seed_ + static_cast<uint64_t>(start);
}

PerturbedBatch PerturbedBatch::rows(int64_t first, int64_t count) const {
  PerturbedBatch part;
  part.batch = Batch{batch.input.narrow(0, first, count), batch.target.narrow(0, first, count)};
  if (token_embeddings.defined()) part.token_embeddings = token_embeddings.narrow(0, first, count);
  return part;
}

torch::Tensor perturb_embeddings(const torch::Tensor& embeddings, const torch::Tensor& token_ids,
                                 const std::string& noise, double gamma, at::Generator& generator) {
  const torch::Tensor real = token_ids.ne(0).unsqueeze(-1).expand_as(embeddings);
  const torch::Tensor values = embeddings.masked_select(real);
  const double sigma = values.numel() > 1 ? values.std().item<double>() : 0.0;
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

torch::Tensor add_gaussian_noise(const torch::Tensor& clean, double scale, at::Generator& generator) {
  const torch::Tensor noise = torch::randn(clean.sizes(), generator, torch::kFloat32).to(clean.device());
  return clean + scale * noise;
}

PerturbedBatch perturb_text(const Batch& clean, const std::string& noise, double gamma, NoiseStream& stream,
                            models::TextTransformerImpl& model, int64_t vocabulary) {
  PerturbedBatch perturbed;
  perturbed.batch = clean;
  if (noise == record::noise::kDiscrete) {
    perturbed.batch.input = substitute_tokens(clean.input, gamma, vocabulary, stream.running());
  } else if (noise == record::noise::kGaussian || noise == record::noise::kUniform) {
    perturbed.token_embeddings =
        perturb_embeddings(model.token_embeddings(clean.input), clean.input, noise, gamma, stream.running());
  } else {
    refuse_noise(noise, "text", record::noise_kinds(false));
  }
  return perturbed;
}

PerturbedBatch perturb_clips(const torch::Tensor& clean, int64_t start, const std::string& noise, double gamma,
                             double noise_std, const NoiseStream& stream) {
  if (noise != record::noise::kVideo) refuse_noise(noise, "video", record::noise_kinds(true));
  at::Generator generator = at::detail::createCPUGenerator(stream.batch_seed(start));
  PerturbedBatch perturbed;
  perturbed.batch = Batch{add_gaussian_noise(clean, noise_std * gamma, generator), clean};
  return perturbed;
}

void refuse_noise(const std::string& noise, const std::string& task, const std::vector<std::string>& kinds) {
  std::string known;
  for (const auto& kind : kinds) known += (known.empty() ? "" : ", ") + kind;
  if (std::find(kinds.begin(), kinds.end(), noise) != kinds.end()) {
    // A row of the noise vocabulary that no task draws yet: refused, never drawn as another kind.
    throw Error("noise \"" + noise + "\" is in the noise vocabulary for " + task + " models, but the " + task +
                " task does not draw it (core/tasks/perturbation.h)");
  }
  throw Error("noise \"" + noise + "\" does not apply to a " + task + " model (known: " + known + ")");
}

}  // namespace descentlab::tasks
