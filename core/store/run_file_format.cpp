#include "core/store/run_file_format.h"

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "core/store/checkpoint_checksums.h"
#include "core/store/hdf5_io.h"

namespace descentlab::store::format {
namespace {

struct DtypeEntry {
  const char* name;
  const H5::PredType* type;
  size_t size;
};

const DtypeEntry* find_dtype(const std::string& dtype) {
  // bool is stored as uint8 and half/bfloat16 as their raw 16 bits; the dataset's "dtype" attribute says which.
  static const DtypeEntry entries[] = {
      {"float32", &H5::PredType::NATIVE_FLOAT, 4},  {"float64", &H5::PredType::NATIVE_DOUBLE, 8},
      {"float16", &H5::PredType::NATIVE_UINT16, 2}, {"bfloat16", &H5::PredType::NATIVE_UINT16, 2},
      {"int64", &H5::PredType::NATIVE_INT64, 8},    {"int32", &H5::PredType::NATIVE_INT32, 4},
      {"int16", &H5::PredType::NATIVE_INT16, 2},    {"int8", &H5::PredType::NATIVE_INT8, 1},
      {"uint8", &H5::PredType::NATIVE_UINT8, 1},    {"bool", &H5::PredType::NATIVE_UINT8, 1},
  };
  for (const auto& entry : entries) {
    if (dtype == entry.name) return &entry;
  }
  return nullptr;
}

std::string describe(const H5::Exception& error) {
  std::string message = error.getDetailMsg();
  if (message.empty()) message = error.getFuncName();
  return message;
}

}  // namespace

RunFileError to_run_file_error(const H5::Exception& error, RunFileError::Kind kind, const std::string& path,
                               const std::string& object) {
  return RunFileError(kind, path, object, "HDF5 error: " + describe(error));
}

H5::H5File open_validated(const std::string& path, unsigned flags) {
  hdf5::quiet_library_errors();
  namespace fs = std::filesystem;
  std::error_code status;
  if (!fs::exists(path, status)) {
    throw RunFileError(RunFileError::Kind::NotFound, path, "", "no such run file");
  }
  if (!fs::is_regular_file(path, status)) {
    throw RunFileError(RunFileError::Kind::NotHdf5, path, "", "not a regular file");
  }
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 <= 0) {
    throw RunFileError(RunFileError::Kind::NotHdf5, path, "",
                       "not an HDF5 file (no HDF5 signature): not a DescentLab run file");
  }
  H5::H5File file;
  try {
    file.openFile(path, flags);
  } catch (const H5::Exception& error) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, "",
                       "HDF5 cannot open it (truncated or damaged file?): " + describe(error));
  }
  const H5::Group root = file.openGroup("/");
  if (!hdf5::has_attribute(root, "format")) {
    throw RunFileError(RunFileError::Kind::ForeignFile, path, "/",
                       "an HDF5 file without the attribute format = \"descentlab-run\": written by another program");
  }
  std::string format_name;
  try {
    format_name = hdf5::string_attribute(root, "format");
  } catch (const H5::Exception&) {
    format_name = "(not a string)";
  }
  if (format_name != kFormatName) {
    throw RunFileError(RunFileError::Kind::ForeignFile, path, "/",
                       "attribute format is \"" + format_name + "\", not \"descentlab-run\"");
  }
  int64_t version = 0;
  try {
    version = hdf5::int_attribute(root, "format_version");
  } catch (const H5::Exception& error) {
    throw RunFileError(RunFileError::Kind::MissingObject, path, "/", "missing or bad attribute format_version");
  }
  if (version > kFormatVersion) {
    throw RunFileError(RunFileError::Kind::NewerVersion, path, "/",
                       "format_version " + std::to_string(version) + " is newer than this DescentLab reads (" +
                           std::to_string(kFormatVersion) + "); update DescentLab");
  }
  if (version < 1) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, "/",
                       "format_version " + std::to_string(version) + " is invalid");
  }
  check_layout(file, path, version);
  return file;
}

RunHeader read_header(const H5::H5File& file, const std::string& path) {
  const H5::Group root = file.openGroup("/");
  RunHeader header;
  const auto text = [&](const char* name) {
    try {
      return hdf5::string_attribute(root, name);
    } catch (const H5::Exception&) {
      throw RunFileError(RunFileError::Kind::MissingObject, path, std::string("/@") + name,
                         "missing or not a string attribute");
    }
  };
  header.format_version = hdf5::int_attribute(root, "format_version");
  header.app_version = text("app_version");
  header.torch_version = text("torch_version");
  header.device = text("device");
  header.created = text("created");
  header.config_json = text("config");
  if (hdf5::has_attribute(root, kRunId)) {
    header.run_id = text(kRunId);
    if (!is_run_id(header.run_id)) {
      throw RunFileError(RunFileError::Kind::Corrupt, path, std::string("/@") + kRunId,
                         "'" + header.run_id + "' is not a run identity (32 hex digits)");
    }
  }
  read_inputs(file, path, header);
  read_annotation_and_lineage(root, path, header);
  return header;
}

