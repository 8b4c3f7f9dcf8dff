// A user's data file (issue 53, item 3; docs/your-model.md): the contract checked when the file is read, each
// breach named by file, dataset or attribute, and rows read back in blocks as stored.

#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/data/data_file.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab::data {
namespace {

using descentlab::testing::ScratchFolder;

void put_string(H5::H5Object& object, const char* name, const std::string& value) {
  const H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  object.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

void put_int(H5::H5Object& object, const char* name, int64_t value) {
  object.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_INT64, &value);
}

template <typename T>
void put_array(H5::H5File& file, const std::string& name, const std::vector<hsize_t>& shape,
               const std::vector<T>& values, const H5::PredType& stored, const H5::PredType& memory,
               hsize_t chunk = 0) {
  H5::DSetCreatPropList creation;
  if (chunk > 0) {
    std::vector<hsize_t> chunks(shape);
    chunks[0] = chunk;
    creation.setChunk(static_cast<int>(chunks.size()), chunks.data());
  }
  H5::LinkCreatPropList links;
  links.setCreateIntermediateGroup(true);
  const H5::DataSpace space(static_cast<int>(shape.size()), shape.data());
  file.createDataSet(name, stored, space, creation, H5::DSetAccPropList::DEFAULT, links).write(values.data(), memory);
}

// A valid classification file: x float32 [rows, 3], y int64 in 0..2, chunked by 4 rows; `edit` changes it first.
std::string classification_file(const ScratchFolder& folder, const std::function<void(H5::H5File&)>& edit = {},
                                bool with_task = true) {
  const std::string path = (folder / "data.h5").string();
  H5::H5File file(path, H5F_ACC_TRUNC);
  H5::Group root = file.openGroup("/");
  if (with_task) put_string(root, "task", "classification");
  for (const auto& [split, rows] : {std::pair<std::string, hsize_t>{"train", 10}, {"test", 6}}) {
    std::vector<float> x(rows * 3);
    std::vector<int64_t> y(rows);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 3);
    put_array(file, split + "/x", {rows, 3}, x, H5::PredType::IEEE_F32LE, H5::PredType::NATIVE_FLOAT, 4);
    put_array(file, split + "/y", {rows}, y, H5::PredType::STD_I64LE, H5::PredType::NATIVE_INT64, 4);
  }
  if (edit) edit(file);
  return path;
}

std::string error_of(const std::function<void()>& action) {
  return descentlab::testing::message_of<DataError>(action);
}

TEST(DataFile, AValidFileIsDescribedAndReadInBlocks) {
  ScratchFolder folder;
  const std::string path = classification_file(folder, [](H5::H5File& file) {
    H5::Group root = file.openGroup("/");
    put_int(root, "classes", 3);
    put_string(root, "name", "three blobs");
  });
  const DataFileInfo info = read_data_file(path);
  EXPECT_EQ(info.task, DataTask::classification);
  EXPECT_EQ(info.classes, 3);
  EXPECT_EQ(info.name, "three blobs");
  EXPECT_EQ(info.train_x.shape, (std::vector<int64_t>{10, 3}));
  EXPECT_EQ(info.train_x.chunk, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(block_rows(info.train_x), 4);
  EXPECT_EQ(info.test_y.rows(), 6);
  // Rows 3..6 as stored, and the inputs' statistics over every element of train/x.
  const std::vector<float> rows = read_float_rows(path, info.train_x, 3, 4);
  ASSERT_EQ(rows.size(), 12u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i], static_cast<float>((9 + i) % 7) - 3.0f) << i;
  double sum = 0, squares = 0;
  for (int i = 0; i < 30; ++i) {
    sum += i % 7 - 3.0;
    squares += (i % 7 - 3.0) * (i % 7 - 3.0);
  }
  EXPECT_NEAR(info.input_mean, sum / 30, 1e-9);
  EXPECT_NEAR(info.input_std, std::sqrt(squares / 30 - (sum / 30) * (sum / 30)), 1e-9);
  EXPECT_EQ(read_integer_rows(path, info.train_y, 8, 2), (std::vector<int64_t>{2, 0}));
  EXPECT_NE(error_of([&] { read_float_rows(path, info.train_x, 8, 3); }).find("rows 8 to 11 asked of 10"),
            std::string::npos);
}

