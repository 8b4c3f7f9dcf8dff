// The Study dock (issue 35) through the app's own path: a folder of generated run files with known values
// (tests/study_samples.h) dropped on the window, read on the loader's thread, then grouped, filtered, sorted,
// paired and opened into the lab; and 300 run files read with the event loop kept responsive.

#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QMimeData>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QUrl>

#include <algorithm>
#include <filesystem>

#include "../study_samples.h"
#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "gui_test_support.h"
#include "widgets/lab_model.h"
#include "widgets/study_browser.h"
#include "widgets/training_curves_view.h"

namespace descentlab {
namespace {

using testing::study_accuracy;
using testing::study_evaluations;
using testing::waitUntil;

class StudyBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = std::make_unique<widgets::MainWindow>(widgets::EnvironmentSummary{}, backend_);
    controller_ = std::make_unique<gui::LabController>(*window_, backend_, directory_.path());
    window_->resize(1280, 800);
    window_->show();
  }
  void TearDown() override {
    controller_.reset();
    window_.reset();
  }
  widgets::StudyBrowser& browser() { return *window_->studyBrowser(); }
  bool read(int runs) {
    return waitUntil([&] { return !controller_->studies().loading() && browser().runs().size() == runs; }, 60000);
  }

  QTemporaryDir directory_;
  gui::LabBackend backend_;
  std::unique_ptr<widgets::MainWindow> window_;
  std::unique_ptr<gui::LabController> controller_;
};

TEST_F(StudyBrowserTest, ADroppedFolderIsGroupedFilteredSortedPairedAndOpened) {
  const QString folder = QDir(directory_.path()).filePath(QStringLiteral("study"));
  testing::write_study(folder.toStdString());
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(folder)});
  QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &enter);
  EXPECT_TRUE(enter.isAccepted()) << "a folder is accepted as a drop";
  QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &drop);
  ASSERT_TRUE(read(12)) << browser().status().toStdString();
  EXPECT_TRUE(browser().status().contains(QStringLiteral("12 of 12 run files read (2 other files skipped)")))
      << browser().status().toStdString();
  EXPECT_EQ(window_->model()->count(), 0) << "a study's runs are not loaded into the lab until asked";

  // Grouped by the default: every differing key but the seeds, i.e. the optimizer.
  EXPECT_EQ(browser().metric(), QStringLiteral("test_accuracy"));
  const auto& groups = browser().groups();
  ASSERT_EQ(groups.size(), 3);
  for (int o = 0; o < 3; ++o) {
    const QString name = QString::fromStdString(testing::study_optimizers()[static_cast<size_t>(o)]);
    const auto group = std::find_if(groups.begin(), groups.end(),
                                    [&](const auto& g) { return g.values.value("optimizer.name") == name; });
    ASSERT_NE(group, groups.end()) << name.toStdString();
    EXPECT_EQ(group->count, 4);
    EXPECT_EQ(group->label, QStringLiteral("name %1 (4 seeds)").arg(name));
    double sum = 0.0;
    for (int s = 0; s < 4; ++s) sum += study_accuracy(o, s, study_evaluations(s));
    EXPECT_NEAR(group->mean, sum / 4, 1e-12);
    EXPECT_NEAR(group->min, study_accuracy(o, 3, 5), 1e-12);
  }

  // Sorted by the final metric: the best run first.
  browser().sortBy(QStringLiteral("final test_accuracy"), false);
  EXPECT_EQ(browser().shownNames().front(), QStringLiteral("ham/seed2"));
  browser().sortBy(QStringLiteral("run"), true);
  EXPECT_EQ(browser().shownNames().front(), QStringLiteral("adamw/seed0"));

  // Filtered: runs the filter hides are in no group.
  browser().setFilterText(QStringLiteral("optimizer.name!=ham train.seed<=2"));
  EXPECT_EQ(browser().shownRuns(), 6);
  EXPECT_EQ(browser().groups().size(), 2);
  for (const auto& group : browser().groups()) EXPECT_EQ(group.members.size(), 3);
  browser().setFilterText(QStringLiteral("test_accuracy>"));
  EXPECT_FALSE(browser().filterError().isEmpty());
  EXPECT_EQ(browser().shownRuns(), 12) << "a filter that cannot be read hides nothing";
  browser().setFilterText(QString());

  // Paired by seed: HORST against AdamW.
  const auto index_of = [&](const QString& name) {
    for (int g = 0; g < browser().groups().size(); ++g) {
      if (browser().groups()[g].values.value("optimizer.name") == name) return g;
    }
    return -1;
  };
  browser().setPair(index_of(QStringLiteral("horst")), index_of(QStringLiteral("adamw")));
  const auto& pairing = browser().pairing();
  ASSERT_EQ(pairing.rows.size(), 4);
  EXPECT_EQ(pairing.wins, 3);
  EXPECT_NEAR(pairing.mean, 0.005, 1e-12);
  EXPECT_EQ(pairing.rows[2].seed, QStringLiteral("2"));
  EXPECT_FALSE(pairing.rows[2].aWins);

  // Grouped by hand: by the seed, one run per group.
  browser().setGroupKeys({QStringLiteral("train.seed")});
  EXPECT_EQ(browser().groups().size(), 4);

  // "Open in the lab" with a run selected opens it into the views.
  auto* table = browser().findChild<QTableView*>(QStringLiteral("study-runs"));
  ASSERT_NE(table, nullptr);
  table->selectRow(0);
  QPushButton* open = nullptr;
  for (auto* button : browser().findChildren<QPushButton*>()) {
    if (button->text() == QStringLiteral("Open in the lab")) open = button;
  }
  ASSERT_NE(open, nullptr);
  open->click();
  ASSERT_EQ(window_->model()->count(), 1);
  EXPECT_TRUE(window_->model()->runAt(0)->path.endsWith(QStringLiteral("adamw/seed0.h5")));
}

