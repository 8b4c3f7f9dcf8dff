// A user's data file larger than the memory it may take (issue 53 item 3): trained chunk by chunk, the chunks in a
// seeded order and the rows of each window of chunks shuffled together; reproducible, and resumable mid-epoch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/config/experiment_config.h"
#include "core/data/data_file.h"
#include "core/data/data_order.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "core/tasks/file_rows.h"
#include "core/tasks/script_task.h"
#include "script_fixtures.h"

namespace descentlab::models {
namespace {

TEST(ChunkedDataOrder, EachWindowOfChunksIsShuffledTogetherInASeededReproducibleOrder) {
  const data::ShuffleWindow window{64, 3};
  const int64_t size = 1000;  // 16 chunks, the last one short: windows of 3, 3, 3, 3, 3 and 1 chunks
  const std::vector<int64_t> first = data::epoch_order(5, 0, size, window);
  ASSERT_EQ(first.size(), static_cast<size_t>(size));
  EXPECT_EQ(std::set<int64_t>(first.begin(), first.end()).size(), static_cast<size_t>(size));
  EXPECT_EQ(data::epoch_order(5, 0, size, window), first);  // a pure function of (seed, epoch, window)
  EXPECT_NE(data::epoch_order(5, 1, size, window), first);
  EXPECT_NE(data::epoch_order(6, 0, size, window), first);
  // Walking the order, no more than 3 chunks are open at once (begun and not yet used up): one window in memory.
  std::map<int64_t, int64_t> rows_left;
  for (int64_t row = 0; row < size; ++row) ++rows_left[row / window.chunk_rows];
  std::set<int64_t> open, chunks_so_far;
  size_t windows = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    const int64_t chunk = first[i] / window.chunk_rows;
    if (open.empty()) ++windows;
    open.insert(chunk);
    chunks_so_far.insert(chunk);
    ASSERT_LE(open.size(), 3u) << "row " << i << " of the order opens a fourth chunk";
    if (--rows_left[chunk] == 0) open.erase(chunk);
  }
  EXPECT_EQ(chunks_so_far.size(), 16u);
  EXPECT_EQ(windows, 6u);
  // Rows are mixed across the chunks of a window, not read chunk after chunk.
  std::set<int64_t> first_rows_chunks;
  for (size_t i = 0; i < 20; ++i) first_rows_chunks.insert(first[i] / window.chunk_rows);
  EXPECT_GT(first_rows_chunks.size(), 1u);
  // A window that covers the dataset shuffles it whole, exactly as before windows existed.
  EXPECT_EQ(data::epoch_order(5, 2, size, {64, 16}), data::epoch_permutation(5, 2, size));
  EXPECT_EQ(data::epoch_order(5, 2, size, {}), data::epoch_permutation(5, 2, size));
  // A saved cursor resumes the windowed order exactly.
  data::DataOrder original(9, size, window);
  original.next_batch(300);
  original.next_batch(300);
  data::DataOrder resumed(0, size, window);
  resumed.restore(original.seed(), original.epoch(), original.position());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(resumed.next_batch(300), original.next_batch(300));
}

TEST_F(ScriptModelTest, ADataFileLargerThanItsMemoryIsReadAChunkAtATimeAndGivesTheSameRows) {
  const data::DataFileInfo info = data::read_data_file(fixture("big.h5"));
  const int64_t budget = int64_t{1} << 20;
  ASSERT_GT(info.train_x.rows() * tasks::row_bytes(info.train_x, info.train_y), budget);
  tasks::SplitRows streamed(info.path, info.train_x, info.train_y, budget);
  tasks::SplitRows whole(info.path, info.train_x, info.train_y, 64 * budget);
  ASSERT_TRUE(streamed.streamed());
  ASSERT_FALSE(whole.streamed());
  const data::ShuffleWindow window = streamed.window();
  EXPECT_FALSE(window.covers(info.train_x.rows()));
  EXPECT_EQ(window.chunk_rows % 1000, 0) << "chunks follow the dataset's own chunking of 1000 rows";
  EXPECT_EQ(whole.window().chunk_rows, 0);

  const int64_t chunk_count = (info.train_x.rows() + window.chunk_rows - 1) / window.chunk_rows;
  data::DataOrder order(3, info.train_x.rows(), window);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int64_t b = 0; b < order.batches_per_epoch(256); ++b) {
      const std::vector<int64_t> indices = order.next_batch(256);
      const tasks::Batch from_file = streamed.gather(indices);
      const tasks::Batch from_memory = whole.gather(indices);
      ASSERT_TRUE(torch::equal(from_file.input, from_memory.input)) << "epoch " << epoch << ", batch " << b;
      ASSERT_TRUE(torch::equal(from_file.target, from_memory.target));
    }
    // Each chunk is read at most once an epoch (the first epoch: exactly once; a chunk still held from the end of
    // one epoch may serve the next), and never more rows are held than the memory allows.
    if (epoch == 0) {
      EXPECT_EQ(streamed.chunk_reads(), chunk_count);
    }
    EXPECT_LE(streamed.chunk_reads(), (epoch + 1) * chunk_count);
    EXPECT_LE(streamed.peak_bytes(), budget);
  }
  EXPECT_TRUE(torch::equal(streamed.range(59990, 10).input, whole.range(59990, 10).input));
}

// A torchscript run of the Blocks module on big.h5 with data.memory_mb = 1, stopped after `steps` steps (0: whole).
nlohmann::json big_run(const std::string& model, const std::string& data) {
  return {{"name", "big"},
          {"task", "torchscript"},
          {"model", {{"file", model}}},
          {"data", {{"file", data}, {"target", "classification"}, {"memory_mb", 1}}},
          {"train", {{"epochs", 1}, {"batch_size", 2048}, {"metric_interval", 3}, {"device", "cpu"}}}};
}

TEST_F(ScriptModelTest, ARunOnDataLargerThanItsMemoryTrainsAndResumesMidEpochToTheSameLosses) {
  const auto config = config::ExperimentConfig::from_json(big_run(fixture("blocks.pt"), fixture("big.h5")), "test");
  tasks::ScriptTask task(models::read_module_file(fixture("blocks.pt")), fixture("big.h5"), torch::kCPU, 1);
  ASSERT_TRUE(task.train_rows().streamed());
  const auto losses = [](const std::string& path) {
    const store::RunReader reader(path);
    return reader.metric("loss").values;
  };
  session::SessionOptions whole;
  whole.run_path = (folder_->path() / "big-whole.h5").string();
  whole.overwrite = true;
  EXPECT_EQ(session::TrainingSession(config, whole).run().steps, 30);  // 60,000 rows in batches of 2,048

  session::SessionOptions parted = whole;
  parted.run_path = (folder_->path() / "big-parted.h5").string();
  {
    session::TrainingSession first(config, parted);
    first.set_step_limit(21);  // stops inside the second window of chunks (rows 40,000 on)
    EXPECT_EQ(first.run().steps, 21);
  }
  EXPECT_EQ(session::TrainingSession::resume(parted.run_path, {})->run().steps, 30);
  const auto expected = losses(whole.run_path);
  ASSERT_EQ(expected.size(), 10u);
  EXPECT_EQ(losses(parted.run_path), expected) << "the resumed run reads its chunks in the same order";
  EXPECT_LT(expected.back(), expected.front()) << "it learns";
}

}  // namespace
}  // namespace descentlab::models
