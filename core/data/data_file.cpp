#include "core/data/data_file.h"

#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/util/error.h"

namespace descentlab::data {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& object, const std::string& message) {
  throw DataError(path, (object.empty() ? "" : object + ": ") + message + " (the contract: docs/your-model.md)");
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string type_name(const H5::DataType& type) {
  const H5T_class_t kind = type.getClass();
  const size_t bytes = type.getSize();
  if (kind == H5T_FLOAT) return "float" + std::to_string(8 * bytes);
  if (kind == H5T_INTEGER) {
    const bool is_signed = H5::IntType(type.getId()).getSign() != H5T_SGN_NONE;
    return std::string(is_signed ? "int" : "uint") + std::to_string(8 * bytes);
  }
  return "a non-numeric type";
}

bool has_attribute(const H5::H5Object& object, const char* name) {
  return object.attrExists(name);
}

std::string string_attribute(const H5::H5Object& object, const char* name, const std::string& path) {
  const H5::Attribute attribute = object.openAttribute(name);
  if (attribute.getTypeClass() != H5T_STRING) refuse(path, std::string("/@") + name, "is not a string");
  std::string value;
  attribute.read(attribute.getStrType(), value);
  return value;
}

int64_t int_attribute(const H5::H5Object& object, const char* name, const std::string& path) {
  const H5::Attribute attribute = object.openAttribute(name);
  if (attribute.getTypeClass() != H5T_INTEGER || attribute.getSpace().getSimpleExtentNpoints() != 1) {
    refuse(path, std::string("/@") + name, "must be one integer");
  }
  int64_t value = 0;
  attribute.read(H5::PredType::NATIVE_INT64, &value);
  return value;
}

DataArray describe(const H5::H5File& file, const std::string& name, const std::string& path) {
  if (!file.nameExists(name)) refuse(path, "/" + name, "missing");
  if (file.childObjType(name) != H5O_TYPE_DATASET) refuse(path, "/" + name, "is not a dataset");
  const H5::DataSet dataset = file.openDataSet(name);
  DataArray array;
  array.name = name;
  const H5::DataType type = dataset.getDataType();
  array.stored_type = type_name(type);
  if (type.getClass() != H5T_FLOAT && type.getClass() != H5T_INTEGER) {
    refuse(path, "/" + name, "holds " + array.stored_type + "; numbers (float or integer) are expected");
  }
  array.integer = type.getClass() == H5T_INTEGER;
  const H5::DataSpace space = dataset.getSpace();
  std::vector<hsize_t> dims(static_cast<size_t>(space.getSimpleExtentNdims()));
  space.getSimpleExtentDims(dims.data());
  for (hsize_t dim : dims) array.shape.push_back(static_cast<int64_t>(dim));
  if (array.shape.empty() || array.shape[0] == 0) refuse(path, "/" + name, "has no rows " + shape_text(array.shape));
  const H5::DSetCreatPropList creation = dataset.getCreatePlist();
  if (creation.getLayout() == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(dims.size());
    creation.getChunk(static_cast<int>(chunk.size()), chunk.data());
    for (hsize_t dim : chunk) array.chunk.push_back(static_cast<int64_t>(dim));
  }
  return array;
}

DataTask task_of(const H5::H5File& file, const std::string& path) {
  const H5::Group root = file.openGroup("/");
  if (!has_attribute(root, "task")) {
    refuse(path, "/@task", "missing; set it to \"classification\", \"regression\" or \"next-token\"");
  }
  const std::string word = string_attribute(root, "task", path);
  for (DataTask task : {DataTask::classification, DataTask::regression, DataTask::next_token}) {
    if (word == data_task_word(task)) return task;
  }
  refuse(path, "/@task", "is \"" + word + "\"; expected \"classification\", \"regression\" or \"next-token\"");
}

std::vector<int64_t> tail(const std::vector<int64_t>& shape) {
  return std::vector<int64_t>(shape.begin() + 1, shape.end());
}

// The shapes and element kinds the task asks of the four datasets.
void check_shapes(const DataFileInfo& info) {
  const std::string& path = info.path;
  for (const auto* split : {&info.train_x, &info.test_x}) {
    const DataArray& y = split == &info.train_x ? info.train_y : info.test_y;
    if (split->rows() != y.rows()) {
      refuse(path, "/" + split->name,
             std::to_string(split->rows()) + " rows, but /" + y.name + " has " + std::to_string(y.rows()) +
                 ": x and y must have as many rows");
    }
  }
  for (const auto& [train, test] :
       {std::pair<const DataArray*, const DataArray*>{&info.train_x, &info.test_x}, {&info.train_y, &info.test_y}}) {
    if (tail(train->shape) != tail(test->shape) || train->integer != test->integer) {
      refuse(path, "/" + test->name,
             test->stored_type + " " + shape_text(test->shape) + " does not match /" + train->name + "'s " +
                 train->stored_type + " " + shape_text(train->shape) + " after the first dimension");
    }
  }
  const DataArray& x = info.train_x;
  const DataArray& y = info.train_y;
  if (info.task == DataTask::classification && (!y.integer || y.shape.size() != 1)) {
    refuse(path, "/train/y", y.stored_type + " " + shape_text(y.shape) + "; classification takes integer labels [N]");
  }
  if (info.task == DataTask::regression && (y.integer || x.integer)) {
    refuse(path, y.integer ? "/train/y" : "/train/x",
           (y.integer ? y.stored_type : x.stored_type) + "; regression takes float inputs and float targets");
  }
  if (info.task == DataTask::next_token && (!x.integer || !y.integer || x.shape.size() != 2 || y.shape != x.shape)) {
    refuse(path, "/train/y",
           "x " + x.stored_type + " " + shape_text(x.shape) + " and y " + y.stored_type + " " + shape_text(y.shape) +
               "; next-token takes integer tokens x [N, T] and y [N, T] (the token after each position)");
  }
}

}  // namespace

