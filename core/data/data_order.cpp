#include "core/data/data_order.h"

#include <algorithm>
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

std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t size, const ShuffleWindow& window) {
  if (window.covers(size)) return epoch_permutation(seed, epoch, size);
  const int64_t chunk_count = (size + window.chunk_rows - 1) / window.chunk_rows;
  // The chunks' order has a seed of its own, so that it is not the rows' order of a dataset of chunk_count rows.
  const std::vector<int64_t> chunks = epoch_permutation(derive_seed(seed, 0x63686b73 /* "chks" */), epoch, chunk_count);
  const uint64_t epoch_seed = derive_seed(seed, static_cast<uint64_t>(epoch));
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(size));
  for (int64_t group = 0; group * window.chunks < chunk_count; ++group) {
    const auto begin = order.size();
    const int64_t last = std::min(chunk_count, (group + 1) * window.chunks);
    for (int64_t c = group * window.chunks; c < last; ++c) {
      const int64_t first_row = chunks[static_cast<size_t>(c)] * window.chunk_rows;
      const int64_t end_row = std::min(size, first_row + window.chunk_rows);
      for (int64_t row = first_row; row < end_row; ++row) order.push_back(row);
    }
    std::vector<int64_t> rows(order.begin() + static_cast<std::ptrdiff_t>(begin), order.end());
    deterministic_shuffle(rows, derive_seed(epoch_seed, static_cast<uint64_t>(group) + 1));
    std::copy(rows.begin(), rows.end(), order.begin() + static_cast<std::ptrdiff_t>(begin));
  }
  return order;
}

DataOrder::DataOrder(uint64_t seed, int64_t dataset_size, ShuffleWindow window)
    : seed_(seed), size_(dataset_size), window_(window) {
  if (dataset_size < 1) throw Error("data order: the dataset is empty");
  permutation_ = epoch_order(seed_, epoch_, size_, window_);
}

std::vector<int64_t> DataOrder::next_batch(int64_t batch_size) {
  if (batch_size < 1) throw Error("data order: batch size must be >= 1, got " + std::to_string(batch_size));
  if (position_ >= size_) {
    ++epoch_;
    position_ = 0;
    permutation_ = epoch_order(seed_, epoch_, size_, window_);
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
  permutation_ = epoch_order(seed_, epoch_, size_, window_);
}

}  // namespace descentlab::data
