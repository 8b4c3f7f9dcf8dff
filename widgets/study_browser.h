#pragma once
// The Study dock (issue 35): a folder of run files as a study. A sortable table of every run (its differing config
// keys and final metrics; a column chooser on the header), a filter field (text, key=value, comparisons, ranges),
// a "group by" field whose default is every differing key but the seeds, each group's final metric over its
// members, and two groups paired seed by seed. Runs are read by the app on a worker thread and arrive in batches;
// the grouping, the filter and the pairing are the engine's (core/study, through StudyBackend): widgets compute
// nothing of their own. Plain Qt; no LibTorch.

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "widgets/study_rows.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QLayout;
class QToolButton;
class QStandardItem;
class QStandardItemModel;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace descentlab::widgets {

// The role the Study dock's runs table sorts by.
inline constexpr int kStudySortRole = Qt::UserRole + 2;
// A run's first cell in the Study dock: its own name (or its path below the folder) and tags, its index under
// Qt::UserRole and its name under `sortRole`.
QStandardItem* studyNameItem(const StudyRunRow& run, int index, int sortRole);

class ElidedLabel;
class HyperparameterView;
class StudyRowFilter;

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
  // A run of the study was given a name, tags and a note (in the window, through its run file): its row shows them
  // and the filter finds them. Nothing when no run of the study has that absolute path.
  void setRunAnnotation(const QString& path, const QString& label, const QStringList& tags, const QString& note);
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
  // What "Draw groups" does.
  void drawGroups();
  const StudyPairing& pairing() const { return pairing_; }
  HyperparameterView* hyperparameters() const { return hyper_; }
  // Shows the hyper-parameter view's tab.
  void showHyperparameters();
  // "Full window": the Study dock floats over the window at its size, for as many rows as the screen holds (at
  // 1280x800 the docked study shows about 7 beside the views); off, or the dock's title double-clicked, docks it back.
  void setFullWindow(bool on);
  bool fullWindow() const;
  // Sorts the runs table by a column (its header's text) as a click on the header does.
  void sortBy(const QString& column, bool ascending);
  QStringList columns() const;
  // Shows or hides a column of the runs table (a config key or a final metric), as the header's menu does.
  void setColumnShown(const QString& column, bool shown);

 signals:
  // "Open in the lab": the selected runs, or every run of the chosen groups, become runs of the lab's views.
  void openRunsRequested(const QStringList& paths);
  // "Draw groups": every run in a group (those the filter keeps) becomes a run of the lab's views, and the views
  // draw them grouped by `keys` (empty: every differing key but the seeds).
  void drawGroupsRequested(const QStringList& paths, const QStringList& keys);

 private:
  QLayout* buildStatusRow();  // the status line and the Full window button
  void buildRunsTable();
  void buildSidePanel();
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
  QStringList varyingKeys_;           // the config keys whose values differ between the runs
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
  QToolButton* fullWindow_ = nullptr;
  QPushButton* drawGroups_ = nullptr;
  QTabWidget* side_ = nullptr;
  HyperparameterView* hyper_ = nullptr;
};

}  // namespace descentlab::widgets
