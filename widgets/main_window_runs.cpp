// The main window's runs: the runs table (a row per run: state, progress, speed, ETA, test metric, descent
// certificate and the config keys in which runs differ), the selected run's controls, the Run menu and the table's
// context menu, the selected run's log, and the error and notice bar above the views.
#include "widgets/main_window.h"

#include <algorithm>

#include <QAction>
#include <QClipboard>
#include <QColorDialog>
#include <QEvent>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSet>
#include <QStatusBar>
#include <QTableWidget>
#include <QTimer>

#include "widgets/lab_model.h"

namespace descentlab::widgets {
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

}  // namespace

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

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  // The runs table skips the redraws made while it is hidden: it catches up when it shows.
  if (watched == runTable_ && event->type() == QEvent::Show) QTimer::singleShot(0, this, &MainWindow::updateRunTable);
  return QMainWindow::eventFilter(watched, event);
}

// The rows in the order of the column whose header was clicked (numbers as numbers), else as the runs came.
QVector<RunData*> MainWindow::runsInTableOrder(const QStringList& keys, int firstKey, bool anyLayerwise) const {
  QVector<RunData*> ordered = model_->runs();
  if (sortColumn_ < 0 || sortColumn_ >= firstKey + keys.size()) return ordered;
  const int column = sortColumn_;
  const auto key = [&](const RunData* run) -> QVariant {
    switch (column) {
      case 0: return run->name;
      case 1: return runStateName(run->state);
      case 2: return run->progress();
      case 3: return run->stepsPerSecond;
      case 4: return run->etaSeconds();
      case 5: {
        const auto it = run->scalars.constFind(QStringLiteral("test_") + run->metric);
        return it != run->scalars.cend() && !it->values.isEmpty() ? QVariant(it->values.back()) : QVariant();
      }
      default: break;
    }
    if (anyLayerwise && column == 6) {
      const record::DescentCertificate certificate = descentCertificate(*run);
      return certificate.valid() ? QVariant(certificate.overall.share) : QVariant();
    }
    const QString text = run->config.value(keys.value(column - firstKey));
    bool number = false;
    const double value = text.toDouble(&number);
    return number ? QVariant(value) : QVariant(text);
  };
  // Each run's key once (a certificate or a config lookup per comparison would repeat them n log n times).
  QVector<QPair<QVariant, RunData*>> keyed;
  for (RunData* run : ordered) keyed.push_back({key(run), run});
  const auto less = [](const QVariant& x, const QVariant& y) {
    if (!x.isValid() || !y.isValid()) return x.isValid() && !y.isValid();  // runs without a value go last
    if (x.typeId() == QMetaType::Double && y.typeId() == QMetaType::Double) return x.toDouble() < y.toDouble();
    return QString::localeAwareCompare(x.toString(), y.toString()) < 0;
  };
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return sortOrder_ == Qt::AscendingOrder ? less(a.first, b.first) : less(b.first, a.first);
  });
  for (int i = 0; i < keyed.size(); ++i) ordered[i] = keyed[i].second;
  return ordered;
}

// The progress column: training steps, or a robustness sweep's γ and seed while one runs.
void MainWindow::fillProgressCell(int row, const RunData& run) {
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
  const SweepActivity& sweep = run.sweep;
  if (sweep.running) {  // a robustness sweep: γ i of n and the seed, instead of the training steps
    bar->setValue(sweep.cells > 0 ? sweep.done * 1000 / sweep.cells : 0);
    bar->setFormat(QStringLiteral("%1: γ %2/%3, seed %4")
                       .arg(sweep.noise)
                       .arg(sweep.gammaIndex + 1)
                       .arg(sweep.gammas)
                       .arg(sweep.seed + 1));
  } else {
    bar->setValue(static_cast<int>(run.progress() * 1000));
    bar->setFormat(run.totalSteps > 0 ? QStringLiteral("%1 / %2").arg(run.currentStep).arg(run.totalSteps)
                                      : QStringLiteral("%1 steps").arg(run.currentStep));
  }
}

