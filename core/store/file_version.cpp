#include "core/store/file_version.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <stdexcept>

#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"

namespace descentlab::store {
namespace {

// The core driver's file access: no backing store, growing by `expected_bytes` at a time (at least 1 MB), starting
// from `image` when given.
H5::FileAccPropList in_memory(const std::vector<char>* image, size_t expected_bytes) {
  H5::FileAccPropList access;
  const size_t increment = std::max<size_t>(size_t{1} << 20, expected_bytes);
  if (H5Pset_fapl_core(access.getId(), increment, 0) < 0) throw std::runtime_error("HDF5 refused the core driver");
  if (image && H5Pset_file_image(access.getId(), const_cast<char*>(image->data()), image->size()) < 0) {
    throw std::runtime_error("HDF5 refused the file image");
  }
  return access;
}

std::string memory_name(const char* role) {
  static std::atomic<int64_t> counter{0};
  return std::string("descentlab-in-memory-") + role + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(++counter);
}

// Copies every object of `from` into `to` (new, empty), leaving out the checkpoints and sweeps named.
void copy_without(const H5::H5File& from, H5::H5File& to, const std::string& path, const RunHeader& header,
                  const std::set<std::string>& checkpoints, const std::set<std::string>& sweeps) {
  format::write_header(to, header);
  const H5::Group from_root = from.openGroup("/");
  H5::Group to_root = to.openGroup("/");
  for (const auto& top : hdf5::child_names(from_root)) {
    const bool is_checkpoints = top == format::kCheckpoints;
    const bool is_sweeps = top == format::kSweeps;
    if (!is_checkpoints && !is_sweeps) {
      if (H5Ocopy(from_root.getId(), top.c_str(), to_root.getId(), top.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
        throw RunFileError(RunFileError::Kind::WriteFailed, path, "/" + top, "copy failed");
      }
      continue;
    }
    const H5::Group from_group = from.openGroup(top);
    H5::Group to_group = to.createGroup(top);
    for (const auto& child : hdf5::child_names(from_group)) {
      if ((is_checkpoints && checkpoints.count(child)) || (is_sweeps && sweeps.count(child))) continue;
      if (H5Ocopy(from_group.getId(), child.c_str(), to_group.getId(), child.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
        throw RunFileError(RunFileError::Kind::WriteFailed, path, "/" + top + "/" + child, "copy failed");
      }
    }
  }
}

// A scalar series' last row (its group's attributes) becomes the last of the `keep` rows kept.
void keep_last_row(H5::Group& series, const std::vector<int64_t>& steps, size_t keep) {
  if (!hdf5::has_attribute(series, format::kLastRows)) return;
  format::remove_last_row(series);
  if (keep == 0) return;
  const auto values = hdf5::read_all<double>(series.openDataSet("value"), H5::PredType::NATIVE_DOUBLE);
  if (values.size() == steps.size()) {
    format::set_last_row(series, static_cast<int64_t>(keep), steps[keep - 1], values[keep - 1]);
  }
}

}  // namespace

FileVersion FileVersion::new_file(const RunHeader& header, size_t expected_bytes) {
  FileVersion version(H5::H5File(memory_name("new"), H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT,
                                 in_memory(nullptr, expected_bytes)));
  format::initialize_run_file(version.file_, header);
  return version;
}

FileVersion FileVersion::from_image(const std::vector<char>& committed, size_t added_bytes, const char* role) {
  return FileVersion(
      H5::H5File(memory_name(role), H5F_ACC_RDWR, H5::FileCreatPropList::DEFAULT, in_memory(&committed, added_bytes)));
}

FileVersion FileVersion::rebuilt_without(const std::string& path, const RunHeader& header,
                                         const std::set<std::string>& checkpoints, const std::set<std::string>& sweeps,
                                         size_t added_bytes) {
  // Read-only from the disk: HDF5 reads just the objects it copies, and a read-only close has nothing to fail on.
  const H5::H5File from(path, H5F_ACC_RDONLY);
  FileVersion version(
      H5::H5File(memory_name("rebuilt"), H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT,
                 in_memory(nullptr, static_cast<size_t>(std::filesystem::file_size(path)) + added_bytes)));
  copy_without(from, version.file_, path, header, checkpoints, sweeps);
  return version;
}

void FileVersion::upgrade_format(const std::string& run_id) {
  H5::Group root = file_.openGroup("/");
  const int64_t old_version = hdf5::int_attribute(root, "format_version");
  hdf5::set_int_attribute(root, "format_version", kFormatVersion);
  if (!run_id.empty()) hdf5::set_string_attribute(root, format::kRunId, run_id);
  H5::Group kept = file_.openGroup(format::kCheckpoints);
  if (old_version < format::kChecksummedFormat) format::mark_unsummed(kept, old_version);
}

void FileVersion::set_log_sequence(int64_t sequence) {
  H5::Group root = file_.openGroup("/");
  hdf5::set_int_attribute(root, format::kLogSequence, sequence);
}

void FileVersion::add_rows(const RunBatch& part) {
  H5::Group metrics = file_.openGroup(format::kMetrics);
  H5::Group histograms = file_.openGroup(format::kHistograms);
  H5::Group sweeps = file_.openGroup(format::kSweeps);
  for (const auto& [name, rows] : part.metrics) {
    if (!rows.steps.empty()) {
      format::write_metric_rows(metrics, name, rows.shape, rows.width, rows.steps, rows.wall_times, rows.values);
    }
  }
  for (const auto& [name, snapshots] : part.histograms) {
    if (!snapshots.steps.empty()) {
      format::write_histogram_rows(histograms, name, snapshots.edges, snapshots.steps, snapshots.counts);
    }
  }
  for (const auto& [name, sweep] : part.sweeps) format::write_sweep(sweeps, sweep);
  if (part.annotation) format::write_annotation(file_, *part.annotation);
}

void FileVersion::truncate_series(int64_t last_step) {
  for (const char* top : {format::kMetrics, format::kHistograms}) {
    H5::Group parent = file_.openGroup(top);
    for (const auto& name : hdf5::child_names(parent)) {
      H5::Group group = parent.openGroup(name);
      const auto steps = hdf5::read_all<int64_t>(group.openDataSet("step"), H5::PredType::NATIVE_INT64);
      size_t keep = 0;
      while (keep < steps.size() && steps[keep] <= last_step) ++keep;
      if (keep == steps.size()) continue;
      keep_last_row(group, steps, keep);
      for (const auto& dataset_name : hdf5::child_names(group)) {
        if (dataset_name == "bin_edges") continue;
        H5::DataSet dataset = group.openDataSet(dataset_name);
        auto dims = hdf5::dataset_shape(dataset);
        dims[0] = keep;
        dataset.extend(dims.data());  // H5Dset_extent: shrinking is allowed for chunked datasets
      }
    }
  }
}

void FileVersion::write_checkpoints(const LabelledCheckpoints& checkpoints, const std::string& path,
                                    const CheckpointPlacements& placements) {
  H5::Group group = file_.openGroup(format::kCheckpoints);
  for (const auto& [label, checkpoint] : checkpoints) {
    format::write_checkpoint(group, label, *checkpoint, path, &placements.at(checkpoint.get()));
  }
}

std::vector<char> FileVersion::finish() {
  file_.flush(H5F_SCOPE_GLOBAL);
  const ssize_t size = H5Fget_file_image(file_.getId(), nullptr, 0);
  if (size <= 0) throw std::runtime_error("HDF5 could not size the new version");
  std::vector<char> image(static_cast<size_t>(size));
  if (H5Fget_file_image(file_.getId(), image.data(), image.size()) != size) {
    throw std::runtime_error("HDF5 could not copy out the new version");
  }
  file_.close();
  return image;
}

size_t FileVersion::bytes_of_rows(const RunBatch& part) {
  size_t bytes = 0;
  for (const auto& [name, rows] : part.metrics) bytes += (rows.values.size() + 2 * rows.steps.size()) * 8;
  for (const auto& [name, snapshots] : part.histograms) bytes += (snapshots.counts.size() + 1) * 8;
  return bytes;
}

}  // namespace descentlab::store
