// Issue 54, item 3: a person's name, tags and note for a run, kept in its run file. Set on a finished run, it costs
// one log record (the run file is not rewritten); set while a writer holds the run, it goes through that writer; a
// resume or a pack folds it into the file's root attributes; bad values and a run another writer holds are refused
// naming what is wrong, with nothing changed.

#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/store/annotate_run.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/study/study.h"
#include "run_file_samples.h"
#include "run_log_samples.h"
#include "test_support.h"

namespace descentlab::store {
namespace {

namespace fs = std::filesystem;
using descentlab::testing::error_of;
using descentlab::testing::manual_flush;
using descentlab::testing::run_with_log;
using descentlab::testing::sample_checkpoint;
using descentlab::testing::ScratchFolder;

RunAnnotation sample_annotation() {
  RunAnnotation annotation;
  annotation.name = "  warm restart, lr 3e-4 ";
  annotation.tags = {"baseline", " ablation ", "", "baseline"};
  annotation.note = "Loss spikes at step 4: the data order?";
  return annotation;
}

// The root attributes of the run file itself (not the log).
std::vector<std::string> stored_attributes(const std::string& path) {
  const H5::H5File file(path, H5F_ACC_RDONLY);
  const H5::Group root = file.openGroup("/");
  std::vector<std::string> values;
  for (const char* name : {format::kAnnotationName, format::kAnnotationTags, format::kAnnotationNote}) {
    values.push_back(hdf5::has_attribute(root, name) ? hdf5::string_attribute(root, name) : "(absent)");
  }
  return values;
}

TEST(RunAnnotation, AFinishedRunIsNamedTaggedAndNotedByOneLogRecord) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  run_with_log(path).reset();  // finished: everything folded, no log
  ASSERT_FALSE(fs::exists(log_path_for(path)));
  EXPECT_TRUE(RunReader(path).header().annotation.empty());
  const std::string version = run_file_version(path);

  const RunAnnotation stored = annotate_run(path, sample_annotation());
  EXPECT_EQ(stored.name, "warm restart, lr 3e-4");
  EXPECT_EQ(stored.tags, (std::vector<std::string>{"baseline", "ablation"}));
  EXPECT_EQ(stored.note, "Loss spikes at step 4: the data order?");
  // The run file is the same version: the annotation is one record in a new log, about its own bytes long.
  EXPECT_EQ(run_file_version(path), version);
  const RunLog log = read_run_log(path, 0);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_LT(fs::file_size(log_path_for(path)), kLogHeaderBytes + 200);
  // A writer that ends cleanly leaves no lock file: the run does not read as interrupted.
  EXPECT_FALSE(fs::exists(RunFileLock::lock_path_for(path)));
  EXPECT_EQ(RunReader(path).header().annotation, stored);
  EXPECT_EQ(RunReader(path).metric("loss").steps, descentlab::testing::one_to(5));

  // A second change replaces the first, tags and all; the study reads the newest.
  RunAnnotation renamed = stored;
  renamed.name = "warm restart";
  renamed.tags = {"keep"};
  annotate_run(path, renamed);
  EXPECT_EQ(read_run_log(path, 0).records.size(), 2u);
  EXPECT_EQ(RunReader(path).header().annotation, renamed);
  const study::RunEntry entry = study::read_entry(path, folder.path().string());
  EXPECT_EQ(entry.label, "warm restart");
  EXPECT_EQ(entry.tags, (std::vector<std::string>{"keep"}));
  EXPECT_EQ(entry.note, stored.note);

  // A pack folds it into the packed file's attributes; a resume folds it into the run file's own and drops the log.
  const std::string packed = (folder / "packed.h5").string();
  pack_run(path, packed);
  EXPECT_EQ(stored_attributes(packed), (std::vector<std::string>{"warm restart", "keep", stored.note}));
  EXPECT_EQ(stored_attributes(path), (std::vector<std::string>{"(absent)", "(absent)", "(absent)"}));
  { auto resumed = RunWriter::open(path, manual_flush()); }
  EXPECT_FALSE(fs::exists(log_path_for(path)));
  EXPECT_EQ(stored_attributes(path), (std::vector<std::string>{"warm restart", "keep", stored.note}));
  EXPECT_EQ(RunReader(path).header().annotation, renamed);

