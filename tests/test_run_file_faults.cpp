// Fault injection for the run file (issue 16): a full disk (a real, small tmpfs where the machine allows it, and
// injected write/fsync/close/rename failures everywhere), a writer killed at each point of a commit, two writers,
// damaged checkpoint bytes. Each case asserts: no crash, a clear error, the previous data intact, and that nothing
// is lost once the fault is gone.

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "child_process.h"
#include "core/store/durable_file.h"
#include "core/store/run_lock.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "run_file_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::error_of;
using descentlab::testing::in_child;
using descentlab::testing::manual_flush;
using descentlab::testing::read_bytes;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::ScratchFolder;

// Polls `condition` until it holds or `seconds` pass (a deadline, not a fixed sleep).
bool wait_until(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

struct ClearFaults {
  ~ClearFaults() { fault::clear(); }
};

// Temporaries, and checkpoint data files the run file does not name (a commit that did not land).
std::vector<std::string> leftovers(const ScratchFolder& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder.path())) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) names.push_back(name);
  }
  const std::string run = (folder / "run.h5").string();
  if (fs::is_directory(run + ".checkpoints")) {
    std::vector<std::string> named;
    if (fs::exists(run)) named = RunReader(run).checkpoint_data_files();
    for (const auto& entry : fs::directory_iterator(run + ".checkpoints")) {
      if (std::find(named.begin(), named.end(), entry.path().string()) == named.end()) {
        names.push_back(entry.path().string());
      }
    }
  }
  return names;
}

// The tensors of sample_checkpoint() with bytes: each is one write of a checkpoint's data file.
constexpr int kSampleTensorWrites = 4;

// A run with 3 committed loss rows and a "latest" checkpoint at step 3; the writer stays open for more.
std::unique_ptr<RunWriter> committed_run(const std::string& path) {
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  for (int64_t step = 1; step <= 3; ++step) writer->scalar("loss", step, 0.0, 1.0 / static_cast<double>(step));
  writer->save_checkpoint("latest", sample_checkpoint(3));
  return writer;
}

struct FaultCase {
  fault::Point point;
  int error_number;
  const char* must_say;
  int skip = 0;  // calls at that point let through first: 0 is the checkpoint's data file, then the run file's
};

