// Issue 54, item 3: Run > Name, tags and note… names a run, tags it and notes it; the name replaces the automatic one
// in the views and the runs table (tags after it, the note in its tooltip), both filters find them, and the run file
// keeps them: a finished run's through its log, a training run's through its writer, read back when it is opened
// again.

#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>

#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "core/config/experiment_config.h"
#include "core/session/training_session.h"
#include "core/store/run_reader.h"
#include "gui_test_support.h"
#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/run_annotation_dialog.h"
#include "widgets/runs_table.h"
#include "widgets/study_browser.h"

namespace descentlab {
namespace {

using testing::waitUntil;
using widgets::RunData;
using widgets::RunState;

const std::vector<std::string> kTiny = {"data.train_clips=32", "data.test_clips=16",     "model.layers=2",
                                        "model.width=16",      "model.ff_width=32",      "train.epochs=1",
                                        "train.batch_size=8",  "train.metric_interval=2"};

std::string annotationOf(const QString& path) {
  const store::RunAnnotation stored = store::RunReader(path.toStdString()).header().annotation;
  return stored.name + " | " + store::tags_text(stored.tags) + " | " + stored.note;
}

class RunAnnotationTest : public ::testing::Test {
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
  // A finished tiny run file of `preset`.
  QString finishedRun(const QString& name, const char* preset = "video-erm") {
    const QString path = QDir(folder_.path()).filePath(name);
    session::SessionOptions options;
    options.run_path = path.toStdString();
    session::TrainingSession(config::load_experiment(preset, "quick", "", kTiny), options).run();
    return path;
  }
  QString nameCell(const QString& runId) const {
    const auto* table = window_->runsTable();
    for (int row = 0; row < table->rowCount(); ++row) {
      if (table->item(row, 0)->data(Qt::UserRole).toString() == runId) return table->item(row, 0)->text();
    }
    return {};
  }

