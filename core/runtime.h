#pragma once
// Process-wide runtime set-up: thread counts (set once, at start-up, before any work) and a description of the
// numeric back-end (LibTorch version, BLAS, CUDA) for --version, run files and the status bar.

#include <string>

namespace descentlab {

struct RuntimeInfo {
  std::string descentlab_version;
  std::string torch_version;
  std::string blas;  // e.g. "OpenBLAS 0.3.21 ... (pthread)"; "unknown" when the BLAS cannot say
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

}  // namespace descentlab
