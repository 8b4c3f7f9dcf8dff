#pragma once
// The Study dock (issue 35): a folder of run files as a study. A sortable table of every run (its differing config
// keys and final metrics; a column chooser on the header), a filter field (text, key=value, comparisons, ranges),
// a "group by" field whose default is every differing key but the seeds, each group's final metric over its
// members, and two groups paired seed by seed. Runs are read by the app on a worker thread and arrive in batches;
// the grouping, the filter and the pairing are the engine's (core/study, through StudyBackend): widgets compute
// nothing of their own. Plain Qt; no LibTorch.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QStandardItemModel;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace descentlab::widgets {

class ElidedLabel;
class StudyRowFilter;

// One run of the study as the table shows it: read without its series (its header and each series' last value).
struct StudyRunRow {
  QString path;
  QString name;
  QString error;                  // why it could not be read ("" when it was)
  QMap<QString, QString> config;  // flat keys ("train.lr") to values
  QMap<QString, double> finals;   // each scalar series' last value
  qint64 lastStep = 0;
};

struct StudyGroupRow {
  QString label;  // "vit-horst-quick, alpha 5.0 (3 seeds)"
  QMap<QString, QString> values;
  QVector<int> members;  // indices into the runs
  int count = 0;         // members with the metric
  double mean = 0.0, standardDeviation = 0.0, min = 0.0, max = 0.0;
};

struct StudyPairRow {
  QString seed;
  double a = 0.0, b = 0.0, difference = 0.0;
  bool aWins = false;
};

struct StudyPairing {
  QString metric;
  bool lowerIsBetter = false;
  QVector<StudyPairRow> rows;
  double mean = 0.0, standardDeviation = 0.0;
  int wins = 0;
};

// What the app gives the browser: core/study's grouping, filter and pairing over the rows.
class StudyBackend {
 public:
  virtual ~StudyBackend() = default;
  // Every config key whose value differs between the runs (the table's columns).
  virtual QStringList varyingKeys(const QVector<StudyRunRow>& runs) const = 0;
  // Every config key whose value differs, but the seeds.
  virtual QStringList defaultGroupKeys(const QVector<StudyRunRow>& runs) const = 0;
  // Which runs the filter text keeps; `*error` names the term it cannot read (then every run is kept).
  virtual QVector<bool> filter(const QVector<StudyRunRow>& runs, const QString& text, QString* error) const = 0;
  // The kept runs grouped by `keys`, each group's `metric` over its members.
  virtual QVector<StudyGroupRow> group(const QVector<StudyRunRow>& runs, const QVector<bool>& kept,
                                       const QStringList& keys, const QString& metric) const = 0;
  virtual StudyPairing pair(const QVector<StudyRunRow>& runs, const StudyGroupRow& a, const StudyGroupRow& b,
                            const QString& metric) const = 0;
};

class StudyBrowser : public QWidget {
  Q_OBJECT

 public:
  explicit StudyBrowser(QWidget* parent = nullptr);
  void setBackend(const StudyBackend* backend);

  // A new study: the table empties and shows "reading N run files of FOLDER".
  void beginStudy(const QString& folder, int files, int skippedFiles);
  // A batch of runs read (in file order).
  void addRuns(const QVector<StudyRunRow>& runs);
  void finishStudy();

  const QVector<StudyRunRow>& runs() const { return runs_; }
  int shownRuns() const;  // rows the filter keeps
  QString status() const;
  // The table's rows in the order shown (after sorting and filtering): the runs' names.
  QStringList shownNames() const;

  void setFilterText(const QString& text);
  QString filterError() const { return filterError_; }
  // Empty: the default (every differing key but the seeds).
  void setGroupKeys(const QStringList& keys);
  QStringList groupKeys() const { return groupKeys_; }
  void setMetric(const QString& metric);
  QString metric() const;
  const QVector<StudyGroupRow>& groups() const { return groups_; }
  // Pairs groups a and b (indices into groups()); -1 clears. The "Paired by seed" tab comes forward.
  void setPair(int a, int b);
  void showPairing();
  const StudyPairing& pairing() const { return pairing_; }
  // Sorts the runs table by a column (its header's text) as a click on the header does.
  void sortBy(const QString& column, bool ascending);
  QStringList columns() const;
  // Shows or hides a column of the runs table (a config key or a final metric), as the header's menu does.
  void setColumnShown(const QString& column, bool shown);

 signals:
  // "Open in the lab": the selected runs, or every run of the chosen groups, become runs of the lab's views.
  void openRunsRequested(const QStringList& paths);

 private:
  void rebuildColumns();
  void appendRows(int first);
  void regroup();
  void showColumnMenu(const QPoint& position);
  void openSelected();

  const StudyBackend* backend_ = nullptr;
  QVector<StudyRunRow> runs_;
  QVector<bool> kept_;
  QVector<StudyGroupRow> groups_;
  StudyPairing pairing_;
  QStringList groupKeys_;             // as chosen; empty: the default
  QStringList effectiveKeys_;         // what the groups were made by
  QStringList columnKeys_;            // the table's columns after Name: config keys, then "final: metric"
  QMap<QString, bool> columnChoice_;  // the user's show (true) or hide per column
  QString folder_;
  QString filterError_;
  int expected_ = 0;
  int skipped_ = 0;
  bool loading_ = false;

  QLineEdit* filter_ = nullptr;
  QLineEdit* groupBy_ = nullptr;
  QComboBox* metric_ = nullptr;
  ElidedLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  QStandardItemModel* model_ = nullptr;
  StudyRowFilter* proxy_ = nullptr;
  QTableWidget* groupsTable_ = nullptr;
  QComboBox* pairA_ = nullptr;
  QComboBox* pairB_ = nullptr;
  QTableWidget* pairTable_ = nullptr;
  QLabel* pairSummary_ = nullptr;
  QPushButton* open_ = nullptr;
  QTabWidget* side_ = nullptr;
};

}  // namespace descentlab::widgets
