#include "widgets/runs_table.h"

#include <algorithm>

#include <QClipboard>
#include <QColorDialog>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QHeaderView>
#include <QMenu>
#include <QPainter>
#include <QProgressBar>
#include <QTimer>

#include "widgets/lab_model.h"
#include "widgets/study_rows.h"

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

RunsTable::RunsTable(LabModel& model, QWidget* window) : QTableWidget(window), model_(model), window_(window) {
  setObjectName(QStringLiteral("runs-table"));
  // Rows as tall as their text: at 1024x700 the runs dock has room for the header and 1.5 of Qt's default rows, and
  // a tour's second run was cut in half.
  verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  // Its header and one row at the least: a 1024x700 window also stacks two tab groups of views above it.
  setMinimumHeight(horizontalHeader()->sizeHint().height() + verticalHeader()->defaultSectionSize() + 4);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  verticalHeader()->hide();
  horizontalHeader()->setStretchLastSection(true);
  // A click on a column's header sorts the runs by it; a second click reverses the order.
  horizontalHeader()->setSectionsClickable(true);
  connect(horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int column) {
    sortOrder_ = column == sortColumn_ && sortOrder_ == Qt::AscendingOrder ? Qt::DescendingOrder : Qt::AscendingOrder;
    sortColumn_ = column;
    invalidate();
    refresh();
  });
  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QTableWidget::customContextMenuRequested, this, &RunsTable::showRunMenu);
  // The selected row is the focus run: the controls, the single-run views and the Log follow it.
  connect(this, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    if (auto* cell = item(rows.front().row(), 0)) model_.setFocusRun(cell->data(Qt::UserRole).toString());
  });
}

void RunsTable::showEvent(QShowEvent* event) {
  QTableWidget::showEvent(event);
  QTimer::singleShot(0, this, &RunsTable::refresh);
}

void RunsTable::showRunMenu(const QPoint& position) {
  const int row = rowAt(position.y());
  auto* cell = row >= 0 ? item(row, 0) : nullptr;
  const RunData* run = cell ? model_.run(cell->data(Qt::UserRole).toString()) : nullptr;
  if (!run) return;
  model_.setFocusRun(run->id);  // the menu acts on the row it was opened on, which becomes the selected run
  const QString id = run->id;
  const RunActions actions = availableActions(*run);
  QMenu menu(window_);
  menu.setObjectName(QStringLiteral("run-menu"));
  QAction* shown = menu.addAction(QStringLiteral("Show in plots"));
  shown->setCheckable(true);
  shown->setChecked(run->visible);
  connect(shown, &QAction::toggled, this, [this, id](bool visible) { model_.setRunVisible(id, visible); });
  addColourEntry(menu, id);
  menu.addSeparator();
  menu.addAction(QStringLiteral("Pause"), this, [this, id] { emit pauseRequested(id); })->setEnabled(actions.pause);
  menu.addAction(QStringLiteral("Resume"), this, [this, id] { emit resumeRequested(id); })->setEnabled(actions.resume);
  menu.addAction(QStringLiteral("Stop"), this, [this, id] { emit stopRequested(id); })->setEnabled(actions.stop);
  menu.addSeparator();
  const QString path = run->path;
  menu.addAction(QStringLiteral("Name, tags and note…"), this, [this, id] { emit annotateRequested(id); })
      ->setEnabled(!path.isEmpty());
  menu.addAction(QStringLiteral("Reveal run file"), this, [this, path] { emit revealRequested(path); })
      ->setEnabled(!path.isEmpty());
  menu.addAction(QStringLiteral("Copy run file path"), this, [path] { QGuiApplication::clipboard()->setText(path); })
      ->setEnabled(!path.isEmpty());
  menu.addSeparator();
  QAction* close = menu.addAction(QStringLiteral("Close run"), this, [this, id] { emit closeRunRequested(id); });
  close->setEnabled(actions.close);
  if (!actions.close) close->setToolTip(QStringLiteral("Stop the run first: its thread still writes the run file"));
  menu.setToolTipsVisible(true);
  openMenu_ = &menu;
  menu.exec(viewport()->mapToGlobal(position));
  openMenu_ = nullptr;
}

void RunsTable::addColourEntry(QMenu& menu, const QString& id) {
  menu.addAction(QStringLiteral("Colour…"), this, [this, id] {
    const RunData* target = model_.run(id);
    if (!target) return;
    const QColor colour =
        QColorDialog::getColor(target->colour, window_, QStringLiteral("Colour of %1").arg(target->name));
    if (colour.isValid()) model_.changeRun(id, [colour](RunData& run) { run.colour = colour; });
  });
}

