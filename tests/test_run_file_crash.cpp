// Crash safety: a child process writes metrics and checkpoints as fast as it can and reports each commit on a
// pipe; the parent kills it with SIGKILL at varied moments (often mid-write) and checks that the run file still
// opens and holds every metric and checkpoint whose commit the child reported.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/store/checkpoint_files.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::ScratchFolder;

// The child: never returns. Writes -step to `report` as each commit begins and step once it is committed.
[[noreturn]] void write_until_killed(const std::string& path, int report) {
  try {
    RunWriterOptions options;
    options.flush_interval_seconds = 0;
    auto writer = RunWriter::create(path, sample_header(), options);
    for (int64_t step = 1;; ++step) {
      writer->scalar("loss", step, static_cast<double>(step), 1.0 / static_cast<double>(step));
      writer->vector("layer_loss", step, static_cast<double>(step), {1.0, 0.5, 0.25});
      const int64_t starting = -step;
      if (::write(report, &starting, sizeof starting) != sizeof starting) ::_exit(3);
      if (step % 3 == 0) {
        writer->save_checkpoint("latest", sample_checkpoint(step, 64 * 1024));  // 256 KiB of weights
      } else {
        writer->flush();
      }
      if (::write(report, &step, sizeof step) != sizeof step) ::_exit(3);
    }
  } catch (...) {
    ::_exit(2);
  }
}

TEST(RunFileCrash, KillNineAtAnyMomentLeavesEveryCommittedRecord) {
  ScratchFolder folder;
  const std::string path = (folder / "crash.h5").string();
  int killed_mid_commit = 0;  // rounds whose kill came after a commit began and before it was reported done
  for (int round = 0; round < 12; ++round) {
    std::filesystem::remove(path);
    int pipe_ends[2];
    ASSERT_EQ(::pipe(pipe_ends), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipe_ends[0]);
      write_until_killed(path, pipe_ends[1]);
    }
    ::close(pipe_ends[1]);
    // Let the child commit a few times, then kill it after a varied delay (0.0 .. 5.5 ms past a report).
    int64_t reported = 0;
    int64_t step = 0;
    int64_t last_message = 0;
    while (reported < 4 + round && ::read(pipe_ends[0], &step, sizeof step) == sizeof step) {
      last_message = step;
      if (step > 0) reported = step;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended by itself (status " << status << ") in round " << round;
    while (::read(pipe_ends[0], &step, sizeof step) == sizeof step) {  // reports sent before the kill
      last_message = step;
      if (step > 0) reported = step;
    }
    ::close(pipe_ends[0]);
    if (last_message < 0) ++killed_mid_commit;
    for (const auto& entry : std::filesystem::directory_iterator(folder.path())) {
      if (entry.path().filename().string().rfind("crash.h5.tmp-", 0) == 0) std::filesystem::remove(entry.path());
    }

    const RunReader reader(path);  // must open
    // The run's identity is there from its first version, and its log is its own (issue 52, item 4).
    ASSERT_TRUE(is_run_id(reader.header().run_id)) << "round " << round;
    const RunLog log = read_run_log(path, 0);
    if (log.exists && log.valid_length > 0) {
      EXPECT_EQ(log.run_id, reader.header().run_id) << "round " << round;
    }
    const MetricSeries loss = reader.metric("loss");
    ASSERT_GE(static_cast<int64_t>(loss.rows()), reported) << "round " << round;
    for (size_t i = 0; i < loss.rows(); ++i) ASSERT_EQ(loss.steps[i], static_cast<int64_t>(i + 1));
    EXPECT_EQ(reader.metric("layer_loss").rows(), loss.rows());
    const int64_t last_checkpoint = reported - reported % 3;
    if (last_checkpoint > 0) {
      const record::CheckpointData checkpoint = reader.checkpoint("latest");
      EXPECT_GE(checkpoint.step, last_checkpoint);
      EXPECT_EQ(checkpoint.sections.at("model").at("blocks.0.attn.in_proj_weight").bytes.size(), 256u * 1024u);
    }
  }
  // Resuming cleans up what a killed writer left behind: its temporaries and data files of this run no version
  // names, never a data file of another run in the same folder (issue 52, item 5). The killed writer's log is
  // free again (the kernel dropped its flock).
  const std::string id = RunReader(path).header().run_id;
  const std::string orphan = checkpoint_folder_for(path) + "/999-" + id + ".bin";
  const std::string foreign = checkpoint_folder_for(path) + "/999-" + new_run_id() + ".bin";
  std::filesystem::create_directories(checkpoint_folder_for(path));
  for (const auto& planted : {path + ".tmp-999999999", orphan, foreign}) {
    ::close(::open(planted.c_str(), O_CREAT | O_WRONLY, 0644));
  }
  RunWriter::open(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp-999999999"));
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_TRUE(std::filesystem::exists(foreign));
  EXPECT_GE(killed_mid_commit, 3) << "too few kills landed inside a commit to test anything";
  std::printf("kills inside a commit: %d of 12\n", killed_mid_commit);
}

}  // namespace
}  // namespace descentlab::store
