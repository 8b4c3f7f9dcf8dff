#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "child_process.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/util/sha256.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::error_of;
using descentlab::testing::manual_flush;
using descentlab::testing::read_bytes;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::sample_histogram;
using descentlab::testing::sample_sweep;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

// Writes a run with every kind of content and returns its path.
std::string write_complete_run(const ScratchFolder& folder) {
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  for (int64_t step = 1; step <= 5; ++step) {
    writer->scalar("loss", step, 1000.0 + static_cast<double>(step), 1.0 / static_cast<double>(step));
    writer->vector("layer_loss", step, 1000.0 + static_cast<double>(step), {0.7, 0.5, 0.3 / static_cast<double>(step)});
    if (step % 2 == 0) writer->histogram(sample_histogram(step));
  }
  writer->sweep(sample_sweep());
  writer->save_checkpoint("latest", sample_checkpoint(5));
  writer->save_checkpoint("best", sample_checkpoint(4));
  writer->flush();
  return path;
}

template <typename Action>
RunFileError::Kind error_kind_of(Action action, const std::string& must_mention) {
  try {
    action();
  } catch (const RunFileError& error) {
    EXPECT_NE(std::string(error.what()).find(must_mention), std::string::npos) << error.what();
    return error.kind();
  }
  ADD_FAILURE() << "expected RunFileError";
  return RunFileError::Kind::InvalidArgument;
}

// Issue 52 item 8: a new run's missing folder is made (it said "cannot create its lock file ... No such file or
// directory"); one that cannot be made is named.
TEST(RunFile, ANewRunMakesItsFolder) {
  ScratchFolder folder;
  const std::string path = (folder / "runs" / "today" / "run.h5").string();
  RunWriter::create(path, sample_header(), manual_flush())->flush();
  EXPECT_NO_THROW(RunReader(path).header());
  write_bytes(folder / "taken", "a file, not a folder");
  const std::string blocked = (folder / "taken" / "run.h5").string();
  const std::string message = error_of([&] { RunWriter::create(blocked, sample_header(), manual_flush()); });
  EXPECT_NE(message.find("cannot make its folder " + (folder / "taken").string()), std::string::npos) << message;
}

TEST(RunFile, HeaderAndConfigRoundTrip) {
  ScratchFolder folder;
  const RunReader reader(write_complete_run(folder));
  EXPECT_EQ(reader.header().format_version, kFormatVersion);
  EXPECT_EQ(reader.header().app_version, "0.1.0-test");
  EXPECT_EQ(reader.header().device, "cpu");
  EXPECT_EQ(reader.header().config_json, R"({"preset": "test", "layers": 3, "lr": 0.001})");
  EXPECT_EQ(reader.header().created.size(), 20u);  // 2026-11-30T02:00:00Z
}

