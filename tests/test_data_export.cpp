// The built-in datasets as data files of your own (issue 53 items 3 and 7): the writer's format, chunks and safe
// replacement; `data export`'s tensors are exactly those the built-in task feeds its model; its refusals; and a run's
// initial state kept by a step limit of 0 (train --max-steps 0), which examples/export_builtin_vit.py reads.

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/data/corpus.h"
#include "core/data/data_file.h"
#include "core/data/data_file_writer.h"
#include "core/session/data_export.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "core/tasks/builtin_data.h"
#include "core/tasks/sparse_task.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab {
namespace {

namespace fs = std::filesystem;
using testing::fixture;
using testing::message_of;
using testing::ScratchFolder;

// A small classification file: x float32 [rows, 2, 3] counting up from `first`, y int64 [rows] cycling 0..2.
struct SmallFile {
  std::vector<float> x;
  std::vector<int64_t> y;
  data::DataFileContents contents;

  SmallFile(int64_t rows, float first, int64_t classes = 3)
      : x(static_cast<size_t>(rows * 6)), y(static_cast<size_t>(rows)) {
    std::iota(x.begin(), x.end(), first);
    for (int64_t i = 0; i < rows; ++i) y[static_cast<size_t>(i)] = i % 3;
    contents.classes = classes;
    contents.name = "counting";
    for (const char* split : {"train", "test"}) {
      contents.arrays.push_back({std::string(split) + "/x", x.data(), nullptr, {rows, 2, 3}});
      contents.arrays.push_back({std::string(split) + "/y", nullptr, y.data(), {rows}});
    }
  }
};

std::vector<std::string> files_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  return names;
}

TEST(DataExport, AWrittenFileIsTheContractsChunkedByWholeRows) {
  ScratchFolder folder;
  const std::string path = (folder / "small.h5").string();
  const SmallFile small(40, 0.5f);
  data::write_data_file(path, small.contents, false);
  const data::DataFileInfo info = data::read_data_file(path);
  EXPECT_EQ(info.task, data::DataTask::classification);
  EXPECT_EQ(info.classes, 3);
  EXPECT_EQ(info.name, "counting");
  EXPECT_EQ(info.train_x.stored_type, "float32");
  EXPECT_EQ(info.train_y.stored_type, "int64");
  EXPECT_EQ(info.test_x.shape, (std::vector<int64_t>{40, 2, 3}));
  EXPECT_EQ(info.train_x.chunk, (std::vector<int64_t>{40, 2, 3}));  // whole rows, never split across the others
  EXPECT_EQ(info.train_y.chunk, (std::vector<int64_t>{40}));
  EXPECT_EQ(data::read_float_rows(path, info.train_x, 0, 40), small.x);
  EXPECT_EQ(data::read_integer_rows(path, info.test_y, 0, 40), small.y);
  EXPECT_EQ(files_in(folder.path()), std::vector<std::string>{"small.h5"});  // no temporary left beside it
}

TEST(DataExport, ChunksHoldWholeRowsOfAboutAMebibyte) {
  EXPECT_EQ(data::chunk_rows_for({60000, 1, 28, 28}, 4), 334);  // 3136-byte images
  EXPECT_EQ(data::chunk_rows_for({25000, 128}, 8), 1024);       // at most 1024 rows
  EXPECT_EQ(data::chunk_rows_for({3}, 8), 3);                   // at most the rows there are
  EXPECT_EQ(data::chunk_rows_for({2, 1 << 20}, 4), 1);          // at least one row
}

TEST(DataExport, AnExistingFileIsKeptWithoutOverwriteAndReplacedWholeWithIt) {
  ScratchFolder folder;
  const std::string path = (folder / "data.h5").string();
  data::write_data_file(path, SmallFile(10, 0.0f, 3).contents, false);
  const std::string refused =
      message_of<DataError>([&] { data::write_data_file(path, SmallFile(20, 1.0f, 4).contents, false); });
  EXPECT_NE(refused.find(path), std::string::npos) << refused;
  EXPECT_NE(refused.find("--overwrite"), std::string::npos) << refused;
  EXPECT_EQ(data::read_data_file(path).classes, 3);  // untouched
  data::write_data_file(path, SmallFile(20, 1.0f, 4).contents, true);
  const data::DataFileInfo replaced = data::read_data_file(path);
  EXPECT_EQ(replaced.classes, 4);
  EXPECT_EQ(replaced.train_x.rows(), 20);
  EXPECT_EQ(files_in(folder.path()), std::vector<std::string>{"data.h5"});
}