// "Draw groups": every run of the study into the lab, drawn in the views as a mean with a band per group.
TEST_F(StudyBrowserTest, DrawGroupsOpensTheStudyGroupedInTheViews) {
  const QString folder = QDir(directory_.path()).filePath(QStringLiteral("study"));
  testing::write_study(folder.toStdString());
  controller_->studies().open(folder);
  ASSERT_TRUE(read(12)) << browser().status().toStdString();
  browser().setFilterText(QStringLiteral("optimizer.name!=ham"));
  browser().drawGroups();
  ASSERT_TRUE(waitUntil([&] { return window_->model()->count() == 8; }, 30000))
      << "the runs the filter keeps: " << window_->model()->count() << " groups " << browser().groups().size() << " "
      << window_->lastMessage().toStdString();
  ASSERT_TRUE(window_->model()->grouped());
  ASSERT_EQ(window_->model()->groups().size(), 2);
  window_->refreshViews();
  widgets::TrainingCurvesView* testMetric = nullptr;
  for (auto* view : window_->views()) {
    if (auto* curves = qobject_cast<widgets::TrainingCurvesView*>(view);
        curves && curves->wantedMetric() == QStringLiteral("@test"))
      testMetric = curves;
  }
  ASSERT_NE(testMetric, nullptr);
  testMetric->setSmoothing(0);
  const auto bands = testMetric->groupBands();
  ASSERT_EQ(bands.size(), 2);
  for (const auto& band : bands) {
    const int o = band.group->label.contains(QStringLiteral("horst")) ? 1 : 0;
    ASSERT_EQ(band.steps.size(), 5) << "the steps all four seeds reached";
    double sum = 0.0, low = 1.0;
    for (int s = 0; s < 4; ++s) {
      sum += study_accuracy(o, s, 5);
      low = std::min(low, study_accuracy(o, s, 5));
    }
    EXPECT_NEAR(band.mean.back(), sum / 4, 1e-12);
    EXPECT_NEAR(band.low.back(), low, 1e-12);
  }
  EXPECT_TRUE(testMetric->csv().startsWith(QStringLiteral("group,")));
  window_->setGrouping(false);
  EXPECT_FALSE(window_->model()->grouped());
  EXPECT_TRUE(testMetric->csv().startsWith(QStringLiteral("run,")));
}

