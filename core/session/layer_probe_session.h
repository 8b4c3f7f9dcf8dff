#pragma once
// The layer probe of a run file (issue 17): one test sample's per-layer prediction (core/eval/layer_probe.h) of a
// layerwise run's checkpoint, under the sweeps' noise at strength γ. What `descentlab-cli probe` prints and the
// window's "Layer probe" view shows. The header is free of LibTorch, like TrainingSession's.
//
// A LayerProbeSession keeps the last few runs' tasks (data, vocabulary, model) loaded, so probing the same run
// again (another γ, sample or noise) only evaluates. It reloads the checkpoint when the run file changed on disk
// (a live run rewrites "latest" every epoch) and rebuilds the task only when the run's configuration did.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/record/checkpoint.h"
#include "core/record/layer_probe.h"

namespace descentlab::session {

struct LayerProbeRequest {
  std::string run_path;
  std::string checkpoint = record::checkpoint_label::kLatest;  // a checkpoint label of the run file: latest or best
  record::ProbeSettings settings;
  std::string device = "cpu";  // auto | cpu | cuda: one sample is fastest on the CPU
  std::string data_root;       // where IMDb is read from; empty: data::default_data_root()
};

struct RunProbe {
  record::LayerProbe probe;
  std::string checkpoint;  // the label probed
  int64_t step = 0;        // the checkpoint's step and epoch
  int64_t epoch = 0;
  std::string metric;     // "accuracy" or "rmse"
  bool reloaded = false;  // this call (re)loaded the task or the checkpoint (false: all came from the cache)
  double seconds = 0.0;   // wall time of this call
};

class LayerProbeSession {
 public:
  explicit LayerProbeSession(size_t runs_kept = 4);
  ~LayerProbeSession();
  LayerProbeSession(const LayerProbeSession&) = delete;
  LayerProbeSession& operator=(const LayerProbeSession&) = delete;

  // Probes on the calling thread; calls from several threads take turns. Throws Errors naming the file (a missing
  // checkpoint, a sparse vit/gpt run, a damaged file), the sample (out of range, with the test size) or the noise.
  RunProbe probe(const LayerProbeRequest& request);
  void forget(const std::string& run_path);  // drops a run's task (its next probe loads it again)

 private:
  struct Cache;
  std::mutex mutex_;
  std::unique_ptr<Cache> cache_;
};

// One probe, nothing kept (the CLI).
RunProbe probe_run(const LayerProbeRequest& request);

}  // namespace descentlab::session
