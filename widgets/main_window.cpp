#include "widgets/main_window.h"

#include <QCloseEvent>
#include <QDesktopServices>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMap>
#include <QScreen>
#include <QStatusBar>
#include <QTabBar>
#include <QUrl>
#include <QVBoxLayout>

#include "core/record/metrics.h"
#include "widgets/dock_layout.h"
#include "widgets/lab_model.h"
#include "widgets/run_file_drop.h"
#include "widgets/run_log_view.h"
#include "widgets/runs_table.h"
#include "widgets/session_memory.h"
#include "widgets/study_browser.h"
#include "widgets/views.h"
#include "widgets/window_menus.h"

namespace descentlab::widgets {

MainWindow::MainWindow(const EnvironmentSummary& summary, const ExperimentBackend& backend, QWidget* parent)
    : QMainWindow(parent), backend_(backend) {
  setWindowTitle(QStringLiteral("DescentLab %1").arg(summary.version));
  setObjectName(QStringLiteral("DescentLabMainWindow"));
  setDockNestingEnabled(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks | QMainWindow::AllowTabbedDocks);
  // The screen's whole available area: on a large screen the views get the room (two columns from 1700 px wide),
  // and a window larger than its screen would hide its right column.
  const QRect screen = QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry()
                                                        : QRect(0, 0, 1600, 1000);
  resize(screen.size());
  model_ = new LabModel(this);
  experiment_ = new ExperimentPanel(backend, this);
  docks_ = new DockLayout(*this, *model_);
  // Above the views: errors and notices, then a tour's caption; neither stops anything.
  auto* central = new QWidget(this);
  auto* centralLayout = new QVBoxLayout(central);
  centralLayout->setContentsMargins(0, 0, 0, 0);
  messages_ = new MessageBar(*this, *model_, central);
  centralLayout->addWidget(messages_->widget());
  tours_ = new TourPresenter(*docks_, central);
  centralLayout->addWidget(tours_->bar());
  views_.loss =
      new TrainingCurvesView(model_, QStringLiteral("Training loss"), QLatin1String(record::metric::kLoss), central);
  centralLayout->addWidget(views_.loss, 1);
  setCentralWidget(central);
  makeDockedViews(views_, model_, experiment_, this, *docks_);
  menus_ = new WindowMenus(*this, *model_, *experiment_, *docks_, *messages_, summary);
  tours_->setMenu(menus_->toursMenu());
  tours_->setViews(views_.loss, views_.layerLoss);
  session_ = new SessionMemory(*model_, *messages_, menus_->recentMenu(), this);
  // The environment line is a permanent part of the status bar: as a temporary message, the first menu hover's status
  // tip took it away for good.
  auto* environment = new QLabel(QStringLiteral("device %1 · %2 thread(s) · LibTorch %3 · BLAS %4")
                                     .arg(summary.device)
                                     .arg(summary.threads)
                                     .arg(summary.torch_version, summary.blas),
                                 this);
  environment->setObjectName(QStringLiteral("environment-line"));
  statusBar()->addPermanentWidget(environment);
  connectRequests();
  connectRedraws();
  docks_->arrange();  // for the constructor's size; the first show arranges again for the size the window then has
  refreshViews();
}

// What the parts ask of the app, as the window's own requests.
void MainWindow::connectRequests() {
  connect(experiment_, &ExperimentPanel::startRequested, this, &MainWindow::startRequested);
  connect(experiment_, &ExperimentPanel::pauseRequested, this, [this] { emit pauseRequested(model_->focusRunId()); });
  connect(experiment_, &ExperimentPanel::resumeRequested, this, [this] { emit resumeRequested(model_->focusRunId()); });
  connect(experiment_, &ExperimentPanel::stopRequested, this, [this] { emit stopRequested(model_->focusRunId()); });
  connect(views_.robustness, &RobustnessView::sweepRequested, this, &MainWindow::sweepRequested);
  connect(views_.robustness, &RobustnessView::cancelSweepRequested, this, &MainWindow::cancelSweepRequested);
  connect(this, &MainWindow::revealRequested, this,
          [](const QString& path) { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath())); });
  connect(views_.runs, &RunsTable::pauseRequested, this, &MainWindow::pauseRequested);
  connect(views_.runs, &RunsTable::resumeRequested, this, &MainWindow::resumeRequested);
  connect(views_.runs, &RunsTable::stopRequested, this, &MainWindow::stopRequested);
  connect(views_.runs, &RunsTable::revealRequested, this, &MainWindow::revealRequested);
  connect(views_.runs, &RunsTable::closeRunRequested, this, &MainWindow::closeRunRequested);
  connect(views_.runs, &RunsTable::annotateRequested, this, &MainWindow::askAnnotation);
  connect(menus_, &WindowMenus::annotateRequested, this, &MainWindow::askAnnotation);
  connect(menus_, &WindowMenus::branchRequested, this, [this](const QString& runId) { askBranch(runId); });
  for (TrainingCurvesView* curves : {views_.loss, views_.metric}) {
    connect(curves, &TrainingCurvesView::branchFromHereRequested, this,
            [this](const QString& runId, qint64 step) { askBranch(runId, step); });
  }
  connect(experiment_, &ExperimentPanel::branchRequested, this, [this] { askBranch(model_->focusRunId()); });
  connect(menus_, &WindowMenus::pauseRequested, this, &MainWindow::pauseRequested);
  connect(menus_, &WindowMenus::resumeRequested, this, &MainWindow::resumeRequested);
  connect(menus_, &WindowMenus::stopRequested, this, &MainWindow::stopRequested);
  connect(menus_, &WindowMenus::closeRunRequested, this, &MainWindow::closeRunRequested);
  connect(menus_, &WindowMenus::openRequested, this, &MainWindow::openRequested);
  connect(menus_, &WindowMenus::openFolderRequested, this, &MainWindow::openFolderRequested);
  connect(menus_, &WindowMenus::saveRequested, this, &MainWindow::saveRequested);
  connect(menus_, &WindowMenus::exportRequested, this, [this](const QString& directory) {
    showInfo(QStringLiteral("Exported %1 files into %2").arg(exportAll(directory).size()).arg(directory));
  });
  connect(tours_, &TourPresenter::tourRequested, this, &MainWindow::tourRequested);
  connect(session_, &SessionMemory::openRequested, this, &MainWindow::openRequested);
  auto* drop = new RunFileDrop(this);
  connect(drop, &RunFileDrop::openRequested, this, &MainWindow::openRequested);
  connect(drop, &RunFileDrop::openFolderRequested, this, &MainWindow::openFolderRequested);
  connect(views_.study, &StudyBrowser::openRunsRequested, this, &MainWindow::openRequested);
  connect(views_.study, &StudyBrowser::drawGroupsRequested, this,
          [this](const QStringList& paths, const QStringList& keys) {
            emit openInBackgroundRequested(paths);  // each run named by its config, not its file's name
            setGrouping(true, keys);
          });
}

