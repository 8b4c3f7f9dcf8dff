#include "widgets/window_menus.h"

#include <algorithm>

#include <qcustomplot.h>
#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>

#include "widgets/dock_layout.h"
#include "widgets/experiment_panel.h"
#include "widgets/lab_model.h"
#include "widgets/message_bar.h"
#include "widgets/plot_view.h"

namespace descentlab::widgets {

QStringList exportViews(const QVector<PlotView*>& views, QWidget& window, const QString& directory) {
  QDir().mkpath(directory);
  QStringList written;
  for (auto* view : views) {
    const QString base = QDir(directory).filePath(view->fileStem());
    for (const QString& suffix :
         {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf"), QStringLiteral("csv")}) {
      const QString path = base + QLatin1Char('.') + suffix;
      const int width = std::max(view->plot()->width(), 800);
      const int height = std::max(view->plot()->height(), 560);
      if (view->exportImage(path, width, height)) written << path;
    }
  }
  // The whole window as it looks.
  const QString dashboard = QDir(directory).filePath(QStringLiteral("dashboard.png"));
  if (window.grab().save(dashboard)) written << dashboard;
  return written;
}

WindowMenus::WindowMenus(QMainWindow& window, LabModel& model, ExperimentPanel& experiment, DockLayout& docks,
                         MessageBar& messages, const EnvironmentSummary& summary)
    : QObject(&window),
      window_(window),
      model_(model),
      experiment_(experiment),
      docks_(docks),
      messages_(messages),
      summary_(summary) {
  buildFileMenu();
  buildRunMenu();
  buildViewMenu();
  buildHelpMenu();
  updateRunControls();  // with no run open, what acts on the selected run is off from the start
}

void WindowMenus::buildFileMenu() {
  QMenu* file = window_.menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open run…"), QKeySequence(Qt::CTRL | Qt::Key_O), this, &WindowMenus::openWithDialog);
  file->addAction(QStringLiteral("Open &folder as a study…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                  &WindowMenus::openFolderWithDialog);
  recentMenu_ = file->addMenu(QStringLiteral("Open &recent"));
  file->addAction(QStringLiteral("&Save run as…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this,
                  &WindowMenus::saveWithDialog);
  file->addSeparator();
  file->addAction(QStringLiteral("&Export all views…"), this, &WindowMenus::exportAllWithDialog);
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), &window_, &QWidget::close);
}

void WindowMenus::buildRunMenu() {
  QMenu* run = window_.menuBar()->addMenu(QStringLiteral("&Run"));
  run->addAction(QStringLiteral("&Start the experiment"), QKeySequence(Qt::Key_F5), &experiment_,
                 &ExperimentPanel::start);
  pauseAction_ = run->addAction(QStringLiteral("&Pause"), QKeySequence(Qt::Key_F6), this,
                                [this] { emit pauseRequested(model_.focusRunId()); });
  resumeAction_ = run->addAction(QStringLiteral("&Resume"), QKeySequence(Qt::Key_F7), this,
                                 [this] { emit resumeRequested(model_.focusRunId()); });
  stopAction_ = run->addAction(QStringLiteral("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5), this,
                               [this] { emit stopRequested(model_.focusRunId()); });
  branchAction_ = run->addAction(QStringLiteral("&Branch…"), QKeySequence(Qt::CTRL | Qt::Key_B), this, [this] {
    if (!model_.focusRunId().isEmpty()) emit branchRequested(model_.focusRunId());
  });
  branchAction_->setToolTip(
      QStringLiteral("A new run that continues the selected run's exact state with the settings you change"));
  run->addSeparator();
  nextAction_ = run->addAction(QStringLiteral("&Next run"), QKeySequence(Qt::ALT | Qt::Key_Down), this,
                               [this] { selectNeighbourRun(1); });
  previousAction_ = run->addAction(QStringLiteral("Pre&vious run"), QKeySequence(Qt::ALT | Qt::Key_Up), this,
                                   [this] { selectNeighbourRun(-1); });
  hideAction_ =
      run->addAction(QStringLiteral("&Hide from plots / show"), QKeySequence(Qt::CTRL | Qt::Key_H), this, [this] {
        if (const RunData* selected = model_.focusRun()) model_.setRunVisible(selected->id, !selected->visible);
      });
  annotateAction_ = run->addAction(QStringLiteral("Na&me, tags and note…"), QKeySequence(Qt::Key_F2), this, [this] {
    if (!model_.focusRunId().isEmpty()) emit annotateRequested(model_.focusRunId());
  });
  closeAction_ = run->addAction(QStringLiteral("&Close run"), QKeySequence(Qt::CTRL | Qt::Key_W), this, [this] {
    if (!model_.focusRunId().isEmpty()) emit closeRunRequested(model_.focusRunId());
  });
}

void WindowMenus::buildViewMenu() {
  viewMenu_ = window_.menuBar()->addMenu(QStringLiteral("&View"));
  for (auto* dockWidget : window_.findChildren<QDockWidget*>()) viewMenu_->addAction(dockWidget->toggleViewAction());
  viewMenu_->addSeparator();
  buildGroupMenu(viewMenu_->addMenu(QStringLiteral("&Groups")));
  viewMenu_->addAction(QStringLiteral("Reset &layout"), &docks_, &DockLayout::arrange);
}

void WindowMenus::buildGroupMenu(QMenu* menu) {
  groupAction_ = menu->addAction(QStringLiteral("Draw &seeds as groups"));
  groupAction_->setCheckable(true);
  groupAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  groupAction_->setToolTip(
      QStringLiteral("Runs that differ only by their seeds drawn as their mean with a band, in every view"));
  connect(groupAction_, &QAction::toggled, this, [this](bool on) { setGrouping(on, model_.groupKeys()); });
  menu->addAction(QStringLiteral("Group &by…"), this, [this] {
    bool ok = false;
    const QString text = QInputDialog::getText(
        &window_, QStringLiteral("Group runs by"),
        QStringLiteral("Config keys, comma-separated (empty: every key that differs but the seeds):"),
        QLineEdit::Normal, model_.groupKeys().join(QStringLiteral(", ")), &ok);
    if (!ok) return;
    QStringList keys;
    for (const auto& key : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) keys << key.trimmed();
    setGrouping(true, keys);
  });
  menu->addSeparator();
  auto* bands = new QActionGroup(menu);
  for (auto kind : {record::BandKind::MinMax, record::BandKind::StandardDeviation}) {
    QAction* action = menu->addAction(QStringLiteral("Band: %1").arg(bandKindName(kind)));
    action->setCheckable(true);
    action->setChecked(kind == model_.bandKind());
    bands->addAction(action);
    connect(action, &QAction::triggered, this, [this, kind] { model_.setBandKind(kind); });  // the model announces it
  }
}

void WindowMenus::buildHelpMenu() {
  QMenu* help = window_.menuBar()->addMenu(QStringLiteral("&Help"));
  toursMenu_ = help->addMenu(QStringLiteral("&Tours"));
  help->addAction(QStringLiteral("&Getting started and shortcuts"), QKeySequence(Qt::Key_F1), this,
                  [this] { showGettingStarted(&window_); });
  help->addAction(QStringLiteral("&Environment and datasets…"), this, [this] { showEnvironment(&window_, summary_); });
}

void WindowMenus::addDockToggle(QDockWidget* dock) {
  viewMenu_->insertAction(viewMenu_->actions().value(0), dock->toggleViewAction());
}

void WindowMenus::updateRunControls() {
  const RunData* run = model_.focusRun();
  const RunActions actions = run ? availableActions(*run) : RunActions{};
  // As the runs table says it: a finished run being swept reads "sweeping", not "finished".
  const QString state = run && run->sweep.running ? QStringLiteral("sweeping") : run ? runStateName(run->state) : "";
  experiment_.setRunControls(run ? QStringLiteral("%1 (%2)").arg(run->name, state) : QString(), actions.pause,
                             actions.resume, actions.stop, actions.branch);
  branchAction_->setEnabled(actions.branch);
  pauseAction_->setEnabled(actions.pause);
  resumeAction_->setEnabled(actions.resume);
  stopAction_->setEnabled(actions.stop);
  closeAction_->setEnabled(actions.close && run);
  hideAction_->setEnabled(run != nullptr);
  annotateAction_->setEnabled(run != nullptr && !run->path.isEmpty());
  // Next and previous move the selection: they need another run to move to.
  nextAction_->setEnabled(model_.count() > 1);
  previousAction_->setEnabled(model_.count() > 1);
}

void WindowMenus::setGrouping(bool on, const QStringList& keys) {
  model_.setGrouping(on, keys);  // the model announces the change: the views redraw grouped at the next turn
  const QSignalBlocker blocker(groupAction_);
  groupAction_->setChecked(on);
}

void WindowMenus::selectNeighbourRun(int offset) {
  const int count = model_.count();
  if (count == 0) return;
  const QString selected = model_.focusRunId();
  int index = 0;
  for (int i = 0; i < count; ++i) {
    if (model_.runAt(i)->id == selected) index = i;
  }
  model_.setFocusRun(model_.runAt(((index + offset) % count + count) % count)->id);
}

void WindowMenus::openWithDialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(&window_, QStringLiteral("Open run files"), QString(),
                                                          QStringLiteral("DescentLab run files (*.h5)"));
  if (!paths.isEmpty()) emit openRequested(paths);
}

void WindowMenus::openFolderWithDialog() {
  const QString folder =
      QFileDialog::getExistingDirectory(&window_, QStringLiteral("Open a folder of run files as a study"));
  if (!folder.isEmpty()) emit openFolderRequested(folder);
}

void WindowMenus::saveWithDialog() {
  const RunData* run = model_.focusRun();
  if (!run) {
    messages_.showError(QStringLiteral("no run is selected to save"));
    return;
  }
  const QString id = run->id;
  const QString path = QFileDialog::getSaveFileName(&window_, QStringLiteral("Save run %1 as").arg(run->name),
                                                    run->path, QStringLiteral("DescentLab run files (*.h5)"));
  if (!path.isEmpty()) emit saveRequested(id, path);
}

void WindowMenus::exportAllWithDialog() {
  const QString directory = QFileDialog::getExistingDirectory(&window_, QStringLiteral("Export every view into"));
  if (!directory.isEmpty()) emit exportRequested(directory);
}

}  // namespace descentlab::widgets
