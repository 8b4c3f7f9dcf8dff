#pragma once
// Small helpers over the HDF5 C++ API shared by the run writer and reader. Internal to core/store.

#include <H5Cpp.h>

#include <cstdint>
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

std::vector<hsize_t> dataset_shape(const H5::DataSet& dataset);

template <typename T>
std::vector<T> read_all(const H5::DataSet& dataset, const H5::PredType& type) {
  hsize_t count = 1;
  for (hsize_t dim : dataset_shape(dataset)) count *= dim;
  std::vector<T> values(static_cast<size_t>(count));
  if (count > 0) dataset.read(values.data(), type);
  return values;
}

}  // namespace descentlab::store::hdf5
