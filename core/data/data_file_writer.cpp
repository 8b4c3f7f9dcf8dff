#include "core/data/data_file_writer.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/util/error.h"

namespace descentlab::data {
namespace {

namespace fs = std::filesystem;

// "<path>.tmp-<pid>": beside the target, so that the rename stays within one file system.
std::string temporary_beside(const std::string& path) {
  return path + ".tmp-" + std::to_string(static_cast<long long>(::getpid()));
}

[[noreturn]] void fail_with_errno(const std::string& path, const std::string& what, int error_number) {
  throw IoError(path, what + ": " + std::strerror(error_number));
}

// Syncs a file or a folder to disk. Folders that cannot be synced (EINVAL on some file systems) are let go: the
// rename has happened, and only its survival of a power cut is in question.
void sync_path(const std::string& target, const std::string& path, bool folder) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (folder ? O_DIRECTORY : 0));
  if (descriptor < 0) fail_with_errno(target, "cannot open " + path + " to sync it", errno);
  const int synced = ::fsync(descriptor);
  const int sync_error = errno;
  ::close(descriptor);
  if (synced != 0 && !(folder && (sync_error == EINVAL || sync_error == ENOTSUP))) {
    fail_with_errno(target, "cannot sync " + path + " to disk", sync_error);
  }
}

void check_array(const DataArrayValues& array) {
  if ((array.floats == nullptr) == (array.integers == nullptr)) {
    throw std::invalid_argument("write_data_file: " + array.name + " needs exactly one of floats and integers");
  }
  // HDF5 takes no chunk larger than a fixed dimension, and the contract no empty dataset: every extent >= 1.
  if (array.shape.empty() || std::any_of(array.shape.begin(), array.shape.end(), [](int64_t d) { return d < 1; })) {
    throw std::invalid_argument("write_data_file: " + array.name + " needs a shape of extents >= 1");
  }
}

void write_string_attribute(H5::Group& root, const char* name, const std::string& value) {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  H5::Attribute attribute = root.createAttribute(name, type, H5::DataSpace(H5S_SCALAR));
  attribute.write(type, value);
}

void write_int_attribute(H5::Group& root, const char* name, int64_t value) {
  H5::Attribute attribute = root.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR));
  attribute.write(H5::PredType::NATIVE_INT64, &value);
}

void write_array(H5::H5File& file, const DataArrayValues& array) {
  check_array(array);
  const bool integer = array.integers != nullptr;
  const std::vector<hsize_t> dims(array.shape.begin(), array.shape.end());
  std::vector<hsize_t> chunk = dims;
  chunk[0] = static_cast<hsize_t>(chunk_rows_for(array.shape, integer ? sizeof(int64_t) : sizeof(float)));
  H5::DSetCreatPropList creation;
  creation.setChunk(static_cast<int>(chunk.size()), chunk.data());
  const H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  const H5::PredType& stored = integer ? H5::PredType::STD_I64LE : H5::PredType::IEEE_F32LE;
  H5::DataSet dataset = file.createDataSet(array.name, stored, space, creation);
  if (integer) {
    dataset.write(array.integers, H5::PredType::NATIVE_INT64);
  } else {
    dataset.write(array.floats, H5::PredType::NATIVE_FLOAT);
  }
}

// The whole file under `temporary`, closed when this returns.
void write_hdf5(const std::string& temporary, const DataFileContents& contents) {
  H5::H5File file(temporary, H5F_ACC_EXCL);
  H5::Group root = file.openGroup("/");
  write_string_attribute(root, "task", data_task_word(contents.task));
  if (contents.task == DataTask::classification) write_int_attribute(root, "classes", contents.classes);
  if (contents.vocabulary > 0) write_int_attribute(root, "vocabulary", contents.vocabulary);
  if (!contents.name.empty()) write_string_attribute(root, "name", contents.name);
  if (!contents.characters.empty()) write_string_attribute(root, "characters", contents.characters);
  for (const auto& array : contents.arrays) {
    const std::string group = array.name.substr(0, array.name.find('/'));
    if (group != array.name && !file.nameExists(group)) file.createGroup(group);
    write_array(file, array);
  }
}

}  // namespace

int64_t chunk_rows_for(const std::vector<int64_t>& shape, size_t element_bytes) {
  int64_t row_bytes = static_cast<int64_t>(element_bytes);
  for (size_t i = 1; i < shape.size(); ++i) row_bytes *= std::max<int64_t>(1, shape[i]);
  const int64_t rows = shape.empty() ? 1 : shape[0];
  const int64_t fit = (int64_t{1} << 20) / std::max<int64_t>(1, row_bytes);
  return std::max<int64_t>(1, std::min({fit, int64_t{1024}, rows}));
}

void refuse_existing_output(const std::string& path, bool overwrite) {
  std::error_code status;
  if (fs::is_directory(path, status)) throw DataError(path, "is a folder; name the data file to write");
  if (!overwrite && fs::exists(path, status)) {
    throw DataError(path, "a file already exists here; choose another name or give --overwrite");
  }
}

void write_data_file(const std::string& path, const DataFileContents& contents, bool overwrite) {
  refuse_existing_output(path, overwrite);
  const std::string temporary = temporary_beside(path);
  std::error_code ignored;
  fs::remove(temporary, ignored);  // one this process left behind (a pid reused); nobody else writes this name
  try {
    H5::Exception::dontPrint();
    try {
      write_hdf5(temporary, contents);
    } catch (const H5::Exception& error) {
      throw IoError(path, "cannot be written (" + temporary + "): " + error.getDetailMsg());
    }
    sync_path(path, temporary, /*folder=*/false);
    refuse_existing_output(path, overwrite);  // one that appeared while this wrote
    if (::rename(temporary.c_str(), path.c_str()) != 0) fail_with_errno(path, "cannot rename " + temporary, errno);
  } catch (...) {
    fs::remove(temporary, ignored);
    throw;
  }
  const fs::path folder = fs::absolute(path).parent_path();
  sync_path(path, folder.string(), /*folder=*/true);
}

}  // namespace descentlab::data