TEST(DataExport, AWriteThatFailsNamesTheFileAndLeavesNothing) {
  ScratchFolder folder;
  const std::string nowhere = (folder / "missing" / "data.h5").string();
  const std::string failed =
      message_of<IoError>([&] { data::write_data_file(nowhere, SmallFile(4, 0).contents, false); });
  EXPECT_NE(failed.find(nowhere), std::string::npos) << failed;
  EXPECT_TRUE(files_in(folder.path()).empty());
  const std::string at_a_folder =
      message_of<DataError>([&] { data::write_data_file(folder.path().string(), SmallFile(4, 0).contents, true); });
  EXPECT_NE(at_a_folder.find("is a folder"), std::string::npos) << at_a_folder;
}

// A data folder holding the corpus fixture as "moby-dick" (three short chapters and an epilogue).
fs::path corpus_root(const ScratchFolder& folder) {
  const fs::path root = folder / "datasets";
  fs::create_directories(root / "moby-dick");
  for (const auto& entry : fs::directory_iterator(fixture("corpus"))) {
    fs::copy_file(entry.path(), root / "moby-dick" / entry.path().filename());
  }
  return root;
}

TEST(DataExport, TheGptTasksWindowsAreWrittenAsNextTokenPairs) {
  ScratchFolder folder;
  const fs::path root = corpus_root(folder);
  const auto config = config::load_experiment("gpt-adamw", "full", "", {"data.context=16"});
  const tasks::BuiltinData built = tasks::builtin_data(config, root.string());
  const data::CharSplit split = data::split_corpus(data::load_moby_dick(root.string()).text);
  EXPECT_EQ(built.task, data::DataTask::next_token);
  ASSERT_EQ(built.train_x.sizes().vec(), (std::vector<int64_t>{static_cast<int64_t>(split.train.size()) / 17, 16}));
  EXPECT_EQ(built.train_x.scalar_type(), torch::kInt64);
  EXPECT_TRUE(torch::equal(built.train_x.slice(1, 1), built.train_y.slice(1, 0, -1)));  // y: the token after x's
  EXPECT_TRUE(torch::equal(built.test_x.slice(1, 1), built.test_y.slice(1, 0, -1)));
  const std::u32string characters = data::decode_utf8(built.characters, "characters");
  EXPECT_EQ(static_cast<int64_t>(characters.size()) + 1, built.vocabulary);
  std::u32string first_window;
  for (int64_t t = 0; t < 17; ++t) {
    const int64_t token = t < 16 ? built.train_x[0][t].item<int64_t>() : built.train_y[0][15].item<int64_t>();
    first_window += characters[static_cast<size_t>(token - 1)];
  }
  EXPECT_EQ(first_window, split.train.substr(0, 17));  // the text's first window, character for character
}

TEST(DataExport, RefusalsComeBeforeAnyDataIsRead) {
  ScratchFolder folder;
  session::DataExportRequest request;
  request.out = (folder / "out.h5").string();
  request.data_root = (folder / "empty").string();
  request.dataset = "cifar";
  EXPECT_NE(message_of<config::ConfigError>([&] { session::export_dataset(request); }).find("unknown dataset"),
            std::string::npos);
  request.dataset = "fashion-mnist";
  request.preset = "gpt-adamw";
  const std::string other = message_of<config::ConfigError>([&] { session::export_dataset(request); });
  EXPECT_NE(other.find("\"moby-dick\", not on \"fashion-mnist\""), std::string::npos) << other;
  request.preset.clear();
  const std::string missing = message_of<MissingDataError>([&] { session::export_dataset(request); });
  EXPECT_NE(missing.find("fetch"), std::string::npos) << missing;
  testing::write_bytes(request.out, "mine");
  const std::string exists = message_of<DataError>([&] { session::export_dataset(request); });
  EXPECT_NE(exists.find("already exists"), std::string::npos) << exists;
  EXPECT_EQ(testing::read_bytes(request.out), "mine");
}

bool fetched(const std::string& dataset) {
  return data::dataset_files_present(data::default_data_root(), dataset);
}

