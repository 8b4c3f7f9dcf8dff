#include "core/store/run_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "core/record/checkpoint.h"
#include "core/store/checkpoint_files.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_log.h"

namespace descentlab::store {

struct RunReader::File {
  H5::H5File handle;
  RunBatch logged;  // the run log's records after the file's own: rows, snapshots and sweeps not yet folded in
  // The checkpoints' data files, opened with the file: a writer replacing "latest" meanwhile removes its old data
  // file, which stays readable through the descriptor.
  std::unique_ptr<CheckpointFiles> data_files;
  std::set<std::string> data_file_names;  // as the file stores them
  RunReader::LogPosition log_position;
};

namespace {

using Kind = RunFileError::Kind;

// Runs `read`, turning HDF5 library errors into a RunFileError naming `object`.
template <typename Read>
auto guarded(const std::string& path, const std::string& object, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const H5::Exception& error) {
    throw format::to_run_file_error(error, Kind::Corrupt, path, object);
  } catch (const hdf5::ClaimTooLarge& error) {
    throw RunFileError(Kind::Corrupt, path, object, error.what());
  }
}

H5::Group open_child_group(const H5::H5File& file, const std::string& path, const std::string& top,
                           const std::string& name) {
  const std::string object = "/" + top + "/" + name;
  if (!hdf5::link_exists(file.getId(), top) || !hdf5::link_exists(file.openGroup(top).getId(), name)) {
    throw RunFileError(Kind::MissingObject, path, object, "not in this run file");
  }
  return file.openGroup(top).openGroup(name);
}

H5::DataSet open_dataset(const H5::Group& group, const std::string& name, const std::string& path,
                         const std::string& object) {
  if (!hdf5::link_exists(group.getId(), name)) {
    throw RunFileError(Kind::MissingObject, path, object + "/" + name, "dataset missing");
  }
  return group.openDataSet(name);
}

void expect(bool condition, const std::string& path, const std::string& object, const std::string& message) {
  if (!condition) throw RunFileError(Kind::Corrupt, path, object, message);
}

// A series' shape. The vocabulary decides for the names it knows (so a version-1 file's one-layer series, stored
// as "scalar", still reads per layer); other names keep the word stored in their kind attribute.
record::SeriesShape series_shape(const H5::Group& group, const std::string& name, const std::string& path,
                                 const std::string& object) {
  if (const auto* known = record::find_metric(name)) return known->shape;
  expect(hdf5::has_attribute(group, "kind"), path, object, "missing attribute kind");
  const std::string word = hdf5::string_attribute(group, "kind");
  record::SeriesShape shape = record::SeriesShape::Scalar;
  expect(record::parse_shape_word(word, shape), path, object,
         "attribute kind is \"" + word + "\"; expected scalar, per_layer, per_threshold, per_sparsity or vector");
  return shape;
}

}  // namespace