TEST(RunFile, ScalarAndVectorMetricsRoundTrip) {
  ScratchFolder folder;
  const RunReader reader(write_complete_run(folder));
  EXPECT_EQ(reader.metric_names(), (std::vector<std::string>{"layer_loss", "loss"}));
  const MetricSeries loss = reader.metric("loss");
  EXPECT_EQ(loss.width, 1);
  EXPECT_EQ(loss.steps, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(loss.values[3], 0.25);
  EXPECT_DOUBLE_EQ(loss.wall_times[4], 1005.0);
  const MetricSeries layers = reader.metric("layer_loss");
  EXPECT_EQ(layers.width, 3);
  ASSERT_EQ(layers.values.size(), 15u);
  EXPECT_DOUBLE_EQ(layers.values[3 * 2 + 2], 0.1);  // step 3, layer 2
}

TEST(RunFile, EachSeriesStoresItsShape) {
  ScratchFolder folder;
  const std::string path = (folder / "shapes.h5").string();
  {
    auto writer = RunWriter::create(path, sample_header(), manual_flush());
    writer->scalar("loss", 1, 1.0, 0.5);
    writer->vector("lambda", 1, 1.0, {0.25});  // one constraint: width 1, and still per layer
    writer->vector("near_zero_share", 1, 1.0, {0.1, 0.2, 0.3});
    writer->vector("frontier_accuracy", 1, 1.0, {0.9, 0.8});
    writer->scalar("a_scalar_of_a_newer_build", 1, 1.0, 2.0);
    writer->vector("a_vector_of_a_newer_build", 1, 1.0, {3.0});
    writer->flush();
  }
  H5::H5File file(path, H5F_ACC_RDONLY);
  const auto kind = [&](const std::string& name) {
    const H5::Attribute attribute = file.openGroup("metrics/" + name).openAttribute("kind");
    std::string word;
    attribute.read(attribute.getStrType(), word);
    return word;
  };
  EXPECT_EQ(kind("loss"), "scalar");
  EXPECT_EQ(kind("lambda"), "per_layer");
  EXPECT_EQ(kind("near_zero_share"), "per_threshold");
  EXPECT_EQ(kind("frontier_accuracy"), "per_sparsity");
  EXPECT_EQ(kind("a_scalar_of_a_newer_build"), "scalar");
  EXPECT_EQ(kind("a_vector_of_a_newer_build"), "vector");
  const RunReader reader(path);
  EXPECT_EQ(reader.header().format_version, kFormatVersion);
  EXPECT_EQ(reader.metric("frontier_accuracy").shape, record::SeriesShape::PerSparsity);
  EXPECT_EQ(reader.metric("lambda").shape, record::SeriesShape::PerLayer);
  EXPECT_EQ(reader.metric("lambda").width, 1);
  EXPECT_EQ(reader.metric("a_vector_of_a_newer_build").shape, record::SeriesShape::Vector);
  EXPECT_EQ(reader.metric("a_scalar_of_a_newer_build").shape, record::SeriesShape::Scalar);
}

// tests/fixtures/run-format-v1.h5: a real one-layer constrained video run (2 epochs, 4 steps) written by the build
// before format version 2 (commit 177fc25). Version 1 stored "scalar" for every width-1 series, so its one-layer
// lambda, slack and test_descending_frequency look like scalars on disk; they must still read per layer.
TEST(RunFile, VersionOneFileStillReads) {
  const std::string fixture = descentlab::testing::fixture("run-format-v1.h5").string();
  const RunReader reader(fixture);
  EXPECT_EQ(reader.header().format_version, 1);
  const auto names = reader.metric_names();
  EXPECT_EQ(names.size(), 13u);
  for (const char* per_layer : {"lambda", "slack", "test_descending_frequency", "layer_loss", "test_layer_loss"}) {
    EXPECT_EQ(reader.metric(per_layer).shape, record::SeriesShape::PerLayer) << per_layer;
  }
  for (const char* scalar : {"loss", "test_rmse", "lr", "alpha"}) {
    EXPECT_EQ(reader.metric(scalar).shape, record::SeriesShape::Scalar) << scalar;
  }
  EXPECT_EQ(reader.metric("lambda").width, 1);
  EXPECT_EQ(reader.metric("test_layer_loss").width, 2);
  EXPECT_EQ(reader.metric("loss").rows(), 4u);
  ASSERT_TRUE(reader.has_checkpoint("latest"));
  EXPECT_EQ(reader.checkpoint("latest").step, 4);

  // Appending to it (a resume) takes it to this build's format; the old series keep reading.
  ScratchFolder folder;
  const std::string copy = (folder / "v1.h5").string();
  fs::copy_file(fixture, copy);
  {
    auto writer = RunWriter::open(copy, manual_flush());
    writer->vector("lambda", 5, 1.0, {0.5});
    writer->flush();
  }
  const RunReader upgraded(copy);
  EXPECT_EQ(upgraded.header().format_version, kFormatVersion);
  EXPECT_EQ(upgraded.metric("lambda").rows(), 5u);
  EXPECT_EQ(upgraded.metric("lambda").shape, record::SeriesShape::PerLayer);
  // Its checkpoints, from before checksums, are marked so by the upgrade, and read unchecked as before: no sum is
  // ever computed over bytes that were read without a check (issue 52, item 6). It got an identity.
  EXPECT_TRUE(is_run_id(upgraded.header().run_id));
  H5::H5File file(copy, H5F_ACC_RDONLY);
  for (const char* label : {"latest", "best"}) {
    EXPECT_EQ(upgraded.checkpoint(label).step, RunReader(fixture).checkpoint(label).step) << label;
    const H5::Group group = file.openGroup(std::string("/checkpoints/") + label);
    EXPECT_FALSE(group.attrExists("sha256")) << label;
    EXPECT_TRUE(group.attrExists("unsummed")) << label;
  }
}

TEST(RunFile, HistogramsRoundTrip) {
  ScratchFolder folder;
  const RunReader reader(write_complete_run(folder));
  const HistogramSeries histogram = reader.histogram("global");
  EXPECT_EQ(histogram.bin_edges, (std::vector<double>{1e-6, 1e-4, 1e-2, 1.0}));
  EXPECT_EQ(histogram.steps, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(histogram.counts, (std::vector<int64_t>{2, 4, 3, 4, 8, 3}));
}

TEST(RunFile, SweepsRoundTripAndReplace) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  {
    const RunReader reader(path);
    const auto sweep = reader.sweep("gaussian");
    EXPECT_EQ(sweep.metric_name, "accuracy");
    EXPECT_EQ(sweep.gamma, sample_sweep().gamma);
    EXPECT_EQ(sweep.seeds, sample_sweep().seeds);
    EXPECT_EQ(sweep.metric, sample_sweep().metric);
    EXPECT_EQ(sweep.layer_loss, sample_sweep().layer_loss);
  }
  auto writer = RunWriter::open(path, manual_flush());
  auto changed = sample_sweep();
  changed.metric[0] = 0.5;
  writer->sweep(changed);
  writer->flush();
  EXPECT_DOUBLE_EQ(RunReader(path).sweep("gaussian").metric[0], 0.5);
}

TEST(RunFile, CheckpointsRoundTripEveryTensorAndAttribute) {
  ScratchFolder folder;
  const RunReader reader(write_complete_run(folder));
  const auto infos = reader.checkpoints();
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].label, "best");
  EXPECT_EQ(infos[1].label, "latest");
  EXPECT_EQ(infos[1].step, 5);
  const record::CheckpointData stored = reader.checkpoint("latest");
  const record::CheckpointData expected = sample_checkpoint(5);
  EXPECT_EQ(stored.step, 5);
  EXPECT_EQ(stored.epoch, 0);
  EXPECT_EQ(stored.extra_json, expected.extra_json);
  ASSERT_EQ(stored.sections.size(), expected.sections.size());
  for (const auto& [section, tensors] : expected.sections) {
    for (const auto& [name, blob] : tensors) {
      const auto& got = stored.sections.at(section).at(name);
      EXPECT_EQ(got.dtype, blob.dtype) << name;
      EXPECT_EQ(got.shape, blob.shape) << name;
      EXPECT_EQ(got.bytes, blob.bytes) << name;
    }
  }
  EXPECT_THROW(reader.checkpoint("missing"), RunFileError);
}