// Exports `dataset` as the quick vit-adamw sees it (fewer rows) and compares the file with the VitTask's batches.
void expect_vit_export(const std::string& dataset) {
  ScratchFolder folder;
  session::DataExportRequest request;
  request.dataset = dataset;
  request.out = (folder / "images.h5").string();
  request.size = "quick";
  request.overrides = {"data.train_limit=500", "data.test_limit=200"};
  const session::DataExportOutcome outcome = session::export_dataset(request);
  EXPECT_EQ(outcome.experiment, "vit-adamw-quick");
  const data::DataFileInfo info = data::read_data_file(request.out);
  EXPECT_EQ(info.name, dataset);
  EXPECT_EQ(info.classes, 10);
  EXPECT_EQ(info.train_x.shape, (std::vector<int64_t>{500, 1, 28, 28}));
  EXPECT_EQ(info.test_y.shape, (std::vector<int64_t>{200}));
  EXPECT_NEAR(info.input_mean, 0.0, 1e-4);  // normalised with the training rows' own mean and std
  EXPECT_NEAR(info.input_std, 1.0, 1e-3);
  auto config = config::load_experiment("vit-adamw", "quick", "", {"data.dataset=" + dataset});
  config.data.train_limit = 500;
  config.data.test_limit = 200;
  const auto task = tasks::make_sparse_task(config, data::default_data_root(), torch::kCPU);
  std::vector<int64_t> all(500);
  std::iota(all.begin(), all.end(), int64_t{0});
  const tasks::Batch train = task->train_batch(all);
  const std::vector<float> x = data::read_float_rows(request.out, info.train_x, 0, 500);
  EXPECT_TRUE(torch::equal(torch::from_blob(const_cast<float*>(x.data()), {500, 1, 28, 28}), train.input));
  const std::vector<int64_t> y = data::read_integer_rows(request.out, info.test_y, 0, 200);
  EXPECT_TRUE(torch::equal(torch::tensor(y), task->test_batch(0, 200).target));
}

TEST(DataExport, FashionMnistAndMnistAreWrittenAsTheVitTaskFeedsItsModel) {
  for (const std::string dataset : {"fashion-mnist", "mnist"}) {
    if (!fetched(dataset)) GTEST_SKIP() << dataset << " is not fetched";
    SCOPED_TRACE(dataset);
    expect_vit_export(dataset);
  }
}

TEST(DataExport, ImdbIsWrittenAsTheTextTaskFeedsIt) {
  if (!fetched("imdb")) GTEST_SKIP() << "imdb is not fetched";
  ScratchFolder folder;
  session::DataExportRequest request;
  request.dataset = "imdb";
  request.out = (folder / "imdb.h5").string();
  request.overrides = {"data.train_limit=200", "data.test_limit=100"};
  session::export_dataset(request);
  const data::DataFileInfo info = data::read_data_file(request.out);
  EXPECT_EQ(info.classes, 2);
  EXPECT_TRUE(info.train_x.integer);
  EXPECT_EQ(info.train_x.shape, (std::vector<int64_t>{200, 128}));
  EXPECT_EQ(info.test_y.shape, (std::vector<int64_t>{100}));
}

// A tiny video run (generated data): a step limit of 0 keeps the initial state as "latest" at step 0, and a resume of
// it trains exactly what an uninterrupted run trains.
TEST(DataExport, AStepLimitOfZeroKeepsTheInitialStateAndResumesExactly) {
  ScratchFolder folder;
  const auto config =
      config::load_experiment("video-erm", "quick", "",
                              {"data.train_clips=16", "data.test_clips=4", "data.frames=4", "data.height=8",
                               "data.width=8", "model.layers=1", "model.width=8", "model.heads=2", "model.ff_width=8",
                               "train.batch_size=4", "train.epochs=1", "train.metric_interval=1", "train.device=cpu"});
  const auto train = [&](const std::string& name, int64_t limit) {
    session::SessionOptions options;
    options.run_path = (folder / name).string();
    session::TrainingSession session(config, options);
    session.set_step_limit(limit);
    return session.run().steps;
  };
  EXPECT_EQ(train("initial.h5", 0), 0);
  EXPECT_EQ(store::RunReader((folder / "initial.h5").string()).checkpoints().front().step, 0);
  EXPECT_EQ(session::TrainingSession::resume((folder / "initial.h5").string())->run().steps, 4);
  EXPECT_EQ(train("straight.h5", -1), 4);
  const auto loss_of = [&](const std::string& name) {
    return store::RunReader((folder / name).string()).metric("loss").values;
  };
  EXPECT_EQ(loss_of("initial.h5"), loss_of("straight.h5"));
}

}  // namespace
}  // namespace descentlab
