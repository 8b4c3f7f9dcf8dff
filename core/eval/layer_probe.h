#pragma once
// The layer probe (issue 17): one test sample's prediction at every layer l = 0..L of a layerwise model, under the
// robustness sweeps' own noise (core/eval/robustness.h) at strength γ and noise seed s: the sample's loss per layer,
// and what the readout R(Φ_l) makes of it (text: the class probabilities; video: the denoised clip).
//
// The noise is exactly the one `run_sweep` draws for this sample in its cell (γ, seed s), with the sweeps' batch
// size over the whole test set (no --limit): the per-layer losses equal that sweep's per-sample losses, so the mean
// of the probes of every test sample is the sweep's per-layer loss (tests/test_layer_probe.cpp).
//   text: the sample's batch of the sweep is perturbed as the sweep does (σ is that batch's; the generator is
//         advanced over the batches before it as the sweep advances it), then the sample's row runs alone
//   video: the batch's input is noisy_test_batch(start, count, γ, seed' + start), as the sweep's
//
// What it is asked and what it returns are plain data (core/record/layer_probe.h), so the run-file door
// (core/session/layer_probe_session.h) and the GUI's bridge hold them without LibTorch; the work is in the .cpp.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/record/layer_probe.h"

namespace descentlab::tasks {
class LayerwiseTask;
}

namespace descentlab::eval {

// Probes samples of one task. It keeps the text noise generator's state at the start of each batch it has reached,
// so moving γ (or another sample of a batch already reached) does not replay the batches before it again. The
// generator states do not depend on the model's weights: a new checkpoint loaded into the task keeps them.
// Not thread-safe: one caller at a time.
class LayerProber {
 public:
  explicit LayerProber(tasks::LayerwiseTask& task, int64_t batch_size = 0);  // 0: the sweeps' batch size
  ~LayerProber();
  LayerProber(const LayerProber&) = delete;
  LayerProber& operator=(const LayerProber&) = delete;

  // Throws descentlab::Error naming the sample (out of range, with the test size) or the noise (not for this task).
  record::LayerProbe probe(const record::ProbeSettings& settings);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace descentlab::eval