void MainWindow::setDatasetLines(const QStringList& lines) {
  menus_->setDatasetLines(lines);
}

void MainWindow::connectRedraws() {
  connect(model_, &LabModel::runsChanged, this, [this] {
    views_.runs->invalidate();
    menus_->updateRunControls();
    docks_->showRelevantDocks();
    session_->rememberSoon();  // once for a batch of runs opened together, not once per run
  });
  // Every change of the model (the app's run state, a selection, a colour, a hidden run) shows at the next turn of the
  // event loop, once for all the changes made before it: nothing redraws by hand.
  refreshSoon_.setSingleShot(true);
  refreshSoon_.setInterval(0);
  connect(&refreshSoon_, &QTimer::timeout, this, [this] {
    menus_->updateRunControls();
    refreshViews();
  });
  connect(model_, &LabModel::changed, &refreshSoon_, qOverload<>(&QTimer::start));
  connect(model_, &LabModel::runsChanged, &refreshSoon_, qOverload<>(&QTimer::start));
}

void MainWindow::setProbeBackend(LayerProbeBackend* backend) {
  views_.probe->setBackend(backend);
}

void MainWindow::setStudyBackend(const StudyBackend* backend, const StudyBackend* groupBackend) {
  views_.study->setBackend(backend);
  model_->setGroupBackend(groupBackend);
}

void MainWindow::setGrouping(bool on, const QStringList& keys) {
  menus_->setGrouping(on, keys);
}

void MainWindow::addPlayground(QWidget* playground) {
  menus_->addDockToggle(docks_->addPlayground(playground));
}

void MainWindow::refreshViews() {
  views_.runs->refresh();
  views_.log->refresh();
  // Runs still being read (a study's Draw groups): the table shows each as it comes, the views draw them all at once.
  if (model_->runsToCome() > 0) return;
  for (auto* view : views()) {
    if (view->isVisible() || !isVisible()) view->refresh();
  }
}

QStringList MainWindow::exportAll(const QString& directory) {
  return exportViews(views(), *this, directory);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!session_->confirmQuit(this)) {  // quitting stops the runs that train: said first, with the choice to stay
    event->ignore();
    return;
  }
  session_->rememberRuns();
  docks_->save();
  QMainWindow::closeEvent(event);
}

bool MainWindow::event(QEvent* event) {
  // Polished: after the dock area set its own elide mode on the bar it made.
  if (event->type() == QEvent::ChildPolished) {
    if (auto* tabs = qobject_cast<QTabBar*>(static_cast<QChildEvent*>(event)->child())) {
      tabs->setElideMode(Qt::ElideNone);
      tabs->setUsesScrollButtons(true);
    }
  }
  return QMainWindow::event(event);
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  docks_->layOutOnFirstShow();
}

void MainWindow::askAnnotation(const QString& runId) {
  const RunData* run = model_->run(runId);
  if (!run || run->path.isEmpty()) return;
  RunAnnotationDialog dialog(*run, this);
  if (dialog.exec() != QDialog::Accepted) return;
  emit annotationChosen(runId, dialog.edit());
}

void MainWindow::askBranch(const QString& runId, int64_t nearStep) {
  const RunData* run = model_->run(runId);
  if (!run || run->path.isEmpty()) return;
  const BranchSource source = backend_.branchSource(run->path);
  if (!source.error.isEmpty()) {
    showError(QStringLiteral("Cannot branch %1: %2").arg(run->name, source.error), runId);
    return;
  }
  const bool live = run->state == RunState::Running || run->state == RunState::Paused;
  if (!live && source.kept.isEmpty()) {
    showError(QStringLiteral("Cannot branch %1: its run file keeps no checkpoint yet").arg(run->name), runId);
    return;
  }
  BranchDialog dialog(*run, source, backend_, live, nearStep, this);
  if (dialog.exec() != QDialog::Accepted) return;
  emit branchChosen(runId, dialog.choice());
}

}  // namespace descentlab::widgets
