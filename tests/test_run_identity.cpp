// Issue 52, items 2, 4, 5 and 6: what a run's companions can no longer take from it. Each run has an identity written
// at creation (root attribute run_id), carried in its log's header and its data files' names; a writer holds its log
// (flock) from open to close, so a deleted or replaced lock file lets no second writer in; a writer removes only its
// own data files, also from a folder shared by a symlink; and a format_version that contradicts the file's layout is
// refused, never read with fewer checks. Every case ends with what was committed readable and as it was.

#include <H5Cpp.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "child_process.h"
#include "core/store/checkpoint_files.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
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
using descentlab::testing::manual_flush;
using descentlab::testing::one_to;
using descentlab::testing::read_bytes;
using descentlab::testing::run_with_log;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::sample_header;
using descentlab::testing::sample_sweep;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

// run_with_log's files as a writer killed before its end leaves them (asserted here).
void killed_with_its_log(const std::string& path) {
  ASSERT_TRUE(descentlab::testing::killed_with_its_log(path));
}

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void set_root_int(const std::string& path, const char* name, int64_t value) {
  H5::H5File file(path, H5F_ACC_RDWR);
  H5::Group root = file.openGroup("/");
  hdf5::set_int_attribute(root, name, value);
}

// Everything a user reads of a run, to compare before and after.
struct Seen {
  std::vector<int64_t> loss_steps;
  int64_t latest_step = -1;
  bool operator==(const Seen& other) const {
    return loss_steps == other.loss_steps && latest_step == other.latest_step;
  }
};
Seen seen(const std::string& path) {
  const RunReader reader(path);
  return {reader.metric("loss").steps, reader.checkpoint("latest").step};
}

TEST(RunIdentity, ANewRunHasOneThatEveryVersionAndItsCompanionsCarry) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = run_with_log(path);
  const std::string id = RunReader(path).header().run_id;
  ASSERT_TRUE(is_run_id(id)) << id;
  EXPECT_EQ(read_run_log(path, 0).run_id, id);
  const auto data_files = files_in(checkpoint_folder_for(path));
  ASSERT_EQ(data_files.size(), 1u);
  EXPECT_NE(data_files[0].find("-" + id + ".bin"), std::string::npos) << data_files[0];
  writer.reset();
  {  // a resume and a fold keep it
    auto resumed = RunWriter::open(path, manual_flush());
    resumed->save_checkpoint("latest", sample_checkpoint(6));
  }
  EXPECT_EQ(RunReader(path).header().run_id, id);
  const std::string packed = (folder / "packed.h5").string();
  pack_run(path, packed);
  EXPECT_EQ(RunReader(packed).header().run_id, id);
  // Two runs made alike are two runs.
  const std::string other = (folder / "other.h5").string();
  run_with_log(other).reset();
  EXPECT_NE(RunReader(other).header().run_id, id);
}

TEST(RunIdentity, AFileFromBeforeIdentitiesGetsOneAtItsNextCommit) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  run_with_log(path).reset();
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    file.openGroup("/").removeAttr(format::kRunId);
  }
  const Seen before = seen(path);
  EXPECT_EQ(RunReader(path).header().run_id, "");
  {
    auto writer = RunWriter::open(path, manual_flush());
    writer->scalar("loss", 6, 0.0, 0.1);
    writer->flush();
  }
  const RunReader reader(path);
  EXPECT_TRUE(is_run_id(reader.header().run_id));
  EXPECT_EQ(reader.metric("loss").steps, one_to(6));
  EXPECT_EQ(reader.checkpoint("latest").step, before.latest_step);
}

// A log written before identities (version 1, a 32-byte header) still reads, and its writer goes on with it.
TEST(RunIdentity, AVersionOneLogStillReads) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  killed_with_its_log(path);
  const std::string log = read_bytes(log_path_for(path));
  std::string first(log.substr(0, 24));
  first[8] = 1;  // version 1
  const std::vector<char> header(first.begin(), first.end());
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(header.data()), 24);
  const auto sum = static_cast<uint32_t>(crc);
  first.append(reinterpret_cast<const char*>(&sum), 4);
  first.append(4, '\0');
  write_bytes(log_path_for(path), first + log.substr(kLogHeaderBytes));
  EXPECT_EQ(read_run_log(path, 0).run_id, "");
  EXPECT_EQ(RunReader(path).metric("loss").steps, one_to(5));
  {
    auto writer = RunWriter::open(path, manual_flush());
    writer->scalar("loss", 6, 0.0, 0.1);
    writer->flush();
  }
  EXPECT_EQ(RunReader(path).metric("loss").steps, one_to(6));
}

