// The main window's construction: the central loss view under the message and tour bars, the docks and their
// layout for the window's size (and the saved one), the menus, and the window's events (close, first show, dropped
// run files). The runs table and run controls are in main_window_runs.cpp; what the File and Help menus open in
// main_window_menus.cpp.
#include "widgets/main_window.h"

#include <algorithm>

#include <QAction>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QMap>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include "core/record/metrics.h"
#include "widgets/dismissable_bar.h"
#include "widgets/lab_model.h"
#include "widgets/study_browser.h"
#include "widgets/views.h"

namespace descentlab::widgets {

MainWindow::MainWindow(const EnvironmentSummary& summary, const ExperimentBackend& backend, QWidget* parent)
    : QMainWindow(parent), summary_(summary) {
  setWindowTitle(QStringLiteral("DescentLab %1").arg(summary.version));
  setObjectName(QStringLiteral("DescentLabMainWindow"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks | QMainWindow::AllowTabbedDocks);
  // The screen's whole available area: on a large screen the views get the room (two columns from 1700 px wide),
  // and a window larger than its screen would hide its right column.
  const QRect screen = QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry()
                                                        : QRect(0, 0, 1600, 1000);
  resize(screen.size());
  model_ = new LabModel(this);
  experiment_ = new ExperimentPanel(backend, this);

  // The banner: errors and notices appear here, above the views, without stopping anything.
  auto* central = new QWidget(this);
  auto* centralLayout = new QVBoxLayout(central);
  centralLayout->setContentsMargins(0, 0, 0, 0);
  bannerBox_ = makeDismissableBar(central, banner_, QStringLiteral("Hide this message"));
  centralLayout->addWidget(bannerBox_);
  // A tour's caption: what to watch and what it means, until dismissed.
  tourBox_ = makeDismissableBar(central, tourCaption_, QStringLiteral("Hide the tour's caption (its runs go on)"));
  tourBox_->setObjectName(QStringLiteral("tour-caption"));
  tourBox_->setStyleSheet(QStringLiteral("background: #e4f0fb; color: #10324f;"));
  tourCaption_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  // One sentence until the user asks for more: at 1024x700 the whole caption filled the middle column.
  connect(tourCaption_, &QLabel::linkActivated, this,
          [this](const QString& link) { setTourCaptionExpanded(link == QLatin1String("#more")); });
  centralLayout->addWidget(tourBox_);
  loss_ =
      new TrainingCurvesView(model_, QStringLiteral("Training loss"), QLatin1String(record::metric::kLoss), central);
  centralLayout->addWidget(loss_, 1);
  setCentralWidget(central);

  buildDocks();
  buildMenus();
  statusBar()->showMessage(QStringLiteral("device %1 · %2 thread(s) · LibTorch %3 · BLAS %4")
                               .arg(summary.device)
                               .arg(summary.threads)
                               .arg(summary.torch_version, summary.blas));

  connect(experiment_, &ExperimentPanel::startRequested, this, &MainWindow::startRequested);
  connect(experiment_, &ExperimentPanel::pauseRequested, this, [this] { emit pauseRequested(selectedRunId()); });
  connect(experiment_, &ExperimentPanel::resumeRequested, this, [this] { emit resumeRequested(selectedRunId()); });
  connect(experiment_, &ExperimentPanel::stopRequested, this, [this] { emit stopRequested(selectedRunId()); });
  connect(robustness_, &RobustnessView::sweepRequested, this, &MainWindow::sweepRequested);
  connect(robustness_, &RobustnessView::cancelSweepRequested, this, &MainWindow::cancelSweepRequested);
  connect(this, &MainWindow::revealRequested, this,
          [](const QString& path) { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath())); });
  connect(model_, &LabModel::runsChanged, this, [this] {
    tableRevision_ = -1;
    updateRunControls();
    showRelevantDocks();
    sessionSave_.start();  // once for a batch of runs opened together, not once per run
  });
  sessionSave_.setSingleShot(true);
  sessionSave_.setInterval(0);
  connect(&sessionSave_, &QTimer::timeout, this, &MainWindow::rememberSessionRuns);
  // The banner's links: "Reopen them" (the last session's runs).
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  connect(banner_, &QLabel::linkActivated, this, [this](const QString& link) {
    if (link != QLatin1String("#reopen") || offeredSession_.isEmpty()) return;
    const QStringList paths = offeredSession_;
    offeredSession_.clear();
    bannerBox_->hide();
    emit openRequested(paths);
  });
  // Every change of the model (the app's run state, a selection, a colour, a hidden run) shows at the next turn of the
  // event loop, once for all the changes made before it: the app never redraws by hand.
  refreshSoon_.setSingleShot(true);
  refreshSoon_.setInterval(0);
  connect(&refreshSoon_, &QTimer::timeout, this, [this] {
    updateRunControls();
    refreshViews();
  });
  connect(model_, &LabModel::changed, &refreshSoon_, qOverload<>(&QTimer::start));
  connect(model_, &LabModel::runsChanged, &refreshSoon_, qOverload<>(&QTimer::start));

