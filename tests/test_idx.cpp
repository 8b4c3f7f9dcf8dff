#include <gtest/gtest.h>

#include "core/data/idx.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab::data {
namespace {

using descentlab::testing::fixture;
using descentlab::testing::read_bytes;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

// The fixture was written by a small Python script: pixel k of image i is (37 i + 11 k) mod 256, labels 7, 2, 9.
uint8_t expected_pixel(int image, int k) {
  return static_cast<uint8_t>((image * 37 + k * 11) % 256);
}

// Asserts that `action` throws DataError whose message contains each of `fragments`.
template <typename Action>
void expect_data_error(Action action, std::initializer_list<std::string> fragments) {
  try {
    action();
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    const std::string message = error.what();
    for (const auto& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(Idx, ReadsPlainImagesWithDimensionsAndValues) {
  const IdxArray array = read_idx(fixture("idx/images-3x4x5-idx3-ubyte").string());
  EXPECT_EQ(array.header.type, IdxType::UInt8);
  EXPECT_EQ(array.header.dims, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_FALSE(array.header.gzip);
  ASSERT_EQ(array.bytes.size(), 60u);
  for (int image = 0; image < 3; ++image) {
    for (int k = 0; k < 20; ++k) EXPECT_EQ(array.bytes[static_cast<size_t>(image * 20 + k)], expected_pixel(image, k));
  }
}

TEST(Idx, GzipFileGivesTheSameArray) {
  const IdxArray plain = read_idx(fixture("idx/images-3x4x5-idx3-ubyte").string());
  const IdxArray packed = read_idx(fixture("idx/images-3x4x5-idx3-ubyte.gz").string());
  EXPECT_TRUE(packed.header.gzip);
  EXPECT_EQ(packed.header.dims, plain.header.dims);
  EXPECT_EQ(packed.bytes, plain.bytes);
}

TEST(Idx, HeaderOnlyReadsDimensions) {
  const IdxHeader header = read_idx_header(fixture("idx/labels-3-idx1-ubyte.gz").string());
  EXPECT_EQ(header.dims, (std::vector<int64_t>{3}));
  EXPECT_TRUE(header.gzip);
  EXPECT_EQ(header.element_count(), 3);
}

TEST(Idx, MultiByteElementsAreConvertedFromBigEndian) {
  const IdxArray array = read_idx(fixture("idx/int16-4-idx1").string());
  ASSERT_EQ(array.header.type, IdxType::Int16);
  const int16_t* values = array.as<int16_t>();
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[1], -2);
  EXPECT_EQ(values[2], 300);
  EXPECT_EQ(values[3], -32768);
}

TEST(Idx, ImageSetPairsImagesAndLabels) {
  const ImageSet set =
      read_image_set(fixture("idx/images-3x4x5-idx3-ubyte.gz").string(), fixture("idx/labels-3-idx1-ubyte").string());
  EXPECT_EQ(set.count, 3);
  EXPECT_EQ(set.rows, 4);
  EXPECT_EQ(set.cols, 5);
  EXPECT_EQ(set.labels, (std::vector<uint8_t>{7, 2, 9}));
  EXPECT_EQ(set.pixels[25], expected_pixel(1, 5));
}

TEST(Idx, TruncatedPlainFileIsAClearError) {
  ScratchFolder scratch;
  const std::string bytes = read_bytes(fixture("idx/images-3x4x5-idx3-ubyte"));
  const auto path = scratch / "cut-idx3-ubyte";
  write_bytes(path, bytes.substr(0, bytes.size() - 7));
  expect_data_error([&] { read_idx(path.string()); }, {path.string(), "truncated", "60 data bytes", "only 53"});
}

TEST(Idx, TruncatedInsideTheDimensionsIsAClearError) {
  ScratchFolder scratch;
  const auto path = scratch / "cut-header";
  write_bytes(path, read_bytes(fixture("idx/images-3x4x5-idx3-ubyte")).substr(0, 9));
  expect_data_error([&] { read_idx_header(path.string()); }, {path.string(), "truncated", "dimension list"});
}

TEST(Idx, TruncatedGzipFileIsAClearError) {
  ScratchFolder scratch;
  const std::string bytes = read_bytes(fixture("idx/images-3x4x5-idx3-ubyte.gz"));
  const auto path = scratch / "cut.gz";
  write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_data_error([&] { read_idx(path.string()); }, {path.string()});
}

TEST(Idx, WrongMagicNumberIsAClearError) {
  ScratchFolder scratch;
  std::string bytes = read_bytes(fixture("idx/labels-3-idx1-ubyte"));
  bytes[0] = 0x7F;
  const auto path = scratch / "bad-magic";
  write_bytes(path, bytes);
  expect_data_error([&] { read_idx(path.string()); }, {path.string(), "wrong magic number", "0x7f000801"});
}

TEST(Idx, UnknownElementTypeIsAClearError) {
  ScratchFolder scratch;
  std::string bytes = read_bytes(fixture("idx/labels-3-idx1-ubyte"));
  bytes[2] = 0x42;
  const auto path = scratch / "bad-type";
  write_bytes(path, bytes);
  expect_data_error([&] { read_idx(path.string()); }, {"wrong magic number", "0x00004201"});
}

TEST(Idx, EmptyAndTextFilesAreNotIdx) {
  ScratchFolder scratch;
  write_bytes(scratch / "empty", "");
  expect_data_error([&] { read_idx((scratch / "empty").string()); }, {"not an IDX file"});
  write_bytes(scratch / "text", "hello, world\n");
  expect_data_error([&] { read_idx((scratch / "text").string()); }, {"not an IDX file", "wrong magic"});
}

TEST(Idx, ExtraBytesAfterTheDataAreAnError) {
  ScratchFolder scratch;
  const auto path = scratch / "long";
  write_bytes(path, read_bytes(fixture("idx/labels-3-idx1-ubyte")) + "xx");
  expect_data_error([&] { read_idx(path.string()); }, {"longer than its header declares"});
}

TEST(Idx, MissingFileNamesThePath) {
  expect_data_error([] { read_idx("/nonexistent/train-images-idx3-ubyte"); },
                    {"/nonexistent/train-images-idx3-ubyte", "cannot open"});
}

TEST(Idx, LabelCountMismatchNamesBothFiles) {
  ScratchFolder scratch;
  std::string labels = read_bytes(fixture("idx/labels-3-idx1-ubyte"));
  labels[7] = 2;  // declare 2 labels
  labels.pop_back();
  const auto path = scratch / "labels-2";
  write_bytes(path, labels);
  expect_data_error([&] { read_image_set(fixture("idx/images-3x4x5-idx3-ubyte").string(), path.string()); },
                    {"2 labels for 3 images", "images-3x4x5-idx3-ubyte"});
}

TEST(Idx, LabelsFileGivenAsImagesIsRejected) {
  expect_data_error(
      [] { read_image_set(fixture("idx/labels-3-idx1-ubyte").string(), fixture("idx/labels-3-idx1-ubyte").string()); },
      {"expected uint8 images of rank 3", "rank 1"});
}

}  // namespace
}  // namespace descentlab::data