// Issue 54, item 8: docked at 1280x800 the study shows about 7 rows beside the views, which keep their usable
// minimums. "Full window" floats it over the window at its size for more rows, and docks it back.
TEST_F(StudyBrowserTest, FullWindowShowsTheStudyOverTheWholeWindowAndDocksItBack) {
  const QString folder = QDir(directory_.path()).filePath(QStringLiteral("study"));
  testing::write_study(folder.toStdString());
  controller_->studies().open(folder);
  ASSERT_TRUE(read(12)) << browser().status().toStdString();
  QApplication::processEvents();
  auto* table = browser().findChild<QTableView*>(QStringLiteral("study-runs"));
  auto* button = browser().findChild<QToolButton*>(QStringLiteral("study-full-window"));
  ASSERT_NE(table, nullptr);
  ASSERT_NE(button, nullptr);
  const int dockedHeight = table->viewport()->height();
  button->click();
  ASSERT_TRUE(waitUntil([&] { return browser().fullWindow() && table->viewport()->height() > 2 * dockedHeight; }, 5000))
      << dockedHeight << " px docked, " << table->viewport()->height() << " px in full window";
  EXPECT_TRUE(button->isChecked());
  EXPECT_GE(browser().window()->height(), window_->height() - 10);
  button->click();
  ASSERT_TRUE(waitUntil([&] { return !browser().fullWindow(); }, 5000));
  EXPECT_FALSE(button->isChecked());
  EXPECT_EQ(browser().window(), window_.get());
}

TEST_F(StudyBrowserTest, AFolderThatCannotBeListedIsNamed) {
  controller_->studies().open(QDir(directory_.path()).filePath(QStringLiteral("no-such-folder")));
  ASSERT_TRUE(waitUntil([&] { return !controller_->studies().loading(); }, 10000));
  EXPECT_TRUE(window_->lastMessage().contains(QStringLiteral("no-such-folder")))
      << window_->lastMessage().toStdString();
}

// Issue 35 item 1: 300 run files fill the table while the event loop stays responsive (they are read on the
// loader's thread; the GUI thread only adds rows). Measured: the gaps of a 10 ms timer during the whole read.
TEST_F(StudyBrowserTest, ThreeHundredRunFilesKeepTheWindowResponsive) {
  const QString source = QDir(directory_.path()).filePath(QStringLiteral("one"));
  testing::write_study(source.toStdString());
  const QString folder = QDir(directory_.path()).filePath(QStringLiteral("many"));
  std::filesystem::create_directories(folder.toStdString());
  for (int copy = 0; copy < 25; ++copy) {
    const auto target = std::filesystem::path(folder.toStdString()) / ("grid" + std::to_string(copy));
    std::filesystem::copy(source.toStdString(), target, std::filesystem::copy_options::recursive);
  }
  std::vector<double> gaps;
  QElapsedTimer clock;
  QTimer ticker;
  ticker.setInterval(10);
  qint64 last = 0;
  QObject::connect(&ticker, &QTimer::timeout, [&] {
    const qint64 now = clock.nsecsElapsed();
    gaps.push_back(static_cast<double>(now - last) / 1e6);
    last = now;
  });
  clock.start();
  ticker.start();
  controller_->studies().open(folder);
  ASSERT_TRUE(read(300)) << browser().status().toStdString();
  const double seconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
  ticker.stop();
  ASSERT_GT(gaps.size(), 5u);
  std::sort(gaps.begin(), gaps.end());
  const double p99 = gaps[gaps.size() * 99 / 100];
  RecordProperty("seconds_to_table", std::to_string(seconds));
  RecordProperty("p99_gap_ms", std::to_string(p99));
  std::printf("300 run files: %.2f s to the whole table, event-loop gaps p99 %.1f ms, max %.1f ms, %d batches\n",
              seconds, p99, gaps.back(), controller_->studies().batches());
  // A 10 ms timer's gaps: reading the files on the GUI thread would hold it for the whole read (about a second).
  // About a hundred ticks, so p99 is the largest gap alone, and one stall of a loaded machine decides it (175 ms once
  // under ctest -j2 in CI's Debian 13 chroot, where 50-75 ms is usual): the second largest gap stays under 150 ms
  // and the largest under 600 ms.
  // Under ThreadSanitizer every access is instrumented (5-15x slower): there the test checks the threads, not time.
#if defined(__SANITIZE_THREAD__)
  constexpr bool kTimed = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  constexpr bool kTimed = false;
#else
  constexpr bool kTimed = true;
#endif
#else
  constexpr bool kTimed = true;
#endif
  if (kTimed) {
    EXPECT_LT(gaps[gaps.size() - 2], 150.0) << "more than one long stall of the event loop";
    EXPECT_LT(gaps.back(), 600.0) << "the GUI thread was held as long as reading the files";
  }
  // The copies share their configs: three groups of 100 runs (25 per seed: the label counts runs and seeds apart).
  ASSERT_EQ(browser().groups().size(), 3);
  EXPECT_EQ(browser().groups()[0].label, QStringLiteral("name adamw (100 runs, 4 seeds)"));
}

}  // namespace
}  // namespace descentlab
