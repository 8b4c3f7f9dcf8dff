// The run-file reader (core/store/run_reader) on damaged and foreign run files. Fuzzing the raw bytes of an HDF5
// file mostly exercises HDF5's own parser (Debian's, not ours); this target instead starts from a valid run file
// (written by RunWriter with the test samples) and lets the input edit it through HDF5: delete objects or
// attributes, replace datasets and attributes with other types, shapes and values, overwrite stored values, add
// groups. Then every reader call runs on the result, as the GUI and `descentlab-cli inspect` would. Bad files must
// give a descentlab::Error (RunFileError) naming the object.

#include <H5Cpp.h>
#include <hdf5.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "fuzz/fuzz_targets.h"
#include "tests/run_file_samples.h"

namespace descentlab::fuzz {

namespace {

// Takes bytes from the front of the input; zeros once it runs out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return size_ == 0; }
  uint8_t byte() {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }
  std::vector<uint8_t> take(size_t n) {
    n = std::min(n, size_);
    std::vector<uint8_t> out(data_, data_ + n);
    data_ += n;
    size_ -= n;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

// A valid run file with every kind of object (metrics of each shape, a histogram, a sweep, two checkpoints).
const std::vector<char>& template_bytes() {
  static const std::vector<char> bytes = [] {
    const std::string path = scratch_path("template.h5");
    scratch_path("template.h5.checkpoints");  // its checkpoints' data files: removed at exit too
    {
      store::RunWriterOptions options;
      options.flush_interval_seconds = 0;
      options.overwrite = true;
      auto writer = store::RunWriter::create(path, testing::sample_header(), options);
      for (int64_t step = 1; step <= 4; ++step) {
        writer->scalar("loss", step, 1.8e9 + static_cast<double>(step), 2.0 / static_cast<double>(step));
        writer->vector("layer_loss", step, 1.8e9, {0.69, 0.5, 0.25});
        writer->scalar("custom_metric", step, 1.8e9, 0.5);
      }
      writer->histogram(testing::sample_histogram(2));
      writer->histogram(testing::sample_histogram(4));
      writer->sweep(testing::sample_sweep());
      writer->save_checkpoint("latest", testing::sample_checkpoint(4));
      writer->save_checkpoint("best", testing::sample_checkpoint(2));
    }
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  return bytes;
}

struct Objects {
  std::vector<std::string> all;  // every object but the root, then the root
  std::vector<std::string> groups;
  std::vector<std::string> datasets;
};

// H5Lvisit and H5Oopen + H5Iget_type read the same on HDF5 1.10 (Debian 12) and 1.14 (Debian 13).
herr_t collect(hid_t group, const char* name, const H5L_info_t*, void* data) {
  auto& objects = *static_cast<Objects*>(data);
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return 0;
  const std::string path = std::string("/") + name;
  objects.all.push_back(path);
  if (H5Iget_type(object) == H5I_GROUP) objects.groups.push_back(path);
  if (H5Iget_type(object) == H5I_DATASET) objects.datasets.push_back(path);
  H5Oclose(object);
  return 0;
}

Objects list_objects(hid_t file) {
  Objects objects;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect, &objects);
  objects.all.push_back("/");
  objects.groups.push_back("/");
  return objects;
}

std::vector<std::string> attribute_names(hid_t object) {
  std::vector<std::string> names;
  H5Aiterate2(
      object, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

template <typename T>
const T& pick(const std::vector<T>& items, uint8_t selector) {
  return items[selector % items.size()];
}

// Every attribute name a run file uses, so that a new attribute is often one the reader looks for.
const std::vector<std::string> kAttributeNames = {
    "format_version", "app_version", "torch_version", "device", "created", "config",      "kind",  "noise",
    "metric_name",    "layers",      "step",          "epoch",  "extra",   "sha256",      "dtype", "shape",
    "name",           "x",           "tags",          "note",   "run_id",  "log_sequence"};

// A short name from the input (HDF5 refuses some, such as "" and ".": then the edit is simply not made).
std::string name_from(Bytes& in) {
  const auto raw = in.take(in.byte() % 12);
  return std::string(raw.begin(), raw.end());
}

// A type for a new dataset or attribute: the ones a run file holds and a few it never does.
hid_t type_from(uint8_t selector, size_t& element_size) {
  switch (selector % 8) {
    case 0: element_size = 8; return H5Tcopy(H5T_NATIVE_INT64);
    case 1: element_size = 8; return H5Tcopy(H5T_NATIVE_DOUBLE);
    case 2: element_size = 4; return H5Tcopy(H5T_NATIVE_FLOAT);
    case 3: element_size = 1; return H5Tcopy(H5T_NATIVE_INT8);
    case 4: element_size = 4; return H5Tcopy(H5T_NATIVE_UINT32);
    case 5: element_size = 2; return H5Tcopy(H5T_NATIVE_UINT16);
    default: {
      element_size = 1 + selector % 16;
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, element_size);
      return type;
    }
  }
}

// A dataspace of rank 0 to 3 with small dimensions (0 included); returns its element count.
hid_t space_from(Bytes& in, size_t& elements) {
  const int rank = in.byte() % 4;
  hsize_t dims[3] = {0, 0, 0};
  elements = 1;
  for (int d = 0; d < rank; ++d) {
    dims[d] = in.byte() % 9;
    elements *= dims[d];
  }
  return rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr);
}

std::vector<uint8_t> values_from(Bytes& in, size_t bytes) {
  std::vector<uint8_t> values = in.take(bytes);
  values.resize(bytes, 0);
  return values;
}

void replace_attribute(hid_t object, const std::string& name, Bytes& in) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  const uint8_t kind = in.byte();
  if (kind % 9 == 8) {  // a variable-length string, as the writer stores text
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    const hid_t space = H5Screate(H5S_SCALAR);
    const auto raw = in.take(in.byte() % 24);
    const std::string text(raw.begin(), raw.end());
    const char* pointer = text.c_str();
    const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attribute >= 0) {
      H5Awrite(attribute, type, &pointer);
      H5Aclose(attribute);
    }
    H5Sclose(space);
    H5Tclose(type);
    return;
  }
  size_t element_size = 0, elements = 0;
  const hid_t type = type_from(kind, element_size);
  const hid_t space = space_from(in, elements);
  const auto values = values_from(in, element_size * elements);
  const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attribute >= 0) {
    if (!values.empty()) H5Awrite(attribute, type, values.data());
    H5Aclose(attribute);
  }
  H5Sclose(space);
  H5Tclose(type);
}

