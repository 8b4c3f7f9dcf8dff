// Runs as a study (core/study): listing a folder, each run's entry, grouping, bands, pairing and the runs filter,
// on generated run files whose every value is known (tests/study_samples.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <H5Cpp.h>

#include "core/store/run_file_format.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/study/study.h"
#include "run_file_samples.h"
#include "study_samples.h"
#include "test_support.h"

namespace descentlab {
namespace {

using testing::study_accuracy;
using testing::study_compression;
using testing::study_evaluations;

class StudyTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_study(folder_); }

  std::vector<study::RunEntry> entries() const {
    std::vector<study::RunEntry> runs;
    for (const auto& path : study::run_files_below(folder_, nullptr)) runs.push_back(study::read_entry(path));
    return runs;
  }

  testing::ScratchFolder scratch_;
  const std::string folder_ = (scratch_ / "study").string();
};

TEST_F(StudyTest, AFolderListsEveryRunFileAndCountsTheOtherFiles) {
  // A run's log and checkpoint folder are parts of it, not other files.
  std::filesystem::create_directories(folder_ + "/adamw/seed0.h5.checkpoints");
  std::ofstream(folder_ + "/adamw/seed0.h5.checkpoints/7.bin") << "data";
  std::ofstream(folder_ + "/adamw/seed0.h5.log") << "log";
  int skipped = -1;
  const auto runs = study::run_files_below(folder_, &skipped);
  ASSERT_EQ(runs.size(), 12u);
  EXPECT_EQ(skipped, 2);  // notes.txt and horst/summary.json
  EXPECT_TRUE(std::is_sorted(runs.begin(), runs.end()));
  EXPECT_THROW(study::run_files_below(folder_ + "/nothing-here", &skipped), Error);
}

TEST_F(StudyTest, AnEntryHoldsTheFlatConfigAndTheLastValues) {
  const auto entry = study::read_entry(testing::study_run_path(folder_, 1, 3));
  ASSERT_TRUE(entry.error.empty()) << entry.error;
  EXPECT_EQ(entry.name, "seed3");
  EXPECT_EQ(entry.config.at("optimizer.name"), "horst");
  EXPECT_EQ(entry.config.at("train.seed"), "3");
  EXPECT_EQ(entry.config.at("train.lr"), "0.001");
  EXPECT_EQ(entry.finals.at("test_accuracy").step, 50);
  EXPECT_DOUBLE_EQ(entry.finals.at("test_accuracy").value, study_accuracy(1, 3, 5));
  EXPECT_EQ(entry.per_compression.at("test_accuracy_after_compression").size(), 3u);
  EXPECT_EQ(entry.last_step, 55);

  std::ofstream(folder_ + "/broken.h5") << "not HDF5 at all";
  const auto broken = study::read_entry(folder_ + "/broken.h5");
  EXPECT_NE(broken.error.find("broken.h5"), std::string::npos) << broken.error;
}

