#pragma once
// The layer probe's question and answer as plain data (issue 17): one test sample's loss and readout at every layer
// of a layerwise run, under the robustness sweeps' noise. The probe itself is core/eval/layer_probe.h; the run-file
// door is core/session/layer_probe_session.h; the window shows it in widgets/layer_probe_view.h.

#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::record {

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

}  // namespace descentlab::record
