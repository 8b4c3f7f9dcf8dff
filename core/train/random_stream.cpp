#include "core/train/random_stream.h"

#include <ATen/CPUGeneratorImpl.h>

#include <atomic>

namespace descentlab::train {
namespace {

thread_local RandomStream* thread_stream = nullptr;
std::atomic<bool> streams_enabled{true};

torch::Tensor default_state() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void set_default_state(const torch::Tensor& state) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace

std::recursive_mutex& default_generator_lock() {
  static std::recursive_mutex lock;
  return lock;
}

void RandomStream::seed_and_initialise(uint64_t seed, const std::function<void()>& initialise) {
  std::lock_guard<std::recursive_mutex> lock(default_generator_lock());
  torch::manual_seed(seed);
  if (initialise) initialise();
  set_state(default_state());
}

torch::Tensor RandomStream::state() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return state_;
}

void RandomStream::set_state(const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  state_ = state.clone();
}

RandomStream::Lease::Lease(RandomStream* stream) : stream_(stream), lock_(default_generator_lock()) {
  if (!stream_) return;
  const torch::Tensor state = stream_->state();
  if (state.defined()) set_default_state(state);
}

RandomStream::Lease::Lease(Lease&& other) noexcept : stream_(other.stream_), lock_(std::move(other.lock_)) {
  other.stream_ = nullptr;
}

RandomStream::Lease::~Lease() {
  release();
}

void RandomStream::Lease::release() {
  if (!lock_.owns_lock()) return;
  if (stream_) stream_->set_state(default_state());
  lock_.unlock();
}

RandomStream* current_random_stream() {
  return thread_stream;
}

CurrentRandomStream::CurrentRandomStream(RandomStream* stream) : previous_(thread_stream) {
  thread_stream = stream;
}

CurrentRandomStream::~CurrentRandomStream() {
  thread_stream = previous_;
}

RandomStream::Lease lease_random_stream() {
  if (!streams_enabled.load(std::memory_order_relaxed)) return RandomStream::Lease();
  return RandomStream::Lease(thread_stream);
}

void set_random_streams_enabled(bool enabled) {
  streams_enabled.store(enabled);
}

torch::Tensor current_random_state() {
  if (thread_stream && streams_enabled.load(std::memory_order_relaxed)) {
    torch::Tensor state = thread_stream->state();
    if (state.defined()) return state;
  }
  std::lock_guard<std::recursive_mutex> lock(default_generator_lock());
  return default_state();
}

void set_current_random_state(const torch::Tensor& state) {
  if (thread_stream && streams_enabled.load(std::memory_order_relaxed)) {
    // Checked now, on a scratch generator, so that a damaged state is refused here and not at the next lease.
    at::Generator scratch = at::detail::createCPUGenerator();
    scratch.set_state(state);
    thread_stream->set_state(state);
    return;
  }
  std::lock_guard<std::recursive_mutex> lock(default_generator_lock());
  set_default_state(state);
}

}  // namespace descentlab::train
