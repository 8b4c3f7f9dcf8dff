#pragma once
// Writes a data file in the format a user's data file follows (docs/your-model.md; read and checked by
// data_file.h): the root attributes task, classes or vocabulary, name (and, for characters, `characters`), and
// train/x, train/y, test/x, test/y, each chunked along the first dimension only. `descentlab-cli data export` writes
// the built-in datasets this way so that a user starts from a working file. Torch-free: the values come as plain
// row-major arrays.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/data_file.h"

namespace descentlab::data {

// One dataset to write: `shape[0]` rows of row-major values, float32 (`floats`) or int64 (`integers`), exactly one
// of the two given. The values are the caller's; they must live until write_data_file returns.
struct DataArrayValues {
  std::string name;  // "train/x"
  const float* floats = nullptr;
  const int64_t* integers = nullptr;
  std::vector<int64_t> shape;
};

struct DataFileContents {
  DataTask task = DataTask::classification;
  int64_t classes = 0;     // classification: the attribute `classes`
  int64_t vocabulary = 0;  // next-token (and token inputs, for information): the attribute `vocabulary` when > 0
  std::string name;        // the attribute `name`, when not empty
  std::string characters;  // the attribute `characters` (UTF-8: the character of each token 1..V-1), when not empty
  std::vector<DataArrayValues> arrays;  // train/x, train/y, test/x, test/y
};

// The rows of one chunk of a dataset of `shape` whose elements take `element_bytes`: about 1 MiB, at most 1024
// rows and at most the rows there are, at least 1. The other dimensions are never split, so that the lab reads whole
// rows a chunk at a time.
int64_t chunk_rows_for(const std::vector<int64_t>& shape, size_t element_bytes);

// Refuses (DataError naming `path`) an existing `path` unless `overwrite`: checked before the caller reads the data
// to write, and again by write_data_file.
void refuse_existing_output(const std::string& path, bool overwrite);

// Writes `contents` to a temporary name beside `path`, syncs it to disk, renames it over `path` and syncs the folder:
// a reader sees the old file or the whole new one, never a part. An existing `path` is refused (DataError) unless
// `overwrite`; a failed write (a full disk, no permission) throws IoError naming `path`, removes the temporary and
// leaves an existing `path` as it was. Arrays whose values are missing or disagree with their shape are refused
// (std::invalid_argument: a bug of the caller).
void write_data_file(const std::string& path, const DataFileContents& contents, bool overwrite);

}  // namespace descentlab::data
