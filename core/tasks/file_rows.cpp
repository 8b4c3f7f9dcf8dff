#include "core/tasks/file_rows.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace descentlab::tasks {
namespace {

// A streamed chunk aims at about this many bytes (a multiple of the dataset's own chunk rows), and at most an
// eighth of the window, so that one shuffle mixes several chunks.
constexpr int64_t kChunkBytes = int64_t{1} << 20;

}  // namespace

int64_t row_bytes(const data::DataArray& x, const data::DataArray& y) {
  return x.row_elements() * x.element_bytes() + y.row_elements() * y.element_bytes();
}

torch::Tensor read_rows(const std::string& path, const data::DataArray& array, int64_t first, int64_t count) {
  std::vector<int64_t> shape(array.shape.begin(), array.shape.end());
  shape[0] = count;
  const auto dtype = array.integer ? torch::kInt64 : torch::kFloat32;
  torch::Tensor rows = torch::empty(shape, torch::TensorOptions().dtype(dtype));
  // A block of rows at a time (the dataset's chunk rows), straight into the tensor.
  const int64_t block = data::block_rows(array);
  for (int64_t done = 0; done < count; done += block) {
    data::read_rows_into(path, array, first + done, std::min(block, count - done), rows[done].data_ptr());
  }
  return rows;
}

SplitRows::SplitRows(std::string path, data::DataArray x, data::DataArray y, int64_t memory_bytes)
    : path_(std::move(path)), x_(std::move(x)), y_(std::move(y)) {
  const int64_t bytes_per_row = std::max<int64_t>(1, row_bytes(x_, y_));
  if (size() * bytes_per_row <= memory_bytes) {
    whole_x_ = read_rows(path_, x_, 0, size());
    whole_y_ = read_rows(path_, y_, 0, size());
    peak_bytes_ = size() * bytes_per_row;
    return;
  }
  const int64_t block = data::block_rows(x_);
  const int64_t aim = std::max<int64_t>(1, std::min(kChunkBytes, memory_bytes / 8));
  const int64_t blocks = std::max<int64_t>(1, aim / std::max<int64_t>(1, block * bytes_per_row));
  window_.chunk_rows = std::min(size(), block * blocks);
  window_.chunks = std::max<int64_t>(1, memory_bytes / (window_.chunk_rows * bytes_per_row));
}

const SplitRows::Chunk& SplitRows::chunk(int64_t index, const std::vector<int64_t>& keep) {
  auto found = cache_.find(index);
  if (found == cache_.end()) {
    // Room for one more: the chunks used longest ago that this batch does not need give way.
    while (static_cast<int64_t>(cache_.size()) >= window_.chunks) {
      auto oldest = cache_.end();
      for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (std::find(keep.begin(), keep.end(), it->first) != keep.end()) continue;
        if (oldest == cache_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
      }
      if (oldest == cache_.end()) break;  // every chunk held is still to serve this batch
      held_bytes_ -= static_cast<int64_t>(oldest->second.x.nbytes() + oldest->second.y.nbytes());
      cache_.erase(oldest);
    }
    const int64_t first = index * window_.chunk_rows;
    const int64_t count = std::min(window_.chunk_rows, size() - first);
    Chunk read{read_rows(path_, x_, first, count), read_rows(path_, y_, first, count), 0};
    ++chunk_reads_;
    held_bytes_ += static_cast<int64_t>(read.x.nbytes() + read.y.nbytes());
    peak_bytes_ = std::max(peak_bytes_, held_bytes_);
    found = cache_.emplace(index, std::move(read)).first;
  }
  found->second.last_used = ++uses_;
  return found->second;
}

Batch SplitRows::gather(const std::vector<int64_t>& indices) {
  if (!streamed()) {
    const torch::Tensor rows = torch::tensor(indices, torch::kInt64);
    return {whole_x_.index_select(0, rows), whole_y_.index_select(0, rows)};
  }
  // The batch's rows by chunk: each chunk's local rows and where they go in the batch.
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_chunk;
  for (size_t i = 0; i < indices.size(); ++i) {
    auto& [local, position] = by_chunk[indices[i] / window_.chunk_rows];
    local.push_back(indices[i] % window_.chunk_rows);
    position.push_back(static_cast<int64_t>(i));
  }
  const auto batch_shape = [&](const data::DataArray& array) {
    std::vector<int64_t> shape(array.shape.begin(), array.shape.end());
    shape[0] = static_cast<int64_t>(indices.size());
    return shape;
  };
  const auto dtype = [](const data::DataArray& array) { return array.integer ? torch::kInt64 : torch::kFloat32; };
  Batch batch{torch::empty(batch_shape(x_), torch::TensorOptions().dtype(dtype(x_))),
              torch::empty(batch_shape(y_), torch::TensorOptions().dtype(dtype(y_)))};
  // The chunks held first, then the others one at a time: a chunk whose rows are copied may give way, so a batch
  // that ends one window and begins the next never holds more than a window of chunks. Rows are copied as bytes
  // (a tensor operation per chunk would cost more than the copy: a window holds many chunks).
  std::vector<int64_t> pending;
  for (const auto& [index, unused] : by_chunk) pending.push_back(index);
  std::stable_partition(pending.begin(), pending.end(), [&](int64_t index) { return cache_.count(index) > 0; });
  const size_t x_row = static_cast<size_t>(x_.row_elements() * x_.element_bytes());
  const size_t y_row = static_cast<size_t>(y_.row_elements() * y_.element_bytes());
  auto* x_out = static_cast<char*>(batch.input.data_ptr());
  auto* y_out = static_cast<char*>(batch.target.data_ptr());
  for (size_t i = 0; i < pending.size(); ++i) {
    const std::vector<int64_t> still_needed(pending.begin() + static_cast<std::ptrdiff_t>(i), pending.end());
    const Chunk& held = chunk(pending[i], still_needed);
    const auto* x_in = static_cast<const char*>(held.x.data_ptr());
    const auto* y_in = static_cast<const char*>(held.y.data_ptr());
    const auto& [local_rows, positions] = by_chunk.at(pending[i]);
    for (size_t r = 0; r < local_rows.size(); ++r) {
      const auto local = static_cast<size_t>(local_rows[r]);
      const auto position = static_cast<size_t>(positions[r]);
      std::memcpy(x_out + position * x_row, x_in + local * x_row, x_row);
      std::memcpy(y_out + position * y_row, y_in + local * y_row, y_row);
    }
  }
  return batch;
}

Batch SplitRows::range(int64_t start, int64_t count) {
  if (!streamed()) return {whole_x_.narrow(0, start, count), whole_y_.narrow(0, start, count)};
  return {read_rows(path_, x_, start, count), read_rows(path_, y_, start, count)};
}

}  // namespace descentlab::tasks