TEST(RunFile, MetricsWaitInMemoryUntilFlush) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->scalar("loss", 1, 1.0, 0.5);
  EXPECT_TRUE(RunReader(path).metric_names().empty());  // the file exists and opens from the start
  writer->flush();
  EXPECT_EQ(RunReader(path).metric("loss").rows(), 1u);
}

TEST(RunFile, BackgroundFlushHappensWithinTheInterval) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  RunWriterOptions options;
  options.flush_interval_seconds = 0.05;
  auto writer = RunWriter::create(path, sample_header(), options);
  writer->scalar("loss", 1, 1.0, 0.5);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (RunReader(path).metric_names().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(RunReader(path).metric("loss").rows(), 1u);
}

TEST(RunFile, ReplacingACheckpointDoesNotGrowTheFile) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  const int64_t elements = 256 * 1024;  // 1 MiB of float32
  writer->save_checkpoint("latest", sample_checkpoint(1, elements));
  const auto size_after_one = fs::file_size(path);
  for (int64_t step = 2; step <= 8; ++step) writer->save_checkpoint("latest", sample_checkpoint(step, elements));
  EXPECT_LT(fs::file_size(path), size_after_one + 64 * 1024);
  EXPECT_EQ(RunReader(path).checkpoint("latest").step, 8);
}