const char* data_task_word(DataTask task) {
  switch (task) {
    case DataTask::classification: return "classification";
    case DataTask::regression: return "regression";
    case DataTask::next_token: return "next-token";
  }
  return "?";
}

int64_t DataArray::row_elements() const {
  int64_t elements = 1;
  for (size_t i = 1; i < shape.size(); ++i) elements *= shape[i];
  return elements;
}

int64_t block_rows(const DataArray& array) {
  return array.chunk.empty() ? 1024 : std::max<int64_t>(1, array.chunk[0]);
}

uint64_t data_bytes_in_memory(const DataFileInfo& info) {
  uint64_t bytes = 0;
  for (const DataArray* array : {&info.train_x, &info.train_y, &info.test_x, &info.test_y}) {
    bytes += static_cast<uint64_t>(array->rows()) * static_cast<uint64_t>(array->row_elements()) *
             static_cast<uint64_t>(array->element_bytes());
  }
  return bytes;
}

namespace {

// Rows [first, first + count) of `array` into `out`, converted by HDF5 to `memory_type`.
void read_rows_to(const std::string& path, const DataArray& array, int64_t first, int64_t count,
                  const H5::PredType& memory_type, void* out) {
  if (first < 0 || count < 0 || first + count > array.rows()) {
    refuse(path, "/" + array.name,
           "rows " + std::to_string(first) + " to " + std::to_string(first + count) + " asked of " +
               std::to_string(array.rows()));
  }
  if (count == 0 || array.row_elements() == 0) return;
  try {
    H5::Exception::dontPrint();
    const H5::H5File file(path, H5F_ACC_RDONLY);
    const H5::DataSet dataset = file.openDataSet(array.name);
    H5::DataSpace space = dataset.getSpace();
    std::vector<hsize_t> start(array.shape.size(), 0), extent(array.shape.begin(), array.shape.end());
    start[0] = static_cast<hsize_t>(first);
    extent[0] = static_cast<hsize_t>(count);
    space.selectHyperslab(H5S_SELECT_SET, extent.data(), start.data());
    const H5::DataSpace memory(static_cast<int>(extent.size()), extent.data());
    dataset.read(out, memory_type, memory, space);
  } catch (const H5::Exception& error) {
    refuse(path, "/" + array.name, "cannot be read: " + error.getDetailMsg());
  }
}

template <typename T>
std::vector<T> read_rows(const std::string& path, const DataArray& array, int64_t first, int64_t count,
                         const H5::PredType& memory_type) {
  std::vector<T> values(static_cast<size_t>(std::max<int64_t>(0, count) * array.row_elements()));
  read_rows_to(path, array, first, count, memory_type, values.data());
  return values;
}

// Every label or token of `y` within 0..limit-1 (`what` names them).
void check_range(const std::string& path, const DataArray& y, int64_t limit, const char* what) {
  for (int64_t first = 0; first < y.rows(); first += block_rows(y)) {
    const int64_t count = std::min(block_rows(y), y.rows() - first);
    const std::vector<int64_t> values = read_integer_rows(path, y, first, count);
    const auto bad = std::find_if(values.begin(), values.end(), [&](int64_t v) { return v < 0 || v >= limit; });
    if (bad != values.end()) {
      const int64_t row = first + (bad - values.begin()) / std::max<int64_t>(1, y.row_elements());
      refuse(path, "/" + y.name,
             "row " + std::to_string(row) + " holds " + what + " " + std::to_string(*bad) + ", outside 0.." +
                 std::to_string(limit - 1));
    }
  }
}

// The largest token of an integer input array, refusing a negative one.
int64_t largest_token(const std::string& path, const DataArray& x) {
  int64_t largest = -1;
  for (int64_t first = 0; first < x.rows(); first += block_rows(x)) {
    const int64_t count = std::min(block_rows(x), x.rows() - first);
    const std::vector<int64_t> values = read_integer_rows(path, x, first, count);
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0) {
        refuse(path, "/" + x.name,
               "row " + std::to_string(first + static_cast<int64_t>(i) / std::max<int64_t>(1, x.row_elements())) +
                   " holds " + std::to_string(values[i]) + "; integer inputs are tokens, 0 or more");
      }
      largest = std::max(largest, values[i]);
    }
  }
  return largest;
}

