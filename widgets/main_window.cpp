#include "widgets/main_window.h"

#include <algorithm>

#include <qcustomplot.h>
#include <QAction>
#include <QClipboard>
#include <QCloseEvent>
#include <QColorDialog>
#include <QDesktopServices>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTableWidget>
#include <QTextBrowser>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

#include "widgets/lab_model.h"
#include "widgets/views.h"

namespace descentlab::widgets {
namespace {

// The text of a bar above the views, as tall as its wrapped text up to a share of the window's height and scrolled
// beyond it: at 1024x700 a tour's whole caption was taller than the room above the views and its end was cut off.
class TextScroller : public QScrollArea {
 public:
  TextScroller(QLabel* label, QWidget* parent) : QScrollArea(parent), label_(label) {
    setWidget(label);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    QSizePolicy policy = sizePolicy();
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    // Its cap follows the window's height, which a layout's cached height-for-width does not see.
    if (parent) parent->window()->installEventFilter(this);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == window() && event->type() == QEvent::Resize) updateGeometry();
    return QScrollArea::eventFilter(watched, event);
  }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override {
    const int whole = label_->heightForWidth(width);
    return std::min(whole > 0 ? whole : label_->sizeHint().height(), tallest());
  }
  QSize sizeHint() const override { return {label_->sizeHint().width(), heightForWidth(std::max(width(), 1))}; }
  QSize minimumSizeHint() const override { return {60, std::min(fontMetrics().height() * 2, tallest())}; }

 protected:
  // New text in the label: the bar takes its new height.
  bool viewportEvent(QEvent* event) override {
    if (event->type() == QEvent::LayoutRequest) updateGeometry();
    return QScrollArea::viewportEvent(event);
  }

 private:
  // At most 30 % of the window (at least three lines), so the plots keep most of the column.
  int tallest() const { return std::max(fontMetrics().height() * 3, window()->height() * 30 / 100); }
  QLabel* label_;
};

// A bar above the views: selectable, wrapped text and a ✕ that hides the bar (the error banner, a tour's caption).
// Hidden until shown; `label` receives the text widget.
QWidget* makeDismissableBar(QWidget* parent, QLabel*& label, const QString& dismissTip) {
  auto* bar = new QWidget(parent);
  auto* layout = new QHBoxLayout(bar);
  layout->setContentsMargins(8, 4, 8, 4);
  label = new QLabel;
  label->setWordWrap(true);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* scroller = new TextScroller(label, bar);
  auto* dismiss = new QToolButton(bar);
  dismiss->setText(QStringLiteral("✕"));
  dismiss->setAutoRaise(true);
  dismiss->setToolTip(dismissTip);
  QObject::connect(dismiss, &QToolButton::clicked, bar, &QWidget::hide);
  layout->addWidget(scroller, 1);
  layout->addWidget(dismiss, 0, Qt::AlignTop);
  bar->hide();
  return bar;
}

}  // namespace

namespace {

QIcon swatch(const QColor& colour) {
  QPixmap pixmap(14, 14);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setBrush(colour);
  painter.setPen(colour.darker(130));
  painter.drawRoundedRect(QRectF(1, 1, 12, 12), 3, 3);
  return QIcon(pixmap);
}

QStringList runFilesIn(const QMimeData* mime) {
  QStringList paths;
  if (!mime || !mime->hasUrls()) return paths;
  for (const auto& url : mime->urls()) {
    const QString path = url.toLocalFile();
    if (path.endsWith(QStringLiteral(".h5"), Qt::CaseInsensitive)) paths << path;
  }
  return paths;
}

constexpr int kRecentFiles = 8;

}  // namespace

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
  loss_ = new TrainingCurvesView(model_, QStringLiteral("Training loss"), QStringLiteral("loss"), central);
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
  });
  // A change made in the window (a selection, a colour, a hidden run) shows at once, not at the next training event.
  refreshSoon_.setSingleShot(true);
  refreshSoon_.setInterval(0);
  connect(&refreshSoon_, &QTimer::timeout, this, &MainWindow::refreshViews);
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
  runTable_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(runTable_, &QTableWidget::customContextMenuRequested, this, &MainWindow::showRunMenu);
  // The selected row is the focus run: the controls, the single-run views and the Log follow it.
  connect(runTable_, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = runTable_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    if (auto* item = runTable_->item(rows.front().row(), 0)) model_->setFocusRun(item->data(Qt::UserRole).toString());
  });
  runsDock_ = makeDock(QStringLiteral("Runs"), runTable_);

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
}

