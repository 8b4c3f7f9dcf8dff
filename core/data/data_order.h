#pragma once
// The order in which a trainer visits its training samples: a fresh permutation each epoch, a pure function of
// (seed, epoch), and a cursor inside it. Saving the three numbers is enough to resume mid-epoch exactly.

#include <cstdint>
#include <vector>

namespace descentlab::data {

// A permutation of 0..size-1 for `epoch`, the same on every machine (SplitMix64 Fisher-Yates).
std::vector<int64_t> epoch_permutation(uint64_t seed, int64_t epoch, int64_t size);

class DataOrder {
 public:
  DataOrder(uint64_t seed, int64_t dataset_size);

  // The next `batch_size` sample indices; an epoch ends with a shorter batch when the size does not divide.
  // Starts the next epoch (new permutation) once the current one is used up.
  std::vector<int64_t> next_batch(int64_t batch_size);

  uint64_t seed() const { return seed_; }
  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  int64_t dataset_size() const { return size_; }
  int64_t batches_per_epoch(int64_t batch_size) const { return (size_ + batch_size - 1) / batch_size; }

  // Restores a saved cursor (throws descentlab::Error when it does not fit this dataset).
  void restore(uint64_t seed, int64_t epoch, int64_t position);

 private:
  uint64_t seed_;
  int64_t size_;
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  std::vector<int64_t> permutation_;
};

}  // namespace descentlab::data
