// Issue 55, items 3, 4, 6 and 8 (the engine's part): a branch is a new run that continues its parent's checkpoint
// exactly. A branch that changes nothing goes on bit for bit as the parent's own resume would, on the layerwise and
// the sparse engine; it records its lineage and none of its parent's rows; a change of alpha is its only difference;
// settings that cannot change mid-run, a step with no kept checkpoint, a child that is its parent or that exists are
// refused naming them, with the parent untouched.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/data/catalog.h"
#include "core/session/training_session.h"
#include "core/store/parent_check.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "test_support.h"

namespace descentlab::session {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::ScratchFolder;

// The message of any error `action` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

config::ExperimentConfig tiny(const std::string& preset, std::vector<std::string> more = {}) {
  std::vector<std::string> overrides;
  if (preset.rfind("video", 0) == 0) {
    overrides = {"data.train_clips=32", "data.test_clips=16", "model.layers=2",     "model.width=16",
                 "model.ff_width=32",   "train.epochs=2",     "train.batch_size=8", "train.metric_interval=1"};
  } else {
    overrides = {"data.train_limit=128", "data.test_limit=64",      "model.layers=2",
                 "model.width=16",       "model.ff_width=32",       "train.epochs=2",
                 "train.batch_size=32",  "train.metric_interval=1", "train.device=cpu"};
  }
  overrides.insert(overrides.end(), more.begin(), more.end());
  return config::load_experiment(preset, "quick", "", overrides);
}

SessionOptions into(const std::string& path) {
  SessionOptions options;
  options.run_path = path;
  options.flush_interval_seconds = 0;
  return options;
}

// Every tensor of a checkpoint's model, optimizer and dual sections, as bytes. The optimizer's LibTorch archive is
// compared by the readable copies of what it holds (each parameter's moments and step count): its own bytes are a
// serialization whose layout LibTorch does not keep from one save to the next.
std::vector<std::string> state_bytes(const std::string& path) {
  const record::CheckpointData latest = store::RunReader(path).checkpoint("latest");
  std::vector<std::string> bytes;
  for (const char* section : {"model", "optimizer", "dual"}) {
    const auto found = latest.sections.find(section);
    if (found == latest.sections.end()) continue;
    for (const auto& [name, blob] : found->second) {
      if (name != "torch_archive") bytes.push_back(name + ":" + std::string(blob.bytes.begin(), blob.bytes.end()));
    }
  }
  return bytes;
}

std::vector<double> losses_after(const std::string& path, int64_t step) {
  const store::MetricSeries loss = store::RunReader(path).metric("loss");
  std::vector<double> values;
  for (size_t row = 0; row < loss.rows(); ++row) {
    if (loss.steps[row] > step) values.push_back(loss.values[row]);
  }
  return values;
}

// The parent trained to `stop` steps (its "latest" there); a copy of it resumed to the end; a branch of it that
// changes nothing, to the end: the branch is the resume, bit for bit, and holds only its own rows.
void expect_branch_is_the_resume(const std::string& preset) {
  ScratchFolder folder;
  const std::string parent = (folder / "parent.h5").string();
  const config::ExperimentConfig config = tiny(preset);
  const int64_t stop = 5;
  {
    TrainingSession first(config, into(parent));
    first.set_step_limit(stop);
    ASSERT_EQ(first.run().steps, stop);
  }
  const std::string resumed = (folder / "resumed" / "parent.h5").string();
  fs::create_directories(folder / "resumed");
  fs::copy(parent, resumed);
  fs::copy(parent + ".checkpoints", resumed + ".checkpoints", fs::copy_options::recursive);
  TrainingSession::resume(resumed)->run();

  const std::string parent_version = store::run_file_version(parent);
  const std::string child = (folder / "child.h5").string();
  auto branch = TrainingSession::branch(parent, -1, config, into(child));
  EXPECT_EQ(branch->branch_changes(), "");
  branch->run();

  {
    const auto a = state_bytes(child), b = state_bytes(resumed);
    ASSERT_EQ(a.size(), b.size());
    std::string differing;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) differing += " " + a[i].substr(0, a[i].find(':'));
    }
    EXPECT_TRUE(differing.empty()) << preset << ": the branch is not its parent's resume; differing:" << differing
                                   << " steps " << store::RunReader(child).checkpoint("latest").step << " vs "
                                   << store::RunReader(resumed).checkpoint("latest").step;
  }
  EXPECT_EQ(losses_after(child, stop), losses_after(resumed, stop));
  const store::RunReader read(child);
  EXPECT_EQ(read.metric("loss").steps.front(), stop + 1) << "the child copies none of its parent's rows";
  ASSERT_TRUE(read.header().lineage.has_value());
  EXPECT_EQ(read.header().lineage->parent_file, fs::absolute(parent).lexically_normal().string());
  EXPECT_EQ(read.header().lineage->parent_run_id, store::RunReader(parent).header().run_id);
  EXPECT_EQ(read.header().lineage->branch_step, stop);
  EXPECT_EQ(read.header().lineage->parent_checkpoint_sha256.size(), 64u);
  EXPECT_NE(read.header().run_id, store::RunReader(parent).header().run_id);
  EXPECT_EQ(store::run_file_version(parent), parent_version) << "the parent was only read";
}