// Item 4: a log copied from another run of the same preset was read as this run's rows, and a sweep folded them in
// for good. Now reader and writer refuse it naming both identities, and nothing of the run is touched.
TEST(RunIdentity, ALogOfAnotherRunIsRefusedNamingBothAndNothingIsLost) {
  ScratchFolder folder;
  const std::string a = (folder / "a.h5").string();
  const std::string b = (folder / "b.h5").string();
  killed_with_its_log(a);  // rows 4 and 5 only in a's log
  run_with_log(b).reset();
  const Seen before = seen(b);
  const std::string b_file = read_bytes(b);
  const std::string a_id = RunReader(a).header().run_id;
  const std::string b_id = RunReader(b).header().run_id;
  fs::copy_file(log_path_for(a), log_path_for(b));
  const std::string read_error = error_of([&] { RunReader reader(b); });
  EXPECT_NE(read_error.find("belongs to the run " + a_id), std::string::npos) << read_error;
  const std::string sweep_error = error_of([&] {
    auto writer = RunWriter::open(b, manual_flush());
    writer->sweep(sample_sweep());
  });
  EXPECT_NE(sweep_error.find("belongs to the run " + a_id), std::string::npos) << sweep_error;
  EXPECT_NE(sweep_error.find("which is the run " + b_id), std::string::npos) << sweep_error;
  EXPECT_EQ(read_bytes(b), b_file) << "the refused sweep left the run file alone";
  fs::remove(log_path_for(b));
  EXPECT_TRUE(seen(b) == before);
  EXPECT_EQ(seen(a).loss_steps, one_to(5)) << "a's own log still reads with a";
}

// Item 2: with RUN.h5.lock deleted while a training writes, a sweep got in beside it and both appended to the log.
// The writer holds its log, so the second writer is refused naming it; the first makes its lock file again at its
// next commit, and goes on losing nothing.
TEST(RunLock, ADeletedOrReplacedLockFileLetsNoSecondWriterIn) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const std::string lock = RunFileLock::lock_path_for(path);
  std::vector<std::string> notices;
  RunWriterOptions options = manual_flush();
  options.notice = [&](const std::string& text) { notices.push_back(text); };
  auto writer = RunWriter::create(path, sample_header(), options);
  writer->scalar("loss", 1, 0.0, 1.0);
  writer->flush();
  for (const bool replace : {false, true}) {
    fs::remove(lock);
    if (!replace) {  // the window still sees who writes it
      EXPECT_NE(RunFileLock::current_writer(path).find("this process (its lock file is missing)"), std::string::npos)
          << RunFileLock::current_writer(path);
    }
    if (replace) write_bytes(lock, "pid=1\n");  // a lock file no one holds, in its place
    const std::string refused = error_of([&] { RunWriter::open(path, manual_flush()); });
    EXPECT_NE(refused.find("holds its log"), std::string::npos) << refused;
    EXPECT_NE(refused.find("this process"), std::string::npos) << refused;
    EXPECT_NE(error_of([&] { RunWriter::take_over_abandoned(path); }).find("holds its log"), std::string::npos);
    const int64_t step = replace ? 3 : 2;
    writer->scalar("loss", step, 0.0, 1.0);
    writer->flush();  // makes the lock file again, or takes the one left in its place
    ASSERT_TRUE(fs::exists(lock));
    EXPECT_NE(RunFileLock::current_writer(path).find("this process"), std::string::npos);
    EXPECT_NE(error_of([&] { RunWriter::open(path, manual_flush()); }).find("one writer at a time"), std::string::npos);
  }
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_NE(notices[0].find("was deleted or replaced while it ran"), std::string::npos) << notices[0];
  writer.reset();
  EXPECT_FALSE(fs::exists(lock)) << "a clean end removes its own lock file";
  EXPECT_EQ(RunReader(path).metric("loss").steps, one_to(3));
}

