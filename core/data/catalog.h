#pragma once
// The datasets DescentLab knows, where their files live, and whether they are present and intact.
// File list and SHA-256 sums come from datasets/SHA256SUMS (compiled in); the data itself lives in a git-ignored
// cache: $DESCENTLAB_DATA when set, else datasets/cache/ in the source tree when run from the build tree, else
// ~/.local/share/descentlab/datasets when installed (core/util/user_folders.h).

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/data/idx.h"
#include "core/data/reviews.h"

namespace descentlab::data {

// The command that fetches the datasets, printed in every "missing" message: `bash datasets/fetch.sh` from a build
// tree, `descentlab-cli data fetch` installed.
std::string fetch_command();

std::string default_data_root();

struct ManifestEntry {
  std::string dataset;        // first path component, e.g. "mnist"
  std::string relative_path;  // e.g. "mnist/train-images-idx3-ubyte"
  std::string sha256;
};

// Parses `sha256sum` output ("<64 hex>  <path>" per line, '#' comments). Throws Error naming `source` and line.
std::vector<ManifestEntry> parse_manifest(const std::string& text, const std::string& source);
const std::vector<ManifestEntry>& builtin_manifest();

struct SplitCount {
  std::string split;  // "train", "test", "validation"
  int64_t count = 0;
  std::string unit;  // "reviews", "images", "characters"
};

struct DatasetReport {
  std::string name;
  std::string description;
  std::string directory;
  bool present = false;  // every file of the dataset exists
  std::string checksum;  // "ok", "mismatch", "missing" or "not checked"
  int64_t files_expected = 0;
  int64_t files_verified = 0;  // files whose SHA-256 matched
  std::vector<SplitCount> splits;
  std::vector<std::string> problems;  // one line each, naming the file
};

struct DatasetDescription {
  std::string name;
  std::string description;
};
const std::vector<DatasetDescription>& known_datasets();

// Inspects one dataset (by name) or all of them. Never throws for missing or corrupt data: it reports it.
DatasetReport inspect_dataset(const std::string& name, const std::string& root,
                              const std::vector<ManifestEntry>& manifest, bool verify_checksums);
std::vector<DatasetReport> inspect_datasets(const std::string& root, bool verify_checksums = true);

// Before a run uses dataset `name`: every file of it that datasets/SHA256SUMS lists is present and has its SHA-256.
// Throws MissingDataError naming the first missing file and DataError naming the first file that differs (both
// with the fetch command). A file verified once in this process is not hashed again while its size and
// modification time stay the same.
void verify_dataset(const std::string& root, const std::string& name,
                    const std::vector<ManifestEntry>& manifest = builtin_manifest());

// Whether every file of dataset `name` that the manifest lists is in `root`, without hashing them: cheap enough for
// a form that asks on every edit (the window's experiment panel).
bool dataset_files_present(const std::string& root, const std::string& name,
                           const std::vector<ManifestEntry>& manifest = builtin_manifest());

// The folder of one dataset; throws MissingDataError (naming the folder and the fetch command) if absent.
std::string require_dataset_dir(const std::string& root, const std::string& name);

// Loaders for the engines. Each throws MissingDataError naming the file and the fetch command when the data is
// not in the cache, and DataError when it is there but unreadable.
// MNIST-format image sets: dataset "mnist" or "fashion-mnist", split "train" or "test"; every label a class
// 0..kImageClasses-1 (DataError naming the labels file and the image otherwise).
inline constexpr int kImageClasses = 10;
ImageSet load_image_dataset(const std::string& root, const std::string& name, const std::string& split);
std::vector<Review> load_imdb_reviews(const std::string& root);
ChapterCorpus load_moby_dick(const std::string& root);

}  // namespace descentlab::data