  // Cleared, the attributes go at the next fold.
  annotate_run(path, RunAnnotation{});
  EXPECT_TRUE(RunReader(path).header().annotation.empty());
  { auto resumed = RunWriter::open(path, manual_flush()); }
  EXPECT_EQ(stored_attributes(path), (std::vector<std::string>{"(absent)", "(absent)", "(absent)"}));
}

TEST(RunAnnotation, ARunAWriterHoldsIsAnnotatedThroughItsWriterAndRefusedBesideIt) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  auto writer = run_with_log(path);  // rows 4 and 5 in the log
  const std::string refused = error_of([&] { annotate_run(path, sample_annotation()); });
  EXPECT_NE(refused.find("is being written by this process"), std::string::npos) << refused;
  EXPECT_TRUE(RunReader(path).header().annotation.empty());

  writer->annotate(sample_annotation());
  writer->scalar("loss", 6, 0.0, 0.1);
  writer->flush();
  EXPECT_EQ(RunReader(path).header().annotation.name, "warm restart, lr 3e-4");
  // A checkpoint folds the log: the annotation is in the file's attributes from then on.
  writer->save_checkpoint("latest", sample_checkpoint(6));
  EXPECT_EQ(stored_attributes(path)[0], "warm restart, lr 3e-4");
  writer.reset();
  EXPECT_EQ(RunReader(path).header().annotation.tags, (std::vector<std::string>{"baseline", "ablation"}));
  EXPECT_EQ(RunReader(path).metric("loss").steps, descentlab::testing::one_to(6));
}

TEST(RunAnnotation, BadValuesAndBadRunsAreRefusedNamingThemWithNothingChanged) {
  ScratchFolder folder;
  const std::string path = (folder / "run.h5").string();
  run_with_log(path).reset();
  const auto refusal = [&](RunAnnotation annotation) { return error_of([&] { annotate_run(path, annotation); }); };
  RunAnnotation two_lines;
  two_lines.name = "first\nsecond";
  EXPECT_NE(refusal(two_lines).find("name: a run's name is one line"), std::string::npos) << refusal(two_lines);
  RunAnnotation comma;
  comma.tags = {"a,b"};
  EXPECT_NE(refusal(comma).find("the tag 'a,b' holds a comma"), std::string::npos) << refusal(comma);
  RunAnnotation long_name;
  long_name.name = std::string(kMaxRunNameChars + 1, 'x');
  EXPECT_NE(refusal(long_name).find("201 characters long"), std::string::npos) << refusal(long_name);
  RunAnnotation many;
  for (size_t i = 0; i <= kMaxTags; ++i) many.tags.push_back("t" + std::to_string(i));
  EXPECT_NE(refusal(many).find("33 tags"), std::string::npos) << refusal(many);
  RunAnnotation long_note;
  long_note.note = std::string(kMaxNoteBytes + 1, 'n');
  EXPECT_NE(refusal(long_note).find("note: "), std::string::npos) << refusal(long_note);
  EXPECT_FALSE(fs::exists(log_path_for(path)));  // nothing was written for any of them

  const std::string missing = (folder / "gone.h5").string();
  EXPECT_NE(error_of([&] { annotate_run(missing, sample_annotation()); }).find("gone.h5"), std::string::npos);
  const std::string foreign = (folder / "foreign.h5").string();
  H5::H5File(foreign, H5F_ACC_TRUNC).close();
  const std::string not_a_run = error_of([&] { annotate_run(foreign, sample_annotation()); });
  EXPECT_NE(not_a_run.find("foreign.h5"), std::string::npos) << not_a_run;
  EXPECT_FALSE(fs::exists(log_path_for(foreign)));

  // A forged file whose name attribute is too long is refused by name when read.
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    H5::Group root = file.openGroup("/");
    hdf5::set_string_attribute(root, format::kAnnotationName, std::string(300, 'y'));
  }
  const std::string forged = error_of([&] { RunReader reader(path); });
  EXPECT_NE(forged.find("run.h5: name: "), std::string::npos) << forged;
}

}  // namespace
}  // namespace descentlab::store
