#include "core/data/data_order.h"

#include <numeric>

#include "core/util/error.h"
#include "core/util/random.h"

namespace descentlab::data {

std::vector<int64_t> epoch_permutation(uint64_t seed, int64_t epoch, int64_t size) {
  std::vector<int64_t> order(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), int64_t{0});
  deterministic_shuffle(order, derive_seed(seed, static_cast<uint64_t>(epoch)));
  return order;
}

DataOrder::DataOrder(uint64_t seed, int64_t dataset_size) : seed_(seed), size_(dataset_size) {
  if (dataset_size < 1) throw Error("data order: the dataset is empty");
  permutation_ = epoch_permutation(seed_, epoch_, size_);
}

std::vector<int64_t> DataOrder::next_batch(int64_t batch_size) {
  if (batch_size < 1) throw Error("data order: batch size must be >= 1, got " + std::to_string(batch_size));
  if (position_ >= size_) {
    ++epoch_;
    position_ = 0;
    permutation_ = epoch_permutation(seed_, epoch_, size_);
  }
  const int64_t end = std::min(size_, position_ + batch_size);
  std::vector<int64_t> batch(permutation_.begin() + position_, permutation_.begin() + end);
  position_ = end;
  return batch;
}

void DataOrder::restore(uint64_t seed, int64_t epoch, int64_t position) {
  if (epoch < 0 || position < 0 || position > size_) {
    throw Error("data order: cannot resume at epoch " + std::to_string(epoch) + ", position " +
                std::to_string(position) + " of a dataset of " + std::to_string(size_));
  }
  seed_ = seed;
  epoch_ = epoch;
  position_ = position;
  permutation_ = epoch_permutation(seed_, epoch_, size_);
}

}  // namespace descentlab::data
