#pragma once
// What a training run will allocate, estimated from its configuration alone before anything is allocated: the
// parameters x 4 bytes (float32) for the weights, their gradients, the optimizer's state and one checkpoint copy;
// the activations one training batch keeps for the backward pass; the dataset's tensors. TrainingSession checks it
// against the memory there is (core/util/system_memory.h) and refuses a run that cannot fit, with these numbers,
// instead of allocating for minutes and then failing with a bare std::bad_alloc. Torch-free: formulas only; the
// parameter counts are tested against the built models (tests/test_footprint.cpp).

#include <string>

#include "core/config/experiment_config.h"
#include "core/util/system_memory.h"

namespace descentlab::config {

struct Footprint {
  double parameters = 0.0;        // the model's parameter count
  double model_bytes = 0.0;       // weights, gradients, optimizer state, a checkpoint copy
  double activation_bytes = 0.0;  // what one training batch keeps for backward
  double data_bytes = 0.0;        // the dataset's tensors (and a staging copy)
  double total() const { return model_bytes + activation_bytes + data_bytes; }
  // "17.5 billion parameters; weights, gradients, optimizer state and a checkpoint copy: 455 GiB; activations of a
  // batch of 16: 153 GiB; data: 48 MiB"
  std::string describe(int64_t batch_size) const;
};

// The parameter count of the model a config builds (text: the vocabulary at its configured maximum; gpt: 256
// characters at most).
double parameter_count(const config::ExperimentConfig& config);
Footprint estimate_footprint(const config::ExperimentConfig& config);

// Throws MemoryError naming the estimate, its parts, what is available and where that figure comes from, when the
// run would not fit in host memory: everything when `model_on_host` (a CPU run), else the data alone (a CUDA run,
// whose model and activations live on the device).
void require_fits(const config::ExperimentConfig& config, const Footprint& footprint, bool model_on_host,
                  const MemoryAvailability& available);

// The line for an allocation that failed while a run of `config` was set up or trained on `device` ("cpu",
// "cuda:0"; "" when not known yet): out of memory, `failed` (session::failed_allocation's words: "an allocation of
// 192 MiB (201326592 bytes) of host memory failed"), the run's estimate and its parts, and what to make smaller.
std::string out_of_memory_message(const config::ExperimentConfig& config, const Footprint& footprint,
                                  const std::string& failed, const std::string& device);

}  // namespace descentlab::config