void write_header(H5::H5File& file, const RunHeader& header) {
  H5::Group root = file.openGroup("/");
  hdf5::set_string_attribute(root, "format", kFormatName);
  hdf5::set_int_attribute(root, "format_version", header.format_version);
  hdf5::set_string_attribute(root, "app_version", header.app_version);
  hdf5::set_string_attribute(root, "torch_version", header.torch_version);
  hdf5::set_string_attribute(root, "device", header.device);
  hdf5::set_string_attribute(root, "created", header.created.empty() ? utc_timestamp() : header.created);
  hdf5::set_string_attribute(root, "config", header.config_json.empty() ? "{}" : header.config_json);
  if (!header.run_id.empty()) hdf5::set_string_attribute(root, kRunId, header.run_id);
  write_annotation(file, header.annotation);
  write_lineage(file, header.lineage);
}

void initialize_run_file(H5::H5File& file, const RunHeader& header) {
  write_header(file, header);
  for (const char* group : {kMetrics, kHistograms, kSweeps, kCheckpoints}) file.createGroup(group);
}

const H5::PredType& hdf5_type_of(const std::string& dtype, const std::string& path, const std::string& object) {
  const DtypeEntry* entry = find_dtype(dtype);
  if (!entry)
    throw RunFileError(RunFileError::Kind::InvalidArgument, path, object, "unsupported dtype '" + dtype + "'");
  return *entry->type;
}

size_t element_size_of(const std::string& dtype, const std::string& path, const std::string& object) {
  const DtypeEntry* entry = find_dtype(dtype);
  if (!entry)
    throw RunFileError(RunFileError::Kind::InvalidArgument, path, object, "unsupported dtype '" + dtype + "'");
  return entry->size;
}

void validate_name(const std::string& what, const std::string& name, const std::string& path) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, path, "",
                       what + " name '" + name + "' is not allowed (empty, '.', '..' or containing '/')");
  }
}

void write_metric_rows(H5::Group& metrics, const std::string& name, record::SeriesShape shape, int64_t width,
                       const std::vector<int64_t>& steps, const std::vector<double>& wall_times,
                       const std::vector<double>& values) {
  const bool exists = hdf5::link_exists(metrics.getId(), name);
  H5::Group group = exists ? metrics.openGroup(name) : metrics.createGroup(name);
  if (!exists) {
    hdf5::set_string_attribute(group, "kind", record::shape_word(shape));
    hdf5::set_int_attribute(group, "width", width);
  }
  const hsize_t rows = steps.size();
  hdf5::append_rows(group, "step", H5::PredType::NATIVE_INT64, steps.data(), rows, 0);
  hdf5::append_rows(group, "wall_time", H5::PredType::NATIVE_DOUBLE, wall_times.data(), rows, 0);
  hdf5::append_rows(group, "value", H5::PredType::NATIVE_DOUBLE, values.data(), rows,
                    width == 1 ? 0 : static_cast<hsize_t>(width));
  if (width == 1 && rows > 0) {
    set_last_row(group, static_cast<int64_t>(hdf5::dataset_shape(group.openDataSet("step")).at(0)), steps.back(),
                 values.back());
  }
}

void set_last_row(H5::Group& series, int64_t rows, int64_t step, double value) {
  hdf5::set_int_attribute(series, kLastRows, rows);
  hdf5::set_int_attribute(series, kLastStep, step);
  hdf5::set_double_attribute(series, kLastValue, value);
}

void remove_last_row(H5::Group& series) {
  for (const char* name : {kLastRows, kLastStep, kLastValue}) {
    if (hdf5::has_attribute(series, name)) series.removeAttr(name);
  }
}