  arrangeDocks();  // for the constructor's size; the first show arranges again for the size the window then has
  updateRecentMenu();
  refreshViews();
}

QDockWidget* MainWindow::makeDock(const QString& title, QWidget* content, const QString& name) {
  auto* widget = new QDockWidget(title, this);
  // The object name keys the saved layout: it stays when a title is reworded.
  widget->setObjectName(QStringLiteral("dock-") +
                        (name.isEmpty() ? title.toLower().replace(QLatin1Char(' '), QLatin1Char('-')) : name));
  widget->setWidget(content);
  widget->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
  addDockWidget(Qt::RightDockWidgetArea, widget);
  return widget;
}

void MainWindow::buildDocks() {
  experimentDock_ = makeDock(QStringLiteral("Experiment"), experiment_);

  runTable_ = new QTableWidget(this);
  runTable_->setObjectName(QStringLiteral("runs-table"));
  // Rows as tall as their text: at 1024x700 the runs dock has room for the header and 1.5 of Qt's default rows, and
  // a tour's second run was cut in half.
  runTable_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  runTable_->verticalHeader()->setDefaultSectionSize(runTable_->fontMetrics().height() + 6);
  // Its header and one row at the least: a 1024x700 window also stacks two tab groups of views above it.
  runTable_->setMinimumHeight(runTable_->horizontalHeader()->sizeHint().height() +
                              runTable_->verticalHeader()->defaultSectionSize() + 4);
  runTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runTable_->setSelectionMode(QAbstractItemView::SingleSelection);
  runTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  runTable_->verticalHeader()->hide();
  runTable_->horizontalHeader()->setStretchLastSection(true);
  // A click on a column's header sorts the runs by it; a second click reverses the order.
  runTable_->horizontalHeader()->setSectionsClickable(true);
  connect(runTable_->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int column) {
    sortOrder_ = column == sortColumn_ && sortOrder_ == Qt::AscendingOrder ? Qt::DescendingOrder : Qt::AscendingOrder;
    sortColumn_ = column;
    tableRevision_ = -1;
    updateRunTable();
  });
  runTable_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(runTable_, &QTableWidget::customContextMenuRequested, this, &MainWindow::showRunMenu);
  // The selected row is the focus run: the controls, the single-run views and the Log follow it.
  connect(runTable_, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = runTable_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    if (auto* item = runTable_->item(rows.front().row(), 0)) model_->setFocusRun(item->data(Qt::UserRole).toString());
  });
  runsDock_ = makeDock(QStringLiteral("Runs"), runTable_);
  runTable_->installEventFilter(this);  // filled when it shows (see updateRunTable)

  log_ = new QPlainTextEdit(this);
  log_->setObjectName(QStringLiteral("log"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  logDock_ = makeDock(QStringLiteral("Log"), log_);

  metric_ = new TrainingCurvesView(model_, QStringLiteral("Test metric"), QStringLiteral("@test"), this);
  layerLoss_ = new LayerLossView(model_, this);
  lambda_ = new LambdaView(model_, this);
  weights_ = new WeightGeometryView(model_, this);
  robustness_ = new RobustnessView(model_, this);
  frontier_ = new FrontierView(model_, this);
  metricDock_ = makeDock(QStringLiteral("Test metric"), metric_);
  layerDock_ = makeDock(QStringLiteral("Per-layer loss"), layerLoss_);
  // Short titles: three tabs share a dock's width in a laptop-size window.
  lambdaDock_ = makeDock(QStringLiteral("Multipliers λ"), lambda_, QStringLiteral("lagrange-multipliers"));
  weightDock_ = makeDock(QStringLiteral("Weight geometry"), weights_);
  robustDock_ = makeDock(QStringLiteral("Robustness"), robustness_);
  frontierDock_ = makeDock(QStringLiteral("Sparsity frontier"), frontier_);
  probe_ = new LayerProbeView(model_, this);
  probeDock_ = makeDock(QStringLiteral("Layer probe"), probe_);
  study_ = new StudyBrowser(this);
  connect(study_, &StudyBrowser::openRunsRequested, this, &MainWindow::openRequested);
  connect(study_, &StudyBrowser::drawGroupsRequested, this, [this](const QStringList& paths, const QStringList& keys) {
    QMap<QString, QString> nameOf;
    for (const auto& row : study_->runs()) nameOf.insert(row.path, row.name);
    QStringList names;
    for (const auto& path : paths) names << nameOf.value(path);
    emit openInBackgroundRequested(paths, names);
    setGrouping(true, keys);
  });
  // In a scroll area: the browser needs about 190 px of height, and the Runs and Log docks it shares a tab group
  // with may get less (a tour at 1024x700 shrinks the group to the runs table's header and 3 rows).
  auto* studyScroll = new QScrollArea(this);
  studyScroll->setWidget(study_);
  studyScroll->setWidgetResizable(true);
  studyScroll->setFrameShape(QFrame::NoFrame);
  studyDock_ = makeDock(QStringLiteral("Study"), studyScroll);
}

void MainWindow::setProbeBackend(LayerProbeBackend* backend) {
  probe_->setBackend(backend);
}

void MainWindow::arrangeDocks() {
  const QSize area = size();
  const bool wide = area.width() >= 1700;  // room for two columns of views beside the loss
  const bool tall = area.height() >= 900;  // room for the log beside the runs table
  QList<QDockWidget*> docks = {experimentDock_, runsDock_,   logDock_,      metricDock_, layerDock_, lambdaDock_,
                               weightDock_,     robustDock_, frontierDock_, probeDock_,  studyDock_};
  if (playgroundDock_) docks.push_back(playgroundDock_);
  for (auto* dock : docks) {
    dock->setFloating(false);
    removeDockWidget(dock);
  }
  // Left: the experiment. Bottom: the runs (and the log, beside them or behind them). Right: the views.
  addDockWidget(Qt::LeftDockWidgetArea, experimentDock_);
  addDockWidget(Qt::BottomDockWidgetArea, runsDock_);
  addDockWidget(Qt::BottomDockWidgetArea, logDock_);
  if (tall) {
    splitDockWidget(runsDock_, logDock_, Qt::Horizontal);
  } else {
    tabifyDockWidget(runsDock_, logDock_);
  }
  tabifyDockWidget(runsDock_, studyDock_);
  addDockWidget(Qt::RightDockWidgetArea, layerDock_);
  addDockWidget(Qt::RightDockWidgetArea, lambdaDock_);
  splitDockWidget(layerDock_, lambdaDock_, Qt::Vertical);
  if (wide) {  // two columns: per-layer loss | test metric over λ | weight geometry
    addDockWidget(Qt::RightDockWidgetArea, metricDock_);
    addDockWidget(Qt::RightDockWidgetArea, weightDock_);
    splitDockWidget(layerDock_, metricDock_, Qt::Horizontal);
    splitDockWidget(lambdaDock_, weightDock_, Qt::Horizontal);
  } else {  // one column of two tab groups
    tabifyDockWidget(layerDock_, metricDock_);
    tabifyDockWidget(layerDock_, weightDock_);
  }
  tabifyDockWidget(layerDock_, probeDock_);
  tabifyDockWidget(lambdaDock_, robustDock_);
  tabifyDockWidget(lambdaDock_, frontierDock_);
  if (playgroundDock_) tabifyDockWidget(lambdaDock_, playgroundDock_);
  for (auto* dock : docks) dock->show();
  autoHidden_.clear();
  runKinds_ = -1;
  showRelevantDocks();
  if (studyShown_) studyDock_->lower();  // see showStudy()
  (studyShown_ ? studyDock_ : runsDock_)->raise();
  const int experimentWidth = std::clamp(area.width() / 5, 250, 330);
  const int viewsWidth = (area.width() - experimentWidth) * (wide ? 58 : 50) / 100;
  resizeDocks({experimentDock_}, {experimentWidth}, Qt::Horizontal);
  resizeDocks({layerDock_}, {wide ? viewsWidth / 2 : viewsWidth}, Qt::Horizontal);
  if (wide) resizeDocks({metricDock_}, {viewsWidth / 2}, Qt::Horizontal);
  // A study open needs rows: the bottom area then takes 45 % of the height (the views keep the rest).
  resizeDocks({runsDock_}, {studyShown_ ? area.height() * 45 / 100 : tall ? 200 : 150}, Qt::Vertical);
  // The per-layer loss (two plots) gets the larger share of the views' height.
  resizeDocks({layerDock_, lambdaDock_}, {area.height() * 55 / 100, area.height() * 45 / 100}, Qt::Vertical);
  if (tall) resizeDocks({runsDock_, logDock_}, {area.width() * 2 / 3, area.width() / 3}, Qt::Horizontal);
}

void MainWindow::showRelevantDocks() {
  // 1: a layerwise run is open, 2: a sparse one; 0: none (every view shows its hint).
  int kinds = 0;
  for (auto* run : model_->runs()) {
    kinds |= run->kind == RunKind::Layerwise ? 1 : run->kind == RunKind::Sparse ? 2 : 0;
  }
  if (kinds == runKinds_) return;  // only on a change, so a view the user shows again stays shown
  runKinds_ = kinds;
  // Per-layer loss, λ and robustness sweeps belong to layerwise descent, the sparsity frontier to sparse training:
  // with only one kind of run open, the other kind's views give their space to those that have something to show.
  const bool sparseOnly = kinds == 2;
  const bool layerwiseOnly = kinds == 1;
  for (auto* dock : {layerDock_, lambdaDock_, robustDock_, frontierDock_, probeDock_}) {
    const bool irrelevant = dock == frontierDock_ ? layerwiseOnly : sparseOnly;
    if (irrelevant && dock->isVisible()) {
      dock->hide();
      autoHidden_.insert(dock);
    } else if (!irrelevant && autoHidden_.contains(dock)) {
      dock->show();
      autoHidden_.remove(dock);
    }
  }
  // Raised once the dock area has applied the hides above (it picks its own current tab when a tab is hidden).
  if (sparseOnly) {
    QTimer::singleShot(0, weightDock_, &QDockWidget::raise);
    QTimer::singleShot(0, frontierDock_, &QDockWidget::raise);
  } else if (kinds & 1) {
    QTimer::singleShot(0, layerDock_, &QDockWidget::raise);
    QTimer::singleShot(0, lambdaDock_, &QDockWidget::raise);
  }
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open run…"), QKeySequence(Qt::CTRL | Qt::Key_O), this, &MainWindow::openWithDialog);
  file->addAction(QStringLiteral("Open &folder as a study…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                  &MainWindow::openFolderWithDialog);
  recentMenu_ = file->addMenu(QStringLiteral("Open &recent"));
  file->addAction(QStringLiteral("&Save run as…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this,
                  &MainWindow::saveWithDialog);
  file->addSeparator();
  file->addAction(QStringLiteral("&Export all views…"), this, &MainWindow::exportAllWithDialog);
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), this, &QWidget::close);

  buildRunMenu();

  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  for (auto* dockWidget : findChildren<QDockWidget*>()) view->addAction(dockWidget->toggleViewAction());
  view->addSeparator();
  buildGroupMenu(view->addMenu(QStringLiteral("&Groups")));
  view->addAction(QStringLiteral("Reset &layout"), this, &MainWindow::arrangeDocks);

  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  toursMenu_ = help->addMenu(QStringLiteral("&Tours"));
  toursMenu_->setEnabled(false);
  help->addAction(QStringLiteral("&Getting started and shortcuts"), QKeySequence(Qt::Key_F1), this,
                  &MainWindow::showGettingStarted);
  help->addAction(QStringLiteral("&Environment and datasets…"), this, [this] {
    QString datasets;
    for (const auto& line : summary_.datasets) datasets += QStringLiteral("<li>%1</li>").arg(line.toHtmlEscaped());
    QMessageBox::information(
        this, QStringLiteral("DescentLab environment"),
        QStringLiteral("<p><b>DescentLab %1</b></p><p>LibTorch %2 · %3 · %4 thread(s)<br>BLAS: %5</p>"
                       "<p><b>Datasets</b></p><ul>%6</ul><p>Runs are HDF5 files: drop them on the window to open "
                       "them.</p>")
            .arg(summary_.version.toHtmlEscaped(), summary_.torch_version.toHtmlEscaped(),
                 summary_.device.toHtmlEscaped(), QString::number(summary_.threads), summary_.blas.toHtmlEscaped(),
                 datasets));
  });
}

void MainWindow::addPlayground(QWidget* playground) {
  playgroundDock_ = makeDock(QStringLiteral("Playground"), playground, QStringLiteral("geometry-playground"));
  tabifyDockWidget(lambdaDock_, playgroundDock_);
  lambdaDock_->raise();
  for (auto* menu : menuBar()->findChildren<QMenu*>()) {
    if (menu->title() == QStringLiteral("&View"))
      menu->insertAction(menu->actions().value(0), playgroundDock_->toggleViewAction());
  }
}

QDockWidget* MainWindow::dockOfView(const QString& id) const {
  if (id == QLatin1String("test_metric")) return metricDock_;
  if (id == QLatin1String("layer_loss")) return layerDock_;
  if (id == QLatin1String("lambda")) return lambdaDock_;
  if (id == QLatin1String("weight_geometry")) return weightDock_;
  if (id == QLatin1String("robustness")) return robustDock_;
  if (id == QLatin1String("frontier")) return frontierDock_;
  if (id == QLatin1String("layer_probe")) return probeDock_;
  if (id == QLatin1String("playground")) return playgroundDock_;
  return nullptr;
}

QVector<PlotView*> MainWindow::views() const {
  return {loss_, metric_, layerLoss_, lambda_, weights_, robustness_, frontier_};
}

void MainWindow::refreshViews() {
  updateRunTable();
  updateLog();
  // Runs still being read (a study's Draw groups): the table shows each as it comes, the views draw them all at once.
  if (model_->runsToCome() > 0) return;
  for (auto* view : views()) {
    if (view->isVisible() || !isVisible()) view->refresh();
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // Quitting stops the runs that train: said first, with the choice to stay.
  QStringList training;
  for (auto* run : model_->runs()) {
    if (run->isActive()) training << run->name;
  }
  if (!training.isEmpty()) {
    QMessageBox ask(QMessageBox::Question, QStringLiteral("Quit DescentLab?"),
                    QStringLiteral("%1 %2 still training: %3.")
                        .arg(training.size())
                        .arg(training.size() == 1 ? QStringLiteral("run is") : QStringLiteral("runs are"),
                             training.join(QStringLiteral(", "))),
                    QMessageBox::NoButton, this);
    ask.setInformativeText(
        QStringLiteral("Quit stops each after its current batch and keeps its state as "
                       "\"latest\"; the next start offers to reopen them, and Resume continues "
                       "each where it stopped."));
    QPushButton* quit = ask.addButton(QStringLiteral("Stop them and quit"), QMessageBox::AcceptRole);
    ask.addButton(QMessageBox::Cancel);
    ask.setDefaultButton(quit);
    ask.exec();
    if (ask.clickedButton() != quit) {
      event->ignore();
      return;
    }
  }
  rememberSessionRuns();
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
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
  if (laidOut_) return;
  laidOut_ = true;
  const QSize wanted = size();
  if (!restoreSavedLayout()) {
    arrangeDocks();
    resize(wanted);  // re-adding the docks of a shown window lets it grow to their preferred size
  }
  if (studyShown_) showStudy();  // a study opened before the window was shown (`descentlab DIR`)
}

void MainWindow::rememberSessionRuns() {
  QStringList paths;
  for (auto* run : model_->runs()) {
    if (!run->path.isEmpty()) paths << run->path;
  }
  QSettings().setValue(QStringLiteral("session/runs"), paths);
}

QStringList MainWindow::lastSessionRuns() const {
  QStringList existing;
  for (const QString& path : QSettings().value(QStringLiteral("session/runs")).toStringList()) {
    if (QFileInfo::exists(path)) existing << path;
  }
  return existing;
}

int MainWindow::offerLastSession() {
  offeredSession_ = lastSessionRuns();
  if (offeredSession_.isEmpty()) return 0;
  QStringList names;
  for (const QString& path : offeredSession_) names << QFileInfo(path).completeBaseName();
  const int shown = 4;
  QString listed = names.mid(0, shown).join(QStringLiteral(", "));
  if (names.size() > shown) listed += QStringLiteral(" and %1 more").arg(names.size() - shown);
  showInfo(QStringLiteral("The last session had %1 run%2 open: %3.")
               .arg(names.size())
               .arg(names.size() == 1 ? "" : "s")
               .arg(listed));
  banner_->setText(lastMessage_.toHtmlEscaped() + QStringLiteral(" <a href=\"#reopen\">Reopen them</a> (a run stopped "
                                                                 "mid-training then continues with Resume)"));
  return static_cast<int>(offeredSession_.size());
}

void MainWindow::clearMessage(const QString& message) {
  if (message.isEmpty() || lastMessage_ != message || !bannerBox_->isVisible()) return;
  bannerBox_->hide();
}

bool MainWindow::restoreSavedLayout() {
  QSettings settings;
  const QByteArray state = settings.value(QStringLiteral("window/state")).toByteArray();
  // A layout of another version, or one that no longer fits (a smaller screen, a squashed table), is dropped.
  if (state.isEmpty() || !restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()) ||
      !restoreState(state, kLayoutVersion)) {
    return false;
  }
  if (auto* screen = QGuiApplication::primaryScreen()) {
    const QRect available = screen->availableGeometry();
    if (width() > available.width() || height() > available.height()) {
      resize(std::min(width(), available.width()), std::min(height(), available.height()));
      return false;
    }
  }
  layout()->activate();
  for (auto* dock : findChildren<QDockWidget*>()) {
    if (dock->isVisible() && !dock->isFloating() && (dock->width() < 150 || dock->height() < 90)) return false;
  }
  return true;
}

}  // namespace descentlab::widgets
