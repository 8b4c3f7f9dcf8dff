// Issue 55, item 1: Branch… beside Pause and on the Run menu opens a form filled with the run's settings, those that
// may change enabled and the others shown but fixed, each saying why; the engine checks it as it is typed; Start
// makes a child run that continues the run's exact state: a paused run's as it is now (the run stays paused), a
// stopped run's from a kept checkpoint. The child is named "PARENT › change @ step N" and records its lineage.

#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QTest>

#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "core/config/experiment_config.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "gui_test_support.h"
#include "widgets/branch_dialog.h"
#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/study_browser.h"
#include "widgets/training_curves_view.h"

namespace descentlab {
namespace {

using testing::waitUntil;
using widgets::RunData;
using widgets::RunState;

const std::vector<std::string> kTiny = {"data.train_clips=32", "data.test_clips=16",     "model.layers=2",
                                        "model.width=16",      "model.ff_width=32",      "train.epochs=2",
                                        "train.batch_size=8",  "train.metric_interval=2"};

class BranchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.isValid());
    window_ = std::make_unique<widgets::MainWindow>(widgets::EnvironmentSummary{}, backend_);
    controller_ = std::make_unique<gui::LabController>(*window_, backend_, folder_.path());
    window_->resize(1280, 800);
    window_->show();
  }
  void TearDown() override {
    controller_.reset();
    window_.reset();
  }
  // The panel set to a tiny video-constrained run.
  void tinyPanel() {
    auto* panel = window_->experimentPanel();
    panel->setPreset(QStringLiteral("video-constrained"));
    for (const auto& assignment : kTiny) {
      const auto equals = assignment.find('=');
      ASSERT_TRUE(panel->setFieldText(QString::fromStdString(assignment.substr(0, equals)),
                                      QString::fromStdString(assignment.substr(equals + 1))));
    }
  }
  // What the Branch dialog, once open, does: `act` on it (on the event loop, as a person would).
  void whenTheDialogOpens(std::function<void(widgets::BranchDialog&)> act) {
    QTimer::singleShot(0, [act] {
      auto* dialog = qobject_cast<widgets::BranchDialog*>(QApplication::activeModalWidget());
      ASSERT_NE(dialog, nullptr) << "no Branch dialog";
      act(*dialog);
    });
  }

  QTemporaryDir folder_;
  gui::LabBackend backend_;
  std::unique_ptr<widgets::MainWindow> window_;
  std::unique_ptr<gui::LabController> controller_;
};

TEST_F(BranchTest, BranchBesidePauseContinuesAPausedRunAsItIsNowAndTheRunStaysPaused) {
  tinyPanel();
  auto* panel = window_->experimentPanel();
  widgets::LabModel& model = *window_->model();
  auto* branch = panel->findChild<QPushButton*>(QStringLiteral("branch-run"));
  ASSERT_NE(branch, nullptr);
  EXPECT_FALSE(branch->isEnabled()) << "nothing selected";
  panel->start();
  ASSERT_EQ(model.count(), 1) << window_->lastMessage().toStdString();
  const RunData* parent = model.runAt(0);
  ASSERT_TRUE(waitUntil([&] { return parent->state == RunState::Running && parent->currentStep >= 3; }, 60000));
  controller_->pause(parent->id);
  ASSERT_TRUE(waitUntil([&] { return branch->isEnabled(); }, 5000));
  QString verdict, fixedTip;
  bool widthEnabled = true;
  whenTheDialogOpens([&](widgets::BranchDialog& dialog) {
    auto* from = dialog.findChild<QComboBox*>(QStringLiteral("branch-from"));
    ASSERT_NE(from, nullptr);
    EXPECT_TRUE(from->currentText().startsWith(QStringLiteral("its state now"))) << from->currentText().toStdString();
    auto* width = dialog.findChild<QWidget*>(QStringLiteral("model.width"));
    ASSERT_NE(width, nullptr) << "the fixed settings are shown";
    widthEnabled = width->isEnabled();
    fixedTip = width->toolTip();
    EXPECT_FALSE(dialog.setFieldText(QStringLiteral("model.width"), QStringLiteral("32")));
    EXPECT_TRUE(dialog.verdictText().startsWith(QStringLiteral("Nothing changed yet")));
    ASSERT_TRUE(dialog.setFieldText(QStringLiteral("constraints.alpha"), QStringLiteral("0.1")));
    verdict = dialog.verdictText();
    EXPECT_TRUE(dialog.startEnabled());
    dialog.findChild<QPushButton*>(QStringLiteral("branch-start"))->click();
  });
  QTest::mouseClick(branch, Qt::LeftButton);
  EXPECT_FALSE(widthEnabled);
  EXPECT_TRUE(fixedTip.contains(QStringLiteral("cannot change in a branch: the model continued is the parent's")))
      << fixedTip.toStdString();
  EXPECT_TRUE(verdict.contains(QStringLiteral("constraints.alpha 0.4 → 0.1"))) << verdict.toStdString();

  // The child starts from the step the paused run is held at (its trainer's: the window's rows may lag it by less than
  // a metric interval), and trains to the end; the parent stays paused there.
  ASSERT_TRUE(waitUntil([&] { return model.count() == 2; }, 30000)) << window_->lastMessage().toStdString();
  const RunData* child = model.runAt(1);
  const int64_t shownStep = parent->currentStep;
  ASSERT_TRUE(waitUntil([&] { return child->state == RunState::Finished; }, 120000)) << child->error.toStdString();
  const store::RunReader reader(child->path.toStdString());
  ASSERT_TRUE(reader.header().lineage.has_value());
  const int64_t heldAt = reader.header().lineage->branch_step;
  EXPECT_GE(heldAt, shownStep);
  EXPECT_LT(heldAt, shownStep + 2) << "within one metric interval of what the window showed";
  EXPECT_EQ(child->name, parent->name + QStringLiteral(" › alpha 0.1 @ step %1").arg(heldAt))
      << child->name.toStdString();
  EXPECT_EQ(parent->state, RunState::Paused);
  EXPECT_EQ(parent->currentStep, shownStep);
  EXPECT_EQ(QString::fromStdString(reader.header().lineage->parent_file), parent->path);
  EXPECT_GT(reader.metric("loss").steps.front(), heldAt) << "the child holds only its own rows";
  EXPECT_TRUE(parent->log.join(QStringLiteral("\n")).contains(QStringLiteral("state kept at step %1").arg(heldAt)));
  controller_->stop(parent->id);
  ASSERT_TRUE(waitUntil([&] { return !parent->isActive(); }, 30000));
}