void write_histogram_rows(H5::Group& histograms, const std::string& name, const std::vector<double>& edges,
                          const std::vector<int64_t>& steps, const std::vector<int64_t>& counts) {
  const bool exists = hdf5::link_exists(histograms.getId(), name);
  H5::Group group = exists ? histograms.openGroup(name) : histograms.createGroup(name);
  if (!exists) {
    hdf5::write_array(group, "bin_edges", H5::PredType::NATIVE_DOUBLE, {edges.size()}, edges.data());
  }
  hdf5::append_rows(group, "step", H5::PredType::NATIVE_INT64, steps.data(), steps.size(), 0);
  hdf5::append_rows(group, "counts", H5::PredType::NATIVE_INT64, counts.data(), steps.size(), edges.size() - 1);
}

void write_sweep(H5::Group& sweeps, const record::SweepResult& sweep) {
  if (hdf5::link_exists(sweeps.getId(), sweep.name)) sweeps.unlink(sweep.name);
  H5::Group group = sweeps.createGroup(sweep.name);
  hdf5::set_string_attribute(group, "noise", sweep.noise);
  hdf5::set_string_attribute(group, "metric_name", sweep.metric_name);
  hdf5::set_int_attribute(group, "layers", sweep.layers);
  const hsize_t g = sweep.gamma.size();
  const hsize_t s = sweep.seeds.size();
  hdf5::write_array(group, "gamma", H5::PredType::NATIVE_DOUBLE, {g}, sweep.gamma.data());
  hdf5::write_array(group, "seeds", H5::PredType::NATIVE_INT64, {s}, sweep.seeds.data());
  hdf5::write_array(group, "metric", H5::PredType::NATIVE_DOUBLE, {g, s}, sweep.metric.data());
  if (sweep.layers > 0) {
    hdf5::write_array(group, "layer_loss", H5::PredType::NATIVE_DOUBLE, {g, s, static_cast<hsize_t>(sweep.layers)},
                      sweep.layer_loss.data());
  }
}

void write_checkpoint(H5::Group& checkpoints, const std::string& label, const record::CheckpointData& checkpoint,
                      const std::string& path, const ExternalPlacement* external) {
  if (hdf5::link_exists(checkpoints.getId(), label)) checkpoints.unlink(label);
  H5::Group group = checkpoints.createGroup(label);
  hdf5::set_int_attribute(group, "step", checkpoint.step);
  hdf5::set_int_attribute(group, "epoch", checkpoint.epoch);
  const std::string created = checkpoint.created.empty() ? utc_timestamp() : checkpoint.created;
  const std::string extra = checkpoint.extra_json.empty() ? "{}" : checkpoint.extra_json;
  hdf5::set_string_attribute(group, "created", created);
  hdf5::set_string_attribute(group, "extra", extra);
  std::map<std::string, std::string> section_sums;
  uint64_t offset = external ? external->offset : 0;
  for (const auto& [section_name, tensors] : checkpoint.sections) {
    H5::Group section = group.createGroup(section_name);
    for (const auto& [tensor_name, blob] : tensors) {
      const std::string object = record::checkpoint_object(label, section_name, tensor_name);
      std::vector<hsize_t> shape(blob.shape.begin(), blob.shape.end());
      const H5::PredType& type = hdf5_type_of(blob.dtype, path, object);
      H5::DataSet dataset;
      if (external && !blob.bytes.empty()) {
        dataset = hdf5::create_external(section, tensor_name, type, shape, external->name, offset, blob.bytes.size());
        offset += blob.bytes.size();
      } else {
        dataset = hdf5::write_array(section, tensor_name, type, shape, blob.bytes.data());
      }
      hdf5::set_string_attribute(dataset, "dtype", blob.dtype);
    }
    // An external checkpoint's sums were computed while its data file was written.
    section_sums[section_name] = external ? external->section_sums.at(section_name) : section_checksum(tensors);
    hdf5::set_string_attribute(section, "sha256", section_sums[section_name]);
  }
  hdf5::set_string_attribute(group, "sha256",
                             checkpoint_checksum(checkpoint.step, checkpoint.epoch, created, extra, section_sums));
}

bool external_storage(const H5::DataSet& dataset, std::string& name, uint64_t& offset, uint64_t& size) {
  const H5::DSetCreatPropList properties = dataset.getCreatePlist();
  const int count = H5Pget_external_count(properties.getId());
  if (count <= 0) return false;
  char stored[4096] = {0};
  off_t start = 0;
  hsize_t bytes = 0;
  if (count != 1 || H5Pget_external(properties.getId(), 0, sizeof stored, stored, &start, &bytes) < 0 || start < 0) {
    throw std::runtime_error("an external storage list of " + std::to_string(count) + " parts (DescentLab writes one)");
  }
  name = stored;
  offset = static_cast<uint64_t>(start);
  size = bytes;
  return true;
}