void create_dataset(hid_t file, const std::string& path, Bytes& in) {
  size_t element_size = 0, elements = 0;
  const hid_t type = type_from(in.byte(), element_size);
  const hid_t space = space_from(in, elements);
  const auto values = values_from(in, element_size * elements);
  const hid_t dataset = H5Dcreate2(file, path.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (dataset >= 0) {
    if (!values.empty()) H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(dataset);
  }
  H5Sclose(space);
  H5Tclose(type);
}

// Overwrites the first bytes of a dataset's stored values (its own type: NaN steps, negative counts, huge shapes).
void overwrite_values(hid_t file, const std::string& path, Bytes& in) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (dataset < 0) return;
  const hid_t type = H5Dget_type(dataset);
  const hid_t space = H5Dget_space(dataset);
  const hssize_t elements = H5Sget_simple_extent_npoints(space);
  const size_t element_size = H5Tget_size(type);
  if (elements > 0 && elements < 4096 && H5Tis_variable_str(type) <= 0) {
    std::vector<uint8_t> values(static_cast<size_t>(elements) * element_size);
    if (H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0) {
      const size_t offset = element_size * (in.byte() % static_cast<size_t>(elements));
      const auto patch = in.take(1 + in.byte() % 16);
      std::copy_n(patch.begin(), std::min(patch.size(), values.size() - offset), values.begin() + offset);
      H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    }
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(dataset);
}

void edit(hid_t file, Bytes& in) {
  for (int step = 0; step < 24 && !in.empty(); ++step) {
    const Objects objects = list_objects(file);
    const uint8_t operation = in.byte();
    switch (operation % 7) {
      case 0: {  // delete an object
        const std::string& path = pick(objects.all, in.byte());
        if (path != "/") H5Ldelete(file, path.c_str(), H5P_DEFAULT);
        break;
      }
      case 1: {  // replace a dataset with one of another type, shape and values
        if (objects.datasets.empty()) break;
        const std::string path = pick(objects.datasets, in.byte());
        H5Ldelete(file, path.c_str(), H5P_DEFAULT);
        create_dataset(file, path, in);
        break;
      }
      case 2: {  // delete an attribute
        const std::string& path = pick(objects.all, in.byte());
        const hid_t object = H5Oopen(file, path.c_str(), H5P_DEFAULT);
        if (object < 0) break;
        const auto names = attribute_names(object);
        if (!names.empty()) H5Adelete(object, pick(names, in.byte()).c_str());
        H5Oclose(object);
        break;
      }
      case 3: {  // replace or add an attribute
        const std::string& path = pick(objects.all, in.byte());
        const hid_t object = H5Oopen(file, path.c_str(), H5P_DEFAULT);
        if (object < 0) break;
        const auto names = attribute_names(object);
        const uint8_t which = in.byte();
        const std::string name =
            (which & 1) && !names.empty() ? pick(names, which >> 1) : pick(kAttributeNames, which >> 1);
        replace_attribute(object, name, in);
        H5Oclose(object);
        break;
      }
      case 4: {  // overwrite stored values
        if (!objects.datasets.empty()) overwrite_values(file, pick(objects.datasets, in.byte()), in);
        break;
      }
      case 5: {  // add a group
        const std::string& parent = pick(objects.groups, in.byte());
        const std::string path = (parent == "/" ? "" : parent) + "/" + name_from(in);
        const hid_t group = H5Gcreate2(file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (group >= 0) H5Gclose(group);
        break;
      }
      default: {  // add a dataset
        const std::string& parent = pick(objects.groups, in.byte());
        create_dataset(file, (parent == "/" ? "" : parent) + "/" + name_from(in), in);
        break;
      }
    }
  }
}

void read_everything(const std::string& path) {
  store::RunReader reader(path);
  // Each read on its own: one damaged object must not hide the others, and each must fail alone and typed.
  auto each = [](auto read) {
    try {
      read();
    } catch (const Error&) {
    }
  };
  each([&] {
    for (const auto& name : reader.metric_names()) each([&] { reader.metric(name); });
  });
  each([&] {
    for (const auto& name : reader.histogram_names()) each([&] { reader.histogram(name); });
  });
  each([&] {
    for (const auto& name : reader.sweep_names()) each([&] { reader.sweep(name); });
  });
  each([&] {
    for (const auto& info : reader.checkpoints()) each([&] { reader.checkpoint(info.label); });
  });
  for (const char* label : {"latest", "best", ""}) {
    each([&] {
      if (reader.has_checkpoint(label)) reader.checkpoint(label);
    });
  }
}

}  // namespace

int run_file(const uint8_t* data, size_t size) {
  H5::Exception::dontPrint();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const auto& bytes = template_bytes();
  static const std::string path = scratch_path("run.h5");
  write_file(path, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  Bytes in(data, size);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) finding("HDF5 could not open the template run file");
  edit(file, in);
  H5Fclose(file);
  try {
    read_everything(path);
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace descentlab::fuzz
