// The run log (issue 34): a metric, histogram or sweep commit appends one CRC'd record to RUN.h5.log and leaves the
// run file alone; checkpoints and the writer's end fold the log in. Each test asserts what docs/run-file.md's "What
// survives what" table promises at the log's commit points: nothing committed is lost or counted twice, a reader
// always sees a whole version, damage is refused naming the log and the record's byte offset.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "child_process.h"
#include "core/store/checkpoint_bytes.h"
#include "core/store/checkpoint_files.h"
#include "core/store/durable_file.h"
#include "core/store/run_follower.h"
#include "core/store/run_lock.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "run_file_samples.h"
#include "run_log_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::error_of;
using descentlab::testing::in_child;
using descentlab::testing::killed_with_its_log;
using descentlab::testing::manual_flush;
using descentlab::testing::one_to;
using descentlab::testing::read_bytes;
using descentlab::testing::run_with_log;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::sample_histogram;
using descentlab::testing::sample_sweep;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

struct ClearFaults {
  ~ClearFaults() { fault::clear(); }
};

std::vector<int64_t> steps_of(const std::string& path) {
  return RunReader(path).metric("loss").steps;
}

TEST(RunLog, RowCommitsAppendToTheLogAndLeaveTheRunFileAlone) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->scalar("loss", 1, 0.0, 1.0);
  writer->save_checkpoint("latest", sample_checkpoint(1, 64 * 1024));
  const std::string file_before = read_bytes(path);
  const auto log_before = fs::file_size(log_path_for(path));
  writer->scalar("loss", 2, 0.5, 0.5);
  writer->vector("lambda", 2, 0.5, {0.1, 0.2});
  writer->histogram(sample_histogram(2));
  writer->sweep(sample_sweep());
  writer->flush();
  EXPECT_EQ(read_bytes(path), file_before) << "a row commit rewrote the run file";
  const auto added = fs::file_size(log_path_for(path)) - log_before;
  EXPECT_GT(added, 0u);
  EXPECT_LT(added, 1024u) << "a commit of a few rows must cost a few rows";
  {
    const RunReader reader(path);  // sees the file's rows and the log's, in order
    EXPECT_EQ(reader.metric("loss").steps, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(reader.metric("lambda").values, (std::vector<double>{0.1, 0.2}));
    EXPECT_EQ(reader.histogram("global").counts, sample_histogram(2).counts);
    EXPECT_EQ(reader.sweep("gaussian").metric, sample_sweep().metric);
    EXPECT_EQ(reader.sweep_names(), (std::vector<std::string>{"gaussian"}));
  }
  writer.reset();  // the end folds the log in and removes it: a closed run is one file
  EXPECT_FALSE(fs::exists(log_path_for(path)));
  const RunReader reader(path);
  EXPECT_EQ(reader.metric("loss").steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(reader.metric("lambda").rows(), 1u);
  EXPECT_EQ(reader.sweep("gaussian").layer_loss, sample_sweep().layer_loss);
}

TEST(RunLog, ACheckpointFoldsTheLogInAndEachRowIsCountedOnce) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = run_with_log(path);
  EXPECT_EQ(steps_of(path), one_to(5));
  writer->scalar("loss", 6, 0.0, 0.1);
  writer->save_checkpoint("latest", sample_checkpoint(6));
  EXPECT_EQ(fs::file_size(log_path_for(path)), kLogHeaderBytes) << "the fold starts a new, empty log";
  EXPECT_EQ(steps_of(path), one_to(6));
  writer->scalar("loss", 7, 0.0, 0.1);
  writer->flush();
  writer.reset();
  EXPECT_EQ(steps_of(path), one_to(7));
  // A resumed writer continues the log's sequence.
  auto resumed = RunWriter::open(path, manual_flush());
  resumed->scalar("loss", 8, 0.0, 0.1);
  resumed->flush();
  EXPECT_EQ(steps_of(path), one_to(8));
}

