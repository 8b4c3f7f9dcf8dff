#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/data/catalog.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "test_support.h"

namespace descentlab::data {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::fixture;
using descentlab::testing::read_bytes;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

// SHA-256 of the committed fixtures, from `sha256sum tests/fixtures/idx/*`.
constexpr const char* kImagesSha = "5f1d7f8fa9fce0c99592fc48d58ed7229bca0072f7044460a55c9b4f7b39a8e4";
constexpr const char* kLabelsSha = "5d946e5f8aa6ffd7bea70409f89085764862bc909beb469512645c01a2088c05";

// A data folder holding a miniature "mnist" built from the IDX fixtures, and its manifest.
struct MiniatureCache {
  ScratchFolder folder;
  std::vector<ManifestEntry> manifest;

  MiniatureCache() {
    std::string text;
    for (const std::string split : {"train", "t10k"}) {
      fs::create_directories(folder / "mnist");
      fs::copy_file(fixture("idx/images-3x4x5-idx3-ubyte"), folder / "mnist" / (split + "-images-idx3-ubyte"));
      fs::copy_file(fixture("idx/labels-3-idx1-ubyte"), folder / "mnist" / (split + "-labels-idx1-ubyte"));
      text += std::string(kImagesSha) + "  mnist/" + split + "-images-idx3-ubyte\n";
      text += std::string(kLabelsSha) + "  mnist/" + split + "-labels-idx1-ubyte\n";
    }
    manifest = parse_manifest("# comment line\n" + text, "test manifest");
  }
  std::string root() const { return folder.path().string(); }
};

bool mentions(const std::vector<std::string>& lines, const std::string& fragment) {
  for (const auto& line : lines) {
    if (line.find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST(Checksum, MatchesSha256sumOfTheFixture) {
  EXPECT_EQ(sha256_of_file(fixture("idx/images-3x4x5-idx3-ubyte").string()), kImagesSha);
  EXPECT_THROW(sha256_of_file("/nonexistent/file"), DataError);
}

TEST(Catalog, ParsesTheManifest) {
  MiniatureCache cache;
  ASSERT_EQ(cache.manifest.size(), 4u);
  EXPECT_EQ(cache.manifest[0].dataset, "mnist");
  EXPECT_EQ(cache.manifest[0].relative_path, "mnist/train-images-idx3-ubyte");
  EXPECT_EQ(cache.manifest[0].sha256, kImagesSha);
  EXPECT_THROW(parse_manifest("abc  mnist/x\n", "bad"), Error);
  EXPECT_THROW(parse_manifest(std::string(kImagesSha) + "  nofolder\n", "bad"), Error);
}

TEST(Catalog, BuiltInManifestCoversEveryKnownDataset) {
  for (const auto& known : known_datasets()) {
    int files = 0;
    for (const auto& entry : builtin_manifest()) files += entry.dataset == known.name;
    EXPECT_GT(files, 0) << known.name;
  }
}

TEST(Catalog, IntactDatasetReportsCountsAndOkChecksum) {
  MiniatureCache cache;
  const auto report = inspect_dataset("mnist", cache.root(), cache.manifest, true);
  EXPECT_TRUE(report.present);
  EXPECT_EQ(report.checksum, "ok");
  EXPECT_EQ(report.files_verified, 4);
  ASSERT_EQ(report.splits.size(), 2u);
  EXPECT_EQ(report.splits[0].split, "train");
  EXPECT_EQ(report.splits[0].count, 3);
  EXPECT_EQ(report.splits[1].split, "test");
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(inspect_dataset("mnist", cache.root(), cache.manifest, false).checksum, "not checked");
}

TEST(Catalog, CorruptFileIsAMismatchNamingTheFile) {
  MiniatureCache cache;
  const auto path = cache.folder / "mnist" / "t10k-labels-idx1-ubyte";
  std::string bytes = read_bytes(path);
  bytes.back() = 3;  // a changed label, same size
  write_bytes(path, bytes);
  const auto report = inspect_dataset("mnist", cache.root(), cache.manifest, true);
  EXPECT_TRUE(report.present);
  EXPECT_EQ(report.checksum, "mismatch");
  EXPECT_EQ(report.files_verified, 3);
  EXPECT_TRUE(mentions(report.problems, path.string()));
  EXPECT_TRUE(mentions(report.problems, fetch_command()));
}

TEST(Catalog, MissingFileSaysHowToFetch) {
  MiniatureCache cache;
  fs::remove(cache.folder / "mnist" / "train-images-idx3-ubyte");
  const auto report = inspect_dataset("mnist", cache.root(), cache.manifest, true);
  EXPECT_FALSE(report.present);
  EXPECT_EQ(report.checksum, "missing");
  EXPECT_TRUE(report.splits.empty());
  EXPECT_TRUE(mentions(report.problems, "train-images-idx3-ubyte: missing"));
  EXPECT_TRUE(mentions(report.problems, fetch_command()));
}

TEST(Catalog, UnreadableContentIsReportedNotThrown) {
  MiniatureCache cache;
  write_bytes(cache.folder / "mnist" / "train-images-idx3-ubyte", "not idx");
  const auto report = inspect_dataset("mnist", cache.root(), cache.manifest, true);
  EXPECT_EQ(report.checksum, "mismatch");
  EXPECT_TRUE(mentions(report.problems, "not an IDX file"));
}

TEST(Catalog, LoadingAnAbsentDatasetThrowsWithTheFetchCommand) {
  ScratchFolder empty;
  try {
    load_image_dataset(empty.path().string(), "fashion-mnist", "train");
    FAIL() << "expected MissingDataError";
  } catch (const MissingDataError& error) {
    EXPECT_NE(std::string(error.what()).find(fetch_command()), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("fashion-mnist"), std::string::npos) << error.what();
  }
  EXPECT_THROW(load_image_dataset(empty.path().string(), "cifar", "train"), Error);
  for (auto load : {+[](const std::string& root) { load_imdb_reviews(root); },
                    +[](const std::string& root) { load_moby_dick(root); }}) {
    try {
      load(empty.path().string());
      FAIL() << "expected MissingDataError";
    } catch (const MissingDataError& error) {
      EXPECT_NE(std::string(error.what()).find(fetch_command()), std::string::npos) << error.what();
    }
  }
}

TEST(Catalog, LoadsReviewsAndCorpusFromTheCache) {
  ScratchFolder cache;
  fs::create_directories(cache / "imdb");
  fs::copy_file(fixture("reviews.json"), cache / "imdb" / "reviews.json");
  fs::copy(fixture("corpus"), cache / "moby-dick");
  EXPECT_EQ(load_imdb_reviews(cache.path().string()).size(), 12u);
  EXPECT_EQ(load_moby_dick(cache.path().string()).files.size(), 4u);
}

TEST(Catalog, LoadsAnImageDatasetFromTheCache) {
  MiniatureCache cache;
  const auto set = load_image_dataset(cache.root(), "mnist", "test");
  EXPECT_EQ(set.count, 3);
  EXPECT_EQ(set.labels, (std::vector<uint8_t>{7, 2, 9}));
}

// Issue 16: a label byte out of 0..9 made a model of (label + 1) classes; it is refused naming the file and image.
TEST(Catalog, AnImageLabelOutsideTheTenClassesIsRefusedNamingTheFile) {
  MiniatureCache cache;
  const auto path = cache.folder / "mnist" / "t10k-labels-idx1-ubyte";
  std::string bytes = read_bytes(path);
  bytes.back() = static_cast<char>(200);
  write_bytes(path, bytes);
  try {
    load_image_dataset(cache.root(), "mnist", "test");
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_EQ(error.path(), path.string());
    EXPECT_NE(std::string(error.what()).find("label 200 of image 2 is not a class 0..9"), std::string::npos)
        << error.what();
  }
}

// Issue 16: checksums were checked by `data info` only; a training run now verifies its dataset first.
TEST(Catalog, VerifyDatasetPassesAnIntactOneAndNamesAChangedOrMissingFile) {
  MiniatureCache cache;
  EXPECT_NO_THROW(verify_dataset(cache.root(), "mnist", cache.manifest));
  EXPECT_NO_THROW(verify_dataset(cache.root(), "mnist", cache.manifest));  // the second time from the cache

  const auto path = cache.folder / "mnist" / "train-labels-idx1-ubyte";
  std::string bytes = read_bytes(path);
  bytes.back() = static_cast<char>(bytes.back() ^ 1);  // same size: only the hash tells
  write_bytes(path, bytes);
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
  try {
    verify_dataset(cache.root(), "mnist", cache.manifest);
    FAIL() << "expected DataError";
  } catch (const MissingDataError& error) {
    FAIL() << "not missing: " << error.what();
  } catch (const DataError& error) {
    EXPECT_EQ(error.path(), path.string());
    EXPECT_NE(std::string(error.what()).find("SHA-256 differs"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(fetch_command()), std::string::npos) << error.what();
  }

  fs::remove(path);
  try {
    verify_dataset(cache.root(), "mnist", cache.manifest);
    FAIL() << "expected MissingDataError";
  } catch (const MissingDataError& error) {
    EXPECT_EQ(error.path(), path.string());
  }
  EXPECT_THROW(verify_dataset(cache.root(), "cifar", cache.manifest), Error);
}

}  // namespace
}  // namespace descentlab::data