TEST(Branch, AnUnchangedBranchOfALayerwiseRunIsItsResumeBitForBit) {
  expect_branch_is_the_resume("video-constrained");
}

TEST(Branch, AnUnchangedBranchOfASparseRunIsItsResumeBitForBit) {
  if (!data::dataset_files_present(data::default_data_root(), "fashion-mnist")) {
    GTEST_SKIP() << "fashion-mnist is not fetched (README, set-up)";
  }
  expect_branch_is_the_resume("vit-horst");
}

TEST(Branch, ABranchChangingAlphaSaysOnlyThatAndBadRequestsAreRefusedNamingThem) {
  ScratchFolder folder;
  const std::string parent = (folder / "parent.h5").string();
  const config::ExperimentConfig config = tiny("video-constrained");
  {
    TrainingSession first(config, into(parent));
    first.set_step_limit(4);
    first.run();
  }
  const std::string version = store::run_file_version(parent);
  const std::string child = (folder / "child.h5").string();
  auto changed = TrainingSession::branch(parent, -1, tiny("video-constrained", {"constraints.alpha=0.1"}), into(child));
  // The preset's alpha_final follows alpha (a constant schedule): both are what the change sets.
  EXPECT_EQ(changed->branch_changes(), "constraints.alpha 0.4 -> 0.1; constraints.alpha_final 0.4 -> 0.1");
  changed->run();
  EXPECT_EQ(store::RunReader(child).header().lineage->changes,
            "constraints.alpha 0.4 -> 0.1; constraints.alpha_final 0.4 -> 0.1");

  // A setting the continued state fixes, named with why.
  const std::string fixed = error_of(
      [&] { TrainingSession::branch(parent, -1, tiny("video-constrained", {"model.width=32"}), into(child + "2")); });
  EXPECT_NE(fixed.find("model.width: cannot change in a branch (16 -> 32): the model continued is the parent's"),
            std::string::npos)
      << fixed;
  // A step with no kept checkpoint, naming those kept.
  const std::string no_step = error_of([&] { TrainingSession::branch(parent, 3, config, into(child + "3")); });
  EXPECT_NE(no_step.find("keeps no checkpoint at step 3; it keeps "), std::string::npos) << no_step;
  EXPECT_NE(no_step.find("latest at step 4"), std::string::npos) << no_step;
  // The child cannot be the parent, nor a file that exists.
  const std::string itself = error_of([&] { TrainingSession::branch(parent, -1, config, into(parent)); });
  EXPECT_NE(itself.find("is the run being branched"), std::string::npos) << itself;
  const std::string exists = error_of([&] { TrainingSession::branch(parent, -1, config, into(child))->run(); });
  EXPECT_NE(exists.find("child.h5"), std::string::npos) << exists;
  // A parent that is not there.
  const std::string missing =
      error_of([&] { TrainingSession::branch((folder / "gone.h5").string(), -1, config, into(child + "4")); });
  EXPECT_NE(missing.find("gone.h5"), std::string::npos) << missing;
  EXPECT_EQ(store::run_file_version(parent), version) << "nothing of the parent was touched";

  // The child checks its parent against what it recorded (store::parent_problem): there as branched; moved; another
  // run at its path, named by both run ids.
  const store::RunLineage lineage = *store::RunReader(child).header().lineage;
  EXPECT_EQ(store::parent_problem(lineage), "");
  fs::rename(parent, parent + ".moved");
  const std::string moved = store::parent_problem(lineage);
  EXPECT_NE(moved.find("its parent " + lineage.parent_file + " is not there (moved or deleted)"), std::string::npos)
      << moved;
  EXPECT_NE(moved.find(lineage.parent_checkpoint_sha256), std::string::npos) << moved;
  {
    TrainingSession other(config, into(parent));
    other.set_step_limit(4);
    other.run();
  }
  const std::string another = store::parent_problem(lineage);
  EXPECT_NE(another.find("is not its parent: its run id is " + store::RunReader(parent).header().run_id +
                         ", the branch recorded " + lineage.parent_run_id),
            std::string::npos)
      << another;
}