namespace {

// Adds the data file names of the datasets below `group`; with `first_only`, stops at the first one found (returns
// whether one was).
bool collect_external_names(const H5::Group& group, std::set<std::string>& names, bool first_only) {
  for (const auto& child : hdf5::child_names(group)) {
    const H5O_type_t type = group.childObjType(child);
    if (type == H5O_TYPE_GROUP) {
      if (collect_external_names(group.openGroup(child), names, first_only) && first_only) return true;
    } else if (type == H5O_TYPE_DATASET) {
      std::string name;
      uint64_t offset = 0, size = 0;
      try {
        if (external_storage(group.openDataSet(child), name, offset, size)) {
          names.insert(name);
          if (first_only) return true;
        }
      } catch (const std::runtime_error&) {
        // read_checkpoint names it when the checkpoint is read
      }
    }
  }
  return false;
}

}  // namespace

std::set<std::string> external_file_names(const H5::Group& group) {
  std::set<std::string> names;
  collect_external_names(group, names, false);
  return names;
}

std::set<std::string> checkpoint_data_file_names(const H5::Group& checkpoints) {
  std::set<std::string> names;
  for (const auto& label : hdf5::child_names(checkpoints)) {
    collect_external_names(checkpoints.openGroup(label), names, true);
  }
  return names;
}

namespace {

RunFileError unsummed(const std::string& path, const std::string& object, int64_t format_version) {
  return RunFileError(RunFileError::Kind::Corrupt, path, object,
                      "has no sha256 checksum, which every checkpoint of a format_version " +
                          std::to_string(format_version) +
                          " file carries (its attribute was removed): this checkpoint cannot be trusted; resume "
                          "from another label (inspect lists them) or start the run again");
}

RunFileError damaged(const std::string& path, const std::string& object, const std::string& stored,
                     const std::string& computed) {
  return RunFileError(RunFileError::Kind::Corrupt, path, object,
                      "checksum mismatch (stored sha256 " + stored.substr(0, 12) + "..., the data gives " +
                          computed.substr(0, 12) +
                          "...): this checkpoint is damaged; resume from another label (inspect lists them) or "
                          "start the run again");
}

// One tensor of a checkpoint (`object` names it): from its data file when it has external storage, else from the run
// file itself. Its size is checked against what is stored before anything is allocated.
record::TensorBlob read_tensor(const H5::DataSet& dataset, const std::string& path, const std::string& object,
                               CheckpointFiles& files) {
  record::TensorBlob blob;
  blob.dtype = hdf5::has_attribute(dataset, "dtype") ? hdf5::string_attribute(dataset, "dtype") : "";
  const H5::PredType& type = hdf5_type_of(blob.dtype, path, object);
  for (hsize_t dim : hdf5::dataset_shape(dataset)) blob.shape.push_back(static_cast<int64_t>(dim));
  const size_t element_bytes = element_size_of(blob.dtype, path, object);
  std::string external_name;
  uint64_t external_offset = 0, external_size = 0;
  bool external = false;
  try {
    external = external_storage(dataset, external_name, external_offset, external_size);
  } catch (const std::runtime_error& error) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, object, error.what());
  }
  if (external) {
    const uint64_t expected = static_cast<uint64_t>(blob.numel()) * element_bytes;
    if (blob.numel() < 0 || external_size != expected) {
      throw RunFileError(RunFileError::Kind::Corrupt, path, object,
                         "its shape needs " + std::to_string(expected) + " bytes, its external storage holds " +
                             std::to_string(external_size));
    }
    files.read(external_name, external_offset, external_size, object, blob.bytes);
    return blob;
  }
  try {
    hdf5::checked_element_count(dataset, element_bytes);  // before the allocation below
  } catch (const hdf5::ClaimTooLarge& error) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, object, error.what());
  }
  blob.bytes.resize(static_cast<size_t>(blob.numel()) * element_bytes);
  if (!blob.bytes.empty()) dataset.read(blob.bytes.data(), type);
  return blob;
}

// Reads the tensors of one section (`object` names it) into `tensors` and checks them against the section's stored
// sum; returns that sum ("" for a section of a file from before checksums, which has none).
std::string read_section(const H5::Group& section, const std::string& path, const std::string& object,
                         int64_t format_version, bool marked_unsummed, CheckpointFiles& files,
                         std::map<std::string, record::TensorBlob>& tensors) {
  for (const auto& tensor_name : hdf5::child_names(section)) {
    tensors[tensor_name] = read_tensor(section.openDataSet(tensor_name), path, object + "/" + tensor_name, files);
  }
  const bool summed = hdf5::has_attribute(section, "sha256");
  if (!summed && format_version >= kChecksummedFormat && !marked_unsummed) {
    throw unsummed(path, object, format_version);
  }
  if (!summed) return "";
  const std::string computed = section_checksum(tensors);
  const std::string stored = hdf5::string_attribute(section, "sha256");
  if (stored != computed) throw damaged(path, object, stored, computed);
  return computed;
}

}  // namespace

