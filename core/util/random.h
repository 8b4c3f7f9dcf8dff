#pragma once
// A small, fully specified random stream for data order, splits and generators. std::shuffle and the
// std:: distributions are implementation-defined, so they would give different splits on different standard
// libraries; SplitMix64 (Steele, Lea, Flood 2014) gives the same numbers everywhere.

#include <cstdint>
#include <utility>
#include <vector>

namespace descentlab {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [low, high).
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  // Unbiased integer in [0, bound) by rejection (bound > 0).
  uint64_t below(uint64_t bound) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value = next();
    while (value >= limit) value = next();
    return value % bound;
  }

 private:
  uint64_t state_;
};

// Derives an independent seed for item `index` of a stream seeded with `seed` (random access to clip i).
inline uint64_t derive_seed(uint64_t seed, uint64_t index) {
  SplitMix64 mixer(seed ^ (0xD1B54A32D192ED03ULL * (index + 1)));
  return mixer.next();
}

// Fisher-Yates shuffle driven by SplitMix64.
template <typename T>
void deterministic_shuffle(std::vector<T>& items, uint64_t seed) {
  SplitMix64 rng(seed);
  for (size_t i = items.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng.below(i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace descentlab