  QTemporaryDir folder_;
  gui::LabBackend backend_;
  std::unique_ptr<widgets::MainWindow> window_;
  std::unique_ptr<gui::LabController> controller_;
};

TEST_F(RunAnnotationTest, AFinishedRunIsNamedTaggedAndNotedFromItsMenuAndKeepsThemInItsFile) {
  const QString first = finishedRun(QStringLiteral("a.h5"));
  const QString second = finishedRun(QStringLiteral("b.h5"));
  ASSERT_EQ(controller_->open({first, second}), 2);
  widgets::LabModel& model = *window_->model();
  const QString id = model.runAt(0)->id;
  const QString automatic = model.runAt(0)->name;
  model.setFocusRun(id);
  // The same run in the Study dock, as a study of the folder lists it.
  widgets::StudyBrowser* study = window_->studyBrowser();
  study->beginStudy(folder_.path(), 1, 0);
  widgets::StudyRunRow row;
  row.path = first;
  row.name = QStringLiteral("a");
  study->addRuns({row});
  study->finishStudy();

  // Through the dialog, as a person does it: F2's action, the three fields, OK.
  QAction* action = nullptr;
  for (QAction* candidate : window_->findChildren<QAction*>()) {
    if (candidate->text() == QStringLiteral("Na&me, tags and note…")) action = candidate;
  }
  ASSERT_NE(action, nullptr);
  ASSERT_TRUE(waitUntil([&] { return action->isEnabled(); }, 5000));
  bool filled = false;
  QTimer::singleShot(0, [&] {
    auto* dialog = qobject_cast<widgets::RunAnnotationDialog*>(QApplication::activeModalWidget());
    if (!dialog) return;
    dialog->findChild<QLineEdit*>(QStringLiteral("runOwnName"))->setText(QStringLiteral("  lr warm-up baseline "));
    dialog->findChild<QLineEdit*>(QStringLiteral("runTags"))->setText(QStringLiteral("baseline, keep,, baseline"));
    dialog->findChild<QPlainTextEdit*>(QStringLiteral("runNote"))->setPlainText(QStringLiteral("Spikes at step 6."));
    filled = true;
    dialog->accept();
  });
  action->trigger();
  ASSERT_TRUE(filled) << "the dialog did not open";
  EXPECT_EQ(model.run(id)->name, QStringLiteral("lr warm-up baseline"));
  EXPECT_EQ(model.run(id)->tags, (QStringList{QStringLiteral("baseline"), QStringLiteral("keep")}));
  EXPECT_EQ(annotationOf(first), "lr warm-up baseline | baseline, keep | Spikes at step 6.");
  window_->refreshViews();
  EXPECT_EQ(nameCell(id), QStringLiteral("lr warm-up baseline  [baseline, keep]"));
  const auto* studyTable = study->findChild<QTableView*>(QStringLiteral("study-runs"));
  ASSERT_NE(studyTable, nullptr);
  EXPECT_EQ(studyTable->model()->index(0, 0).data().toString(),
            QStringLiteral("lr warm-up baseline  [baseline, keep]"));
  study->setFilterText(QStringLiteral("tag=baseline"));
  EXPECT_EQ(studyTable->model()->rowCount(), 1);
  study->setFilterText(QStringLiteral("tag=other"));
  EXPECT_EQ(studyTable->model()->rowCount(), 0);
  study->setFilterText(QString());

  // The Runs filter finds a tag and the note's words.
  auto* table = window_->runsTable();
  table->setFilterText(QStringLiteral("tag=keep"));
  EXPECT_EQ(table->shownRows(), 1);
  table->setFilterText(QStringLiteral("spikes"));
  EXPECT_EQ(table->shownRows(), 1);
  table->setFilterText(QString());

  // Opened again (a new window's session), the run comes back with its name, tags and note.
  controller_->close(id);
  ASSERT_EQ(controller_->open({first}), 1);
  const RunData* reopened = model.runAt(model.count() - 1);
  EXPECT_EQ(reopened->name, QStringLiteral("lr warm-up baseline"));
  EXPECT_EQ(reopened->note, QStringLiteral("Spikes at step 6."));

  // Cleared, it is named by its configuration again.
  EXPECT_EQ(controller_->annotate(reopened->id, {}), QString());
  EXPECT_EQ(model.run(reopened->id)->name, automatic);
  EXPECT_EQ(annotationOf(first), " |  | ");

  // A bad tag is refused naming it, and nothing changes.
  const QString refused = controller_->annotate(reopened->id, {QString(), {QStringLiteral("a\nb")}, QString()});
  EXPECT_TRUE(refused.contains(QStringLiteral("the tag 'a\nb'"))) << refused.toStdString();
  EXPECT_EQ(window_->lastMessage(), refused);
  EXPECT_EQ(annotationOf(first), " |  | ");
}

TEST_F(RunAnnotationTest, ATrainingRunIsNamedThroughItsWriter) {
  auto* panel = window_->experimentPanel();
  panel->setPreset(QStringLiteral("video-erm"));
  for (const auto& assignment : kTiny) {
    const auto equals = assignment.find('=');
    ASSERT_TRUE(panel->setFieldText(QString::fromStdString(assignment.substr(0, equals)),
                                    QString::fromStdString(assignment.substr(equals + 1))));
  }
  panel->setFieldText(QStringLiteral("train.epochs"), QStringLiteral("400"));
  const QString id = controller_->start(
      {QStringLiteral("video-erm"), QStringLiteral("quick"), QStringLiteral("cpu"), panel->fields(), {}});
  ASSERT_FALSE(id.isEmpty()) << window_->lastMessage().toStdString();
  const RunData* run = window_->model()->run(id);
  ASSERT_TRUE(waitUntil([&] { return run->state == RunState::Running; }, 60000));
  EXPECT_EQ(controller_->annotate(id, {QStringLiteral("long erm"), {QStringLiteral("live")}, QString()}), QString());
  EXPECT_EQ(run->name, QStringLiteral("long erm"));
  // The writer commits it with its next rows, while the run trains on.
  ASSERT_TRUE(waitUntil([&] { return annotationOf(run->path).rfind("long erm | live", 0) == 0; }, 30000))
      << annotationOf(run->path);
  controller_->stop(id);
  ASSERT_TRUE(waitUntil([&] { return controller_->activeRuns() == 0; }, 60000));
  EXPECT_EQ(annotationOf(run->path), "long erm | live | ");
  // Stopped, it is named through its file.
  EXPECT_EQ(controller_->annotate(id, {QStringLiteral("long erm, stopped"), {}, QString()}), QString());
  EXPECT_EQ(annotationOf(run->path), "long erm, stopped |  | ");
}

// Issue 55: a branch opened from its file is named by its parent's experiment and seed, what it changed and where.
TEST_F(RunAnnotationTest, ABranchOpenedFromItsFileSaysWhatItChangedAndWhere) {
  const QString parent = QDir(folder_.path()).filePath(QStringLiteral("parent.h5"));
  {
    session::SessionOptions options;
    options.run_path = parent.toStdString();
    session::TrainingSession first(config::load_experiment("video-constrained", "quick", "", kTiny), options);
    first.set_step_limit(3);
    first.run();
  }
  const QString child = QDir(folder_.path()).filePath(QStringLiteral("child.h5"));
  session::SessionOptions options;
  options.run_path = child.toStdString();
  auto more = kTiny;
  more.push_back("constraints.alpha=0.1");
  session::TrainingSession::branch(parent.toStdString(), -1,
                                   config::load_experiment("video-constrained", "quick", "", more), options)
      ->run();
  ASSERT_EQ(controller_->open({parent, child}), 2);
  const widgets::LabModel& model = *window_->model();
  EXPECT_EQ(model.runAt(1)->name, model.runAt(0)->name + QStringLiteral(" › alpha 0.1, alpha_final 0.1 @ step 3"));
}

}  // namespace
}  // namespace descentlab