// Every value of a float array finite; for train/x also its mean and standard deviation.
void check_finite(const std::string& path, const DataArray& array, double* mean, double* deviation) {
  double sum = 0.0, squares = 0.0;
  uint64_t seen = 0;
  for (int64_t first = 0; first < array.rows(); first += block_rows(array)) {
    const int64_t count = std::min(block_rows(array), array.rows() - first);
    const std::vector<float> values = read_float_rows(path, array, first, count);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) {
        refuse(path, "/" + array.name,
               "row " + std::to_string(first + static_cast<int64_t>(i) / std::max<int64_t>(1, array.row_elements())) +
                   " holds " + std::to_string(values[i]) + "; every value must be finite");
      }
      sum += values[i];
      squares += static_cast<double>(values[i]) * values[i];
    }
    seen += values.size();
  }
  if (mean && seen > 0) {
    *mean = sum / static_cast<double>(seen);
    *deviation = std::sqrt(std::max(0.0, squares / static_cast<double>(seen) - *mean * *mean));
  }
}

}  // namespace

std::vector<float> read_float_rows(const std::string& path, const DataArray& array, int64_t first, int64_t count) {
  return read_rows<float>(path, array, first, count, H5::PredType::NATIVE_FLOAT);
}

std::vector<int64_t> read_integer_rows(const std::string& path, const DataArray& array, int64_t first, int64_t count) {
  return read_rows<int64_t>(path, array, first, count, H5::PredType::NATIVE_INT64);
}

void read_rows_into(const std::string& path, const DataArray& array, int64_t first, int64_t count, void* out) {
  read_rows_to(path, array, first, count, array.integer ? H5::PredType::NATIVE_INT64 : H5::PredType::NATIVE_FLOAT, out);
}

namespace {

// `read` of the file `path` opened read-only, after checking that it exists and is HDF5; HDF5's errors named.
template <typename Read>
auto read_description(const std::string& path, Read read) -> decltype(read(std::declval<const H5::H5File&>())) {
  std::error_code status;
  if (!std::filesystem::exists(path, status)) throw DataError(path, "no such file");
  H5::Exception::dontPrint();
  if (H5::H5File::isHdf5(path.c_str()) <= 0) refuse(path, "", "not an HDF5 file");
  try {
    return read(H5::H5File(path, H5F_ACC_RDONLY));
  } catch (const H5::Exception& error) {
    refuse(path, "", "cannot be read as HDF5: " + error.getDetailMsg());
  }
}

}  // namespace

DataTask read_data_task(const std::string& path) {
  return read_description(path, [&](const H5::H5File& file) { return task_of(file, path); });
}

bool has_integer_inputs(const std::string& path) {
  return read_description(path, [&](const H5::H5File& file) { return describe(file, "train/x", path).integer; });
}

DataFileInfo read_data_file(const std::string& path) {
  DataFileInfo info = read_description(path, [&](const H5::H5File& file) {
    DataFileInfo described;
    described.path = path;
    described.task = task_of(file, path);
    const H5::Group root = file.openGroup("/");
    described.name = has_attribute(root, "name") ? string_attribute(root, "name", path)
                                                 : std::filesystem::path(path).stem().string();
    described.train_x = describe(file, "train/x", path);
    described.train_y = describe(file, "train/y", path);
    described.test_x = describe(file, "test/x", path);
    described.test_y = describe(file, "test/y", path);
    const char* needed = described.task == DataTask::classification ? "classes"
                         : described.task == DataTask::next_token   ? "vocabulary"
                                                                    : nullptr;
    if (needed) {
      if (!has_attribute(root, needed)) refuse(path, std::string("/@") + needed, "missing; the task needs it");
      const int64_t value = int_attribute(root, needed, path);
      if (value < 2) refuse(path, std::string("/@") + needed, std::to_string(value) + "; at least 2 are needed");
      (described.task == DataTask::classification ? described.classes : described.vocabulary) = value;
    }
    return described;
  });
  check_shapes(info);
  const int64_t limit = info.task == DataTask::classification ? info.classes : info.vocabulary;
  if (info.task != DataTask::regression) {
    const char* what = info.task == DataTask::classification ? "the label" : "the token";
    for (const DataArray* y : {&info.train_y, &info.test_y}) check_range(path, *y, limit, what);
  }
  if (info.task == DataTask::next_token) {
    for (const DataArray* x : {&info.train_x, &info.test_x}) check_range(path, *x, limit, "the token");
  }
  if (info.train_x.integer) {
    info.input_max = info.task == DataTask::next_token
                         ? info.vocabulary - 1
                         : std::max(largest_token(path, info.train_x), largest_token(path, info.test_x));
  }
  for (const DataArray* array : {&info.train_x, &info.test_x, &info.train_y, &info.test_y}) {
    if (array->integer) continue;
    const bool statistics = array == &info.train_x;
    check_finite(path, *array, statistics ? &info.input_mean : nullptr, statistics ? &info.input_std : nullptr);
  }
  return info;
}

}  // namespace descentlab::data
