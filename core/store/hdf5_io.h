#pragma once
// Small helpers over the HDF5 C++ API shared by the run writer and reader. Internal to core/store.

#include <H5Cpp.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace descentlab::store::hdf5 {

// Silences HDF5's own error printing (we report errors ourselves, naming file and object). Idempotent.
void quiet_library_errors();

bool link_exists(hid_t location, const std::string& name);
std::vector<std::string> child_names(const H5::Group& group);

bool has_attribute(const H5::H5Object& object, const std::string& name);
void set_string_attribute(H5::H5Object& object, const std::string& name, const std::string& value);
void set_int_attribute(H5::H5Object& object, const std::string& name, int64_t value);
void set_double_attribute(H5::H5Object& object, const std::string& name, double value);
std::string string_attribute(const H5::H5Object& object, const std::string& name);
int64_t int_attribute(const H5::H5Object& object, const std::string& name);
double double_attribute(const H5::H5Object& object, const std::string& name);

H5::Group open_or_create_group(H5::Group& parent, const std::string& name);

// Appends `rows` rows of `width` values (width 0: a 1-D dataset) to a chunked, compressed, unlimited dataset,
// creating it on first use.
void append_rows(H5::Group& group, const std::string& name, const H5::PredType& type, const void* data, hsize_t rows,
                 hsize_t width);

// Writes a fixed-size contiguous dataset (rank = shape.size(); rank 0 = scalar).
H5::DataSet write_array(H5::Group& group, const std::string& name, const H5::PredType& type,
                        const std::vector<hsize_t>& shape, const void* data, bool compress = false);

// Creates a fixed-size dataset whose `bytes` bytes are stored at `offset` of the external raw file `file_name`
// (HDF5 external storage; the name is resolved relative to the HDF5 file's folder by DescentLab's readers, and by
// HDF5 itself with HDF5_EXTFILE_PREFIX=${ORIGIN}). Nothing is written to the external file.
H5::DataSet create_external(H5::Group& group, const std::string& name, const H5::PredType& type,
                            const std::vector<hsize_t>& shape, const std::string& file_name, uint64_t offset,
                            uint64_t bytes);

std::vector<hsize_t> dataset_shape(const H5::DataSet& dataset);

// A dataset whose dataspace claims more than its file holds (damage: a forged or flipped extent), refused before
// anything is allocated. The message gives both numbers; readers name the file and the object.
class ClaimTooLarge : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The elements of `dataset`, after checking that `element_bytes` each fit in what the file stores for it: a
// contiguous dataset's storage must hold them, a chunked (compressed) one's at most 1100x its stored bytes (deflate
// does not exceed 1032:1) plus 1 MB. Throws ClaimTooLarge otherwise, also when the element count overflows.
hsize_t checked_element_count(const H5::DataSet& dataset, size_t element_bytes);

template <typename T>
std::vector<T> read_all(const H5::DataSet& dataset, const H5::PredType& type) {
  const hsize_t count = checked_element_count(dataset, sizeof(T));
  std::vector<T> values(static_cast<size_t>(count));
  if (count > 0) dataset.read(values.data(), type);
  return values;
}

// The last row of a 1-D or 2-D dataset (`width` values: 1 for 1-D), read alone (a hyperslab): a table that needs each
// series' last value reads one chunk, not the series. Empty when the dataset has no rows.
template <typename T>
std::vector<T> read_last_row(const H5::DataSet& dataset, const H5::PredType& type) {
  const auto dims = dataset_shape(dataset);
  if (dims.empty() || dims[0] == 0 || dims.size() > 2) return {};
  const hsize_t width = dims.size() == 2 ? dims[1] : 1;
  std::vector<T> row(static_cast<size_t>(width));
  H5::DataSpace file_space = dataset.getSpace();
  const hsize_t start[2] = {dims[0] - 1, 0};
  const hsize_t count[2] = {1, width};
  file_space.selectHyperslab(H5S_SELECT_SET, count, start);
  const H5::DataSpace memory_space(static_cast<int>(dims.size()), count);
  dataset.read(row.data(), type, memory_space, file_space);
  return row;
}

}  // namespace descentlab::store::hdf5
