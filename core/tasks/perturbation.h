#pragma once
// Input perturbations of the robustness sweeps and the layer probe (SCIENCE.md §1): what each kind of the noise
// vocabulary (core/record/noise.h) draws on the inputs a task's model reads. The sweep and the probe ask a task for
// a perturbed test batch (LayerwiseTask::perturbed_test_batch), and the task answers with the functions here. A kind
// a task does not draw is refused, naming the kind and the kinds it takes: never a silent other noise.
//   token embeddings e (σ = std of the clean embeddings of the batch's real tokens):
//     gaussian  e + γσ·N(0, 1)      uniform  e + γσ·U(-√3, √3)  (both of standard deviation γσ)
//   tokens:
//     discrete  each real token replaced, with probability min(1, γ/4), by a token drawn uniformly from the
//               vocabulary's words (ids 2..V-1: never <pad> or <unk>)
//   clips: video  x + (σ_train·γ)·N(0, 1) on the clean clip (σ_train: the task's training noise level)
// Every draw is made on the CPU from the stream's generators, so a sweep is reproducible whatever the device.

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tasks/batch.h"

namespace descentlab::models {
class TextTransformerImpl;
}

namespace descentlab::tasks {

// Where the noise of one sweep seed comes from. A kind drawn batch after batch in test order (text) draws from one
// running generator seeded with `seed`; a kind drawn for each batch on its own (video) from a generator seeded with
// seed + the batch's first sample, so any batch is drawn without the ones before it.
class NoiseStream {
 public:
  explicit NoiseStream(uint64_t seed);
  // A stream whose running generator continues from `running` (the layer probe's replay of the batches before).
  NoiseStream(uint64_t seed, at::Generator running);

  uint64_t seed() const { return seed_; }
  at::Generator& running();                            // the generator that runs on across batches
  uint64_t batch_seed(int64_t start) const;            // the seed of the batch whose first test sample is `start`
  bool drew_running() const { return drew_running_; }  // a batch's noise then depends on the batches before it

 private:
  uint64_t seed_;
  at::Generator running_;
  bool drew_running_ = false;
};

// A test batch with its noise drawn, as the model is to read it.
struct PerturbedBatch {
  Batch batch;  // the input the model reads (perturbed tokens or clips, or the clean tokens) and the clean target
  // Embedding noise: the perturbed token embeddings [B, length, width], which replace the model's own lookup of
  // batch.input; undefined for every other kind.
  torch::Tensor token_embeddings;

  // Rows [first, first + count) of everything (the probe's one sample of the sweep's batch).
  PerturbedBatch rows(int64_t first, int64_t count) const;
};

// The draws themselves, exposed for tests.
torch::Tensor perturb_embeddings(const torch::Tensor& embeddings, const torch::Tensor& token_ids,
                                 const std::string& noise, double gamma, at::Generator& generator);
torch::Tensor substitute_tokens(const torch::Tensor& token_ids, double gamma, int64_t vocabulary,
                                at::Generator& generator);
// clean + scale·N(0, 1), drawn on the CPU and moved to clean's device.
torch::Tensor add_gaussian_noise(const torch::Tensor& clean, double scale, at::Generator& generator);

// The text task's noise on a clean batch of token ids: discrete on the tokens, gaussian and uniform on the model's
// token embeddings; all from the stream's running generator.
PerturbedBatch perturb_text(const Batch& clean, const std::string& noise, double gamma, NoiseStream& stream,
                            models::TextTransformerImpl& model, int64_t vocabulary);

// The video task's noise on clean clips [B, T, H, W] of the test batch that begins at `start`: "video", from the
// stream's seed of that batch (noise_std: the task's training noise level).
PerturbedBatch perturb_clips(const torch::Tensor& clean, int64_t start, const std::string& noise, double gamma,
                             double noise_std, const NoiseStream& stream);

// The refusal of a kind a task does not draw: "noise "X" does not apply to a TASK model (known: ...)".
[[noreturn]] void refuse_noise(const std::string& noise, const std::string& task,
                               const std::vector<std::string>& kinds);

}  // namespace descentlab::tasks
