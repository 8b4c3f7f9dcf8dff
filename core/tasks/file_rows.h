#pragma once
// The rows of one split (x and y) of a user's data file (core/data/data_file.h; issue 53 item 3): held whole in
// memory when they fit the memory they may take (data.memory_mb), else read from the file a chunk of rows at a time
// into a cache that holds one shuffle window of chunks (core/data/data_order.h: ShuffleWindow), so a dataset larger
// than memory trains. A batch gathers its rows from the chunks that hold them; a chunk the cache lacks is read whole
// (one HDF5 hyperslab, aligned to the dataset's own chunking), and the chunks used longest ago give way.

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/data/data_file.h"
#include "core/data/data_order.h"
#include "core/tasks/batch.h"

namespace descentlab::tasks {

// The bytes one row of x and y takes in memory (float32 or int64 elements).
int64_t row_bytes(const data::DataArray& x, const data::DataArray& y);

// The whole of `array` of the file `path` as a CPU tensor (float32 or int64), or its rows [first, first + count).
torch::Tensor read_rows(const std::string& path, const data::DataArray& array, int64_t first, int64_t count);

class SplitRows {
 public:
  // The rows of x and y; `memory_bytes`: the most they may take. Within it, they are read whole now; beyond it, a
  // window of as many chunks of x's chunk rows as fit (at least one) is what the cache holds.
  SplitRows(std::string path, data::DataArray x, data::DataArray y, int64_t memory_bytes);

  int64_t size() const { return x_.rows(); }
  bool streamed() const { return !whole_x_.defined(); }
  // The shuffle window that reads each chunk once per epoch (whole: the default, every row shuffled together).
  data::ShuffleWindow window() const { return streamed() ? window_ : data::ShuffleWindow{}; }

  // The rows `indices` (on the CPU), in that order.
  Batch gather(const std::vector<int64_t>& indices);
  // The rows [start, start + count) (on the CPU).
  Batch range(int64_t start, int64_t count);

  // Chunks read from the file so far, and the most bytes of rows held at once (for tests and the benchmark).
  int64_t chunk_reads() const { return chunk_reads_; }
  int64_t peak_bytes() const { return peak_bytes_; }

 private:
  struct Chunk {
    torch::Tensor x, y;
    uint64_t last_used = 0;
  };
  // The chunk `index`, read when the cache lacks it; `keep` names the chunks the caller still needs.
  const Chunk& chunk(int64_t index, const std::vector<int64_t>& keep);

  std::string path_;
  data::DataArray x_, y_;
  torch::Tensor whole_x_, whole_y_;  // defined when the rows are held whole
  data::ShuffleWindow window_;
  std::map<int64_t, Chunk> cache_;
  uint64_t uses_ = 0;
  int64_t held_bytes_ = 0;  // of the chunks in cache_
  int64_t chunk_reads_ = 0;
  int64_t peak_bytes_ = 0;
};

}  // namespace descentlab::tasks
