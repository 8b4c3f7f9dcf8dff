#include "widgets/study_browser.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "core/record/metrics.h"
#include "widgets/elided_label.h"
#include "widgets/hyperparameter_view.h"

namespace descentlab::widgets {

namespace {

constexpr int kSortRole = kStudySortRole;
const QString kFinalPrefix = QStringLiteral("final ");
const QString kLastStep = QStringLiteral("last step");

// The metrics a study compares by default, first found first.
const QStringList& testMetrics() {
  static const QStringList names = {QLatin1String(record::metric::kTestAccuracy),
                                    QLatin1String(record::metric::kTestPerplexity),
                                    QLatin1String(record::metric::kTestRmse), QLatin1String(record::metric::kTestLoss)};
  return names;
}

QString number(double value) {
  return QString::number(value, 'g', 5);
}

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  return item;
}

}  // namespace

// The runs table's rows the filter keeps (by run index = source row), sorted by kSortRole.
class StudyRowFilter : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void setKept(const QVector<bool>& kept) {
    kept_ = kept;
    invalidateFilter();
  }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex&) const override { return row >= kept_.size() || kept_[row]; }

 private:
  QVector<bool> kept_;
};

StudyBrowser::StudyBrowser(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("study-browser"));
  status_ = new ElidedLabel(this, Qt::ElideMiddle);
  status_->setObjectName(QStringLiteral("study-status"));
  status_->setFullText(
      QStringLiteral("No study open: File > Open folder as a study…, or drop a folder of run files "
                     "on the window."));
  filter_ = new QLineEdit(this);
  filter_->setObjectName(QStringLiteral("study-filter"));
  filter_->setPlaceholderText(
      QStringLiteral("Filter: text, optimizer.name=horst, test_accuracy>0.7, train.lr=1e-4..1e-2"));
  filter_->setClearButtonEnabled(true);
  groupBy_ = new QLineEdit(this);
  groupBy_->setObjectName(QStringLiteral("study-group-by"));
  groupBy_->setPlaceholderText(QStringLiteral("Group by: every differing key but the seeds"));
  groupBy_->setToolTip(
      QStringLiteral("Comma-separated config keys; empty groups by every key whose value differs "
                     "between the runs, except train.seed and data.split_seed"));
  metric_ = new QComboBox(this);
  metric_->setObjectName(QStringLiteral("study-metric"));
  metric_->setToolTip(QStringLiteral("The final metric the groups and the pairing compare"));
  open_ = new QPushButton(QStringLiteral("Open in the lab"), this);
  open_->setToolTip(QStringLiteral("The selected runs (or every run of the selected groups) into the lab's views"));
  drawGroups_ = new QPushButton(QStringLiteral("Draw groups"), this);
  drawGroups_->setToolTip(
      QStringLiteral("Every run the filter keeps into the lab's views, each group drawn as its mean with a band"));

  buildRunsTable();
  buildSidePanel();

  auto* controls = new QHBoxLayout;
  controls->addWidget(filter_, 3);
  controls->addWidget(groupBy_, 2);
  controls->addWidget(metric_, 1);
  controls->addWidget(open_);
  controls->addWidget(drawGroups_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(side_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  for (QAbstractScrollArea* table :
       {static_cast<QAbstractScrollArea*>(table_), static_cast<QAbstractScrollArea*>(groupsTable_),
        static_cast<QAbstractScrollArea*>(pairTable_)}) {
    table->setMinimumHeight(table_->verticalHeader()->defaultSectionSize() * 3);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(3);
  layout->addLayout(buildStatusRow());
  layout->addLayout(controls);
  layout->addWidget(split, 1);

  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) { setFilterText(text); });
  connect(groupBy_, &QLineEdit::editingFinished, this, [this] {
    QStringList keys;
    for (const auto& key : groupBy_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) keys << key.trimmed();
    setGroupKeys(keys);
  });
  connect(metric_, &QComboBox::currentTextChanged, this, [this] { regroup(); });
  const auto repair = [this] {
    setPair(pairA_->currentIndex(), pairB_->currentIndex());
    showPairing();
  };
  connect(pairA_, QOverload<int>::of(&QComboBox::activated), this, repair);
  connect(pairB_, QOverload<int>::of(&QComboBox::activated), this, repair);
  connect(open_, &QPushButton::clicked, this, &StudyBrowser::openSelected);
  connect(drawGroups_, &QPushButton::clicked, this, &StudyBrowser::drawGroups);
}

