#pragma once
// The order in which a trainer visits its training samples: a fresh permutation each epoch, a pure function of
// (seed, epoch) and the shuffle window, and a cursor inside it. Saving the three numbers is enough to resume
// mid-epoch exactly (the window is a function of the run's config and data file).

#include <cstdint>
#include <vector>

namespace descentlab::data {

// A permutation of 0..size-1 for `epoch`, the same on every machine (SplitMix64 Fisher-Yates).
std::vector<int64_t> epoch_permutation(uint64_t seed, int64_t epoch, int64_t size);

// How much of the dataset one shuffle mixes, for data read from a file chunk by chunk (a user's data file larger
// than the memory it may take; docs/your-model.md): the rows come in chunks of `chunk_rows` consecutive rows, and a
// window of `chunks` chunks is what memory holds at once. The default (or a window that covers every row) shuffles
// the whole dataset.
struct ShuffleWindow {
  int64_t chunk_rows = 0;
  int64_t chunks = 0;
  bool covers(int64_t size) const { return chunk_rows <= 0 || chunks <= 0 || chunk_rows * chunks >= size; }
};

// The samples of `epoch` in the order a trainer visits them. A window that covers the dataset: epoch_permutation.
// Otherwise by chunk: the chunks in a seeded order, taken `window.chunks` at a time, and the rows of those chunks
// shuffled together, so the order reads each chunk once per epoch while holding one window of chunks.
std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t size, const ShuffleWindow& window);

class DataOrder {
 public:
  DataOrder(uint64_t seed, int64_t dataset_size, ShuffleWindow window = {});

  // The next `batch_size` sample indices; an epoch ends with a shorter batch when the size does not divide.
  // Starts the next epoch (new permutation) once the current one is used up.
  std::vector<int64_t> next_batch(int64_t batch_size);

  uint64_t seed() const { return seed_; }
  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  int64_t dataset_size() const { return size_; }
  const ShuffleWindow& window() const { return window_; }
  int64_t batches_per_epoch(int64_t batch_size) const { return (size_ + batch_size - 1) / batch_size; }

  // Restores a saved cursor (throws descentlab::Error when it does not fit this dataset).
  void restore(uint64_t seed, int64_t epoch, int64_t position);

 private:
  uint64_t seed_;
  int64_t size_;
  ShuffleWindow window_;
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  std::vector<int64_t> permutation_;
};

}  // namespace descentlab::data