TEST_F(BranchTest, RunMenuBranchOfAStoppedRunStartsFromAKeptCheckpointAndRefusesAFixedSetting) {
  const QString parentPath = QDir(folder_.path()).filePath(QStringLiteral("parent.h5"));
  {
    session::SessionOptions options;
    options.run_path = parentPath.toStdString();
    session::TrainingSession first(config::load_experiment("video-constrained", "quick", "", kTiny), options);
    first.set_step_limit(3);
    first.run();
  }
  ASSERT_EQ(controller_->open({parentPath}), 1);
  widgets::LabModel& model = *window_->model();
  model.setFocusRun(model.runAt(0)->id);
  QAction* action = nullptr;
  for (QAction* candidate : window_->findChildren<QAction*>()) {
    if (candidate->text() == QStringLiteral("&Branch…")) action = candidate;
  }
  ASSERT_NE(action, nullptr);
  ASSERT_TRUE(waitUntil([&] { return action->isEnabled(); }, 5000));
  QString refused;
  whenTheDialogOpens([&](widgets::BranchDialog& dialog) {
    auto* from = dialog.findChild<QComboBox*>(QStringLiteral("branch-from"));
    EXPECT_EQ(from->currentText(), QStringLiteral("step 3 (latest)"));
    // A value the engine refuses names the key; Start waits for a valid form.
    ASSERT_TRUE(dialog.setFieldText(QStringLiteral("train.epochs"), QStringLiteral("0")));
    refused = dialog.verdictText();
    EXPECT_FALSE(dialog.startEnabled());
    ASSERT_TRUE(dialog.setFieldText(QStringLiteral("train.epochs"), QStringLiteral("3")));
    EXPECT_TRUE(dialog.startEnabled());
    dialog.accept();
  });
  action->trigger();
  EXPECT_TRUE(refused.contains(QStringLiteral("train.epochs"))) << refused.toStdString();
  ASSERT_TRUE(waitUntil([&] { return model.count() == 2; }, 30000)) << window_->lastMessage().toStdString();
  const RunData* child = model.runAt(1);
  EXPECT_TRUE(child->name.endsWith(QStringLiteral(" › epochs 3 @ step 3"))) << child->name.toStdString();
  ASSERT_TRUE(waitUntil([&] { return !child->isActive(); }, 120000));
  EXPECT_EQ(child->state, RunState::Finished) << child->error.toStdString();
  EXPECT_EQ(child->currentStep, 12) << "3 epochs of 4 steps";

  // The family in the training curves: the child's line starts at its parent's point at step 3, marked there.
  window_->refreshViews();
  QCustomPlot* plot = window_->lossView()->plot();
  const QCPGraph* marker = nullptr;
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->name().contains(QStringLiteral("branches from"))) marker = plot->graph(i);
  }
  ASSERT_NE(marker, nullptr) << "no branch marker";
  ASSERT_EQ(marker->data()->size(), 1);
  EXPECT_EQ(marker->data()->at(0)->key, 2.0) << "the parent's last row at or before step 3 (every 2 steps)";

  // Opened again with its parent moved away: said, by name, and the child is drawn alone.
  const QString childPath = child->path;
  controller_->close(child->id);
  controller_->close(model.runAt(0)->id);
  ASSERT_TRUE(QFile::rename(parentPath, parentPath + QStringLiteral(".moved")));
  ASSERT_EQ(controller_->open({childPath}), 1);
  EXPECT_TRUE(window_->lastMessage().contains(QStringLiteral("is not there (moved or deleted)")))
      << window_->lastMessage().toStdString();
}