// Each breach of the contract, and the words that must name it.
TEST(DataFile, EachBreachIsNamedByFileAndDataset) {
  struct Breach {
    std::string what;
    std::function<void(H5::H5File&)> edit;
    std::string says;
  };
  const auto classes = [](int64_t count) {
    return [count](H5::H5File& file) {
      H5::Group root = file.openGroup("/");
      put_int(root, "classes", count);
    };
  };
  const std::vector<Breach> breaches = {
      {"no classes", {}, "/@classes: missing"},
      {"one class", classes(1), "/@classes: 1; at least 2"},
      {"a label out of range", classes(2), "/train/y: row 2 holds the label 2, outside 0..1"},
      {"rows that differ",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("test/y");
         put_array(file, "test/y", {5}, std::vector<int64_t>(5, 0), H5::PredType::STD_I64LE,
                   H5::PredType::NATIVE_INT64);
       },
       "/test/x: 6 rows, but /test/y has 5"},
      {"test shaped unlike train",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("test/x");
         put_array(file, "test/x", {6, 4}, std::vector<float>(24, 0.0f), H5::PredType::IEEE_F32LE,
                   H5::PredType::NATIVE_FLOAT);
       },
       "/test/x: float32 [6, 4] does not match /train/x's float32 [10, 3]"},
      {"float labels",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("train/y");
         put_array(file, "train/y", {10}, std::vector<double>(10, 0.0), H5::PredType::IEEE_F64LE,
                   H5::PredType::NATIVE_DOUBLE);
       },
       "does not match"},
      {"a NaN input",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("test/x");
         std::vector<float> x(18, 0.0f);
         x[13] = std::numeric_limits<float>::quiet_NaN();
         put_array(file, "test/x", {6, 3}, x, H5::PredType::IEEE_F32LE, H5::PredType::NATIVE_FLOAT);
       },
       "/test/x: row 4 holds nan; every value must be finite"},
      {"a missing dataset",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("train/x");
       },
       "/train/x: missing"},
      {"text where numbers go",
       [&](H5::H5File& file) {
         classes(3)(file);
         file.unlink("train/x");
         const H5::StrType type(H5::PredType::C_S1, 4);
         const hsize_t rows = 10;
         file.createDataSet("train/x", type, H5::DataSpace(1, &rows));
       },
       "/train/x: holds a non-numeric type"},
      {"a task no one knows",
       [&](H5::H5File& file) {
         file.openGroup("/").removeAttr("task");
         H5::Group root = file.openGroup("/");
         put_string(root, "task", "segmentation");
       },
       "/@task: is \"segmentation\"; expected"},
      {"next-token with float inputs",
       [&](H5::H5File& file) {
         file.openGroup("/").removeAttr("task");
         H5::Group root = file.openGroup("/");
         put_string(root, "task", "next-token");
         put_int(root, "vocabulary", 5);
       },
       "next-token takes integer tokens x [N, T]"},
      {"regression with integer targets",
       [&](H5::H5File& file) {
         file.openGroup("/").removeAttr("task");
         H5::Group root = file.openGroup("/");
         put_string(root, "task", "regression");
       },
       "/train/y: int64; regression takes float inputs and float targets"},
  };
  for (const Breach& breach : breaches) {
    ScratchFolder folder;
    const std::string path = classification_file(folder, breach.edit);
    const std::string error = error_of([&] { read_data_file(path); });
    EXPECT_NE(error.find(path + ": "), std::string::npos) << breach.what << ": " << error;
    EXPECT_NE(error.find(breach.says), std::string::npos) << breach.what << ": " << error;
  }
  ScratchFolder folder;
  const std::string untasked = classification_file(folder, {}, /*with_task=*/false);
  EXPECT_NE(error_of([&] { read_data_file(untasked); }).find("/@task: missing"), std::string::npos);
  const std::string text = (folder / "notes.h5").string();
  descentlab::testing::write_bytes(text, "not hdf5");
  EXPECT_NE(error_of([&] { read_data_file(text); }).find("not an HDF5 file"), std::string::npos);
  EXPECT_NE(error_of([&] { read_data_file((folder / "absent.h5").string()); }).find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace descentlab::data