// The runs table reads each series' last row alone: it must be the series' last row, from the file or (a run being
// written) from its log, for scalar and per-layer series alike.
TEST(StudyRead, TheLastRowReadAloneIsTheSeriesLastRowFromTheFileOrTheLog) {
  testing::ScratchFolder scratch;
  const std::string path = (scratch / "run.h5").string();
  auto writer = store::RunWriter::create(path, testing::sample_header(), testing::manual_flush());
  const auto check = [&](const char* when) {
    const store::RunReader reader(path);
    for (const auto& name : reader.metric_names()) {
      const auto whole = reader.metric(name);
      const auto last = reader.last_metric_row(name);
      ASSERT_EQ(last.rows(), 1u) << name << " " << when;
      EXPECT_EQ(last.steps[0], whole.steps.back()) << name << " " << when;
      EXPECT_EQ(last.width, whole.width) << name << " " << when;
      EXPECT_EQ(last.values, std::vector<double>(whole.values.end() - whole.width, whole.values.end()))
          << name << " " << when;
    }
  };
  for (int64_t step = 1; step <= 300; ++step) {
    writer->scalar("loss", step, 1.8e9 + static_cast<double>(step), 1.0 / static_cast<double>(step));
    writer->vector("layer_loss", step, 1.8e9, {0.5, 0.25 + static_cast<double>(step)});
    if (step == 200) writer->flush();  // the first commit folds: rows 1-200 in the file
  }
  writer->flush();  // rows 201-300 appended to the log
  check("with rows in the log");
  writer.reset();  // the end folds the log in
  check("folded");
  {
    // The folded scalar carries its last row as attributes, for a table to read without inflating a chunk.
    H5::H5File file(path, H5F_ACC_RDONLY);
    H5::Group loss = file.openGroup("/metrics/loss");
    ASSERT_TRUE(loss.attrExists(store::format::kLastRows));
    int64_t rows = 0, step = 0;
    double value = 0;
    loss.openAttribute(store::format::kLastRows).read(H5::PredType::NATIVE_INT64, &rows);
    loss.openAttribute(store::format::kLastStep).read(H5::PredType::NATIVE_INT64, &step);
    loss.openAttribute(store::format::kLastValue).read(H5::PredType::NATIVE_DOUBLE, &value);
    EXPECT_EQ(rows, 300);
    EXPECT_EQ(step, 300);
    EXPECT_DOUBLE_EQ(value, 1.0 / 300.0);
    EXPECT_FALSE(file.openGroup("/metrics/layer_loss").attrExists(store::format::kLastRows));
  }
  // A resumed run cuts the rows after its checkpoint: the last row kept becomes the attributes' (read back by
  // the check, which compares the last row read alone with the whole series).
  auto resumed = store::RunWriter::open(path, testing::manual_flush());
  resumed->truncate_after(150);
  resumed->flush();
  resumed.reset();
  check("truncated");
  EXPECT_EQ(store::RunReader(path).last_metric_row("loss").steps, std::vector<int64_t>{150});
  {
    // Attributes that describe fewer rows than the series has (an older writer appended without them) are not used.
    H5::H5File file(path, H5F_ACC_RDWR);
    H5::Group loss = file.openGroup("/metrics/loss");
    store::format::set_last_row(loss, 10, 10, -1.0);
  }
  check("stale attributes");
  EXPECT_EQ(store::RunReader(path).last_metric_row("loss").steps, std::vector<int64_t>{150});
}

TEST_F(StudyTest, TheDefaultGroupingIsEveryDifferingKeyButTheSeeds) {
  const auto runs = entries();
  EXPECT_EQ(study::varying_keys(runs), (std::vector<std::string>{"data.split_seed", "optimizer.name", "train.seed"}));
  const auto keys = study::default_group_keys(runs);
  ASSERT_EQ(keys, std::vector<std::string>{"optimizer.name"});
  const auto groups = study::group_runs(runs, keys);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].label, "name adamw (4 seeds)");
  EXPECT_EQ(groups[2].label, "name horst (4 seeds)");
  for (const auto& group : groups) EXPECT_EQ(group.members.size(), 4u);
  // Grouped by nothing: one group; by the seed too: one run each.
  EXPECT_EQ(study::group_runs(runs, {}).size(), 1u);
  EXPECT_EQ(study::group_runs(runs, {"optimizer.name", "train.seed"}).size(), 12u);
  EXPECT_EQ(study::groups_matching(groups, "optimizer.name=horst").size(), 1u);
  EXPECT_EQ(study::groups_matching(groups, "optimizer.name=sgd").size(), 0u);
  EXPECT_THROW(study::groups_matching(groups, "horst"), Error);
}

TEST_F(StudyTest, ABandIsTheMeanAndSpreadOverTheStepsEveryMemberReached) {
  std::vector<store::MetricSeries> series;
  for (int s = 0; s < testing::kStudySeeds; ++s) {
    series.push_back(store::RunReader(testing::study_run_path(folder_, 1, s)).metric("test_accuracy"));
  }
  std::vector<const store::MetricSeries*> members;
  for (const auto& one : series) members.push_back(&one);
  const auto band = study::band_of(members, study::BandKind::MinMax);
  EXPECT_EQ(band.members, 4u);
  ASSERT_EQ(band.steps.size(), 5u);  // seed 3 stopped at its fifth evaluation
  EXPECT_TRUE(band.shortened);
  EXPECT_EQ(band.longest_step, 80);
  for (int e = 1; e <= 5; ++e) {
    std::vector<double> values;
    for (int s = 0; s < 4; ++s) values.push_back(study_accuracy(1, s, e));
    const auto index = static_cast<size_t>(e - 1);
    EXPECT_EQ(band.steps[index], 10 * e);
    EXPECT_NEAR(band.mean[index], (values[0] + values[1] + values[2] + values[3]) / 4, 1e-12);
    EXPECT_NEAR(band.low[index], *std::min_element(values.begin(), values.end()), 1e-12);
    EXPECT_NEAR(band.high[index], *std::max_element(values.begin(), values.end()), 1e-12);
  }
  const auto deviation = study::band_of(members, study::BandKind::StandardDeviation);
  const auto stats = study::statistics_of(
      {study_accuracy(1, 0, 2), study_accuracy(1, 1, 2), study_accuracy(1, 2, 2), study_accuracy(1, 3, 2)});
  EXPECT_NEAR(deviation.high[1] - deviation.mean[1], stats.standard_deviation, 1e-12);
  EXPECT_GT(stats.standard_deviation, 0.0);
  // Without the short member the band reaches the end and says nothing was cut.
  members.pop_back();
  const auto full = study::band_of(members, study::BandKind::MinMax);
  EXPECT_EQ(full.steps.size(), 8u);
  EXPECT_FALSE(full.shortened);
}