TEST_F(BranchTest, BranchFromHereOnACurveTakesTheNearestKeptStateAtOrBeforeTheStep) {
  const QString parentPath = QDir(folder_.path()).filePath(QStringLiteral("kept.h5"));
  {
    auto tiny = kTiny;
    tiny.push_back("train.keep_interval=2");
    session::SessionOptions options;
    options.run_path = parentPath.toStdString();
    session::TrainingSession(config::load_experiment("video-constrained", "quick", "", tiny), options).run();
  }
  ASSERT_EQ(controller_->open({parentPath}), 1);
  widgets::LabModel& model = *window_->model();
  const RunData* parent = model.runAt(0);
  window_->refreshViews();
  widgets::TrainingCurvesView* view = window_->lossView();
  QCustomPlot* plot = view->plot();
  plot->replot();
  // Where the parent's curve passes at step 5 (its training loss is recorded every 2 steps: at 4 and 6).
  const QCPGraph* curve = nullptr;
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->name() == parent->name) curve = plot->graph(i);
  }
  ASSERT_NE(curve, nullptr);
  const auto point = [&](double step) {
    const auto found = curve->data()->findBegin(step, false);
    return QPoint(static_cast<int>(plot->xAxis->coordToPixel(found->key)),
                  static_cast<int>(plot->yAxis->coordToPixel(found->value)));
  };
  const QPoint atFour = point(4), atSix = point(6);
  const QPoint between((atFour.x() * 3 + atSix.x()) / 4, (atFour.y() * 3 + atSix.y()) / 4);  // about step 4.5
  QString runId;
  qint64 step = -1;
  ASSERT_TRUE(view->branchTargetAt(between, &runId, &step));
  EXPECT_EQ(runId, parent->id);
  EXPECT_GE(step, 4);
  EXPECT_LE(step, 5);
  QString note, from;
  whenTheDialogOpens([&](widgets::BranchDialog& dialog) {
    note = dialog.findChild<QLabel*>(QStringLiteral("branch-from-note"))->text();
    from = dialog.findChild<QComboBox*>(QStringLiteral("branch-from"))->currentText();
    dialog.reject();
  });
  emit view->branchFromHereRequested(runId, step);
  EXPECT_EQ(from, QStringLiteral("step 4 (kept)"));
  EXPECT_EQ(note,
            QStringLiteral("You asked for step %1: the nearest kept checkpoint at or before it is step 4.").arg(step));
  EXPECT_FALSE(view->branchTargetAt(QPoint(2, 2), &runId, &step)) << "no curve there";
}

TEST_F(BranchTest, TheStudyListsABranchUnderItsParentSayingWhatItChangedAndWhere) {
  widgets::StudyBrowser* study = window_->studyBrowser();
  study->beginStudy(folder_.path(), 3, 0);
  widgets::StudyRunRow parent, child, other;
  parent.path = QDir(folder_.path()).filePath(QStringLiteral("erm.h5"));
  parent.name = QStringLiteral("erm");
  child.path = QDir(folder_.path()).filePath(QStringLiteral("zz-constrained.h5"));
  child.name = QStringLiteral("zz-constrained");
  child.branchParent = parent.path;
  child.branchStep = 32;
  child.branchChanges = QStringLiteral("constraints.alpha 0.05 -> 0.5; constraints.enabled false -> true");
  other.path = QDir(folder_.path()).filePath(QStringLiteral("f-other.h5"));
  other.name = QStringLiteral("f-other");
  study->addRuns({child, other, parent});
  study->finishStudy();
  auto* table = study->findChild<QTableView*>(QStringLiteral("study-runs"));
  ASSERT_NE(table, nullptr);
  table->sortByColumn(0, Qt::AscendingOrder);
  QStringList names;
  for (int row = 0; row < table->model()->rowCount(); ++row) names << table->model()->index(row, 0).data().toString();
  ASSERT_EQ(names.size(), 3);
  EXPECT_EQ(names[0], QStringLiteral("erm"));
  EXPECT_EQ(names[1], QStringLiteral("    ↳ zz-constrained › alpha 0.5, enabled true @ step 32"));
  EXPECT_EQ(names[2], QStringLiteral("f-other"));
  EXPECT_TRUE(table->model()
                  ->index(1, 0)
                  .data(Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("branch of %1 at step 32").arg(parent.path)));
}

}  // namespace
}  // namespace descentlab