void MainWindow::setProbeBackend(LayerProbeBackend* backend) {
  probe_->setBackend(backend);
}

void MainWindow::arrangeDocks() {
  const QSize area = size();
  const bool wide = area.width() >= 1700;  // room for two columns of views beside the loss
  const bool tall = area.height() >= 900;  // room for the log beside the runs table
  QList<QDockWidget*> docks = {experimentDock_, runsDock_,   logDock_,    metricDock_,   layerDock_,
                               lambdaDock_,     weightDock_, robustDock_, frontierDock_, probeDock_};
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
  runsDock_->raise();
  const int experimentWidth = std::clamp(area.width() / 5, 250, 330);
  const int viewsWidth = (area.width() - experimentWidth) * (wide ? 58 : 50) / 100;
  resizeDocks({experimentDock_}, {experimentWidth}, Qt::Horizontal);
  resizeDocks({layerDock_}, {wide ? viewsWidth / 2 : viewsWidth}, Qt::Horizontal);
  if (wide) resizeDocks({metricDock_}, {viewsWidth / 2}, Qt::Horizontal);
  resizeDocks({runsDock_}, {tall ? 200 : 150}, Qt::Vertical);
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

void MainWindow::buildRunMenu() {
  QMenu* run = menuBar()->addMenu(QStringLiteral("&Run"));
  run->addAction(QStringLiteral("&Start the experiment"), QKeySequence(Qt::Key_F5), experiment_,
                 &ExperimentPanel::start);
  pauseAction_ = run->addAction(QStringLiteral("&Pause"), QKeySequence(Qt::Key_F6), this,
                                [this] { emit pauseRequested(selectedRunId()); });
  resumeAction_ = run->addAction(QStringLiteral("&Resume"), QKeySequence(Qt::Key_F7), this,
                                 [this] { emit resumeRequested(selectedRunId()); });
  stopAction_ = run->addAction(QStringLiteral("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5), this,
                               [this] { emit stopRequested(selectedRunId()); });
  run->addSeparator();
  run->addAction(QStringLiteral("&Next run"), QKeySequence(Qt::ALT | Qt::Key_Down), this,
                 [this] { selectNeighbourRun(1); });
  run->addAction(QStringLiteral("Pre&vious run"), QKeySequence(Qt::ALT | Qt::Key_Up), this,
                 [this] { selectNeighbourRun(-1); });
  hideAction_ =
      run->addAction(QStringLiteral("&Hide from plots / show"), QKeySequence(Qt::CTRL | Qt::Key_H), this, [this] {
        if (RunData* selected = model_->run(selectedRunId())) setRunVisible(selected->id, !selected->visible);
      });
  closeAction_ = run->addAction(QStringLiteral("&Close run"), QKeySequence(Qt::CTRL | Qt::Key_W), this, [this] {
    if (!selectedRunId().isEmpty()) emit closeRunRequested(selectedRunId());
  });
}

void MainWindow::selectNeighbourRun(int offset) {
  const int count = model_->count();
  if (count == 0) return;
  int index = 0;
  for (int i = 0; i < count; ++i) {
    if (model_->runAt(i)->id == selectedRunId()) index = i;
  }
  model_->setFocusRun(model_->runAt(((index + offset) % count + count) % count)->id);
}

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
      "<li>In <b>Experiment</b> (left) pick <i>video-erm</i>, size <i>quick</i>, and press <b>Start</b> (F5). Then "
      "pick <i>video-constrained</i> and Start again: the two runs train side by side (a quick run takes a minute "
      "or two on 2 cores).</li>"
      "<li>Watch <b>Per-layer loss</b>: the test loss f<sub>ℓ</sub> after each layer ℓ. Descent means the curve "
      "falls from left to right; red triangles mark layers where it rises. Compare the ERM run (dashed) with the "
      "constrained one.</li>"
      "<li>Open <b>Multipliers λ</b> (the Lagrange multipliers): λ<sub>ℓ</sub> grows while layer ℓ's constraint is "
      "violated and falls "
      "back to 0 once it holds. A flat 0 means the constraint never bound.</li>"
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
      "<tr><td>F1</td><td>This page</td></tr>"
      "<tr><td>Ctrl+Q</td><td>Quit (running runs stop after their batch and keep their state)</td></tr>"
      "</table>");
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
  toursMenu_->setToolTipsVisible(true);
  toursMenu_->setEnabled(!tours.isEmpty());
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
  // Its views in front, after the dock area has applied showRelevantDocks' hides for the runs just added.
  QPointer<MainWindow> self(this);
  const QStringList views = tour.views;
  QTimer::singleShot(0, this, [self, views] {
    if (!self) return;
    QDockWidget* first = nullptr;
    for (const auto& id : views) {
      QDockWidget* dock = self->dockOfView(id);
      if (!dock) continue;
      self->autoHidden_.remove(dock);
      dock->show();
      dock->raise();
      if (!first) first = dock;
    }
    // The tour's first view is what it is about: the larger share of its column's height, where the window is
    // tall enough for the other view in the column to keep its minimum (at 1280x800 the weight geometry's table
    // and plot overlapped when the frontier took 55 %).
    if (first && !first->isFloating() && self->height() >= 900) {
      self->resizeDocks({first}, {self->height() * 55 / 100}, Qt::Vertical);
    }
  });
}