std::string run_file_version(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "missing";
  return std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

RunReader::RunReader(const std::string& path) : path_(path), file_(std::make_unique<File>()) {
  for (int attempt = 1;; ++attempt) {
    const std::string opened = run_file_version(path);
    file_->handle = format::open_validated(path, H5F_ACC_RDONLY);
    header_ = guarded(path_, "/", [&] { return format::read_header(file_->handle, path_); });
    for (const char* top : {format::kMetrics, format::kHistograms, format::kSweeps, format::kCheckpoints}) {
      if (!hdf5::link_exists(file_->handle.getId(), top)) {
        throw RunFileError(Kind::MissingObject, path_, std::string("/") + top, "group missing");
      }
    }
    const int64_t folded = guarded(path_, "/", [&] { return format::log_sequence(file_->handle); });
    RunLog log = read_run_log(path_, folded);
    // A writer folded the log into a new version of the file after it was opened: the file read is older than the
    // log beside it now. Read both again (a fold takes a moment; a few tries suffice).
    const bool foreign = !log.run_id.empty() && !header_.run_id.empty() && log.run_id != header_.run_id;
    if (log.exists && log.base_sequence > folded && attempt < 20 && !foreign) continue;
    check_log_follows(log, folded, header_.run_id, path_);
    file_->data_files = std::make_unique<CheckpointFiles>(path_);
    const auto names = guarded(path_, "/checkpoints", [&] {
      return format::checkpoint_data_file_names(file_->handle.openGroup(format::kCheckpoints));
    });
    // A data file missing because a writer replaced its checkpoint after the file was opened: read the new version.
    // (One missing for another reason is named when its checkpoint is read.)
    if (!file_->data_files->open(names).empty() && run_file_version(path) != opened && attempt < 20) continue;
    file_->data_file_names = names;
    file_->logged = RunBatch{};
    file_->log_position = {log.exists, log.base_sequence, std::max(folded, log.last_sequence), log.valid_length};
    for (auto& record : log.records) file_->logged.merge_newer(std::move(record.batch));
    if (file_->logged.annotation) header_.annotation = *file_->logged.annotation;  // the newest the log holds
    break;
  }
}

namespace {

template <typename Map>
std::vector<std::string> with_logged(std::vector<std::string> names, const Map& logged) {
  for (const auto& entry : logged) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool in_file(const H5::H5File& file, const char* top, const std::string& name) {
  return hdf5::link_exists(file.getId(), top) && hdf5::link_exists(file.openGroup(top).getId(), name);
}

}  // namespace

RunReader::~RunReader() = default;
RunReader::RunReader(RunReader&&) noexcept = default;
RunReader& RunReader::operator=(RunReader&&) noexcept = default;

std::vector<std::string> RunReader::metric_names() const {
  return with_logged(
      guarded(path_, "/metrics", [&] { return hdf5::child_names(file_->handle.openGroup(format::kMetrics)); }),
      file_->logged.metrics);
}

MetricSeries RunReader::metric(const std::string& name) const {
  const std::string object = "/metrics/" + name;
  const auto logged = file_->logged.metrics.find(name);
  MetricSeries series;
  if (logged != file_->logged.metrics.end() &&
      !guarded(path_, object, [&] { return in_file(file_->handle, format::kMetrics, name); })) {
    series.name = name;
    series.shape = logged->second.shape;
    series.width = logged->second.width;
  } else {
    series = metric_in_file(name);
  }
  if (logged != file_->logged.metrics.end()) {
    const auto& rows = logged->second;
    expect(
        rows.width == series.width, path_, object,
        "the run log's rows have width " + std::to_string(rows.width) + ", the file's " + std::to_string(series.width));
    series.steps.insert(series.steps.end(), rows.steps.begin(), rows.steps.end());
    series.wall_times.insert(series.wall_times.end(), rows.wall_times.begin(), rows.wall_times.end());
    series.values.insert(series.values.end(), rows.values.begin(), rows.values.end());
  }
  return series;
}

MetricSeries RunReader::last_metric_row(const std::string& name, bool scalars_only) const {
  const std::string object = "/metrics/" + name;
  const auto logged = file_->logged.metrics.find(name);
  if (logged != file_->logged.metrics.end() && !logged->second.steps.empty()) {
    // The log's rows come after the file's: its last row is the series' last.
    const auto& rows = logged->second;
    MetricSeries series;
    series.name = name;
    series.shape = rows.shape;
    series.width = rows.width;
    series.steps = {rows.steps.back()};
    series.values.assign(rows.values.end() - rows.width, rows.values.end());
    return series;
  }
  return guarded(path_, object, [&] {
    const H5::Group group = open_child_group(file_->handle, path_, format::kMetrics, name);
    MetricSeries series;
    series.name = name;
    series.shape = series_shape(group, name, path_, object);
    const H5::DataSet steps = open_dataset(group, "step", path_, object);
    const H5::DataSet values = open_dataset(group, "value", path_, object);
    const auto shape = hdf5::dataset_shape(values);
    expect(!shape.empty() && shape.size() <= 2, path_, object + "/value", "must be 1-D or 2-D");
    expect(shape[0] == hdf5::dataset_shape(steps).at(0), path_, object, "step and value have different lengths");
    series.width = shape.size() == 2 ? static_cast<int64_t>(shape[1]) : 1;
    if (scalars_only && series.width != 1) return series;  // its shape says enough: no chunk inflated
    // A scalar's last row kept as attributes by the writer, when they describe every row the series has.
    if (series.width == 1 && shape[0] > 0 && hdf5::has_attribute(group, format::kLastRows) &&
        hdf5::int_attribute(group, format::kLastRows) == static_cast<int64_t>(shape[0]) &&
        hdf5::has_attribute(group, format::kLastStep) && hdf5::has_attribute(group, format::kLastValue)) {
      series.steps = {hdf5::int_attribute(group, format::kLastStep)};
      series.values = {hdf5::double_attribute(group, format::kLastValue)};
      return series;
    }
    series.steps = hdf5::read_last_row<int64_t>(steps, H5::PredType::NATIVE_INT64);
    // No wall time: a table needs none, and each column read alone inflates a chunk of up to 8192 rows.
    series.values = hdf5::read_last_row<double>(values, H5::PredType::NATIVE_DOUBLE);
    return series;
  });
}

MetricSeries RunReader::metric_in_file(const std::string& name) const {
  const std::string object = "/metrics/" + name;
  return guarded(path_, object, [&] {
    const H5::Group group = open_child_group(file_->handle, path_, format::kMetrics, name);
    MetricSeries series;
    series.name = name;
    series.shape = series_shape(group, name, path_, object);
    series.steps = hdf5::read_all<int64_t>(open_dataset(group, "step", path_, object), H5::PredType::NATIVE_INT64);
    series.wall_times =
        hdf5::read_all<double>(open_dataset(group, "wall_time", path_, object), H5::PredType::NATIVE_DOUBLE);
    const H5::DataSet values = open_dataset(group, "value", path_, object);
    const auto shape = hdf5::dataset_shape(values);
    expect(!shape.empty() && shape.size() <= 2, path_, object + "/value", "must be 1-D or 2-D");
    series.width = shape.size() == 2 ? static_cast<int64_t>(shape[1]) : 1;
    series.values = hdf5::read_all<double>(values, H5::PredType::NATIVE_DOUBLE);
    expect(series.wall_times.size() == series.steps.size() && shape[0] == series.steps.size(), path_, object,
           "step, wall_time and value have different lengths");
    return series;
  });
}

std::vector<std::string> RunReader::histogram_names() const {
  return with_logged(
      guarded(path_, "/histograms", [&] { return hdf5::child_names(file_->handle.openGroup(format::kHistograms)); }),
      file_->logged.histograms);
}

HistogramSeries RunReader::histogram(const std::string& name) const {
  const std::string object = "/histograms/" + name;
  const auto logged = file_->logged.histograms.find(name);
  HistogramSeries series;
  if (logged != file_->logged.histograms.end() &&
      !guarded(path_, object, [&] { return in_file(file_->handle, format::kHistograms, name); })) {
    series.name = name;
    series.bin_edges = logged->second.edges;
  } else {
    series = histogram_in_file(name);
  }
  if (logged != file_->logged.histograms.end()) {
    const auto& snapshots = logged->second;
    expect(snapshots.edges == series.bin_edges, path_, object, "the run log's snapshots have other bin edges");
    series.steps.insert(series.steps.end(), snapshots.steps.begin(), snapshots.steps.end());
    series.counts.insert(series.counts.end(), snapshots.counts.begin(), snapshots.counts.end());
  }
  return series;
}

HistogramSeries RunReader::histogram_in_file(const std::string& name) const {
  const std::string object = "/histograms/" + name;
  return guarded(path_, object, [&] {
    const H5::Group group = open_child_group(file_->handle, path_, format::kHistograms, name);
    HistogramSeries series;
    series.name = name;
    series.bin_edges =
        hdf5::read_all<double>(open_dataset(group, "bin_edges", path_, object), H5::PredType::NATIVE_DOUBLE);
    series.steps = hdf5::read_all<int64_t>(open_dataset(group, "step", path_, object), H5::PredType::NATIVE_INT64);
    const H5::DataSet counts = open_dataset(group, "counts", path_, object);
    const auto shape = hdf5::dataset_shape(counts);
    expect(series.bin_edges.size() >= 2 && shape.size() == 2 && shape[0] == series.steps.size() &&
               shape[1] + 1 == series.bin_edges.size(),
           path_, object, "counts must be [snapshots x bins] with bins + 1 edges");
    series.counts = hdf5::read_all<int64_t>(counts, H5::PredType::NATIVE_INT64);
    return series;
  });
}

std::vector<std::string> RunReader::sweep_names() const {
  return with_logged(
      guarded(path_, "/sweeps", [&] { return hdf5::child_names(file_->handle.openGroup(format::kSweeps)); }),
      file_->logged.sweeps);
}

record::SweepResult RunReader::sweep(const std::string& name) const {
  const auto logged = file_->logged.sweeps.find(name);
  if (logged != file_->logged.sweeps.end()) return logged->second;  // the newest version of it
  const std::string object = "/sweeps/" + name;
  return guarded(path_, object, [&] {
    const H5::Group group = open_child_group(file_->handle, path_, format::kSweeps, name);
    record::SweepResult sweep;
    sweep.name = name;
    sweep.noise = hdf5::string_attribute(group, "noise");
    sweep.metric_name = hdf5::string_attribute(group, "metric_name");
    sweep.layers = hdf5::int_attribute(group, "layers");
    sweep.gamma = hdf5::read_all<double>(open_dataset(group, "gamma", path_, object), H5::PredType::NATIVE_DOUBLE);
    sweep.seeds = hdf5::read_all<int64_t>(open_dataset(group, "seeds", path_, object), H5::PredType::NATIVE_INT64);
    sweep.metric = hdf5::read_all<double>(open_dataset(group, "metric", path_, object), H5::PredType::NATIVE_DOUBLE);
    const size_t cells = sweep.gamma.size() * sweep.seeds.size();
    expect(sweep.metric.size() == cells, path_, object + "/metric", "must hold gamma x seeds values");
    if (sweep.layers > 0) {
      sweep.layer_loss =
          hdf5::read_all<double>(open_dataset(group, "layer_loss", path_, object), H5::PredType::NATIVE_DOUBLE);
      // By division: a forged layer count must not wrap the product around to the count stored.
      const bool fits = cells == 0 ? sweep.layer_loss.empty()
                                   : sweep.layer_loss.size() % cells == 0 &&
                                         sweep.layer_loss.size() / cells == static_cast<uint64_t>(sweep.layers);
      expect(fits, path_, object + "/layer_loss", "must hold gamma x seeds x layers values");
    }
    return sweep;
  });
}

std::vector<CheckpointInfo> RunReader::checkpoints() const {
  return guarded(path_, "/checkpoints", [&] {
    std::vector<CheckpointInfo> infos;
    const H5::Group checkpoints = file_->handle.openGroup(format::kCheckpoints);
    for (const auto& label : hdf5::child_names(checkpoints)) {
      const H5::Group group = checkpoints.openGroup(label);
      infos.push_back({label, hdf5::int_attribute(group, "step"), hdf5::int_attribute(group, "epoch"),
                       hdf5::string_attribute(group, "created"),
                       hdf5::has_attribute(group, "sha256") ? hdf5::string_attribute(group, "sha256") : ""});
    }
    return infos;
  });
}

bool RunReader::has_checkpoint(const std::string& label) const {
  return guarded(path_, "/checkpoints",
                 [&] { return hdf5::link_exists(file_->handle.openGroup(format::kCheckpoints).getId(), label); });
}

const RunReader::LogPosition& RunReader::log_position() const {
  return file_->log_position;
}

std::vector<std::string> RunReader::checkpoint_data_files() const {
  std::vector<std::string> paths;
  for (const auto& name : file_->data_file_names) paths.push_back(checkpoint_file_path(path_, name));
  return paths;
}

std::string RunReader::module_copy() const {
  return guarded(path_, std::string("/") + format::kInputs,
                 [&] { return format::read_module_copy(file_->handle, path_, *file_->data_files); });
}

record::CheckpointData RunReader::checkpoint(const std::string& label) const {
  const std::string object = record::checkpoint_object(label);
  return guarded(path_, object, [&] {
    const H5::Group group = open_child_group(file_->handle, path_, format::kCheckpoints, label);
    return format::read_checkpoint(group, path_, object, header_.format_version, file_->data_files.get());
  });
}

}  // namespace descentlab::store