TEST(RunFile, ResumeAppendsAndTruncatesAfterTheCheckpointStep) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  auto writer = RunWriter::open(path, manual_flush());
  writer->truncate_after(3);
  writer->scalar("loss", 4, 2000.0, 0.4);
  writer->flush();
  const RunReader reader(path);
  EXPECT_EQ(reader.metric("loss").steps, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(reader.metric("loss").values[3], 0.4);
  EXPECT_EQ(reader.metric("layer_loss").rows(), 3u);
  EXPECT_EQ(reader.histogram("global").steps, (std::vector<int64_t>{2}));
  EXPECT_THROW(writer->vector("layer_loss", 5, 1.0, {1.0, 2.0}), RunFileError);  // width 3 is kept on resume
}

TEST(RunFile, WriterRejectsInconsistentInput) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->vector("lambda", 1, 1.0, {0.0, 0.0});
  EXPECT_EQ(error_kind_of([&] { writer->vector("lambda", 2, 1.0, {0.0}); }, "/metrics/lambda"),
            RunFileError::Kind::InvalidArgument);
  EXPECT_THROW(writer->scalar("train/loss", 1, 1.0, 0.0), RunFileError);
  EXPECT_THROW(writer->scalar("", 1, 1.0, 0.0), RunFileError);
  auto histogram = sample_histogram(1);
  histogram.counts.pop_back();
  EXPECT_THROW(writer->histogram(histogram), RunFileError);
  auto checkpoint = sample_checkpoint(1);
  checkpoint.sections["model"]["readout.bias"].bytes.pop_back();
  EXPECT_THROW(writer->save_checkpoint("latest", checkpoint), RunFileError);
  EXPECT_THROW(RunWriter::create(path, sample_header(), manual_flush()), RunFileError);  // exists, no overwrite
}

// Issue 38 item 1: a damaged file whose dataspace claims billions of elements answered "out of memory" (exit 4), or
// a raw std::bad_alloc on resume. It is damage: refused naming the file and the object, with both numbers, before
// anything is allocated.
TEST(RunFile, ADatasetClaimingMoreThanTheFileHoldsIsRefusedBeforeAnyAllocation) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    H5::DataSet value = file.openDataSet("/metrics/loss/value");
    const hsize_t rows[] = {3000000000ull};
    value.extend(rows);  // the chunks stay unwritten: the file does not grow
    H5::Group model = file.openGroup("/checkpoints/latest/model");
    const hsize_t elements[] = {2000000000ull};
    H5::DataSet huge = model.createDataSet("huge", H5::PredType::NATIVE_FLOAT, H5::DataSpace(1, elements));
    hdf5::set_string_attribute(huge, "dtype", "float32");
  }
  ASSERT_LT(fs::file_size(path), 10u << 20);
  const RunReader reader(path);
  EXPECT_EQ(error_kind_of([&] { reader.metric("loss"); }, "/metrics/loss"), RunFileError::Kind::Corrupt);
  EXPECT_EQ(error_kind_of([&] { reader.metric("loss"); }, "claims 3000000000 elements"), RunFileError::Kind::Corrupt);
  EXPECT_EQ(error_kind_of([&] { reader.metric("loss"); }, "the file holds"), RunFileError::Kind::Corrupt);
  EXPECT_EQ(error_kind_of([&] { reader.checkpoint("latest"); }, "/checkpoints/latest/model/huge"),
            RunFileError::Kind::Corrupt);
  EXPECT_EQ(error_kind_of([&] { reader.checkpoint("latest"); }, "claims 2000000000 elements"),
            RunFileError::Kind::Corrupt);
  // A writer continuing it (a resume) refuses it when it opens, not in a commit's allocation.
  EXPECT_EQ(error_kind_of([&] { RunWriter::open(path, manual_flush()); }, "/metrics/loss/value"),
            RunFileError::Kind::Corrupt);
}