QString MainWindow::tourCaption() const {
  return tourBox_->isHidden() ? QString() : tourCaption_->text();
}

QVector<PlotView*> MainWindow::views() const {
  return {loss_, metric_, layerLoss_, lambda_, weights_, robustness_, frontier_};
}

void MainWindow::refreshViews() {
  updateRunTable();
  updateLog();
  for (auto* view : views()) {
    if (view->isVisible() || !isVisible()) view->refresh();
  }
}

QString MainWindow::selectedRunId() const {
  return model_->focusRun() ? model_->focusRun()->id : QString();
}

void MainWindow::updateRunControls() {
  RunData* run = model_->run(selectedRunId());
  const RunActions actions = run ? availableActions(*run) : RunActions{};
  experiment_->setRunControls(run ? QStringLiteral("%1 (%2)").arg(run->name, runStateName(run->state)) : QString(),
                              actions.pause, actions.resume, actions.stop);
  pauseAction_->setEnabled(actions.pause);
  resumeAction_->setEnabled(actions.resume);
  stopAction_->setEnabled(actions.stop);
  closeAction_->setEnabled(actions.close && run);
  hideAction_->setEnabled(run != nullptr);
}

void MainWindow::showRunMenu(const QPoint& position) {
  const int row = runTable_->rowAt(position.y());
  auto* item = row >= 0 ? runTable_->item(row, 0) : nullptr;
  RunData* run = item ? model_->run(item->data(Qt::UserRole).toString()) : nullptr;
  if (!run) return;
  model_->setFocusRun(run->id);  // the menu acts on the row it was opened on, which becomes the selected run
  const QString id = run->id;
  const RunActions actions = availableActions(*run);
  QMenu menu(this);
  menu.setObjectName(QStringLiteral("run-menu"));
  QAction* shown = menu.addAction(QStringLiteral("Show in plots"));
  shown->setCheckable(true);
  shown->setChecked(run->visible);
  connect(shown, &QAction::toggled, this, [this, id](bool visible) { setRunVisible(id, visible); });
  menu.addAction(QStringLiteral("Colour…"), this, [this, id] {
    RunData* target = model_->run(id);
    if (!target) return;
    const QColor colour =
        QColorDialog::getColor(target->colour, this, QStringLiteral("Colour of %1").arg(target->name));
    if (!colour.isValid()) return;
    target->colour = colour;
    target->touch();
    model_->markChanged();
  });
  menu.addSeparator();
  menu.addAction(QStringLiteral("Pause"), this, [this, id] { emit pauseRequested(id); })->setEnabled(actions.pause);
  menu.addAction(QStringLiteral("Resume"), this, [this, id] { emit resumeRequested(id); })->setEnabled(actions.resume);
  menu.addAction(QStringLiteral("Stop"), this, [this, id] { emit stopRequested(id); })->setEnabled(actions.stop);
  menu.addSeparator();
  const QString path = run->path;
  menu.addAction(QStringLiteral("Reveal run file"), this, [this, path] { emit revealRequested(path); })
      ->setEnabled(!path.isEmpty());
  menu.addAction(QStringLiteral("Copy run file path"), this, [path] { QGuiApplication::clipboard()->setText(path); })
      ->setEnabled(!path.isEmpty());
  menu.addSeparator();
  QAction* close = menu.addAction(QStringLiteral("Close run"), this, [this, id] { emit closeRunRequested(id); });
  close->setEnabled(actions.close);
  if (!actions.close) close->setToolTip(QStringLiteral("Stop the run first: its thread still writes the run file"));
  menu.setToolTipsVisible(true);
  lastRunMenu_ = &menu;
  menu.exec(runTable_->viewport()->mapToGlobal(position));
  lastRunMenu_ = nullptr;
}