TEST(RunLog, AResumeCutsRowsThatOnlyTheLogHeld) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  // A writer killed after rows 4 and 5 were logged, with its checkpoint at 3.
  ASSERT_TRUE(killed_with_its_log(path));
  EXPECT_EQ(steps_of(path), one_to(5));
  auto resumed = RunWriter::open(path, manual_flush());
  resumed->truncate_after(3);
  EXPECT_EQ(steps_of(path), one_to(3));
  resumed->scalar("loss", 4, 0.0, 0.3);
  resumed->flush();
  EXPECT_EQ(steps_of(path), one_to(4));
}

TEST(RunLog, AFailedAppendLeavesThePreviousStateAndLosesNothing) {
  ClearFaults clear_at_end;
  const struct {
    fault::Point point;
    int error_number;
    const char* must_say;
  } cases[] = {{fault::Point::Write, ENOSPC, "the disk is full"},
               {fault::Point::Write, EDQUOT, "the disk is full"},
               {fault::Point::Write, EIO, "append to"},
               {fault::Point::Fsync, ENOSPC, "the disk is full"},
               {fault::Point::Fsync, EIO, "sync"},
               {fault::Point::Fsync, EDQUOT, "the disk is full"}};
  for (const auto& fault_case : cases) {
    SCOPED_TRACE(std::string("point ") + std::to_string(static_cast<int>(fault_case.point)) + ", errno " +
                 std::to_string(fault_case.error_number));
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    auto writer = run_with_log(path);
    const std::string file_before = read_bytes(path);
    const std::string log_before = read_bytes(log_path_for(path));
    writer->scalar("loss", 6, 0.0, 0.1);
    fault::inject(fault_case.point, fault_case.error_number);
    const std::string error = error_of([&] { writer->flush(); });
    EXPECT_NE(error.find(fault_case.must_say), std::string::npos) << error;
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_EQ(read_bytes(path), file_before);
    EXPECT_EQ(read_bytes(log_path_for(path)), log_before) << "the failed record was not cut off";
    EXPECT_EQ(steps_of(path), one_to(5));
    writer->scalar("loss", 7, 0.0, 0.1);
    writer->flush();  // the fault is gone: both rows land, once
    EXPECT_EQ(steps_of(path), one_to(7));
    writer.reset();
    EXPECT_EQ(steps_of(path), one_to(7));
  }
}