void MainWindow::updateRunTable() {
  const int64_t revision = model_->revision();
  if (revision == tableRevision_) return;
  // A table behind another tab (the Study's, while Draw groups reads 300 runs) is filled when it is shown: a rebuild
  // costs a cell per run and column (60 ms at 306 runs), paid for every batch of runs read.
  if (isVisible() && !runTable_->isVisible()) return;
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
  QStringList previousHeaders;
  for (int column = 0; column < runTable_->columnCount(); ++column) {
    previousHeaders << (runTable_->horizontalHeaderItem(column) ? runTable_->horizontalHeaderItem(column)->text()
                                                                : QString());
  }
  const int previousRows = runTable_->rowCount();
  if (headers != previousHeaders) {
    runTable_->setColumnCount(static_cast<int>(headers.size()));
    runTable_->setHorizontalHeaderLabels(headers);
  }
  runTable_->setRowCount(model_->count());
  const QVector<RunData*> ordered = runsInTableOrder(keys, firstKey, anyLayerwise);
  if (sortColumn_ >= 0 && sortColumn_ < headers.size()) {
    runTable_->horizontalHeader()->setSortIndicator(sortColumn_, sortOrder_);
  }
  runTable_->horizontalHeader()->setSortIndicatorShown(sortColumn_ >= 0);
  // Cells are reused and written only where their text changed, and only the columns that changed are fitted: with
  // 300 runs open, a rebuild of every cell and column was 25-35 ms at each redraw of a run training beside them.
  QSet<int> changedColumns;
  if (headers != previousHeaders || runTable_->rowCount() < previousRows) {  // added rows mark their columns
    for (int column = 0; column < runTable_->columnCount(); ++column) changedColumns.insert(column);
  }
  const auto cell = [&](int row, int column, const QString& text) {
    QTableWidgetItem* item = runTable_->item(row, column);
    if (!item) {
      item = new QTableWidgetItem(text);
      runTable_->setItem(row, column, item);
      changedColumns.insert(column);
    } else if (item->text() != text) {
      item->setText(text);
      changedColumns.insert(column);
    }
    return item;
  };
  for (int row = 0; row < ordered.size(); ++row) {
    RunData* run = ordered[row];
    QTableWidgetItem* name = cell(row, 0, run->name);
    if (name->data(Qt::UserRole + 1).value<QColor>() != run->colour) {  // a new swatch only for a new colour
      name->setIcon(swatch(run->colour));
      name->setData(Qt::UserRole + 1, run->colour);
    }
    name->setData(Qt::UserRole, run->id);
    name->setToolTip(run->path + (run->description.isEmpty() ? QString() : QStringLiteral("\n") + run->description) +
                     (run->visible ? QString() : QStringLiteral("\n(hidden from the plots)")));
    name->setData(Qt::ForegroundRole, run->visible ? QVariant() : QVariant(QColor(140, 140, 140)));
    QTableWidgetItem* state = cell(row, 1, run->sweep.running ? QStringLiteral("sweeping") : runStateName(run->state));
    state->setData(Qt::ForegroundRole, run->state == RunState::Failed ? QVariant(QColor(176, 0, 32)) : QVariant());
    state->setToolTip(run->error);
    fillProgressCell(row, *run);
    const SweepActivity& sweep = run->sweep;
    // A paused run has no speed; the ETA resumes with it. A watched run's speed comes from its file's wall times.
    const bool live = run->state == RunState::Running || run->state == RunState::Watching;
    cell(row, 3, live ? QString::number(run->stepsPerSecond, 'f', 1) : QString());
    cell(row, 4, live ? clockText(run->etaSeconds()) : sweep.running ? clockText(sweep.etaSeconds) : QString());
    QString test;
    const QString testName = QStringLiteral("test_") + run->metric;
    if (!run->metric.isEmpty() && run->scalars.contains(testName)) {
      test = QStringLiteral("%1 %2").arg(run->metric).arg(run->scalars[testName].values.back(), 0, 'g', 4);
    }
    cell(row, 5, test);
    if (anyLayerwise) {
      const record::DescentCertificate certificate = descentCertificate(*run);
      QTableWidgetItem* descent = cell(row, 6, certificateText(certificate));
      descent->setToolTip(certificate.valid() ? certificateDetails(certificate)
                                              : QStringLiteral("The descent certificate is for layerwise runs, from "
                                                               "their test evaluation at each epoch's end"));
    }
    for (int k = 0; k < keys.size(); ++k) {
      cell(row, firstKey + k, run->config.value(keys[k], QStringLiteral("—")));
    }
    if (run->id == selected) runTable_->selectRow(row);
  }
  for (const int column : changedColumns) runTable_->resizeColumnToContents(column);
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

}  // namespace descentlab::widgets