record::CheckpointData read_checkpoint(const H5::Group& group, const std::string& path, const std::string& object,
                                       int64_t format_version, CheckpointFiles* files) {
  std::unique_ptr<CheckpointFiles> opened_here;
  if (!files) {
    opened_here = std::make_unique<CheckpointFiles>(path);
    files = opened_here.get();
  }
  record::CheckpointData checkpoint;
  checkpoint.step = hdf5::int_attribute(group, "step");
  checkpoint.epoch = hdf5::int_attribute(group, "epoch");
  checkpoint.created = hdf5::string_attribute(group, "created");
  checkpoint.extra_json = hdf5::string_attribute(group, "extra");
  std::map<std::string, std::string> section_sums;
  // A checkpoint from before checksums, in a file upgraded since, is marked so (mark_unsummed) and read unchecked.
  const bool summed = hdf5::has_attribute(group, "sha256");
  const bool marked_unsummed = !summed && hdf5::has_attribute(group, kUnsummed);
  for (const auto& section_name : hdf5::child_names(group)) {
    section_sums[section_name] =
        read_section(group.openGroup(section_name), path, object + "/" + section_name, format_version, marked_unsummed,
                     *files, checkpoint.sections[section_name]);
  }
  if (!summed && format_version >= kChecksummedFormat && !marked_unsummed) {
    throw unsummed(path, object, format_version);
  }
  if (summed) {
    const std::string stored = hdf5::string_attribute(group, "sha256");
    const std::string computed =
        checkpoint_checksum(checkpoint.step, checkpoint.epoch, checkpoint.created, checkpoint.extra_json, section_sums);
    if (stored != computed) throw damaged(path, object, stored, computed);
  }
  return checkpoint;
}

int64_t log_sequence(const H5::H5File& file) {
  const H5::Group root = file.openGroup("/");
  return hdf5::has_attribute(root, kLogSequence) ? hdf5::int_attribute(root, kLogSequence) : 0;
}

void mark_unsummed(H5::Group& checkpoints, int64_t format_version) {
  for (const auto& label : hdf5::child_names(checkpoints)) {
    H5::Group group = checkpoints.openGroup(label);
    if (hdf5::has_attribute(group, "sha256")) continue;
    hdf5::set_string_attribute(group, kUnsummed,
                               "written in format " + std::to_string(format_version) + ", before checksums");
  }
}

std::string run_id_of(const H5::H5File& file) {
  const H5::Group root = file.openGroup("/");
  return hdf5::has_attribute(root, kRunId) ? hdf5::string_attribute(root, kRunId) : "";
}

void check_layout(const H5::H5File& file, const std::string& path, int64_t format_version) {
  if (format_version >= kFormatVersion) return;
  const auto contradiction = [&](const std::string& what, int64_t introduced) {
    return RunFileError(RunFileError::Kind::Corrupt, path, "/@format_version",
                        std::to_string(format_version) + " contradicts the file's layout: " + what +
                            ", which only format " + std::to_string(introduced) +
                            " and later write (the attribute was altered?); the file is refused rather than read "
                            "with fewer checks");
  };
  const bool has_checkpoints = hdf5::link_exists(file.getId(), kCheckpoints);  // else the reader names it missing
  if (format_version < 5 && has_checkpoints && !checkpoint_data_file_names(file.openGroup(kCheckpoints)).empty()) {
    throw contradiction("its checkpoints' tensors are in data files beside it", 5);
  }
  if (format_version < 4 && hdf5::has_attribute(file.openGroup("/"), kLogSequence)) {
    throw contradiction("it has the attribute log_sequence of a run log", 4);
  }
  if (!has_checkpoints) return;
  const H5::Group checkpoints = file.openGroup(kCheckpoints);
  if (format_version < kChecksummedFormat) {
    for (const auto& label : hdf5::child_names(checkpoints)) {
      if (hdf5::has_attribute(checkpoints.openGroup(label), "sha256")) {
        throw contradiction("its checkpoint \"" + label + "\" carries a sha256 checksum", kChecksummedFormat);
      }
    }
  }
}

}  // namespace descentlab::store::format