TEST(RunLog, AWriterKilledAtEachLogPointLosesNothingCommitted) {
  // The append (write, fsync) and each step of the fold's new log (write, fsync, close, rename, folder sync), after
  // the checkpoint's data file (a write per tensor, fdatasync, close, folder sync) and the run file's new version.
  constexpr int data_writes = 4;  // sample_checkpoint's tensors with bytes
  const struct {
    fault::Point point;
    int skip;          // calls at that point to let pass
    bool checkpoint;   // the commit is a fold
    int64_t expected;  // rows the next reader sees
  } cases[] = {{fault::Point::Write, 0, false, 5},
               {fault::Point::Fsync, 0, false, 6},
               {fault::Point::Write, data_writes + 1, true, 6},
               {fault::Point::Fsync, 2, true, 6},
               {fault::Point::Close, 2, true, 6},
               {fault::Point::Rename, 1, true, 6},
               {fault::Point::SyncFolder, 2, true, 6}};
  for (const auto& kill : cases) {
    SCOPED_TRACE(std::string("point ") + std::to_string(static_cast<int>(kill.point)) + " after " +
                 std::to_string(kill.skip));
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    const int status = in_child([&] {
      auto writer = run_with_log(path);
      writer->scalar("loss", 6, 0.0, 0.1);
      fault::inject(kill.point, fault::kKill, kill.skip);
      if (kill.checkpoint) {
        writer->save_checkpoint("latest", sample_checkpoint(6));
      } else {
        writer->flush();
      }
      return 20;  // not reached
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT_EQ(steps_of(path), one_to(kill.expected));
    if (kill.checkpoint) {
      EXPECT_EQ(RunReader(path).checkpoint("latest").step, 6);
    }
    auto next = RunWriter::open(path, manual_flush());  // takes over, cuts what is half-written, goes on
    next->scalar("loss", kill.expected + 1, 0.0, 0.1);
    next->flush();
    EXPECT_EQ(steps_of(path), one_to(kill.expected + 1));
    next.reset();
    EXPECT_EQ(steps_of(path), one_to(kill.expected + 1));
    for (const auto& entry : fs::directory_iterator(folder.path())) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
    }
  }
}

TEST(RunLog, ARecordCutShortAtTheEndIsNotYetCommittedAndIsCutOnOpen) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const std::string log = log_path_for(path);
  ASSERT_TRUE(killed_with_its_log(path));
  const std::string whole = read_bytes(log);
  // Half of a copy of the last record, as a writer killed mid-append leaves it; and a tail the file system
  // extended with zeros.
  const size_t record = (whole.size() - kLogHeaderBytes) / 2;
  for (const std::string& tail : {whole.substr(whole.size() - record, record / 2), std::string(record, '\0')}) {
    write_bytes(log, whole + tail);
    EXPECT_EQ(steps_of(path), one_to(5));
    const int status = in_child([&] {
      auto writer = RunWriter::open(path, manual_flush());
      if (fs::file_size(log) != whole.size()) return 21;  // the torn tail was not cut
      writer->scalar("loss", 6, 0.0, 0.1);
      writer->flush();
      ::raise(SIGKILL);  // dies with its log unfolded
      return 0;
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT_EQ(steps_of(path), one_to(6));
    write_bytes(log, whole);
  }
}

TEST(RunLog, DamagedRecordsAreRefusedNamingTheLogAndTheRecord) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const std::string log = log_path_for(path);
  ASSERT_TRUE(killed_with_its_log(path));
  const std::string whole = read_bytes(log);
  const size_t record = (whole.size() - kLogHeaderBytes) / 2;
  const struct {
    size_t offset;
    std::string names;
  } damages[] = {
      {kLogHeaderBytes + 40, "record at byte " + std::to_string(kLogHeaderBytes)},  // the first record's payload
      {kLogHeaderBytes + 17, "record at byte " + std::to_string(kLogHeaderBytes)},  // its length
      {kLogHeaderBytes + record + 2, "record at byte " + std::to_string(kLogHeaderBytes + record)},  // a marker
      {3, "header"},
  };
  for (const auto& damage : damages) {
    SCOPED_TRACE(damage.offset);
    std::string bytes = whole;
    bytes[damage.offset] = static_cast<char>(bytes[damage.offset] ^ 0x5a);
    write_bytes(log, bytes);
    for (const std::string& error :
         {error_of([&] { RunReader reader(path); }), error_of([&] { RunWriter::open(path, manual_flush()); })}) {
      EXPECT_NE(error.find(log), std::string::npos) << error;
      EXPECT_NE(error.find(damage.names), std::string::npos) << error;
    }
    EXPECT_EQ(read_bytes(log), bytes) << "a refused open changed the log";
  }
}

TEST(RunLog, ALogThatDoesNotContinueTheRunFileIsRefused) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  run_with_log(path).reset();
  const std::string folded = read_bytes(path);
  {
    auto writer = RunWriter::open(path, manual_flush());
    writer->save_checkpoint("latest", sample_checkpoint(9));  // a fold: a newer version with a new log
    writer->scalar("loss", 6, 0.0, 0.1);
    writer->flush();
    const std::string newer_log = read_bytes(log_path_for(path));
    writer.reset();
    write_bytes(path, folded);  // an older copy of the run file beside a newer log
    write_bytes(log_path_for(path), newer_log);
  }
  const std::string error = error_of([&] { RunReader reader(path); });
  EXPECT_NE(error.find("do not belong together"), std::string::npos) << error;
  EXPECT_NE(error_of([&] { RunWriter::open(path, manual_flush()); }).find("do not belong together"), std::string::npos);
}

TEST(RunLog, AnOverwrittenRunDoesNotInheritTheOldLog) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  ASSERT_TRUE(killed_with_its_log(path));
  ASSERT_TRUE(fs::exists(log_path_for(path)));
  RunWriterOptions options = manual_flush();
  options.overwrite = true;
  auto writer = RunWriter::create(path, sample_header(), options);
  writer->scalar("loss", 1, 0.0, 1.0);
  writer->flush();
  EXPECT_EQ(steps_of(path), one_to(1));
}