QVector<const RunData*> RunsTable::runsInTableOrder(const QStringList& keys, int firstKey, bool anyLayerwise) const {
  QVector<const RunData*> ordered = model_.runs();
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
  QVector<QPair<QVariant, const RunData*>> keyed;
  for (const RunData* run : ordered) keyed.push_back({key(run), run});
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

void RunsTable::fillProgressCell(int row, const RunData& run) {
  auto* bar = qobject_cast<QProgressBar*>(cellWidget(row, 2));
  if (!bar) {
    bar = new QProgressBar(this);
    bar->setRange(0, 1000);
    bar->setTextVisible(true);
    // Dark text on a light bar: readable over the done and the remaining part, selected or not.
    bar->setStyleSheet(
        QStringLiteral("QProgressBar { border: 1px solid #b0b0b0; border-radius: 2px; "
                       "background: white; color: black; text-align: center; }"
                       "QProgressBar::chunk { background: #a9d1f5; }"));
    setCellWidget(row, 2, bar);
  }
  const SweepActivity& sweep = run.sweep;
  if (sweep.running) {  // a robustness sweep: γ i of n and the seed, instead of the training steps
    bar->setValue(sweep.cells > 0 ? sweep.done * 1000 / sweep.cells : 0);
    // The longest of these that fits the column: a centred text wider than the bar lost both its ends ("ussian: γ
    // 62/201, seed") in a 130 px column.
    const QString position = QStringLiteral("γ %1/%2").arg(sweep.gammaIndex + 1).arg(sweep.gammas);
    const QString seed = QStringLiteral("%1, seed %2").arg(position).arg(sweep.seed + 1);
    const QFontMetrics metrics(bar->font());
    QString text = position;
    for (const QString& candidate : {QStringLiteral("%1: %2").arg(sweep.noise, seed), seed}) {
      if (metrics.horizontalAdvance(candidate) + 10 <= columnWidth(2)) {
        text = candidate;
        break;
      }
    }
    bar->setFormat(text);
  } else {
    bar->setValue(static_cast<int>(run.progress() * 1000));
    bar->setFormat(run.totalSteps > 0 ? QStringLiteral("%1 / %2").arg(run.currentStep).arg(run.totalSteps)
                                      : QStringLiteral("%1 steps").arg(run.currentStep));
  }
}

void RunsTable::refresh() {
  const int64_t revision = model_.revision();
  if (revision == revision_) return;
  // A table behind another tab (the Study's, while Draw groups reads 300 runs) is filled when it is shown: a rebuild
  // costs a cell per run and column (60 ms at 306 runs), paid for every batch of runs read.
  if (window_->isVisible() && !isVisible()) return;
  revision_ = revision;
  const QStringList keys = model_.differingKeys();
  // The descent certificate's column while a layerwise run is open.
  bool anyLayerwise = false;
  for (const auto* run : model_.runs()) anyLayerwise = anyLayerwise || run->kind == RunKind::Layerwise;
  QStringList headers = {QStringLiteral("run"),     QStringLiteral("state"), QStringLiteral("progress"),
                         QStringLiteral("steps/s"), QStringLiteral("ETA"),   QStringLiteral("test")};
  if (anyLayerwise) headers << QStringLiteral("descent (95 %)");
  const int firstKey = static_cast<int>(headers.size());
  headers += keys;
  const QString selected = model_.focusRunId();  // the focus run: its row is the selected one
  const QSignalBlocker blocker(this);
  // Cells are reused and written only where their text changed, and only the columns that changed are fitted: with
  // 300 runs open, a rebuild of every cell and column was 25-35 ms at each redraw of a run training beside them.
  QSet<int> changedColumns;
  setHeaders(headers, changedColumns);
  const QVector<const RunData*> ordered = runsInTableOrder(keys, firstKey, anyLayerwise);
  if (sortColumn_ >= 0 && sortColumn_ < headers.size()) horizontalHeader()->setSortIndicator(sortColumn_, sortOrder_);
  horizontalHeader()->setSortIndicatorShown(sortColumn_ >= 0);
  for (int row = 0; row < ordered.size(); ++row) {
    fillRow(row, *ordered[row], keys, firstKey, anyLayerwise, changedColumns);
    if (ordered[row]->id == selected) selectRow(row);
  }
  for (const int column : changedColumns) resizeColumnToContents(column);
  if (columnWidth(2) < 140) setColumnWidth(2, 140);
  applyFilter();
}

void RunsTable::setFilterText(const QString& text) {
  filterText_ = text.trimmed();
  applyFilter();
}

int RunsTable::shownRows() const {
  int shown = 0;
  for (int row = 0; row < rowCount(); ++row) shown += isRowHidden(row) ? 0 : 1;
  return shown;
}

void RunsTable::applyFilter() {
  filterMessage_.clear();
  const StudyBackend* backend = model_.groupBackend();
  QHash<QString, bool> kept;  // by run id
  if (!filterText_.isEmpty() && backend) {
    const QVector<bool> keeps = backend->filter(model_.studyRows(), filterText_, &filterMessage_);
    for (int i = 0; i < model_.count() && i < keeps.size(); ++i) kept.insert(model_.runAt(i)->id, keeps[i]);
  }
  for (int row = 0; row < rowCount(); ++row) {
    const QTableWidgetItem* cell = item(row, 0);
    setRowHidden(row, cell && !kept.value(cell->data(Qt::UserRole).toString(), true));
  }
  emit filtered(shownRows(), rowCount(), filterMessage_);
}

void RunsTable::setHeaders(const QStringList& headers, QSet<int>& changedColumns) {
  QStringList previousHeaders;
  for (int column = 0; column < columnCount(); ++column) {
    previousHeaders << (horizontalHeaderItem(column) ? horizontalHeaderItem(column)->text() : QString());
  }
  const int previousRows = rowCount();
  if (headers != previousHeaders) {
    setColumnCount(static_cast<int>(headers.size()));
    setHorizontalHeaderLabels(headers);
  }
  setRowCount(model_.count());
  if (headers != previousHeaders || rowCount() < previousRows) {  // added rows mark their columns
    for (int column = 0; column < columnCount(); ++column) changedColumns.insert(column);
  }
}

QString RunsTable::annotationText(const RunData& run) {
  QString text;
  if (!run.ownName.isEmpty()) text += QStringLiteral("named by you; by its configuration: %1\n").arg(run.automaticName);
  if (!run.tags.isEmpty()) text += QStringLiteral("tags: %1\n").arg(run.tags.join(QStringLiteral(", ")));
  if (!run.note.isEmpty()) text += QStringLiteral("note: %1\n").arg(run.note);
  return text;
}

QTableWidgetItem* RunsTable::setCell(int row, int column, const QString& text, QSet<int>& changedColumns) {
  QTableWidgetItem* cell = item(row, column);
  if (!cell) {
    cell = new QTableWidgetItem(text);
    setItem(row, column, cell);
    changedColumns.insert(column);
  } else if (cell->text() != text) {
    cell->setText(text);
    changedColumns.insert(column);
  }
  return cell;
}

const RunGroup* RunsTable::groupHolding(const RunData& run) const {
  if (!model_.grouped()) return nullptr;
  for (const RunGroup& group : model_.groups()) {
    if (group.members.contains(&run) || group.hiddenMembers.contains(&run)) return &group;
  }
  return nullptr;
}

void RunsTable::fillRow(int row, const RunData& run, const QStringList& keys, int firstKey, bool anyLayerwise,
                        QSet<int>& changedColumns) {
  const auto cell = [&](int column, const QString& text) { return setCell(row, column, text, changedColumns); };
  // A person's tags follow the name; the note and the automatic name are in the tooltip.
  QTableWidgetItem* name = cell(
      0, run.tags.isEmpty() ? run.name : QStringLiteral("%1  [%2]").arg(run.name, run.tags.join(QStringLiteral(", "))));
  // The colour the views draw the run in: its group's while runs are drawn as groups (a swatch per run contradicted
  // the views' one colour per group).
  const RunGroup* group = groupHolding(run);
  const QColor colour = group ? group->colour : run.colour;
  if (name->data(Qt::UserRole + 1).value<QColor>() != colour) {  // a new swatch only for a new colour
    name->setIcon(swatch(colour));
    name->setData(Qt::UserRole + 1, colour);
  }
  name->setData(Qt::UserRole, run.id);
  name->setToolTip(annotationText(run) + run.path +
                   (run.description.isEmpty() ? QString() : QStringLiteral("\n") + run.description) +
                   (group ? QStringLiteral("\ndrawn in the colour of its group, %1").arg(group->label) : QString()) +
                   (run.visible ? QString() : QStringLiteral("\n(hidden from the plots)")));
  name->setData(Qt::ForegroundRole, run.visible ? QVariant() : QVariant(QColor(140, 140, 140)));
  QTableWidgetItem* state = cell(1, run.sweep.running ? QStringLiteral("sweeping") : runStateName(run.state));
  state->setData(Qt::ForegroundRole, run.state == RunState::Failed ? QVariant(QColor(176, 0, 32)) : QVariant());
  state->setToolTip(run.error);
  fillProgressCell(row, run);
  const SweepActivity& sweep = run.sweep;
  // A paused run has no speed; the ETA resumes with it. A watched run's speed comes from its file's wall times.
  const bool live = run.state == RunState::Running || run.state == RunState::Watching;
  cell(3, live ? QString::number(run.stepsPerSecond, 'f', 1) : QString());
  cell(4, live ? clockText(run.etaSeconds()) : sweep.running ? clockText(sweep.etaSeconds) : QString());
  QString test;
  const QString testName = QStringLiteral("test_") + run.metric;
  if (!run.metric.isEmpty() && run.scalars.contains(testName)) {
    test = QStringLiteral("%1 %2").arg(run.metric).arg(run.scalars[testName].values.back(), 0, 'g', 4);
  }
  cell(5, test);
  if (anyLayerwise) {
    const record::DescentCertificate certificate = descentCertificate(run);
    QTableWidgetItem* descent = cell(6, certificateText(certificate));
    descent->setToolTip(certificate.valid() ? certificateDetails(certificate)
                                            : QStringLiteral("The descent certificate is for layerwise runs, from "
                                                             "their test evaluation at each epoch's end"));
  }
  for (int k = 0; k < keys.size(); ++k) cell(firstKey + k, run.config.value(keys[k], QStringLiteral("—")));
}

}  // namespace descentlab::widgets