// A writer's end never removes a lock file that is not its own (another writer's, which replaced it).
TEST(RunLock, AWriterRemovesOnlyItsOwnLockFile) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  const std::string lock = RunFileLock::lock_path_for(path);
  auto writer = RunWriter::create(path, sample_header(), manual_flush());
  fs::remove(lock);
  write_bytes(lock, "pid=4242\n");
  const int other = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);  // another writer holds the lock file now
  ASSERT_EQ(::flock(other, LOCK_EX | LOCK_NB), 0);
  writer->scalar("loss", 1, 0.0, 1.0);
  EXPECT_NO_THROW(writer->flush()) << "its log is still its own";
  writer.reset();
  EXPECT_EQ(read_bytes(lock), "pid=4242\n");
  ::close(other);
}

// Item 5: with b.h5.checkpoints a symlink to a.h5.checkpoints, resuming b deleted a's "latest". A writer now removes
// only data files of its own run (by the identity in their names), whatever else the folder holds.
TEST(RunIdentity, AWriterRemovesOnlyItsOwnDataFilesFromASharedFolder) {
  ScratchFolder folder;
  const std::string a = (folder / "a.h5").string();
  const std::string b = (folder / "b.h5").string();
  run_with_log(a).reset();
  run_with_log(b).reset();
  const Seen a_before = seen(a);
  // b's data files join a's folder, and b's folder becomes a link to it.
  for (const auto& name : files_in(checkpoint_folder_for(b))) {
    fs::rename(fs::path(checkpoint_folder_for(b)) / name, fs::path(checkpoint_folder_for(a)) / name);
  }
  fs::remove(checkpoint_folder_for(b));
  fs::create_directory_symlink(fs::path(checkpoint_folder_for(a)).filename(), checkpoint_folder_for(b));
  ASSERT_EQ(seen(b).latest_step, 3);
  const auto a_files = files_in(checkpoint_folder_for(a));
  ASSERT_EQ(a_files.size(), 2u);
  {
    auto writer = RunWriter::open(b, manual_flush());
    writer->save_checkpoint("latest", sample_checkpoint(8));  // replaces b's "latest": its old data file goes
  }
  EXPECT_TRUE(seen(a) == a_before) << "a's data file is untouched";
  EXPECT_EQ(RunReader(a).checkpoint("latest").sections.size(), sample_checkpoint(3).sections.size());
  EXPECT_EQ(seen(b).latest_step, 8);
  const auto after = files_in(checkpoint_folder_for(a));
  EXPECT_EQ(after.size(), 2u) << "a's file and b's new one";
  const std::string a_id = RunReader(a).header().run_id;
  EXPECT_EQ(std::count_if(after.begin(), after.end(),
                          [&](const std::string& name) { return name.find(a_id) != std::string::npos; }),
            1);
}

// Item 6: a format_version of 2 on a file whose checkpoints are in data files (format 5 only) switched the checksums
// off, and the next writer wrote fresh sums over the damage. Such a file is refused, naming the attribute.
TEST(RunFormat, AFormatVersionThatContradictsTheLayoutIsRefused) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  run_with_log(path).reset();
  const std::string packed = (folder / "packed.h5").string();
  pack_run(path, packed);  // checkpoints inside the file, with their sums
  const Seen before = seen(path);
  struct Case {
    std::string file;
    int64_t version;
    std::string says;
  };
  for (const Case& lowered : {Case{path, 2, "data files"}, Case{path, 4, "data files"}, Case{packed, 3, "log_sequence"},
                              Case{packed, 2, "log_sequence"}}) {
    const std::string original = read_bytes(lowered.file);
    set_root_int(lowered.file, "format_version", lowered.version);
    const std::string lowered_bytes = read_bytes(lowered.file);
    for (const auto& refused : {error_of([&] { RunReader reader(lowered.file); }),
                                error_of([&] { RunWriter::open(lowered.file, manual_flush()); })}) {
      EXPECT_NE(refused.find("/@format_version: " + std::to_string(lowered.version) + " contradicts"),
                std::string::npos)
          << refused;
      EXPECT_NE(refused.find(lowered.says), std::string::npos) << refused;
    }
    EXPECT_EQ(read_bytes(lowered.file), lowered_bytes) << "no writer wrote over it";
    write_bytes(lowered.file, original);
  }
  // Checksums in a file that claims to predate them.
  {
    H5::H5File file(packed, H5F_ACC_RDWR);
    file.openGroup("/").removeAttr(format::kLogSequence);
  }
  set_root_int(packed, "format_version", 2);
  const std::string refused = error_of([&] { RunReader reader(packed); });
  EXPECT_NE(refused.find("carries a sha256 checksum"), std::string::npos) << refused;
  EXPECT_TRUE(seen(path) == before);
}

}  // namespace
}  // namespace descentlab::store
