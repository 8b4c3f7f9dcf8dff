// The files a run of a user's module was made from (/inputs; issue 53): their names, sizes and hashes, and the
// module's copy. Declared in core/store/run_file_format.h.

#include <H5Cpp.h>

#include <stdexcept>

#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/util/sha256.h"

namespace descentlab::store::format {
namespace {

const char* const kInputNames[] = {"model", "data"};

std::string object_of(const char* input) {
  return std::string("/") + kInputs + "/" + input;
}

void write_input(H5::Group& inputs, const char* input, const RunInputFile& file) {
  H5::Group group = inputs.createGroup(input);
  hdf5::set_string_attribute(group, "path", file.path);
  hdf5::set_int_attribute(group, "bytes", static_cast<int64_t>(file.bytes));
  hdf5::set_string_attribute(group, "sha256", file.sha256);
}

bool is_sha256(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

RunInputFile read_input(const H5::Group& group, const std::string& path, const std::string& object) {
  RunInputFile file;
  try {
    file.path = hdf5::string_attribute(group, "path");
    const int64_t bytes = hdf5::int_attribute(group, "bytes");
    file.sha256 = hdf5::string_attribute(group, "sha256");
    if (bytes < 0) throw std::runtime_error("");
    file.bytes = static_cast<uint64_t>(bytes);
  } catch (const std::exception&) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, object, "path, bytes or sha256 missing or of another type");
  }
  if (!is_sha256(file.sha256)) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, object + "/@sha256",
                       "'" + file.sha256 + "' is not a SHA-256 (64 hex digits)");
  }
  return file;
}

// The module copy's dataset and what /inputs/model says of it.
struct ModuleCopy {
  H5::DataSet dataset;
  RunInputFile recorded;
};

ModuleCopy open_module_copy(const H5::H5File& file, const std::string& path) {
  const std::string object = object_of("model");
  if (!hdf5::link_exists(file.getId(), kInputs) || !hdf5::link_exists(file.openGroup(kInputs).getId(), "model") ||
      !hdf5::link_exists(file.openGroup(object).getId(), kModuleCopy)) {
    throw RunFileError(RunFileError::Kind::MissingObject, path, object + "/" + kModuleCopy,
                       "this run keeps no copy of a module");
  }
  const H5::Group group = file.openGroup(object);
  return {group.openDataSet(kModuleCopy), read_input(group, path, object)};
}

}  // namespace

void write_inputs(H5::H5File& file, const RunHeader& header, const std::string& module_copy_name) {
  if (!header.model_file && !header.data_file) return;
  H5::Group inputs = file.createGroup(kInputs);
  if (header.model_file) {
    write_input(inputs, "model", *header.model_file);
    if (!module_copy_name.empty()) {
      H5::Group model = inputs.openGroup("model");
      hdf5::create_external(model, kModuleCopy, H5::PredType::NATIVE_UINT8, {header.model_file->bytes},
                            module_copy_name, 0, header.model_file->bytes);
    }
  }
  if (header.data_file) write_input(inputs, "data", *header.data_file);
}

void read_inputs(const H5::H5File& file, const std::string& path, RunHeader& header) {
  if (!hdf5::link_exists(file.getId(), kInputs)) return;
  const H5::Group inputs = file.openGroup(kInputs);
  for (const char* input : kInputNames) {
    if (!hdf5::link_exists(inputs.getId(), input)) continue;
    const RunInputFile read = read_input(inputs.openGroup(input), path, object_of(input));
    (std::string(input) == "model" ? header.model_file : header.data_file) = read;
  }
}

std::string read_module_copy(const H5::H5File& file, const std::string& path, CheckpointFiles& files) {
  const ModuleCopy copy = open_module_copy(file, path);
  const std::string object = object_of("model") + "/" + kModuleCopy;
  const std::vector<hsize_t> shape = hdf5::dataset_shape(copy.dataset);
  if (shape.size() != 1 || shape[0] != copy.recorded.bytes) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, object,
                       "holds another size than the module's " + std::to_string(copy.recorded.bytes) + " bytes");
  }
  std::string bytes;
  std::string name;
  uint64_t offset = 0, size = 0;
  if (external_storage(copy.dataset, name, offset, size)) {
    if (size != copy.recorded.bytes) {
      throw RunFileError(RunFileError::Kind::Corrupt, path, object,
                         "its external storage holds " + std::to_string(size) + " bytes, the module " +
                             std::to_string(copy.recorded.bytes));
    }
    std::vector<uint8_t> read;
    files.read(name, offset, size, object, read);
    bytes.assign(read.begin(), read.end());
  } else {
    bytes.resize(static_cast<size_t>(copy.recorded.bytes));
    if (!bytes.empty()) copy.dataset.read(bytes.data(), H5::PredType::NATIVE_UINT8);
  }
  const std::string sum = sha256_of_bytes(bytes);
  if (sum != copy.recorded.sha256) {
    throw RunFileError(
        RunFileError::Kind::Corrupt, path, object,
        "the copy's SHA-256 is " + sum + ", the module's was " + copy.recorded.sha256 + " (the copy is damaged)");
  }
  return bytes;
}

void embed_module_copy(H5::H5File& file, const std::string& path, CheckpointFiles& files) {
  if (!hdf5::link_exists(file.getId(), kInputs)) return;
  const H5::Group inputs = file.openGroup(kInputs);
  if (!hdf5::link_exists(inputs.getId(), "model")) return;
  H5::Group model = inputs.openGroup("model");
  if (!hdf5::link_exists(model.getId(), kModuleCopy)) return;
  std::string name;
  uint64_t offset = 0, size = 0;
  if (!external_storage(model.openDataSet(kModuleCopy), name, offset, size)) return;
  const std::string bytes = read_module_copy(file, path, files);
  model.unlink(kModuleCopy);
  hdf5::write_array(model, kModuleCopy, H5::PredType::NATIVE_UINT8, {bytes.size()}, bytes.data());
}

}  // namespace descentlab::store::format