// The runs: one row per run file, sorted by a header click, its columns chosen by a right click.
void StudyBrowser::buildRunsTable() {
  model_ = new QStandardItemModel(this);
  proxy_ = new StudyRowFilter(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(kSortRole);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("study-runs"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(0, Qt::AscendingOrder);
  table_->setWordWrap(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->horizontalHeader()->setToolTip(QStringLiteral("Click to sort; right-click to choose the columns"));
  connect(table_->horizontalHeader(), &QHeaderView::customContextMenuRequested, this, &StudyBrowser::showColumnMenu);
}

// Groups, the paired comparison and the hyper-parameter view, as tabs beside the runs.
void StudyBrowser::buildSidePanel() {
  groupsTable_ = new QTableWidget(0, 3, this);
  groupsTable_->setObjectName(QStringLiteral("study-groups"));
  groupsTable_->setHorizontalHeaderLabels(
      {QStringLiteral("group"), QStringLiteral("mean ± std"), QStringLiteral("min – max")});
  groupsTable_->verticalHeader()->hide();
  groupsTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  groupsTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  groupsTable_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  groupsTable_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  groupsTable_->setWordWrap(false);
  groupsTable_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  groupsTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  pairA_ = new QComboBox(this);
  pairB_ = new QComboBox(this);
  pairA_->setObjectName(QStringLiteral("study-pair-a"));
  pairB_->setObjectName(QStringLiteral("study-pair-b"));
  pairTable_ = new QTableWidget(0, 4, this);
  pairTable_->setObjectName(QStringLiteral("study-pairs"));
  pairTable_->setHorizontalHeaderLabels(
      {QStringLiteral("seed"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("A − B")});
  pairTable_->verticalHeader()->hide();
  pairTable_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  pairTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  pairTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  pairSummary_ = new QLabel(this);
  pairSummary_->setWordWrap(true);
  pairSummary_->setObjectName(QStringLiteral("study-pair-summary"));
  auto* pairChoice = new QHBoxLayout;
  pairChoice->addWidget(new QLabel(QStringLiteral("A"), this));
  pairChoice->addWidget(pairA_, 1);
  pairChoice->addWidget(new QLabel(QStringLiteral("B"), this));
  pairChoice->addWidget(pairB_, 1);
  auto* paired = new QWidget(this);
  auto* pairedLayout = new QVBoxLayout(paired);
  pairedLayout->setContentsMargins(2, 2, 2, 2);
  pairedLayout->addLayout(pairChoice);
  pairedLayout->addWidget(pairSummary_);
  pairedLayout->addWidget(pairTable_, 1);
  // Groups and the paired comparison share the right side as two tabs: a laptop-size window gives this dock
  // about 300 px of height.
  side_ = new QTabWidget(this);
  side_->setObjectName(QStringLiteral("study-side"));
  side_->addTab(groupsTable_, QStringLiteral("Groups"));
  side_->addTab(paired, QStringLiteral("Paired by seed"));
  hyper_ = new HyperparameterView(this);
  side_->addTab(hyper_, QStringLiteral("Hyper-parameters"));
}

void StudyBrowser::setBackend(const StudyBackend* backend) {
  backend_ = backend;
  regroup();
}

void StudyBrowser::beginStudy(const QString& folder, int files, int skippedFiles) {
  runs_.clear();
  kept_.clear();
  columnKeys_.clear();
  model_->clear();
  folder_ = folder;
  expected_ = files;
  skipped_ = skippedFiles;
  loading_ = true;
  regroup();
}

void StudyBrowser::addRuns(const QVector<StudyRunRow>& runs) {
  const int first = runs_.size();
  runs_ += runs;
  // New metrics join the metric choice; the default is the first test metric any run has.
  QSet<QString> known;
  for (int i = 0; i < metric_->count(); ++i) known.insert(metric_->itemText(i));
  QStringList added;
  for (const auto& run : runs) {
    for (auto it = run.finals.begin(); it != run.finals.end(); ++it) {
      if (!known.contains(it.key())) {
        known.insert(it.key());
        added << it.key();
      }
    }
  }
  added.sort();
  if (!added.isEmpty()) {
    const QSignalBlocker quiet(metric_);
    const QString chosen = metric_->currentText();
    metric_->addItems(added);
    QString wanted = chosen;
    for (const auto& name : testMetrics()) {
      if (wanted.isEmpty() && known.contains(name)) wanted = name;
    }
    metric_->setCurrentText(wanted.isEmpty() ? metric_->itemText(0) : wanted);
  }
  const QStringList before = columnKeys_;
  rebuildColumns();
  if (columnKeys_ != before) {
    model_->removeRows(0, model_->rowCount());
    appendRows(0);
  } else {
    appendRows(first);
  }
  setFilterText(filter_->text());
}

void StudyBrowser::finishStudy() {
  loading_ = false;
  regroup();
}

void StudyBrowser::rebuildColumns() {
  // The config keys whose values differ between the runs (those that tell runs apart), then each final metric.
  QStringList keys = backend_ ? backend_->varyingKeys(runs_) : QStringList();
  varyingKeys_ = keys;
  QSet<QString> finals;
  for (const auto& run : runs_) {
    for (auto it = run.finals.begin(); it != run.finals.end(); ++it) finals.insert(it.key());
  }
  QStringList finalNames = finals.values();
  finalNames.sort();
  for (const auto& name : finalNames) keys << kFinalPrefix + name;
  keys << kLastStep;
  columnKeys_ = keys;
  QStringList headers = {QStringLiteral("run")};
  headers += columnKeys_;
  model_->setColumnCount(headers.size());
  model_->setHorizontalHeaderLabels(headers);
  for (int c = 0; c < columnKeys_.size(); ++c) {
    const QString& key = columnKeys_[c];
    // Final metrics other than the test metrics start hidden; the header's menu shows them.
    const bool quietFinal = key.startsWith(kFinalPrefix) && !testMetrics().contains(key.mid(kFinalPrefix.size()));
    table_->setColumnHidden(c + 1, !columnChoice_.value(key, !quietFinal));
  }
}

void StudyBrowser::appendRows(int first) {
  // The proxy sorts once after the batch, not at each row.
  proxy_->setDynamicSortFilter(false);
  for (int i = first; i < runs_.size(); ++i) {
    const StudyRunRow& run = runs_[i];
    QList<QStandardItem*> row;
    row << studyNameItem(run, i, kSortRole);
    for (const auto& key : columnKeys_) {
      auto* item = new QStandardItem;
      if (key == kLastStep) {
        item->setText(QString::number(run.lastStep));
        item->setData(static_cast<double>(run.lastStep), kSortRole);
      } else if (key.startsWith(kFinalPrefix)) {
        const auto found = run.finals.find(key.mid(kFinalPrefix.size()));
        if (found != run.finals.end()) {
          item->setText(number(found.value()));
          item->setData(found.value(), kSortRole);
        }
      } else {
        const QString value = run.config.value(key);
        bool numeric = false;
        const double asNumber = value.toDouble(&numeric);
        item->setText(value);
        item->setData(numeric ? QVariant(asNumber) : QVariant(value), kSortRole);
      }
      row << item;
    }
    model_->appendRow(row);
  }
  proxy_->setDynamicSortFilter(true);
  // Columns fit their contents when they are made (the first rows); measuring every row at each batch of a study of
  // 300 real runs took longer than adding the rows.
  if (first == 0) table_->resizeColumnsToContents();
}

int StudyBrowser::shownRuns() const {
  return proxy_->rowCount();
}

QString StudyBrowser::status() const {
  return status_->fullText();
}

QStringList StudyBrowser::shownNames() const {
  QStringList names;
  for (int row = 0; row < proxy_->rowCount(); ++row) names << proxy_->index(row, 0).data(kSortRole).toString();
  return names;
}

void StudyBrowser::setFilterText(const QString& text) {
  if (filter_->text() != text) {
    const QSignalBlocker quiet(filter_);
    filter_->setText(text);
  }
  filterError_.clear();
  kept_ = backend_ ? backend_->filter(runs_, text, &filterError_) : QVector<bool>(runs_.size(), true);
  filter_->setStyleSheet(filterError_.isEmpty() ? QString() : QStringLiteral("QLineEdit { color: #b00020; }"));
  filter_->setToolTip(filterError_);
  proxy_->setKept(kept_);
  regroup();
}

void StudyBrowser::setGroupKeys(const QStringList& keys) {
  groupKeys_ = keys;
  const QSignalBlocker quiet(groupBy_);
  groupBy_->setText(keys.join(QStringLiteral(", ")));
  regroup();
}

void StudyBrowser::setMetric(const QString& metric) {
  metric_->setCurrentText(metric);
  regroup();
}

QString StudyBrowser::metric() const {
  return metric_->currentText();
}

void StudyBrowser::regroup() {
  const int shown = proxy_->rowCount();
  QString text = folder_.isEmpty()
                     ? status_->fullText()
                     : QStringLiteral("%1: %2 of %3 run files read%4; %5 shown%6")
                           .arg(folder_)
                           .arg(runs_.size())
                           .arg(expected_)
                           .arg(skipped_ > 0 ? QStringLiteral(" (%1 other files skipped)").arg(skipped_) : QString())
                           .arg(shown)
                           .arg(loading_ ? QStringLiteral(" — reading…") : QString());
  if (!filterError_.isEmpty()) text += QStringLiteral(" — filter: ") + filterError_;
  status_->setFullText(text);
  if (!backend_) return;
  effectiveKeys_ = groupKeys_.isEmpty() ? backend_->defaultGroupKeys(runs_) : groupKeys_;
  if (groupKeys_.isEmpty())
    groupBy_->setPlaceholderText(QStringLiteral("Group by: ") + effectiveKeys_.join(QStringLiteral(", ")));
  groups_ = backend_->group(runs_, kept_, effectiveKeys_, metric());
  groupsTable_->setRowCount(groups_.size());
  for (int g = 0; g < groups_.size(); ++g) {
    const auto& group = groups_[g];
    groupsTable_->setItem(g, 0, cell(group.label));
    groupsTable_->item(g, 0)->setToolTip(group.label);
    groupsTable_->setItem(g, 1,
                          cell(group.count == 0 ? QStringLiteral("–")
                                                : QStringLiteral("%1 ± %2 (%3)")
                                                      .arg(group.mean, 0, 'f', 4)
                                                      .arg(group.standardDeviation, 0, 'f', 4)
                                                      .arg(group.count)));
    groupsTable_->setItem(
        g, 2,
        cell(group.count == 0 ? QStringLiteral("–")
                              : QStringLiteral("%1 – %2").arg(group.min, 0, 'f', 4).arg(group.max, 0, 'f', 4)));
  }
  hyper_->setStudy(runs_, kept_, groups_, varyingKeys_, metric());
  // The pair choice keeps its groups by label when the groups are made again.
  const QString a = pairA_->currentText(), b = pairB_->currentText();
  QStringList labels;
  for (const auto& group : groups_) labels << group.label;
  for (auto* box : {pairA_, pairB_}) {
    const QSignalBlocker quiet(box);
    box->clear();
    box->addItems(labels);
  }
  const int indexA = labels.contains(a) ? labels.indexOf(a) : 0;
  const int indexB = labels.contains(b) ? labels.indexOf(b) : std::min(1, static_cast<int>(labels.size()) - 1);
  setPair(labels.size() >= 2 ? indexA : -1, labels.size() >= 2 ? indexB : -1);
}

void StudyBrowser::setPair(int a, int b) {
  pairing_ = StudyPairing{};
  pairTable_->setRowCount(0);
  if (!backend_ || a < 0 || b < 0 || a >= groups_.size() || b >= groups_.size()) {
    pairSummary_->setText(groups_.size() < 2 ? QStringLiteral("Two groups are needed to pair runs by seed.")
                                             : QString());
    return;
  }
  {
    const QSignalBlocker quietA(pairA_), quietB(pairB_);
    pairA_->setCurrentIndex(a);
    pairB_->setCurrentIndex(b);
  }
  pairing_ = backend_->pair(runs_, groups_[a], groups_[b], metric());
  pairTable_->setRowCount(pairing_.rows.size());
  for (int r = 0; r < pairing_.rows.size(); ++r) {
    const auto& row = pairing_.rows[r];
    auto* seed = cell(row.aRuns == 1 && row.bRuns == 1
                          ? row.seed
                          : QStringLiteral("%1 (A ×%2, B ×%3)").arg(row.seed).arg(row.aRuns).arg(row.bRuns));
    if (row.aRuns != 1 || row.bRuns != 1) {
      seed->setToolTip(QStringLiteral("%1 runs in A and %2 in B share this seed: each side is their mean, and the "
                                      "seed counts once")
                           .arg(row.aRuns)
                           .arg(row.bRuns));
    }
    pairTable_->setItem(r, 0, seed);
    pairTable_->setItem(r, 1, cell(QString::number(row.a, 'f', 4)));
    pairTable_->setItem(r, 2, cell(QString::number(row.b, 'f', 4)));
    auto* difference =
        cell(QString::asprintf("%+.4f", row.difference) + (row.aWins ? QStringLiteral("  A") : QString()));
    difference->setToolTip(row.aWins ? QStringLiteral("A is better at this seed")
                                     : QStringLiteral("B is as good or better"));
    pairTable_->setItem(r, 3, difference);
  }
  if (pairing_.rows.isEmpty()) {
    pairSummary_->setText(QStringLiteral("No seed (train.seed) has a run with %1 in both groups.").arg(metric()));
    return;
  }
  pairSummary_->setText(
      QStringLiteral("A − B in %1 (%2 is better): mean %3 ± %4; A better in %5 of %6 seeds")
          .arg(pairing_.metric, pairing_.lowerIsBetter ? QStringLiteral("lower") : QStringLiteral("higher"))
          .arg(QString::asprintf("%+.4f", pairing_.mean))
          .arg(pairing_.standardDeviation, 0, 'f', 4)
          .arg(pairing_.wins)
          .arg(pairing_.rows.size()) +
      (pairing_.duplicates.isEmpty() ? QString() : QStringLiteral("\nRuns sharing a seed: ") + pairing_.duplicates));
}

void StudyBrowser::showPairing() {
  side_->setCurrentIndex(1);
}

void StudyBrowser::openSelected() {
  QStringList paths;
  for (const auto& index : table_->selectionModel()->selectedRows()) {
    const int run = index.data(Qt::UserRole).toInt();
    if (run >= 0 && run < runs_.size()) paths << runs_[run].path;
  }
  if (paths.isEmpty()) {
    for (const auto& index : groupsTable_->selectionModel()->selectedRows()) {
      for (int member : groups_.value(index.row()).members) paths << runs_[member].path;
    }
  }
  if (!paths.isEmpty()) emit openRunsRequested(paths);
}

void StudyBrowser::drawGroups() {
  QStringList paths;
  for (const auto& group : groups_) {
    for (int member : group.members) paths << runs_[member].path;
  }
  if (!paths.isEmpty()) emit drawGroupsRequested(paths, groupKeys_);
}

}  // namespace descentlab::widgets
