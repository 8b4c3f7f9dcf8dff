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
// The types here are plain (no LibTorch), so the run-file front door (core/train/layer_probe_session.h) and the
// GUI's bridge can hold them; the work is in the .cpp.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace descentlab::tasks {
class LayerwiseTask;
}

namespace descentlab::eval {

struct ProbeSettings {
  int64_t sample = 0;  // index into the test set (the order the sweeps and evaluations use)
  std::string noise;   // gaussian | uniform | discrete (text), video (video); empty: gaussian or video
  double gamma = 0.0;  // noise strength; 0 is the clean input (also for video, as in the sweeps)
  int64_t seed = 0;    // the sweep's seed number s (0, 1, 2, ...)
};

// One sample at every layer. Text fills the text fields, video the video fields.
struct LayerProbe {
  std::string task;  // "text" or "video"
  int64_t sample = 0;
  int64_t test_size = 0;
  int64_t layers = 0;  // L: the readouts are of layers 0..L (layers + 1 of them)
  std::string noise;
  double gamma = 0.0;
  int64_t seed = 0;
  std::vector<double> loss;  // [L + 1]: the per-sample loss of the readout at each layer

  // text
  int64_t label = -1;  // the true class
  int64_t classes = 0;
  std::vector<double> probabilities;  // [(L + 1) * classes]: softmax of the readout at layer l
  std::vector<int64_t> token_ids;     // what the model read (after discrete noise), padding left out
  std::vector<std::string> words;     // token_ids as words, when the vocabulary is known (else empty)
  std::string text;                   // the review as written, when known (else empty)

  // video
  int64_t frames = 0, height = 0, width = 0;
  std::vector<double> input;        // the (noisy) input clip [frames * height * width]
  std::vector<double> target;       // the clean clip
  std::vector<double> predictions;  // [(L + 1) * frames * height * width]: R(Φ_l) for each layer

  // P(true class) at layer l (text only).
  double probability_of_label(int64_t layer) const {
    return probabilities.at(static_cast<size_t>(layer * classes + label));
  }
};

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
  LayerProbe probe(const ProbeSettings& settings);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace descentlab::eval
