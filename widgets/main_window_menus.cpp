// What the main window's File and Help menus open (and a drop of run files or study folders): the open, save and export
// dialogs, export of every view, the recent files, Help > Getting started, and Help > Tours with a started tour's
// caption above the views.
#include "widgets/main_window.h"

#include <algorithm>

#include <qcustomplot.h>
#include <QAction>
#include <QActionGroup>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include "widgets/lab_model.h"
#include "widgets/study_browser.h"
#include "widgets/views.h"

namespace descentlab::widgets {
namespace {

// The run files and folders (studies) of a drop.
QStringList runFilesIn(const QMimeData* mime) {
  QStringList paths;
  if (!mime || !mime->hasUrls()) return paths;
  for (const auto& url : mime->urls()) {
    const QString path = url.toLocalFile();
    if (path.endsWith(QStringLiteral(".h5"), Qt::CaseInsensitive) || QFileInfo(path).isDir()) paths << path;
  }
  return paths;
}

constexpr int kRecentFiles = 8;

}  // namespace

void MainWindow::showGettingStarted() {
  auto* dialog = new QDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(QStringLiteral("Getting started with DescentLab"));
  auto* layout = new QVBoxLayout(dialog);
  auto* text = new QTextBrowser(dialog);
  text->setObjectName(QStringLiteral("getting-started"));
  text->setOpenExternalLinks(false);
  text->setHtml(gettingStartedHtml());
  layout->addWidget(text);
  auto* close = new QPushButton(QStringLiteral("Close"), dialog);
  connect(close, &QPushButton::clicked, dialog, &QDialog::close);
  layout->addWidget(close, 0, Qt::AlignRight);
  const QSize room = size() * 0.8;
  dialog->resize(std::min(720, room.width()), std::min(640, room.height()));
  dialog->show();
}

QString gettingStartedHtml() {
  return QStringLiteral(
      "<h2>Getting started</h2>"
      "<p>DescentLab trains small transformers and shows, live, what two 2026 papers are about: <b>layerwise "
      "descent</b> (each layer of an unrolled transformer should lower the loss, enforced by constraints trained "
      "primal-dual) and <b>HORST</b> (AdamW composed with a hyperbolic mirror step, for sparse training).</p>"
      "<h3>What to try first</h3><ol>"
      "<li>Press <b>Start</b> (F5): the <b>Experiment</b> panel (left) holds <i>video-constrained</i>, size "
      "<i>quick</i>, where every layer must beat the one before by a share α = 0.4. Then pick <i>video-erm</i> and "
      "Start again: the two runs train side by side (about a minute each on 2 cores). λ rises within the first "
      "epoch, and the constrained model's per-layer test loss falls faster through the early layers than ERM's, "
      "for the same final error.</li>"
      "<li>Watch <b>Per-layer loss</b>: the test loss f<sub>ℓ</sub> after each layer ℓ. Descent means the curve "
      "falls from left to right; red triangles mark layers where it rises. Compare the ERM run (dashed) with the "
      "constrained one.</li>"
      "<li>Open <b>Multipliers λ</b> (the Lagrange multipliers): λ<sub>ℓ</sub> grows while layer ℓ's constraint is "
      "violated and falls "
      "back to 0 once it holds. A flat 0 means the constraint never bound.</li>"
      "<li><b>Help &gt; Tours</b> starts a prepared pair for each paper's effect, with the views that show it "
      "in front: descent breaking for ERM, the cheap way out, HORST's pruned model, its masks, its weights near "
      "zero.</li>"
      "<li>For sparse training, start <i>vit-adamw</i> and <i>vit-horst</i> and open <b>Weight geometry</b>: the "
      "share of weights near zero, and the cumulative distribution on log |w|.</li>"
      "<li>When a layerwise run has finished, <b>Robustness</b> sweeps it under input noise of growing strength "
      "γ.</li>"
      "<li>The <b>Playground</b> shows, on toys, where each optimizer's implicit bias leads.</li></ol>"
      "<h3>The views</h3><table cellspacing=6>"
      "<tr><td><b>Training loss, Test metric</b></td><td>any series against step for every run, raw (faint) and "
      "smoothed; hover lists every run's value at that step; click a legend entry to hide a run.</td></tr>"
      "<tr><td><b>Per-layer loss</b></td><td>f<sub>ℓ</sub> against layer for the selected run (light = early "
      "evaluations, dark = late) and the newest curve of every other layerwise run; below, the share of test "
      "samples whose loss descends at each layer.</td></tr>"
      "<tr><td><b>Multipliers λ</b></td><td>λ<sub>ℓ</sub>, the slack g<sub>ℓ</sub> or the resilient "
      "relaxation u<sub>ℓ</sub> of the selected run, per layer.</td></tr>"
      "<tr><td><b>Weight geometry</b></td><td>the weight-magnitude distribution of every run, its sparsity and "
      "near-zero shares, and one run's histogram over time.</td></tr>"
      "<tr><td><b>Robustness</b></td><td>the test metric under noise, mean ± std over seeds.</td></tr>"
      "<tr><td><b>Runs, Log</b></td><td>one row per run (state, progress, speed, ETA, and the config keys in "
      "which runs differ); right-click for its menu. The Log is the selected run's.</td></tr></table>"
      "<p>Every run is written to an HDF5 run file as it trains (File &gt; Open brings it back, Resume continues a "
      "stopped one). Every plot zooms with a dragged rectangle or the wheel; a double click resets it; Export "
      "saves PNG, SVG, PDF or the CSV of what is drawn.</p>"
      "<h3>Keyboard shortcuts</h3><table cellspacing=6>"
      "<tr><td>F5</td><td>Start the experiment in the form</td></tr>"
      "<tr><td>F6 / F7 / Shift+F5</td><td>Pause / Resume / Stop the selected run</td></tr>"
      "<tr><td>Alt+Down / Alt+Up</td><td>Select the next / previous run</td></tr>"
      "<tr><td>Ctrl+H</td><td>Hide the selected run from the plots, or show it again</td></tr>"
      "<tr><td>Ctrl+W</td><td>Close the selected run (its file stays)</td></tr>"
      "<tr><td>Ctrl+O / Ctrl+Shift+S</td><td>Open run files / Save the selected run as</td></tr>"
      "<tr><td>Ctrl+Shift+O</td><td>Open a folder of run files as a study (the Study dock)</td></tr>"
      "<tr><td>F1</td><td>This page</td></tr>"
      "<tr><td>Ctrl+Q</td><td>Quit (running runs stop after their batch and keep their state)</td></tr>"
      "</table>");
}

void MainWindow::setTours(const QVector<TourInfo>& tours) {
  toursMenu_->clear();
  for (const auto& tour : tours) {
    const QString runs = tour.runs == 0   ? QStringLiteral("the playground")
                         : tour.runs == 1 ? QStringLiteral("1 run")
                                          : QStringLiteral("%1 runs side by side").arg(tour.runs);
    QAction* action = toursMenu_->addAction(QStringLiteral("%1 (%2)").arg(tour.title, runs));
    action->setToolTip(tour.caption);
    action->setStatusTip(tour.caption);
    action->setData(tour.name);
    const QString name = tour.name;
    connect(action, &QAction::triggered, this, [this, name] { emit tourRequested(name); });
  }
  toursMenu_->addSeparator();
  const bool withSeeds = toursWithSeeds();
  toursWithSeeds_ = toursMenu_->addAction(QStringLiteral("Run each tour with its measured seeds"));
  toursWithSeeds_->setCheckable(true);
  toursWithSeeds_->setChecked(withSeeds);
  toursWithSeeds_->setToolTip(
      QStringLiteral("A tour then trains each of its runs once per seed its effect was measured over (docs/tours.md), "
                     "two at a time, and the views draw each run's seeds as a group: its mean with a band"));
  toursMenu_->setToolTipsVisible(true);
  toursMenu_->setEnabled(!tours.isEmpty());
}

void MainWindow::setTourCaptionExpanded(bool expanded) {
  const TourInfo& tour = shownTour_;
  const QString title = QStringLiteral("<b>Tour: %1.</b> ").arg(tour.title.toHtmlEscaped());
  if (tour.watch.isEmpty()) {
    tourCaption_->setText(title + tour.caption.toHtmlEscaped());
  } else if (expanded) {
    // "Less" first: in a 1024x700 window the whole caption is taller than the bar and its end is cut off.
    tourCaption_->setText(title + QStringLiteral("<a href=\"#less\">Less</a> ") + tour.caption.toHtmlEscaped());
  } else {
    tourCaption_->setText(title + tour.watch.toHtmlEscaped() +
                          QStringLiteral(" <a href=\"#more\">More: what it means</a>"));
  }
  tourCaption_->setToolTip(expanded || tour.watch.isEmpty() ? QString() : tour.caption);
}

void MainWindow::showTour(const TourInfo& tour) {
  shownTour_ = tour;
  setTourCaptionExpanded(false);
  tourBox_->show();
  if (!tour.curves.isEmpty()) loss_->setMetric(tour.curves);
  if (!tour.layerLoss.isEmpty()) layerLoss_->setMode(tour.layerLoss);
  // Its views in front, after the dock area has applied showRelevantDocks' hides for the runs just added.
  QPointer<MainWindow> self(this);
  const QStringList views = tour.views;
  QTimer::singleShot(0, this, [self, views] {
    if (self) self->arrangeForTour(views);
  });
}

void MainWindow::arrangeForTour(const QStringList& views) {
  QList<QDockWidget*> shown;
  for (const auto& id : views) {
    QDockWidget* dock = dockOfView(id);
    if (!dock) continue;
    autoHidden_.remove(dock);
    dock->show();
    shown << dock;
  }
  const auto docked = std::find_if(shown.begin(), shown.end(), [](QDockWidget* dock) { return !dock->isFloating(); });
  if (docked == shown.end()) {
    for (auto* dock : shown) dock->raise();
    return;
  }
  // The other views give way: one that has a place of its own, or shares it with no view of the tour, goes behind
  // a view of the tour as a tab, one click away (at 1920x1080 an empty Test metric took half the views' height and
  // the tour's frontier a quarter, issue 33), into the tab group with the most room for its title (tab bars scroll
  // where titles do not fit). View > Reset layout brings the usual places back.
  const QFontMetrics metrics(font());
  const auto tabWidth = [&](QDockWidget* dock) { return metrics.horizontalAdvance(dock->windowTitle()) + 32; };
  const auto spareWidth = [&](QDockWidget* group) {
    int used = group->isVisible() ? tabWidth(group) : 0;
    for (auto* mate : tabifiedDockWidgets(group)) used += mate->isHidden() ? 0 : tabWidth(mate);
    return group->width() - used;
  };
  for (auto* dock :
       {layerDock_, metricDock_, lambdaDock_, weightDock_, robustDock_, frontierDock_, probeDock_, playgroundDock_}) {
    if (!dock || shown.contains(dock) || dock->isHidden() || dock->isFloating()) continue;
    const QList<QDockWidget*> mates = tabifiedDockWidgets(dock);
    if (std::any_of(mates.begin(), mates.end(), [&](QDockWidget* mate) { return shown.contains(mate); })) continue;
    QDockWidget* target = nullptr;
    for (auto* candidate : shown) {
      if (!candidate->isFloating() && (!target || spareWidth(candidate) > spareWidth(target))) target = candidate;
    }
    if (target) tabifyDockWidget(target, dock);
  }
  for (auto* dock : shown) dock->raise();
  // The tour's first view is what it is about: 60 % of the height it shares with the view in front below or above
  // it (another of the tour's, or one whose tab had no room to move; at 1024x700 the per-layer losses had about
  // 50 px), as far as that one's minimum allows. Measured once the dock area has laid out the moves above.
  QPointer<MainWindow> self(this);
  QDockWidget* anchor = *docked;
  QTimer::singleShot(0, this, [self, anchor] {
    if (!self || !anchor->isVisible()) return;
    // On a short screen the runs table gives the views what its tour's runs do not need (at 1024x700 the per-layer
    // plot was squeezed below its minimum, its axis title under the hint line): its header and three rows.
    if (self->height() < 800 && !self->runsDock_->isFloating() && self->runsDock_->isVisible()) {
      const int rows = self->runTable_->horizontalHeader()->sizeHint().height() +
                       3 * self->runTable_->verticalHeader()->defaultSectionSize();
      const int chrome = self->runsDock_->height() - self->runTable_->height();
      if (self->runsDock_->height() > rows + chrome) {
        self->resizeDocks({self->runsDock_}, {rows + chrome}, Qt::Vertical);
      }
    }
    QTimer::singleShot(0, self, [self, anchor] {
      if (self && anchor->isVisible()) self->giveTourViewItsShare(anchor);
    });
  });
}

void MainWindow::giveTourViewItsShare(QDockWidget* anchor) {
  const QRect first = anchor->geometry();
  for (auto* dock : findChildren<QDockWidget*>()) {
    const QRect other = dock->geometry();
    if (dock == anchor || !dock->isVisible() || dock->isFloating() || dock->visibleRegion().isEmpty() ||
        dockWidgetArea(dock) != dockWidgetArea(anchor) || other.top() == first.top() || other.right() < first.left() ||
        other.left() > first.right()) {
      continue;
    }
    const int column = first.height() + other.height();
    resizeDocks({anchor, dock}, {column * 60 / 100, column * 40 / 100}, Qt::Vertical);
    return;
  }
}

QString MainWindow::tourCaption() const {
  return tourBox_->isHidden() ? QString() : tourCaption_->text();
}

QStringList MainWindow::exportAll(const QString& directory) {
  QDir().mkpath(directory);
  QStringList written;
  for (auto* view : views()) {
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
  if (grab().save(dashboard)) written << dashboard;
  return written;
}

void MainWindow::addRecentFile(const QString& path) {
  addRecentFiles({path});
}

void MainWindow::addRecentFiles(const QStringList& paths) {
  if (paths.isEmpty()) return;
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
  for (const QString& path : paths) {  // the last one on top, as if added one by one
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
  }
  while (recent.size() > kRecentFiles) recent.removeLast();
  settings.setValue(QStringLiteral("recentFiles"), recent);
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  // Not clear(): that deletes the entries at once, and this runs from inside an entry's own triggered signal (an
  // opened file joins the list).
  for (QAction* action : recentMenu_->actions()) {
    recentMenu_->removeAction(action);
    action->deleteLater();
  }
  const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  for (const auto& path : recent) {
    recentMenu_->addAction(path, this, [this, path] { emit openRequested({path}); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::openFolderWithDialog() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, QStringLiteral("Open a folder of run files as a study"));
  if (!folder.isEmpty()) emit openFolderRequested(folder);
}

void MainWindow::openWithDialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(this, QStringLiteral("Open run files"), QString(),
                                                          QStringLiteral("DescentLab run files (*.h5)"));
  if (!paths.isEmpty()) emit openRequested(paths);
}

void MainWindow::saveWithDialog() {
  const QString id = selectedRunId();
  RunData* run = model_->run(id);
  if (!run) {
    showError(QStringLiteral("no run is selected to save"));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save run %1 as").arg(run->name), run->path,
                                                    QStringLiteral("DescentLab run files (*.h5)"));
  if (!path.isEmpty()) emit saveRequested(id, path);
}

void MainWindow::exportAllWithDialog() {
  const QString directory = QFileDialog::getExistingDirectory(this, QStringLiteral("Export every view into"));
  if (directory.isEmpty()) return;
  const QStringList written = exportAll(directory);
  showInfo(QStringLiteral("Exported %1 files into %2").arg(written.size()).arg(directory));
}

bool MainWindow::toursWithSeeds() const {
  return toursWithSeeds_ && toursWithSeeds_->isChecked();
}

void MainWindow::setToursWithSeeds(bool on) {
  if (toursWithSeeds_) toursWithSeeds_->setChecked(on);
}

void MainWindow::setStudyBackend(const StudyBackend* backend, const StudyBackend* groupBackend) {
  study_->setBackend(backend);
  model_->setGroupBackend(groupBackend);
}

void MainWindow::setGrouping(bool on, const QStringList& keys) {
  model_->setGrouping(on, keys);
  const QSignalBlocker blocker(groupAction_);
  groupAction_->setChecked(on);
  refreshViews();
}

void MainWindow::buildGroupMenu(QMenu* menu) {
  groupAction_ = menu->addAction(QStringLiteral("Draw &seeds as groups"));
  groupAction_->setCheckable(true);
  groupAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  groupAction_->setToolTip(
      QStringLiteral("Runs that differ only by their seeds drawn as their mean with a band, in every view"));
  connect(groupAction_, &QAction::toggled, this, [this](bool on) { setGrouping(on, model_->groupKeys()); });
  menu->addAction(QStringLiteral("Group &by…"), this, [this] {
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, QStringLiteral("Group runs by"),
        QStringLiteral("Config keys, comma-separated (empty: every key that differs but the seeds):"),
        QLineEdit::Normal, model_->groupKeys().join(QStringLiteral(", ")), &ok);
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
    action->setChecked(kind == model_->bandKind());
    bands->addAction(action);
    connect(action, &QAction::triggered, this, [this, kind] {
      model_->setBandKind(kind);
      refreshViews();
    });
  }
}

void MainWindow::showStudy() {
  studyShown_ = true;
  if (!laidOut_) return;  // the first show lays the docks out, and then calls this again
  studyDock_->show();
  // raise() selects a tabbed dock only when it changes the dock's stacking order, and the Study dock, made last, is
  // already on top of its siblings: lowered first, its raise always brings its tab forward.
  studyDock_->lower();
  studyDock_->raise();
  // The runs of a study need rows: the bottom area takes 45 % of the height (the views keep the rest).
  // (Once the dock area has applied the raise: sized before, the tab group keeps its old height.)
  QTimer::singleShot(0, this, [this] { resizeDocks({studyDock_}, {height() * 45 / 100}, Qt::Vertical); });
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!runFilesIn(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths = runFilesIn(event->mimeData());
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  QStringList files;
  for (const auto& path : paths) {
    if (QFileInfo(path).isDir()) {
      emit openFolderRequested(path);
    } else {
      files << path;
    }
  }
  if (!files.isEmpty()) emit openRequested(files);
}

}  // namespace descentlab::widgets