TEST(RunFileFaults, AFailedCommitLeavesTheFileAsItWasAndLosesNothing) {
  const FaultCase cases[] = {
      {fault::Point::Write, ENOSPC, "the disk is full"},
      {fault::Point::Write, EIO, "could not write"},
      {fault::Point::Fsync, ENOSPC, "the disk is full"},
      {fault::Point::Fsync, EIO, "could not sync"},
      {fault::Point::Close, EDQUOT, "the disk is full"},
      {fault::Point::Close, EIO, "could not close"},
      {fault::Point::SyncFolder, EIO, "could not sync the folder"},
      {fault::Point::Write, ENOSPC, "the disk is full", kSampleTensorWrites},
      {fault::Point::Write, EIO, "could not write", kSampleTensorWrites},
      {fault::Point::Fsync, EIO, "could not sync", 1},
      {fault::Point::Close, EIO, "could not close", 1},
      {fault::Point::Rename, EACCES, "could not rename"},
  };
  ClearFaults clear_at_end;
  for (const auto& fault_case : cases) {
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    auto writer = committed_run(path);
    const auto before = read_bytes(path);
    // Rows and both checkpoints of an epoch end, in one commit that fails.
    writer->scalar("loss", 4, 0.0, 0.25);
    fault::inject(fault_case.point, fault_case.error_number, fault_case.skip);
    const std::string error = error_of([&] { writer->save_checkpoints({"best", "latest"}, sample_checkpoint(4)); });
    SCOPED_TRACE(error + " (skip " + std::to_string(fault_case.skip) + ")");
    EXPECT_NE(error.find(fault_case.must_say), std::string::npos);
    EXPECT_NE(error.find("still holds its last commit"), std::string::npos);
    EXPECT_EQ(error.find("will retry"), std::string::npos) << "the thrown error must not promise a retry";
    if (fault_case.error_number == ENOSPC) {
      EXPECT_NE(error.find("needs"), std::string::npos);
    }
    EXPECT_EQ(read_bytes(path), before) << "a failed commit changed the file";
    EXPECT_TRUE(leftovers(folder).empty()) << "a failed commit left its temporary file";
    {
      const RunReader reader(path);
      EXPECT_FALSE(reader.has_checkpoint("best")) << "best without latest's new version";
      EXPECT_EQ(reader.checkpoint("latest").step, 3);
    }
    EXPECT_NE(writer->last_error().find("stay in memory"), std::string::npos);
    // The fault is gone: the next commit brings everything, both labels together.
    const int64_t commits = writer->commits();
    writer->flush();
    EXPECT_EQ(writer->commits(), commits + 1);
    EXPECT_TRUE(writer->last_error().empty());
    const RunReader reader(path);
    EXPECT_EQ(reader.metric("loss").steps, (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(reader.checkpoint("best").step, 4);
    EXPECT_EQ(reader.checkpoint("latest").step, 4);
  }
}

TEST(RunFileFaults, AFailedFolderSyncStillCommitsOnceAndWarns) {
  ClearFaults clear_at_end;
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = committed_run(path);
  writer->scalar("loss", 4, 0.0, 0.25);
  fault::inject(fault::Point::SyncFolder, EIO, /*skip the data file's folder*/ 1);
  // The rename happened: the commit stands, so the rows must not be committed twice.
  writer->save_checkpoint("latest", sample_checkpoint(4));
  EXPECT_NE(writer->last_error().find("power cut"), std::string::npos) << writer->last_error();
  writer->flush();
  EXPECT_EQ(RunReader(path).metric("loss").steps, (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(RunFileFaults, BackgroundCommitsRetryUntilTheDiskHasRoom) {
  ClearFaults clear_at_end;
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  RunWriterOptions options;
  options.flush_interval_seconds = 0.02;
  std::mutex notices_mutex;
  std::vector<std::string> notices;
  options.notice = [&](const std::string& message) {
    std::lock_guard<std::mutex> lock(notices_mutex);
    notices.push_back(message);
  };
  const auto notices_now = [&] {
    std::lock_guard<std::mutex> lock(notices_mutex);
    return notices;
  };
  auto writer = RunWriter::create(path, sample_header(), options);
  fault::inject(fault::Point::Write, ENOSPC);
  writer->scalar("loss", 1, 0.0, 1.0);
  // The failure is injected once, so the next commit, 20 ms later, lands: last_error() holds the error only that
  // long, too briefly to be polled for on a loaded machine (it was missed under ctest -j2 in a chroot). The
  // notices are the lasting record. Issue 38 item 6: said once when the rows began to be held in memory, with
  // why, and once when they landed.
  ASSERT_TRUE(wait_until([&] { return notices_now().size() >= 2; }, 10.0));
  EXPECT_TRUE(wait_until([&] { return writer->last_error().empty(); }, 10.0)) << writer->last_error();
  const auto said = notices_now();
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("held in memory"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("the disk is full"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find(path), std::string::npos) << said[0];
  EXPECT_NE(said[1].find("are committed"), std::string::npos) << said[1];
  writer.reset();
  EXPECT_EQ(RunReader(path).metric("loss").steps, (std::vector<int64_t>{1}));
}

// The issue's own reproduction, on a real full disk: a small tmpfs in a private mount namespace (needs root, as
// in CI; skipped with the reason otherwise). The child fills it with commits until one fails, then checks the file,
// and must exit normally: no crash in HDF5's shutdown after a failed commit.
TEST(RunFileFaults, ARealFullDiskGivesAClearErrorKeepsTheFileAndExitsCleanly) {
  ScratchFolder folder;
  const std::string mount_point = (folder / "small-disk").string();
  fs::create_directories(mount_point);
  int pipe_ends[2];
  ASSERT_EQ(::pipe(pipe_ends), 0);
  const int status = in_child([&]() -> int {
    ::close(pipe_ends[0]);
    const auto report = [&](char code) { (void)!::write(pipe_ends[1], &code, 1); };
    if (::unshare(CLONE_NEWNS) != 0 || ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=1m") != 0) {
      report('s');
      return 0;
    }
    const std::string path = mount_point + "/run.h5";
    auto writer = RunWriter::create(path, sample_header(), manual_flush());
    std::vector<char> last_good;
    int64_t step = 0;
    std::string error;
    while (error.empty() && step < 100) {
      ++step;
      for (int64_t row = 0; row < 50; ++row) writer->scalar("loss", step * 100 + row, 0.0, 1.0);
      last_good = [&] {
        std::ifstream in(path, std::ios::binary);
        return std::vector<char>(std::istreambuf_iterator<char>(in), {});
      }();
      // A new label each time, so the file grows until the old version and the new one no longer fit together.
      error = error_of(
          [&] { writer->save_checkpoint("step-" + std::to_string(step), sample_checkpoint(step, 16 * 1024)); });
    }
    if (error.empty()) return 10;  // never filled: the test tells nothing
    std::fprintf(stderr, "full-disk error: %s\n", error.c_str());
    if (error.find("the disk is full") == std::string::npos || error.find("needs") == std::string::npos ||
        error.find("free") == std::string::npos) {
      return 11;
    }
    std::ifstream in(path, std::ios::binary);
    if (std::vector<char>(std::istreambuf_iterator<char>(in), {}) != last_good) return 12;
    for (const auto& entry : fs::directory_iterator(mount_point)) {
      if (entry.path().filename().string().find(".tmp-") != std::string::npos) return 13;
    }
    const RunReader reader(path);
    if (step < 3 || reader.has_checkpoint("step-" + std::to_string(step)) ||
        reader.checkpoint("step-" + std::to_string(step - 1)).step != step - 1) {
      return 14;
    }
    // The lock's inner part holds on a full disk too: with the lock file deleted, a second writer is refused at the
    // log (issue 52, item 2).
    fs::remove(path + ".lock");
    if (error_of([&] { RunWriter::open(path, manual_flush()); }).find("holds its log") == std::string::npos) return 15;
    const std::string id = reader.header().run_id;
    writer.reset();  // its last commit fails too: an error printed, no crash
    {  // a writer opening the full disk's run (no room for a new log) starts, and the run keeps its identity
      auto again = RunWriter::open(path, manual_flush());
    }
    if (RunReader(path).header().run_id != id || id.empty()) return 16;
    report('r');
    return 0;
  });
  ::close(pipe_ends[1]);
  char code = 0;
  const bool reported = ::read(pipe_ends[0], &code, 1) == 1;
  ::close(pipe_ends[0]);
  ASSERT_TRUE(WIFEXITED(status)) << "the child crashed (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  ASSERT_EQ(WEXITSTATUS(status), 0) << "a check failed in the child (see its stderr)";
  if (reported && code == 's') GTEST_SKIP() << "cannot mount a tmpfs here (needs root and mount namespaces)";
  EXPECT_TRUE(reported && code == 'r');
}

// A writer killed at each point of a commit leaves the previous version, openable, and the next writer removes its
// temporary file and carries on.
TEST(RunFileFaults, AWriterKilledAtEachCommitPointLeavesThePreviousVersion) {
  struct KillPoint {
    fault::Point point;
    int skip;
    bool lands;  // killed after the run file's rename: the new version is the file
  };
  // In order: the checkpoint's data file (a write per tensor, fdatasync, close, its folder's sync), then the run
  // file (write, fsync, close, rename, folder sync).
  const KillPoint points[] = {
      {fault::Point::Write, 0, false},      {fault::Point::Write, kSampleTensorWrites - 1, false},
      {fault::Point::Fsync, 0, false},      {fault::Point::Close, 0, false},
      {fault::Point::SyncFolder, 0, false}, {fault::Point::Write, kSampleTensorWrites, false},
      {fault::Point::Fsync, 1, false},      {fault::Point::Close, 1, false},
      {fault::Point::Rename, 0, false},     {fault::Point::SyncFolder, 1, true},
  };
  for (const auto& kill : points) {
    const std::string where =
        "point " + std::to_string(static_cast<int>(kill.point)) + " after " + std::to_string(kill.skip);
    SCOPED_TRACE(where);
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    committed_run(path).reset();
    const auto before = read_bytes(path);
    const int status = in_child([&] {
      auto writer = RunWriter::open(path, manual_flush());
      writer->scalar("loss", 4, 0.0, 0.25);
      fault::inject(kill.point, fault::kKill, kill.skip);
      writer->save_checkpoints({"best", "latest"}, sample_checkpoint(4));
      return 20;  // not reached
    });
    ASSERT_TRUE(WIFSIGNALED(status));
    {
      const RunReader reader(path);  // must open
      if (kill.lands) {
        EXPECT_EQ(reader.metric("loss").rows(), 4u);
        EXPECT_EQ(reader.checkpoint("best").step, 4);
        EXPECT_EQ(reader.checkpoint("latest").step, 4);
      } else {
        EXPECT_EQ(read_bytes(path), before);
        EXPECT_FALSE(reader.has_checkpoint("best"));
        EXPECT_EQ(reader.checkpoint("latest").step, 3) << "the committed checkpoint's data must stay";
      }
    }
    auto next = RunWriter::open(path, manual_flush());  // the dead writer's lock is free
    EXPECT_TRUE(leftovers(folder).empty()) << ::testing::PrintToString(leftovers(folder));
    next->scalar("loss", 5, 0.0, 0.2);
    next->save_checkpoint("latest", sample_checkpoint(5));
    next.reset();
    EXPECT_EQ(RunReader(path).checkpoint("latest").step, 5);
    EXPECT_TRUE(leftovers(folder).empty())
        << "a replaced checkpoint's data file stays: " << ::testing::PrintToString(leftovers(folder));
  }
}

TEST(RunFileFaults, AKilledWritersTemporaryGoesEvenWhenTheFileIsRefused) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  descentlab::testing::write_bytes(path, "not a run file");
  descentlab::testing::write_bytes(path + ".tmp-999999999", "half a commit");
  EXPECT_THROW(RunWriter::open(path, manual_flush()), RunFileError);
  EXPECT_TRUE(leftovers(folder).empty());
  EXPECT_FALSE(fs::exists(RunFileLock::lock_path_for(path))) << "a refused open releases its lock";
}

TEST(RunFileFaults, OneWriterAtATimeNamingTheHolder) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  {
    auto writer = committed_run(path);
    // In this process: a second writer (the window's sweep while it trains, say) is refused.
    const std::string error = error_of([&] { RunWriter::open(path, manual_flush()); });
    EXPECT_NE(error.find("is being written by this process"), std::string::npos) << error;
    EXPECT_NE(error_of([&] {
                RunWriterOptions overwrite = manual_flush();
                overwrite.overwrite = true;
                RunWriter::create(path, sample_header(), overwrite);
              }).find("is being written"),
              std::string::npos);
    // Readers never wait for the lock.
    EXPECT_EQ(RunReader(path).metric("loss").rows(), 3u);
    // A window asking who writes it (issue 19's watching) is told, and asking takes nothing: a writer can still come.
    EXPECT_NE(RunFileLock::current_writer(path).find("this process"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(RunFileLock::lock_path_for(path))) << "a clean release removes the lock file";
  EXPECT_EQ(RunFileLock::current_writer(path), "") << "nobody writes a released file";

  // Another process holds it: the error names its pid; when it dies (SIGKILL, no release) the lock is free.
  int ready[2], go[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    auto writer = RunWriter::open(path, manual_flush());
    (void)!::write(ready[1], "x", 1);
    char byte;
    (void)!::read(go[0], &byte, 1);
    ::raise(SIGKILL);
  }
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const std::string error = error_of([&] { RunWriter::open(path, manual_flush()); });
  EXPECT_NE(error.find("process " + std::to_string(holder)), std::string::npos) << error;
  EXPECT_NE(error.find(".lock"), std::string::npos) << error;
  EXPECT_NE(RunFileLock::current_writer(path).find("process " + std::to_string(holder)), std::string::npos);
  (void)!::write(go[1], "x", 1);
  int status = 0;
  ::waitpid(holder, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(fs::exists(RunFileLock::lock_path_for(path))) << "the killed holder's lock file stays behind";
  EXPECT_EQ(RunFileLock::current_writer(path), "") << "a killed writer's lock file names nobody who writes";
  auto writer = RunWriter::open(path, manual_flush());  // ... and is no obstacle
  writer->scalar("loss", 4, 0.0, 0.25);
  writer->flush();
  for (int end : {ready[0], ready[1], go[0], go[1]}) ::close(end);
}

// Flips bytes inside one stored tensor of a checkpoint, found through HDF5's own offset of its data: in the
// checkpoint's data file (external storage) or in the run file itself.
void damage_dataset(const std::string& path, const std::string& dataset_path, size_t bytes_to_flip) {
  std::string damaged_file = path;
  unsigned long long offset = HADDR_UNDEF;
  {
    H5::H5File file(path, H5F_ACC_RDONLY);
    const H5::DataSet dataset = file.openDataSet(dataset_path);
    const H5::DSetCreatPropList properties = dataset.getCreatePlist();
    if (H5Pget_external_count(properties.getId()) > 0) {
      char name[1024] = {0};
      off_t start = 0;
      hsize_t size = 0;
      ASSERT_GE(H5Pget_external(properties.getId(), 0, sizeof name, name, &start, &size), 0);
      damaged_file = (fs::path(path).parent_path() / name).string();
      offset = static_cast<unsigned long long>(start);
      bytes_to_flip = std::min<size_t>(bytes_to_flip, size);
    } else {
      offset = H5Dget_offset(dataset.getId());
    }
  }
  ASSERT_NE(offset, HADDR_UNDEF);
  std::fstream file(damaged_file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(file.good()) << damaged_file;
  for (size_t i = 0; i < bytes_to_flip; ++i) {
    file.seekg(static_cast<std::streamoff>(offset + i));
    const char value = static_cast<char>(file.get() ^ 0x5A);
    file.seekp(static_cast<std::streamoff>(offset + i));
    file.put(value);
  }
}

TEST(RunFileFaults, DamagedCheckpointBytesAreRefusedNamingTheSection) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  committed_run(path).reset();
  ASSERT_EQ(RunReader(path).checkpoint("latest").step, 3);
  damage_dataset(path, "/checkpoints/latest/dual/lambda", 4);
  try {
    RunReader(path).checkpoint("latest");
    FAIL() << "a damaged checkpoint was read without complaint";
  } catch (const RunFileError& error) {
    EXPECT_EQ(error.kind(), RunFileError::Kind::Corrupt);
    EXPECT_EQ(error.object(), "/checkpoints/latest/dual");
    EXPECT_NE(std::string(error.what()).find("checksum mismatch"), std::string::npos) << error.what();
  }
}

TEST(RunFileFaults, DamagedCheckpointAttributesAreRefused) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  committed_run(path).reset();
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    H5::Group latest = file.openGroup("/checkpoints/latest");
    latest.removeAttr("step");
    const int64_t wrong = 1000000;
    latest.createAttribute("step", H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_INT64, &wrong);
  }
  try {
    RunReader(path).checkpoint("latest");
    FAIL() << "a changed step was read without complaint";
  } catch (const RunFileError& error) {
    EXPECT_EQ(error.object(), "/checkpoints/latest");
    EXPECT_NE(std::string(error.what()).find("checksum mismatch"), std::string::npos) << error.what();
  }
}

// Issue 34: a file of the current format whose sha256 attributes were deleted was read unchecked, as if it
// predated checksums, so 100 flipped bytes of its RNG state resumed silently. Only a file that declares an older
// format may lack them; here a missing one is refused, naming the part.
TEST(RunFileFaults, DeletedChecksumsAreRefusedInAFileOfTheCurrentFormat) {
  // A section's sum deleted and up to 100 of its bytes flipped; then, in a fresh file, the checkpoint's own sum.
  for (const std::string& part : {std::string("/checkpoints/latest/model"), std::string("/checkpoints/latest")}) {
    SCOPED_TRACE(part);
    ScratchFolder folder;
    const std::string path = (folder / "run.h5").string();
    committed_run(path).reset();
    if (part == "/checkpoints/latest/model") {
      std::string first;
      {
        H5::H5File file(path, H5F_ACC_RDONLY);
        first = file.openGroup(part).getObjnameByIdx(0);
      }
      damage_dataset(path, part + "/" + first, 100);
    }
    {
      H5::H5File file(path, H5F_ACC_RDWR);
      file.openGroup(part).removeAttr("sha256");
    }
    try {
      RunReader(path).checkpoint("latest");
      FAIL() << "a checkpoint without its checksum was read without complaint";
    } catch (const RunFileError& error) {
      EXPECT_EQ(error.kind(), RunFileError::Kind::Corrupt);
      EXPECT_EQ(error.object(), part) << error.what();
      EXPECT_NE(std::string(error.what()).find("has no sha256 checksum"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace descentlab::store