// A live run asked to keep its state (the window's Branch… on a paused or running run): the trainer keeps it as the
// checkpoint "step-N" between batches (a checkpoint as any other: the exactness tests above cover branching from one),
// the parent stays paused, and a branch from that step continues from it. A request the run cannot serve (it is
// not training) is answered at once, not left waiting.
TEST(Branch, APausedRunKeepsItsStateOnRequestAndABranchContinuesItThere) {
  ScratchFolder folder;
  const std::string parent = (folder / "parent.h5").string();
  const config::ExperimentConfig config = tiny("video-constrained");
  TrainingSession session(config, into(parent));
  std::mutex mutex;
  std::condition_variable answered;
  int64_t kept = -2;
  std::string why;
  session.pause();  // held before its first batch once it starts
  session.start([](const TrainingResult&, const std::string&) {});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!session.holding() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(session.holding());
  session.keep_state([&](int64_t step, const std::string& error) {
    std::lock_guard<std::mutex> lock(mutex);
    kept = step;
    why = error;
    answered.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(answered.wait_for(lock, std::chrono::seconds(60), [&] { return kept != -2; }));
  }
  EXPECT_EQ(kept, 0) << why;
  EXPECT_TRUE(session.holding()) << "the parent stays paused";
  const std::string child = (folder / "child.h5").string();
  auto branch = TrainingSession::branch(parent, 0, tiny("video-constrained", {"constraints.alpha=0.1"}), into(child));
  branch->set_step_limit(2);
  EXPECT_EQ(branch->run().steps, 2);
  EXPECT_EQ(store::RunReader(child).header().lineage->branch_step, 0);
  session.stop();
  session.join();
  // Asked after the run ended: answered at once, with why.
  kept = -2;
  session.keep_state([&](int64_t step, const std::string& error) {
    kept = step;
    why = error;
  });
  EXPECT_EQ(kept, -1);
  EXPECT_EQ(why, "the run is not training");
}

// Item 2: train.keep_interval keeps a state every N steps ("step-N", the epoch's own where it falls on an epoch end),
// at most keep_count and keep_megabytes of them, the oldest let go with their data files; a branch takes any kept one.
TEST(Branch, StatesAreKeptEveryIntervalWithinTheirCountAndBytesAndABranchTakesOne) {
  ScratchFolder folder;
  const auto kept_steps = [](const std::string& run) {
    std::vector<int64_t> steps;
    for (const auto& checkpoint : store::RunReader(run).checkpoints()) {
      if (checkpoint.label.rfind("step-", 0) == 0) steps.push_back(checkpoint.step);
    }
    std::sort(steps.begin(), steps.end());
    return steps;
  };
  const auto data_files = [](const std::string& run) {
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(run + ".checkpoints")) files += entry.is_regular_file() ? 1 : 0;
    return files;
  };
  // 2 epochs of 4 steps, a state every 2: 2, 4 (the first epoch's end), 6, 8; at most 2 kept.
  const std::string parent = (folder / "kept.h5").string();
  TrainingSession(tiny("video-constrained", {"train.keep_interval=2", "train.keep_count=2"}), into(parent)).run();
  EXPECT_EQ(kept_steps(parent), (std::vector<int64_t>{6, 8}));
  // Only what the file names stays in its folder: latest, best and the kept steps share copies where they coincide.
  std::set<std::string> named;
  for (const auto& checkpoint : store::RunReader(parent).checkpoints()) named.insert(checkpoint.sha256);
  EXPECT_EQ(data_files(parent), named.size()) << "a let-go state's data file stayed";
  auto branch = TrainingSession::branch(
      parent, 6, tiny("video-constrained", {"train.keep_interval=2", "train.keep_count=2", "train.epochs=3"}),
      into((folder / "from6.h5").string()));
  EXPECT_EQ(branch->run().steps, 12);
  const std::string gone = error_of(
      [&] { TrainingSession::branch(parent, 2, tiny("video-constrained"), into((folder / "x.h5").string())); });
  EXPECT_NE(gone.find("keeps no checkpoint at step 2; it keeps "), std::string::npos) << gone;
  EXPECT_NE(gone.find("step-6 at step 6"), std::string::npos) << gone;

  // A run stopped where it also keeps a state holds two at that step ("latest" of the stop, "step-5" of the interval,
  // each its own bytes): a branch from either is its parent's, as branched.
  const std::string stopped = (folder / "stopped.h5").string();
  {
    TrainingSession first(tiny("video-constrained", {"train.keep_interval=1"}), into(stopped));
    first.set_step_limit(5);
    first.run();
  }
  TrainingSession::branch(stopped, 5, tiny("video-constrained", {"train.keep_interval=1"}),
                          into((folder / "from5.h5").string()))
      ->run();
  EXPECT_EQ(store::parent_problem(*store::RunReader((folder / "from5.h5").string()).header().lineage), "");

  // The byte limit: a wider model's state is larger; 1 MB holds floor(1 MiB / its size) of them (at least one).
  const std::string wide = (folder / "wide.h5").string();
  TrainingSession(tiny("video-constrained", {"model.width=64", "model.ff_width=128", "train.keep_interval=1",
                                             "train.keep_count=100", "train.keep_megabytes=1"}),
                  into(wide))
      .run();
  size_t bytes = 0;
  for (const auto& [section, tensors] : store::RunReader(wide).checkpoint("latest").sections) {
    for (const auto& [name, blob] : tensors) bytes += blob.bytes.size();
  }
  const size_t fits = std::max<size_t>(1, (size_t{1} << 20) / bytes);
  ASSERT_LT(fits, 8u) << "the state (" << bytes << " bytes) should be large enough for the limit to bite";
  EXPECT_EQ(kept_steps(wide).size(), fits) << bytes << " bytes a state";
  EXPECT_EQ(kept_steps(wide).back(), 8);
}

}  // namespace
}  // namespace descentlab::session
