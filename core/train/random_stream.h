#pragma once
// Each run's own stream of LibTorch's default CPU generator.
//
// Dropout (inside nn::Dropout and scaled_dot_product_attention, which take no generator), the video task's training
// noise and the weights' initialisation all draw from LibTorch's one process-wide CPU generator. Two runs training
// side by side in one process (the window, a tour's pair) would then interleave their draws, so neither would be
// the run the same config gives alone from the CLI (issue 17: a tour's measured effect did not show in the window).
//
// A RandomStream keeps one run's generator state. While a run draws (seeding and building its model; each training
// step's batch and forward pass) it holds a lease: the process-wide generator lock is taken and the run's state
// swapped in, and on release the state is kept and the lock given back. The backward pass and the optimizer step,
// which draw nothing, run outside the lease, so two runs still overlap most of their work. A run alone in its process
// draws exactly what it drew before streams existed (its state is the generator's own state at every lease), so
// every CLI result and checkpoint stays bit for bit the same.
//
// Scope: the CPU generator. CUDA runs' dropout draws from the CUDA generator, which is not swapped (runs side by
// side on one GPU still share it; docs/gui.md).

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <mutex>

namespace descentlab::train {

class RandomStream {
 public:
  // Seeds the default generator with `seed`, runs `initialise` (building the model draws its weights) and keeps the
  // generator's state as this stream's, all under the process-wide lock.
  void seed_and_initialise(uint64_t seed, const std::function<void()>& initialise);

  // The stream's state (a checkpoint's "rng/cpu"), and setting it (resume). Outside a lease.
  torch::Tensor state() const;
  void set_state(const torch::Tensor& state);

  // While alive: the process-wide generator lock held and this stream's state in the default generator.
  class Lease {
   public:
    explicit Lease(RandomStream* stream);
    Lease() = default;  // holds nothing (streams switched off)
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    void release();  // keeps the stream's state and gives the lock back (idempotent)

   private:
    RandomStream* stream_ = nullptr;
    std::unique_lock<std::recursive_mutex> lock_;
  };

 private:
  mutable std::mutex state_mutex_;
  torch::Tensor state_;  // undefined until seeded: the generator's state is used as it is
};

// The process-wide lock every user of the default CPU generator outside a run takes around its draws (a sweep or a
// probe building its model), so that it never draws inside another run's lease.
std::recursive_mutex& default_generator_lock();

// The calling thread's run stream (set by TrainingSession for its thread), or null.
RandomStream* current_random_stream();

class CurrentRandomStream {
 public:
  explicit CurrentRandomStream(RandomStream* stream);
  ~CurrentRandomStream();
  CurrentRandomStream(const CurrentRandomStream&) = delete;
  CurrentRandomStream& operator=(const CurrentRandomStream&) = delete;

 private:
  RandomStream* previous_;
};

// A lease on the calling thread's stream; without one (a trainer built by a test) it takes only the lock.
RandomStream::Lease lease_random_stream();

// Off: leases neither lock nor swap, so runs side by side share the generator as before streams existed (the
// benchmark's baseline, bench/side_by_side_bench.cpp). On by default.
void set_random_streams_enabled(bool enabled);

// The CPU generator's state: the calling thread's stream's, or the default generator's when there is none
// (checkpoints save it; resume restores it).
torch::Tensor current_random_state();
void set_current_random_state(const torch::Tensor& state);

}  // namespace descentlab::train