// A reader opening again and again while the writer appends and folds: every version it sees is whole (rows 1..n
// without a gap or a repeat) and no older than the one before.
TEST(RunLog, ReadersRacingAppendsAndFoldsSeeWholeVersions) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  writer->scalar("loss", 1, 0.0, 1.0);
  writer->flush();
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string failure;
  std::thread reader([&] {
    size_t seen = 0;
    while (!done.load() && failure.empty()) {
      try {
        const auto steps = steps_of(path);
        if (steps != one_to(static_cast<int64_t>(steps.size())) || steps.size() < seen) {
          failure = "saw " + std::to_string(steps.size()) + " rows, not 1..n after " + std::to_string(seen);
        }
        seen = steps.size();
        ++reads;
      } catch (const std::exception& error) {
        failure = error.what();
      }
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int64_t step = 1;
  while (step < 400 && (reads.load() < 50 || step < 60) && std::chrono::steady_clock::now() < deadline) {
    ++step;
    writer->scalar("loss", step, 0.0, 1.0);
    if (step % 7 == 0) {
      writer->save_checkpoint("latest", sample_checkpoint(step));
    } else {
      writer->flush();
    }
  }
  done = true;
  reader.join();
  EXPECT_EQ(failure, "");
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(steps_of(path), one_to(step));
}

TEST(RunLog, PackWritesOneFileWithEveryRecordWhileTheWriterGoesOn) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const std::string packed = (folder / "shared.h5").string();
  auto writer = run_with_log(path);
  writer->histogram(sample_histogram(5));
  writer->sweep(sample_sweep());
  writer->flush();
  write_bytes(log_path_for(packed), "a stale log of an earlier file of this name");
  const PackResult result = pack_run(path, packed);
  EXPECT_EQ(result.log_records, 3u);
  EXPECT_EQ(result.bytes, fs::file_size(packed));
  EXPECT_FALSE(fs::exists(log_path_for(packed)));
  {
    const RunReader reader(packed);
    EXPECT_EQ(reader.metric("loss").steps, one_to(5));
    EXPECT_EQ(reader.histogram("global").steps, (std::vector<int64_t>{5}));
    EXPECT_EQ(reader.sweep("gaussian").metric, sample_sweep().metric);
    EXPECT_EQ(reader.checkpoint("latest").step, 3);
  }
  writer->scalar("loss", 6, 0.0, 0.1);
  writer->flush();
  EXPECT_EQ(steps_of(path), one_to(6));
  EXPECT_EQ(steps_of(packed), one_to(5)) << "the packed copy is its own file";
  EXPECT_NE(error_of([&] { pack_run(path, path); }).find("is the run being packed"), std::string::npos);
  EXPECT_NE(error_of([&] { pack_run((folder / "none.h5").string(), packed); }).find("none.h5"), std::string::npos);
  EXPECT_EQ(steps_of(packed), one_to(5)) << "a refused pack changed its target";
}

// Issue 52 item 3: a log shorter than its header (0 bytes, or zeros) is a crash state. A writer appended its first
// record there with no header before it: the sweep's result was lost (exit 0) and the run refused from then on. It
// starts a new log instead.
TEST(RunLog, AWriterStartsANewLogInPlaceOfOneShorterThanItsHeader) {
  for (const std::string& short_log : {std::string(), std::string(10, '\0')}) {
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    { auto writer = run_with_log(path); }
    ASSERT_FALSE(fs::exists(log_path_for(path)));
    write_bytes(log_path_for(path), short_log);
    {
      auto writer = RunWriter::open(path, manual_flush());
      writer->sweep(sample_sweep());
      writer->flush();
      writer->scalar("loss", 6, 0.0, 0.1);
      writer->flush();
      const RunReader reader(path);  // beside the writer: the log as it is now
      EXPECT_EQ(reader.sweep("gaussian").metric, sample_sweep().metric) << short_log.size() << " bytes";
      EXPECT_EQ(reader.metric("loss").steps, one_to(6)) << short_log.size() << " bytes";
    }
    const RunReader reader(path);
    EXPECT_EQ(reader.sweep("gaussian").metric, sample_sweep().metric) << short_log.size() << " bytes";
    EXPECT_EQ(reader.metric("loss").steps, one_to(6)) << short_log.size() << " bytes";
    EXPECT_EQ(reader.checkpoint("latest").step, 3);
  }
}

// Issue 52 item 1: pack wrote over whatever OUT named, the run's own log, lock or checkpoint data included (the run
// was then refused by every command). It refuses each, naming the run, and loses nothing; it replaces another run
// only when asked, under that run's lock, and takes that run's log and data folder with it.
TEST(RunLog, PackNeverWritesOverARunsCompanionsOrAnotherRun) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = run_with_log(path);  // rows 4 and 5 in the log, "latest" in a data file, the lock held
  const std::vector<std::string> data_files = RunReader(path).checkpoint_data_files();
  ASSERT_EQ(data_files.size(), 1u);
  const std::string data_file = checkpoint_file_path(path, data_files.front());
  const std::vector<std::string> companions = {log_path_for(path), RunFileLock::lock_path_for(path), data_file};
  std::vector<std::string> before;
  for (const auto& companion : companions) before.push_back(read_bytes(companion));
  const std::string run_bytes = read_bytes(path);
  const std::vector<uint8_t> latest = checkpoint_to_bytes(RunReader(path).checkpoint("latest"));
  const std::vector<std::pair<std::string, std::string>> refused = {
      {path, "is the run being packed"},
      {(folder / "." / "run.h5").string(), "is the run being packed"},
      {log_path_for(path), "is a companion of the run being packed"},
      {RunFileLock::lock_path_for(path), "is a companion of the run being packed"},
      {data_file, "is in the checkpoint data folder of the run being packed"},
      {(folder / "run.h5.checkpoints" / "new.h5").string(), "is in the checkpoint data folder of the run being packed"},
  };
  for (const auto& refusal : refused) {
    // Named copies, not a structured binding: Clang 14 (the sanitizer builds) cannot capture those in a lambda.
    const std::string& target = refusal.first;
    const std::string& why = refusal.second;
    for (const bool overwrite : {false, true}) {
      const std::string message = error_of([&] { pack_run(path, target, PackOptions{overwrite}); });
      EXPECT_NE(message.find(target), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
    }
  }
  for (size_t i = 0; i < companions.size(); ++i) EXPECT_EQ(read_bytes(companions[i]), before[i]) << companions[i];
  EXPECT_EQ(read_bytes(path), run_bytes);
  EXPECT_EQ(steps_of(path), one_to(5));
  EXPECT_EQ(checkpoint_to_bytes(RunReader(path).checkpoint("latest")), latest);
  EXPECT_FALSE(fs::exists(folder / "run.h5.checkpoints" / "new.h5"));

  // Another run: its companions are refused by name, it is replaced only with overwrite, and not while written.
  const std::string other = (folder / "other.h5").string();
  auto other_writer = RunWriter::create(other, sample_header(), manual_flush());
  other_writer->scalar("loss", 1, 0.0, 9.0);
  other_writer->save_checkpoint("latest", sample_checkpoint(1));
  EXPECT_NE(
      error_of([&] { pack_run(path, log_path_for(other), PackOptions{true}); }).find("is the log of the run " + other),
      std::string::npos);
  EXPECT_NE(
      error_of([&] { pack_run(path, RunFileLock::lock_path_for(other)); }).find("is the lock of the run " + other),
      std::string::npos);
  const std::string exists = error_of([&] { pack_run(path, other); });
  EXPECT_NE(exists.find("already exists"), std::string::npos) << exists;
  EXPECT_NE(exists.find("--overwrite"), std::string::npos) << exists;
  const std::string busy = error_of([&] { pack_run(path, other, PackOptions{true}); });
  EXPECT_NE(busy.find(other), std::string::npos) << busy;
  EXPECT_EQ(RunReader(other).metric("loss").steps, (std::vector<int64_t>{1})) << "a refused pack changed the run";
  ASSERT_TRUE(fs::exists(checkpoint_folder_for(other)));
  other_writer.reset();
  const PackResult replaced = pack_run(path, other, PackOptions{true});
  EXPECT_EQ(replaced.warning, "");
  EXPECT_EQ(steps_of(other), one_to(5));
  EXPECT_FALSE(fs::exists(checkpoint_folder_for(other))) << "the replaced run's data folder stayed";
  EXPECT_FALSE(fs::exists(log_path_for(other)));
  EXPECT_FALSE(fs::exists(RunFileLock::lock_path_for(other))) << "the lock taken to replace it stayed";
  EXPECT_TRUE(RunReader(other).checkpoint_data_files().empty());

  // A file that is no run: replaced only when asked.
  const std::string notes = (folder / "notes.h5").string();
  write_bytes(notes, "notes");
  EXPECT_NE(error_of([&] { pack_run(path, notes); }).find("already exists"), std::string::npos);
  EXPECT_EQ(read_bytes(notes), "notes");
  pack_run(path, notes, PackOptions{true});
  EXPECT_EQ(steps_of(notes), one_to(5));
  EXPECT_EQ(steps_of(path), one_to(5));
}

}  // namespace
}  // namespace descentlab::store