void MainWindow::setRunVisible(const QString& runId, bool visible) {
  RunData* run = model_->run(runId);
  if (!run || run->visible == visible) return;
  run->visible = visible;
  run->touch();
  model_->markChanged();
}

void MainWindow::updateRunTable() {
  const int64_t revision = model_->revision();
  if (revision == tableRevision_) return;
  tableRevision_ = revision;
  const QStringList keys = model_->differingKeys();
  // The descent certificate's column while a layerwise run is open.
  bool anyLayerwise = false;
  for (auto* run : model_->runs()) anyLayerwise = anyLayerwise || run->kind == RunKind::Layerwise;
  QStringList headers = {QStringLiteral("run"),     QStringLiteral("state"), QStringLiteral("progress"),
                         QStringLiteral("steps/s"), QStringLiteral("ETA"),   QStringLiteral("test")};
  if (anyLayerwise) headers << QStringLiteral("descent (95 %)");
  const int firstKey = static_cast<int>(headers.size());
  headers += keys;
  const QString selected = selectedRunId();  // the focus run: its row is the selected one
  const QSignalBlocker blocker(runTable_);
  runTable_->setColumnCount(static_cast<int>(headers.size()));
  runTable_->setHorizontalHeaderLabels(headers);
  runTable_->setRowCount(model_->count());
  for (int row = 0; row < model_->count(); ++row) {
    RunData* run = model_->runAt(row);
    auto* name = new QTableWidgetItem(swatch(run->colour), run->name);
    name->setData(Qt::UserRole, run->id);
    name->setToolTip(run->path + (run->description.isEmpty() ? QString() : QStringLiteral("\n") + run->description) +
                     (run->visible ? QString() : QStringLiteral("\n(hidden from the plots)")));
    if (!run->visible) name->setForeground(QColor(140, 140, 140));
    runTable_->setItem(row, 0, name);
    auto* state = new QTableWidgetItem(run->sweep.running ? QStringLiteral("sweeping") : runStateName(run->state));
    if (run->state == RunState::Failed) state->setForeground(QColor(176, 0, 32));
    state->setToolTip(run->error);
    runTable_->setItem(row, 1, state);
    auto* bar = qobject_cast<QProgressBar*>(runTable_->cellWidget(row, 2));
    if (!bar) {
      bar = new QProgressBar(runTable_);
      bar->setRange(0, 1000);
      bar->setTextVisible(true);
      // Dark text on a light bar: readable over the done and the remaining part, selected or not.
      bar->setStyleSheet(
          QStringLiteral("QProgressBar { border: 1px solid #b0b0b0; border-radius: 2px; "
                         "background: white; color: black; text-align: center; }"
                         "QProgressBar::chunk { background: #a9d1f5; }"));
      runTable_->setCellWidget(row, 2, bar);
    }
    const SweepActivity& sweep = run->sweep;
    if (sweep.running) {  // a robustness sweep: γ i of n and the seed, instead of the training steps
      bar->setValue(sweep.cells > 0 ? sweep.done * 1000 / sweep.cells : 0);
      bar->setFormat(QStringLiteral("%1: γ %2/%3, seed %4")
                         .arg(sweep.noise)
                         .arg(sweep.gammaIndex + 1)
                         .arg(sweep.gammas)
                         .arg(sweep.seed + 1));
    } else {
      bar->setValue(static_cast<int>(run->progress() * 1000));
      bar->setFormat(run->totalSteps > 0 ? QStringLiteral("%1 / %2").arg(run->currentStep).arg(run->totalSteps)
                                         : QStringLiteral("%1 steps").arg(run->currentStep));
    }
    const bool live = run->state == RunState::Running;  // a paused run has no speed; the ETA resumes with it
    runTable_->setItem(row, 3, new QTableWidgetItem(live ? QString::number(run->stepsPerSecond, 'f', 1) : QString()));
    runTable_->setItem(row, 4,
                       new QTableWidgetItem(live            ? clockText(run->etaSeconds())
                                            : sweep.running ? clockText(sweep.etaSeconds)
                                                            : QString()));
    QString test;
    const QString testName = QStringLiteral("test_") + run->metric;
    if (!run->metric.isEmpty() && run->scalars.contains(testName)) {
      test = QStringLiteral("%1 %2").arg(run->metric).arg(run->scalars[testName].values.back(), 0, 'g', 4);
    }
    runTable_->setItem(row, 5, new QTableWidgetItem(test));
    if (anyLayerwise) {
      const record::DescentCertificate certificate = descentCertificate(*run);
      auto* descent = new QTableWidgetItem(certificateText(certificate));
      descent->setToolTip(certificate.valid() ? certificateDetails(certificate)
                                              : QStringLiteral("The descent certificate is for layerwise runs, from "
                                                               "their test evaluation at each epoch's end"));
      runTable_->setItem(row, 6, descent);
    }
    for (int k = 0; k < keys.size(); ++k) {
      runTable_->setItem(row, firstKey + k, new QTableWidgetItem(run->config.value(keys[k], QStringLiteral("—"))));
    }
    if (run->id == selected) runTable_->selectRow(row);
  }
  runTable_->resizeColumnsToContents();
  if (runTable_->columnWidth(2) < 140) runTable_->setColumnWidth(2, 140);
}