TEST(RunFile, FailedCommitKeepsEverythingForTheNextOne) {
  ScratchFolder folder;
  fs::create_directories(folder / "runs");
  const std::string path = (folder / "runs" / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->scalar("loss", 1, 1.0, 0.9);
  fs::rename(folder / "runs", folder / "moved");  // the disk "refuses": the run file is gone from its place
  // A checkpoint's commit writes a new version of the run file in its folder (rows alone go to the open log).
  EXPECT_EQ(error_kind_of([&] { writer->save_checkpoint("latest", sample_checkpoint(1)); }, path),
            RunFileError::Kind::WriteFailed);
  EXPECT_FALSE(writer->last_error().empty());
  writer->scalar("loss", 2, 2.0, 0.8);
  fs::rename(folder / "moved", folder / "runs");
  writer->flush();
  EXPECT_TRUE(writer->last_error().empty());
  const RunReader reader(path);
  EXPECT_EQ(reader.metric("loss").steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(reader.checkpoint("latest").step, 1);
}

// ---- bad input: each a typed error naming the file; the file on disk is left as it was ----

void expect_untouched_after(const std::string& path, RunFileError::Kind kind) {
  const std::string before = sha256_of_file(path);
  EXPECT_EQ(error_kind_of([&] { RunReader reader(path); }, path), kind);
  EXPECT_EQ(error_kind_of([&] { RunWriter::open(path, manual_flush()); }, path), kind);
  EXPECT_EQ(sha256_of_file(path), before);
}

TEST(RunFileBadInput, MissingFile) {
  EXPECT_EQ(error_kind_of([] { RunReader reader("/nonexistent/run.h5"); }, "/nonexistent/run.h5"),
            RunFileError::Kind::NotFound);
}

TEST(RunFileBadInput, NotAnHdf5File) {
  ScratchFolder folder;
  write_bytes(folder / "notes.h5", "this is a text file, not a run\n");
  expect_untouched_after((folder / "notes.h5").string(), RunFileError::Kind::NotHdf5);
}

TEST(RunFileBadInput, TruncatedRunFile) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  const std::string bytes = read_bytes(path);
  write_bytes(folder / "cut.h5", bytes.substr(0, bytes.size() / 2));
  expect_untouched_after((folder / "cut.h5").string(), RunFileError::Kind::Corrupt);
}

TEST(RunFileBadInput, HdfFileOfAnotherProgram) {
  ScratchFolder folder;
  const std::string path = (folder / "other.h5").string();
  {
    H5::H5File file(path, H5F_ACC_TRUNC);
    const hsize_t dims[1] = {3};
    const double values[3] = {1, 2, 3};
    file.createDataSet("temperature", H5::PredType::NATIVE_DOUBLE, H5::DataSpace(1, dims))
        .write(values, H5::PredType::NATIVE_DOUBLE);
  }
  expect_untouched_after(path, RunFileError::Kind::ForeignFile);
}

TEST(RunFileBadInput, NewerFormatVersion) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    H5::Group root = file.openGroup("/");
    root.removeAttr("format_version");
    const int64_t future = kFormatVersion + 1;
    root.createAttribute("format_version", H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_INT64, &future);
  }
  expect_untouched_after(path, RunFileError::Kind::NewerVersion);
}

TEST(RunFileBadInput, DamagedDatasetIsReportedByObject) {
  ScratchFolder folder;
  const std::string path = write_complete_run(folder);
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    file.openGroup("metrics").openGroup("loss").unlink("wall_time");
  }
  const RunReader reader(path);
  EXPECT_EQ(error_kind_of([&] { reader.metric("loss"); }, "/metrics/loss/wall_time"),
            RunFileError::Kind::MissingObject);
  EXPECT_EQ(reader.metric("layer_loss").rows(), 5u);  // the rest still reads
}

}  // namespace
}  // namespace descentlab::store