namespace descentlab::store {
namespace {

// Issue 34 item 4: a reader following a run (the window watching another process's run) reads only what was
// committed since its last look: the log's new records while the run file is the same version, the run file whole
// only after a fold. What a look reads does not grow with the checkpoints the run holds.
TEST(RunFollower, ReadsOnlyTheNewRecordsAndTheFileWholeOnlyAfterAFold) {
  std::vector<uint64_t> bytes_per_look;
  for (const int64_t elements : {int64_t{1} << 16, int64_t{1} << 22}) {  // checkpoints of 256 KB and 16 MB
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    auto writer = RunWriter::create(path, sample_header(), manual_flush());
    writer->scalar("loss", 1, 0.0, 1.0);
    writer->save_checkpoint("latest", sample_checkpoint(1, elements));
    RunFollower follower(path);
    RunFollower::Update first = follower.poll();
    ASSERT_TRUE(first.whole);
    EXPECT_EQ(first.whole->metric("loss").steps, (std::vector<int64_t>{1}));
    EXPECT_EQ(follower.poll().records, 0u) << "nothing was committed";
    uint64_t read = 0;
    for (int64_t step = 2; step <= 4; ++step) {
      writer->scalar("loss", step, 0.0, 1.0 / static_cast<double>(step));
      writer->vector("layer_loss", step, 0.0, {0.5, 0.25});
      writer->flush();  // one log record
      RunFollower::Update update = follower.poll();
      ASSERT_FALSE(update.whole) << "an append made the follower read the file whole";
      ASSERT_EQ(update.records, 1u);
      EXPECT_EQ(update.appended.metrics.at("loss").steps, (std::vector<int64_t>{step}));
      EXPECT_EQ(update.appended.metrics.at("layer_loss").values, (std::vector<double>{0.5, 0.25}));
      read = std::max(read, update.bytes_read);
    }
    bytes_per_look.push_back(read);
    // Two commits between looks: both records, in order.
    for (int64_t step = 5; step <= 6; ++step) {
      writer->scalar("loss", step, 0.0, 0.1);
      writer->flush();
    }
    RunFollower::Update both = follower.poll();
    ASSERT_FALSE(both.whole);
    EXPECT_EQ(both.records, 2u);
    EXPECT_EQ(both.appended.metrics.at("loss").steps, (std::vector<int64_t>{5, 6}));
    // A checkpoint folds: the file is new, read whole, with every row; then appends again.
    writer->save_checkpoint("latest", sample_checkpoint(6, elements));
    RunFollower::Update folded = follower.poll();
    ASSERT_TRUE(folded.whole);
    EXPECT_EQ(folded.whole->metric("loss").steps, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    writer->scalar("loss", 7, 0.0, 0.1);
    writer->flush();
    RunFollower::Update after = follower.poll();
    ASSERT_FALSE(after.whole);
    EXPECT_EQ(after.appended.metrics.at("loss").steps, (std::vector<int64_t>{7}));
  }
  ASSERT_EQ(bytes_per_look.size(), 2u);
  EXPECT_EQ(bytes_per_look[0], bytes_per_look[1]) << "a look read more beside a bigger checkpoint";
  EXPECT_LT(bytes_per_look[1], 4096u);
}

}  // namespace
}  // namespace descentlab::store
