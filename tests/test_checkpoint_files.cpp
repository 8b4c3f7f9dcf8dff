// Checkpoint data files (issue 34, item 2): a checkpoint's tensors are written once, into RUN.h5.checkpoints/<n>.bin
// beside the run file; the run file holds their metadata and checksums. These tests check what a user relies on:
// replacing "latest" keeps the folder and the file flat, "best" and "latest" saved together are written once, a
// reader keeps its version while a writer replaces a checkpoint, a run moved with its folder still reads, a missing or
// cut-short data file is named, and pack makes one file that holds the tensors itself.

#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "child_process.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::error_of;
using descentlab::testing::manual_flush;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::ScratchFolder;

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  if (!fs::is_directory(folder)) return names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  return names;
}

size_t tensor_bytes(const record::CheckpointData& checkpoint) {
  size_t bytes = 0;
  for (const auto& section : checkpoint.sections) {
    for (const auto& tensor : section.second) bytes += tensor.second.bytes.size();
  }
  return bytes;
}

using Sections = std::map<std::string, std::map<std::string, record::TensorBlob>>;
bool same(const Sections& a, const Sections& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, tensors] : a) {
    const auto other = b.find(name);
    if (other == b.end() || other->second.size() != tensors.size()) return false;
    for (const auto& [tensor, blob] : tensors) {
      const auto match = other->second.find(tensor);
      if (match == other->second.end() || match->second.dtype != blob.dtype || match->second.shape != blob.shape ||
          match->second.bytes != blob.bytes) {
        return false;
      }
    }
  }
  return true;
}

int external_datasets(const std::string& path) {
  H5::H5File file(path, H5F_ACC_RDONLY);
  int count = 0;
  const H5::Group latest = file.openGroup("/checkpoints/latest");
  for (hsize_t s = 0; s < latest.getNumObjs(); ++s) {
    const H5::Group section = latest.openGroup(latest.getObjnameByIdx(s));
    for (hsize_t t = 0; t < section.getNumObjs(); ++t) {
      const H5::DSetCreatPropList properties = section.openDataSet(section.getObjnameByIdx(t)).getCreatePlist();
      if (H5Pget_external_count(properties.getId()) > 0) ++count;
    }
  }
  return count;
}

TEST(CheckpointFiles, ACheckpointIsWrittenOnceBesideTheRunFileAndReplacingItKeepsBothFlat) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const record::CheckpointData big = sample_checkpoint(1, 1 << 18);  // 1 MB of tensors
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  // "best" and "latest" together: one data file holding the tensors once.
  writer->save_checkpoints({"best", "latest"}, big);
  const std::string data_folder = path + ".checkpoints";
  ASSERT_EQ(files_in(data_folder).size(), 1u);
  const auto data_file = (fs::path(data_folder) / files_in(data_folder)[0]).string();
  EXPECT_EQ(fs::file_size(data_file), tensor_bytes(big));
  EXPECT_LT(fs::file_size(path), 200u << 10) << "the tensors went into the run file";
  const auto run_size = fs::file_size(path);
  for (int64_t step = 2; step <= 6; ++step) {
    writer->scalar("loss", step, 0.0, 1.0);
    writer->save_checkpoint("latest", sample_checkpoint(step, 1 << 18));
  }
  // "best" keeps its file, "latest" has one: nothing else stays.
  EXPECT_EQ(files_in(data_folder).size(), 2u);
  EXPECT_LT(fs::file_size(path), run_size + (64u << 10)) << "replacing latest grew the run file";
  writer.reset();
  const RunReader reader(path);
  EXPECT_EQ(reader.checkpoint("latest").step, 6);
  EXPECT_EQ(reader.checkpoint("best").step, 1);
  EXPECT_TRUE(same(reader.checkpoint("best").sections, big.sections));
  EXPECT_EQ(reader.checkpoint_data_files().size(), 2u);
  EXPECT_EQ(external_datasets(path), 4);
}

TEST(CheckpointFiles, AReaderKeepsItsVersionWhileAWriterReplacesTheCheckpoint) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->save_checkpoint("latest", sample_checkpoint(3));
  const RunReader before(path);
  writer->save_checkpoint("latest", sample_checkpoint(4));  // removes step 3's data file
  ASSERT_EQ(files_in(path + ".checkpoints").size(), 1u);
  EXPECT_EQ(before.checkpoint("latest").step, 3);
  EXPECT_TRUE(same(before.checkpoint("latest").sections, sample_checkpoint(3).sections));
  EXPECT_EQ(RunReader(path).checkpoint("latest").step, 4);
}

TEST(CheckpointFiles, ARunMovedWithItsFolderReadsAndAMissingOrCutDataFileIsNamed) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  RunWriter::create(path, sample_header(), manual_flush())->save_checkpoint("latest", sample_checkpoint(3));
  const std::string moved = (folder / "renamed.h5").string();
  fs::rename(path, moved);
  fs::rename(path + ".checkpoints", moved + ".checkpoints");
  EXPECT_EQ(RunReader(moved).checkpoint("latest").step, 3);

  const std::string data_file = RunReader(moved).checkpoint_data_files().at(0);
  fs::resize_file(data_file, fs::file_size(data_file) - 4);
  std::string error = error_of([&] { RunReader(moved).checkpoint("latest"); });
  EXPECT_NE(error.find(data_file), std::string::npos) << error;
  EXPECT_NE(error.find("cut short"), std::string::npos) << error;

  fs::remove(data_file);
  error = error_of([&] { RunReader(moved).checkpoint("latest"); });
  EXPECT_NE(error.find(data_file), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_NE(error.find("pack"), std::string::npos) << error;
  // Resuming such a run is refused in the same words; the rows still read.
  EXPECT_NO_THROW(RunReader(moved).checkpoints());
}

TEST(CheckpointFiles, APackedRunHoldsItsTensorsItself) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  {
    auto writer = RunWriter::create(path, sample_header(), manual_flush());
    writer->scalar("loss", 1, 0.0, 1.0);
    writer->save_checkpoints({"best", "latest"}, sample_checkpoint(3));
  }
  const std::string packed = (folder / "shared" / "packed.h5").string();
  fs::create_directories(folder / "shared");
  pack_run(path, packed);
  EXPECT_EQ(external_datasets(packed), 0);
  EXPECT_FALSE(fs::exists(packed + ".checkpoints"));
  const RunReader reader(packed);
  EXPECT_TRUE(reader.checkpoint_data_files().empty());
  EXPECT_TRUE(same(reader.checkpoint("latest").sections, sample_checkpoint(3).sections));
  EXPECT_EQ(reader.checkpoint("best").step, 3);
  // Plain HDF5 reads the tensor without any prefix setting.
  H5::H5File file(packed, H5F_ACC_RDONLY);
  const H5::DataSet lambda = file.openDataSet("/checkpoints/latest/dual/lambda");
  std::vector<float> values(3);
  lambda.read(values.data(), H5::PredType::NATIVE_FLOAT);
  EXPECT_EQ(values, (std::vector<float>{0.0f, 0.25f, 0.5f}));
}

}  // namespace
}  // namespace descentlab::store
