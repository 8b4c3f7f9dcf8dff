#pragma once
// A user's data file (issue 53; docs/your-model.md): one HDF5 file with a root attribute `task`
// ("classification", "regression" or "next-token"), the datasets train/x, train/y, test/x, test/y, and for
// classification the attribute `classes`, for next-token `vocabulary`. This reads its description and checks it
// against the contract (shapes, dtypes, label ranges), and reads rows in blocks converted to float32 or int64, so a
// dataset larger than memory is read a block at a time. Torch-free: the tasks turn the blocks into tensors.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace descentlab::data {

enum class DataTask { classification, regression, next_token };
const char* data_task_word(DataTask task);  // "classification", "regression", "next-token"

// One of the four datasets: its element kind and shape as stored, and its chunking (empty: contiguous).
struct DataArray {
  std::string name;  // "train/x"
  bool integer = false;
  std::string stored_type;  // "float32", "int64", "uint8", ...
  std::vector<int64_t> shape;
  std::vector<int64_t> chunk;
  int64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  // Elements of one row (the product of the shape after the first dimension).
  int64_t row_elements() const;
  // Bytes of one element as the lab holds it: int64 for integers, float32 for floats.
  int64_t element_bytes() const { return integer ? 8 : 4; }
};

struct DataFileInfo {
  std::string path;
  std::string name;  // the attribute `name`, else the file's stem
  DataTask task = DataTask::classification;
  int64_t classes = 0;     // classification
  int64_t vocabulary = 0;  // next-token
  DataArray train_x, train_y, test_x, test_y;
  // Over the training inputs (float inputs only; 0 for tokens): the mean and the standard deviation of every
  // element, which the robustness sweep scales its noise by. Filled by read_data_file's statistics pass.
  double input_mean = 0.0;
  double input_std = 0.0;
  // Integer inputs (tokens): the largest token of train/x and test/x (every token is checked to be at least 0);
  // -1 for float inputs.
  int64_t input_max = -1;
};

// Reads the description of `path` and checks everything the contract says that the data alone decides: the task
// and its attribute, the four datasets present, numeric, x and y of the same rows, train and test alike after the
// first dimension, y's element kind and shape for the task, and (reading y whole, and x in blocks for the input
// statistics) every label within 0..classes-1 or every token within 0..vocabulary-1, and every float finite.
// Throws DataError naming the file, the dataset or attribute, and what was expected and found.
DataFileInfo read_data_file(const std::string& path);

// Only the file's task (its root attribute), for a front end that fills a config before the run reads the file
// whole. Throws DataError naming the file as read_data_file does.
DataTask read_data_task(const std::string& path);

// Whether the file's inputs (train/x) are integers (tokens) rather than floats, read from its description alone.
bool has_integer_inputs(const std::string& path);

// Rows [first, first + count) of `array` of the file `path`, converted to float32 (a float array) or int64 (an
// integer one): row-major, count * row_elements() values. Throws DataError naming the file and dataset.
std::vector<float> read_float_rows(const std::string& path, const DataArray& array, int64_t first, int64_t count);
std::vector<int64_t> read_integer_rows(const std::string& path, const DataArray& array, int64_t first, int64_t count);
// The same rows written to `out` (count * row_elements() values; float32 or int64 as the array is float or integer).
void read_rows_into(const std::string& path, const DataArray& array, int64_t first, int64_t count, void* out);

// How many rows a block of reading holds: the dataset's chunk rows (at least 1), or 1024 for a contiguous one.
int64_t block_rows(const DataArray& array);

// The bytes the four datasets take in memory as the lab holds them (float32 or int64 elements).
uint64_t data_bytes_in_memory(const DataFileInfo& info);

}  // namespace descentlab::data
