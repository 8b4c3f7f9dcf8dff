#include "core/store/hdf5_io.h"

#include <algorithm>
#include <limits>
#include <mutex>

namespace descentlab::store::hdf5 {

void quiet_library_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5::Exception::dontPrint(); });
}

bool link_exists(hid_t location, const std::string& name) {
  return H5Lexists(location, name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> child_names(const H5::Group& group) {
  std::vector<std::string> names;
  const hsize_t count = group.getNumObjs();
  names.reserve(static_cast<size_t>(count));
  for (hsize_t i = 0; i < count; ++i) names.push_back(group.getObjnameByIdx(i));
  std::sort(names.begin(), names.end());
  return names;
}

bool has_attribute(const H5::H5Object& object, const std::string& name) {
  return H5Aexists(object.getId(), name.c_str()) > 0;
}

namespace {

H5::StrType utf8_string_type() {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  return type;
}

// A scalar attribute is read into one value: an attribute of another shape (several values, or none) would have
// HDF5 write past that value (found by fuzz/run_file), so it is refused like an attribute of the wrong type.
void require_one_value(const H5::Attribute& attribute, const std::string& function, const std::string& name) {
  if (attribute.getSpace().getSimpleExtentNpoints() != 1) {
    throw H5::AttributeIException(function, name + " does not hold exactly one value");
  }
}

H5::Attribute replace_attribute(H5::H5Object& object, const std::string& name, const H5::DataType& type) {
  if (has_attribute(object, name)) object.removeAttr(name);
  return object.createAttribute(name, type, H5::DataSpace(H5S_SCALAR));
}

}  // namespace

void set_string_attribute(H5::H5Object& object, const std::string& name, const std::string& value) {
  const H5::StrType type = utf8_string_type();
  replace_attribute(object, name, type).write(type, value);
}

void set_int_attribute(H5::H5Object& object, const std::string& name, int64_t value) {
  replace_attribute(object, name, H5::PredType::STD_I64LE).write(H5::PredType::NATIVE_INT64, &value);
}

void set_double_attribute(H5::H5Object& object, const std::string& name, double value) {
  replace_attribute(object, name, H5::PredType::IEEE_F64LE).write(H5::PredType::NATIVE_DOUBLE, &value);
}

std::string string_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute attribute = object.openAttribute(name);
  const H5::DataType stored = attribute.getDataType();
  if (stored.getClass() != H5T_STRING) throw H5::AttributeIException("string_attribute", name + " is not a string");
  require_one_value(attribute, "string_attribute", name);
  std::string value;
  attribute.read(attribute.getStrType(), value);
  return value;
}

int64_t int_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute attribute = object.openAttribute(name);
  if (attribute.getDataType().getClass() != H5T_INTEGER) {
    throw H5::AttributeIException("int_attribute", name + " is not an integer");
  }
  require_one_value(attribute, "int_attribute", name);
  int64_t value = 0;
  attribute.read(H5::PredType::NATIVE_INT64, &value);
  return value;
}

double double_attribute(const H5::H5Object& object, const std::string& name) {
  const H5::Attribute attribute = object.openAttribute(name);
  require_one_value(attribute, "double_attribute", name);
  double value = 0;
  attribute.read(H5::PredType::NATIVE_DOUBLE, &value);
  return value;
}

H5::Group open_or_create_group(H5::Group& parent, const std::string& name) {
  return link_exists(parent.getId(), name) ? parent.openGroup(name) : parent.createGroup(name);
}

void append_rows(H5::Group& group, const std::string& name, const H5::PredType& type, const void* data, hsize_t rows,
                 hsize_t width) {
  const int rank = width == 0 ? 1 : 2;
  H5::DataSet dataset;
  if (link_exists(group.getId(), name)) {
    dataset = group.openDataSet(name);
  } else {
    const hsize_t dims[2] = {0, width};
    const hsize_t max_dims[2] = {H5S_UNLIMITED, width};
    const hsize_t chunk_rows = std::max<hsize_t>(64, 8192 / std::max<hsize_t>(width, 1));
    const hsize_t chunk[2] = {chunk_rows, width};
    H5::DSetCreatPropList properties;
    properties.setChunk(rank, chunk);
    properties.setShuffle();
    properties.setDeflate(4);
    dataset = group.createDataSet(name, type, H5::DataSpace(rank, dims, max_dims), properties);
  }
  if (rows == 0) return;
  std::vector<hsize_t> dims = dataset_shape(dataset);
  const hsize_t old_rows = dims[0];
  dims[0] += rows;
  dataset.extend(dims.data());
  H5::DataSpace file_space = dataset.getSpace();
  const hsize_t start[2] = {old_rows, 0};
  const hsize_t count[2] = {rows, width};
  file_space.selectHyperslab(H5S_SELECT_SET, count, start);
  const H5::DataSpace memory_space(rank, count);
  dataset.write(data, type, memory_space, file_space);
}