TEST_F(StudyTest, TwoGroupsPairSeedBySeed) {
  const auto runs = entries();
  const auto groups = study::group_runs(runs, {"optimizer.name"});
  const auto& horst = groups[study::groups_matching(groups, "optimizer.name=horst").front()];
  const auto& adamw = groups[study::groups_matching(groups, "optimizer.name=adamw").front()];
  const auto paired = study::pair_groups(runs, horst, adamw, "test_accuracy");
  ASSERT_EQ(paired.pairs.size(), 4u);
  std::vector<double> differences;
  int wins = 0;
  for (int s = 0; s < 4; ++s) {
    const double h = study_accuracy(1, s, study_evaluations(s)), a = study_accuracy(0, s, study_evaluations(s));
    EXPECT_EQ(paired.pairs[static_cast<size_t>(s)].seed, std::to_string(s));
    EXPECT_DOUBLE_EQ(paired.pairs[static_cast<size_t>(s)].difference, h - a);
    differences.push_back(h - a);
    wins += h > a ? 1 : 0;
  }
  EXPECT_EQ(wins, 3);  // seed 2's HORST run is behind
  EXPECT_EQ(paired.wins_text(), "3 of 4");
  const auto stats = study::statistics_of(differences);
  EXPECT_NEAR(paired.mean, stats.mean, 1e-15);
  EXPECT_NEAR(paired.standard_deviation, stats.standard_deviation, 1e-15);
  // A lower-is-better metric turns the wins around.
  const auto by_loss = study::pair_groups(runs, horst, adamw, "loss");
  EXPECT_EQ(by_loss.better, record::Direction::Lower);
  EXPECT_EQ(by_loss.wins, 4);  // HORST's closed-form loss, 2 / (e + 2), is below AdamW's 2 / (e + 1) at every seed
  EXPECT_LT(by_loss.mean, 0.0);
}

TEST_F(StudyTest, RunsThatShareASeedCountOnceInAPairAndInTheGroupLabel) {
  // Re-runs and copies: every HORST run five times and every AdamW run three times. Before, each copy made a pair
  // ("A better in 15 of 15 seeds" for 4 seeds), and the label said "20 runs" with no seed count.
  const auto originals = entries();
  std::vector<study::RunEntry> runs;
  for (const auto& run : originals) {
    const std::string& name = run.config.at("optimizer.name");
    const int copies = name == "horst" ? 5 : name == "adamw" ? 3 : 1;
    for (int c = 0; c < copies; ++c) runs.push_back(run);
  }
  // One HORST copy of seed 0 differs: its value enters the seed's mean, not a pair of its own.
  auto& changed = *std::find_if(runs.begin(), runs.end(), [](const study::RunEntry& run) {
    return run.config.at("optimizer.name") == "horst" && run.config.at("train.seed") == "0";
  });
  changed.finals.at("test_accuracy").value += 0.5;
  const auto groups = study::group_runs(runs, {"optimizer.name"});
  const auto& horst = groups[study::groups_matching(groups, "optimizer.name=horst").front()];
  const auto& adamw = groups[study::groups_matching(groups, "optimizer.name=adamw").front()];
  EXPECT_EQ(horst.label, "name horst (20 runs, 4 seeds)");
  EXPECT_EQ(adamw.label, "name adamw (12 runs, 4 seeds)");
  const auto paired = study::pair_groups(runs, horst, adamw, "test_accuracy");
  ASSERT_EQ(paired.pairs.size(), 4u);
  EXPECT_EQ(paired.wins_text(), "3 of 4");  // as without the copies: seed 2's HORST run is still behind
  const double h0 = study_accuracy(1, 0, study_evaluations(0)), a0 = study_accuracy(0, 0, study_evaluations(0));
  EXPECT_NEAR(paired.pairs[0].a, h0 + 0.5 / 5, 1e-12);
  EXPECT_NEAR(paired.pairs[0].b, a0, 1e-12);
  EXPECT_EQ(paired.pairs[0].a_runs, 5);
  EXPECT_EQ(paired.pairs[0].b_runs, 3);
  EXPECT_EQ(paired.duplicates_text().rfind("seed 0: A 5 runs, B 3 runs; seed 1: A 5 runs, B 3 runs", 0), 0u)
      << paired.duplicates_text();
  // The spread is over 4 differences, one a seed.
  std::vector<double> differences;
  for (int s = 0; s < 4; ++s) {
    differences.push_back(study_accuracy(1, s, study_evaluations(s)) + (s == 0 ? 0.1 : 0.0) -
                          study_accuracy(0, s, study_evaluations(s)));
  }
  EXPECT_NEAR(paired.standard_deviation, study::statistics_of(differences).standard_deviation, 1e-12);
  // One run a seed: no duplicates named, and the label counts seeds only.
  const auto plain = study::group_runs(originals, {"optimizer.name"});
  EXPECT_TRUE(study::pair_groups(originals, plain[2], plain[0], "test_accuracy").duplicates_text().empty());
}

