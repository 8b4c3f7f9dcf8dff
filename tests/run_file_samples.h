#pragma once
// Sample run-file contents shared by the run-file tests, the crash test and the Python interop check.

#include <cmath>
#include <cstring>
#include <string>

#include "core/record/events.h"
#include "core/store/run_file.h"
#include "core/store/run_writer.h"

namespace descentlab::testing {

// A writer that commits only when asked (flush, checkpoints): tests decide when the disk is touched.
inline store::RunWriterOptions manual_flush() {
  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  return options;
}

inline store::RunHeader sample_header() {
  store::RunHeader header;
  header.app_version = "0.1.0-test";
  header.torch_version = "1.13.0";
  header.device = "cpu";
  header.config_json = R"({"preset": "test", "layers": 3, "lr": 0.001})";
  return header;
}

inline record::HistogramSnapshot sample_histogram(int64_t step) {
  record::HistogramSnapshot snapshot;
  snapshot.name = "global";
  snapshot.step = step;
  snapshot.bin_edges = {1e-6, 1e-4, 1e-2, 1.0};
  snapshot.counts = {step, 2 * step, 3};
  return snapshot;
}

inline record::SweepResult sample_sweep() {
  record::SweepResult sweep;
  sweep.name = "gaussian";
  sweep.noise = "gaussian";
  sweep.metric_name = "accuracy";
  sweep.gamma = {0.0, 0.5, 1.0};
  sweep.seeds = {0, 1};
  sweep.metric = {0.9, 0.91, 0.8, 0.82, 0.6, 0.65};
  sweep.layers = 2;
  sweep.layer_loss = {0.7, 0.3, 0.7, 0.31, 0.75, 0.4, 0.74, 0.41, 0.8, 0.6, 0.8, 0.61};
  return sweep;
}

// A float32 tensor blob holding 0, 1, ..., n-1 scaled by `scale`.
inline record::TensorBlob sample_blob(std::vector<int64_t> shape, float scale) {
  record::TensorBlob blob;
  blob.dtype = "float32";
  blob.shape = std::move(shape);
  const int64_t count = blob.numel();
  blob.bytes.resize(static_cast<size_t>(count) * sizeof(float));
  auto* values = reinterpret_cast<float*>(blob.bytes.data());
  for (int64_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>(i);
  return blob;
}

inline record::CheckpointData sample_checkpoint(int64_t step, int64_t elements = 12) {
  record::CheckpointData checkpoint;
  checkpoint.step = step;
  checkpoint.epoch = step / 10;
  checkpoint.extra_json = R"({"optimizer": "horst", "alpha": 5.0})";
  checkpoint.sections["model"]["blocks.0.attn.in_proj_weight"] = sample_blob({elements / 4, 4}, 0.5f);
  checkpoint.sections["model"]["readout.bias"] = sample_blob({4}, static_cast<float>(step));
  record::TensorBlob counter;
  counter.dtype = "int64";
  counter.bytes.resize(8);
  std::memcpy(counter.bytes.data(), &step, 8);
  checkpoint.sections["optimizer"]["state.0.step"] = counter;  // a 0-d tensor
  checkpoint.sections["dual"]["lambda"] = sample_blob({3}, 0.25f);
  return checkpoint;
}

}  // namespace descentlab::testing