H5::DataSet write_array(H5::Group& group, const std::string& name, const H5::PredType& type,
                        const std::vector<hsize_t>& shape, const void* data, bool compress) {
  const H5::DataSpace space =
      shape.empty() ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(static_cast<int>(shape.size()), shape.data());
  H5::DSetCreatPropList properties;
  hsize_t count = 1;
  for (hsize_t dim : shape) count *= dim;
  if (compress && !shape.empty() && count > 0) {
    properties.setChunk(static_cast<int>(shape.size()), shape.data());
    properties.setShuffle();
    properties.setDeflate(4);
  }
  H5::DataSet dataset = group.createDataSet(name, type, space, properties);
  if (count > 0) dataset.write(data, type);
  return dataset;
}

H5::DataSet create_external(H5::Group& group, const std::string& name, const H5::PredType& type,
                            const std::vector<hsize_t>& shape, const std::string& file_name, uint64_t offset,
                            uint64_t bytes) {
  const H5::DataSpace space =
      shape.empty() ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(static_cast<int>(shape.size()), shape.data());
  H5::DSetCreatPropList properties;
  if (H5Pset_external(properties.getId(), file_name.c_str(), static_cast<off_t>(offset), bytes) < 0 ||
      H5Pset_fill_time(properties.getId(), H5D_FILL_TIME_NEVER) < 0) {
    throw std::runtime_error("HDF5 refused the external storage of " + name + " in " + file_name);
  }
  return group.createDataSet(name, type, space, properties);
}

std::vector<hsize_t> dataset_shape(const H5::DataSet& dataset) {
  const H5::DataSpace space = dataset.getSpace();
  const int rank = space.getSimpleExtentNdims();
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) space.getSimpleExtentDims(dims.data());
  return dims;
}

hsize_t checked_element_count(const H5::DataSet& dataset, size_t element_bytes) {
  const auto dims = dataset_shape(dataset);
  hsize_t count = 1;
  std::string shape;
  bool overflow = false;
  for (hsize_t dim : dims) {
    shape += (shape.empty() ? "" : " x ") + std::to_string(dim);
    if (dim != 0 && count > std::numeric_limits<hsize_t>::max() / dim) overflow = true;
    count = overflow ? count : count * dim;
  }
  if (overflow || count == 0) {
    if (!overflow) return 0;
    throw ClaimTooLarge("its shape " + shape + " claims more elements than can be counted: damaged");
  }
  const H5::DSetCreatPropList creation = dataset.getCreatePlist();
  const bool contiguous = creation.getLayout() == H5D_CONTIGUOUS || creation.getLayout() == H5D_COMPACT;
  const auto stored = static_cast<long double>(H5Dget_storage_size(dataset.getId()));
  const long double claimed = static_cast<long double>(count) * static_cast<long double>(element_bytes);
  const long double limit = contiguous ? stored : 1100.0L * stored + 1048576.0L;
  if (claimed > limit) {
    hsize_t file_bytes = 0;
    const hid_t file = H5Iget_file_id(dataset.getId());
    if (file >= 0) {
      H5Fget_filesize(file, &file_bytes);
      H5Fclose(file);
    }
    throw ClaimTooLarge("its shape " + shape + " claims " + std::to_string(count) + " elements (" +
                        std::to_string(static_cast<unsigned long long>(claimed)) + " bytes), but the file holds " +
                        std::to_string(file_bytes) + " bytes (" +
                        std::to_string(static_cast<unsigned long long>(stored)) + " stored for it): damaged");
  }
  return count;
}

}  // namespace descentlab::store::hdf5