TEST_F(StudyTest, AFilterOnAKeyNoRunHasSaysSoAndNamesTheNearestKeys) {
  const auto runs = entries();
  // Issue 54: "optimiser.name=horst" showed "0 shown" without a word.
  const study::RunFilter misspelt("optimiser.name=horst");
  EXPECT_EQ(std::count_if(runs.begin(), runs.end(), [&](const auto& run) { return misspelt.matches(run); }), 0);
  const std::string text = misspelt.unknown_keys_text(runs);
  EXPECT_EQ(text.rfind("no run has the key \"optimiser.name\" (nearest: optimizer.name", 0), 0u) << text;
  // A bare last part finds its full key; a known key or a text term says nothing.
  EXPECT_NE(study::RunFilter("lr<1").unknown_keys_text(runs).find("nearest: train.lr"), std::string::npos);
  EXPECT_EQ(study::RunFilter("optimizer.name=horst seed").unknown_keys_text(runs), "");
  EXPECT_EQ(study::RunFilter("test_accuracy>0.5").unknown_keys_text(runs), "");
  EXPECT_EQ(study::nearest_keys("x", {}), std::vector<std::string>{});
}

TEST_F(StudyTest, TheFilterTakesTextKeyValuesComparisonsAndRanges) {
  const auto runs = entries();
  const auto count = [&](const std::string& text) {
    const study::RunFilter filter(text);
    return std::count_if(runs.begin(), runs.end(), [&](const auto& run) { return filter.matches(run); });
  };
  EXPECT_EQ(count(""), 12);
  EXPECT_EQ(count("horst"), 4);
  EXPECT_EQ(count("HORST seed1"), 1);
  EXPECT_EQ(count("optimizer.name=adamw"), 4);
  EXPECT_EQ(count("optimizer.name!=adamw"), 8);
  EXPECT_EQ(count("optimizer.alpha=5.0"), 12);  // as numbers
  EXPECT_EQ(count("train.seed>=2"), 6);
  EXPECT_EQ(count("train.seed=1..2 optimizer.name=ham"), 2);
  // Final metrics: seed 3 stopped at 0.7 + ..., the others reached 0.82 + ...
  EXPECT_EQ(count("test_accuracy>0.8"), 9);
  EXPECT_EQ(count("no.such.key=1"), 0);
  EXPECT_THROW(study::RunFilter("test_accuracy>"), Error);
  EXPECT_THROW(study::RunFilter("test_accuracy>high"), Error);
  EXPECT_THROW(study::RunFilter("train.seed=1..x"), Error);
}

TEST_F(StudyTest, TheFilterFindsRunsByTheNameTagsAndNoteAPersonGaveThem) {
  auto runs = entries();
  runs[0].label = "Warm restart";
  runs[0].tags = {"baseline", "Keep"};
  runs[1].tags = {"keep"};
  runs[2].note = "loss spikes at step 40";
  const auto count = [&](const std::string& text) {
    const study::RunFilter filter(text);
    return std::count_if(runs.begin(), runs.end(), [&](const auto& run) { return filter.matches(run); });
  };
  EXPECT_EQ(count("restart"), 1);   // the own name
  EXPECT_EQ(count("SPIKES"), 1);    // the note
  EXPECT_EQ(count("basel"), 1);     // a tag, in part
  EXPECT_EQ(count("tag=keep"), 2);  // a whole tag, any case
  EXPECT_EQ(count("tag!=keep"), 10);
  EXPECT_EQ(count("tag=kee"), 0);
  EXPECT_EQ(count("tag=keep tag=baseline"), 1);
  EXPECT_EQ(study::RunFilter("tag=keep").unknown_keys_text(runs), "");  // a key every study has
}

}  // namespace
}  // namespace descentlab
