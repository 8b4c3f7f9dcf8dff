#pragma once
// Process-wide runtime set-up: thread counts (set once, at start-up, before any work) and a description of the
// numeric back-end (LibTorch version, BLAS, CUDA) for --version, run files and the status bar.

#include <string>

namespace descentlab {

struct RuntimeInfo {
  std::string descentlab_version;
  std::string torch_version;
  std::string blas;  // e.g. "OpenBLAS 0.3.21 ... (pthread)"; "unknown" when the BLAS cannot say
  // What the LibTorch was built with, read from at::show_config(): "CPU only", or e.g. "CUDA 12.4, cuDNN 90100".
  std::string torch_build;
  std::string cuda_runtime;  // the CUDA runtime LibTorch loaded ("12.4"); empty for a CPU-only LibTorch
  std::string cudnn;         // the cuDNN it loaded ("9.1.0"); empty when none
  bool cuda_available = false;
  int cuda_devices = 0;
  int threads = 1;  // torch intra-op threads (and BLAS threads, kept equal)
};

// The thread count to use: DESCENTLAB_THREADS when set to a positive integer, else `fallback`.
// Throws descentlab::Error naming the variable when it is set to something else.
int threads_from_environment(int fallback);

// Sets LibTorch's intra-op threads and OpenBLAS's threads to the same count, so the two pools never
// oversubscribe the cores. Call once in main() before any tensor work.
void configure_threads(int threads);

// Keeps memory the allocator freed inside the process instead of handing it back to the OS at once: glibc's
// defaults unmap or trim the large buffers a training step frees, and the next step faults them in again. Measured
// on the video-constrained quick run on the main thread: 3.0 -> 4.5 steps/s (docs/benchmarks.md). All threads share
// one arena, so a training thread (the GUI's) gets the same. Call it before any thread starts.
void configure_allocator();

// What every program does once in main() before any tensor work: configure_allocator() and
// configure_threads(threads).
void configure_process(int threads);

RuntimeInfo runtime_info();

// The runtime as `descentlab-cli --version` prints it: one "what: value" line each, for people and bug reports.
std::string runtime_text(const RuntimeInfo& info);

// The value after `label` up to the end of its line in LibTorch's configuration text (at::show_config()), trimmed;
// empty when the label is absent. Exposed for tests: the text's format is LibTorch's, not ours.
std::string config_value(const std::string& config, const std::string& label);

}  // namespace descentlab