void MainWindow::updateLog() {
  RunData* run = model_->focusRun();
  const QString id = run ? run->id : QString();
  const int64_t revision = run ? run->revision() : -1;
  if (id == loggedRun_ && revision == logRevision_) return;
  if (id != loggedRun_) {
    log_->clear();
    if (run) log_->appendPlainText(run->log.join(QLatin1Char('\n')));
  } else if (run) {
    // Only what is new since the last refresh.
    const int shown = log_->property("lines").toInt();
    for (int i = shown; i < run->log.size(); ++i) log_->appendPlainText(run->log[i]);
  }
  log_->setProperty("lines", run ? static_cast<int>(run->log.size()) : 0);
  loggedRun_ = id;
  logRevision_ = revision;
}

void MainWindow::showError(const QString& message, const QString& runId) {
  lastMessage_ = message;
  bannerRunId_ = runId;
  banner_->setText(QStringLiteral("<b>Error:</b> %1").arg(message.toHtmlEscaped()));
  bannerBox_->setStyleSheet(QStringLiteral("background: #fde2e2; color: #7a0016;"));
  bannerBox_->show();
  if (RunData* run = model_->run(runId)) run->appendLog(QStringLiteral("error: ") + message);
  statusBar()->showMessage(QStringLiteral("Error: ") + message, 15000);
}

void MainWindow::clearErrorOf(const QString& runId) {
  if (runId.isEmpty() || bannerRunId_ != runId) return;
  bannerRunId_.clear();
  bannerBox_->hide();
  statusBar()->clearMessage();
}

bool MainWindow::bannerShown() const {
  return bannerBox_->isVisible();
}

void MainWindow::showInfo(const QString& message) {
  lastMessage_ = message;
  bannerRunId_.clear();
  banner_->setText(message.toHtmlEscaped());
  bannerBox_->setStyleSheet(QStringLiteral("background: #e3f1fd; color: #0b3d66;"));
  bannerBox_->show();
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
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kRecentFiles) recent.removeLast();
  settings.setValue(QStringLiteral("recentFiles"), recent);
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  for (const auto& path : recent) {
    recentMenu_->addAction(path, this, [this, path] { emit openRequested({path}); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
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

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
  QMainWindow::closeEvent(event);
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

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!runFilesIn(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QStringList paths = runFilesIn(event->mimeData());
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  emit openRequested(paths);
}

}  // namespace descentlab::widgets
