#pragma once
// The Runs dock's table, on the LabModel: a row per run (its colour, state, a progress bar of its steps or of a
// robustness sweep's cells, speed, ETA, test metric, descent certificate, and the config keys in which the runs
// differ), sorted by the column whose header was clicked; the selected row is the model's focus run, and a right-click
// opens the run's menu (show in plots, colour, pause / resume / stop, reveal or copy its file, close).

#include <QSet>
#include <QTableWidget>

class QMenu;

namespace descentlab::widgets {

class LabModel;
class RunData;
struct RunGroup;

class RunsTable : public QTableWidget {
  Q_OBJECT

 public:
  // `window` is the main window: the run's menu and colour dialog open over it.
  RunsTable(LabModel& model, QWidget* window);

  // Brings the rows up to the model's runs, writing only the cells that changed; a table hidden behind another tab
  // waits until it shows.
  void refresh();
  // The next refresh rewrites every row (runs were added or removed, or the focus moved).
  void invalidate() { revision_ = -1; }
  // The run's menu while it is open (for tests); null otherwise.
  QMenu* runMenu() const { return openMenu_; }
  // The filter of the study's runs table (core/study's RunFilter: text, key=value, comparisons, ranges), over the
  // runs' configs, final values, names and paths: the rows of runs it does not keep are hidden. "" shows every run.
  void setFilterText(const QString& text);
  QString filterText() const { return filterText_; }
  int shownRows() const;
  // "" or what the filter could not read, or the keys no run has with the nearest ones.
  QString filterMessage() const { return filterMessage_; }

 signals:
  void pauseRequested(const QString& runId);
  void resumeRequested(const QString& runId);
  void stopRequested(const QString& runId);
  void revealRequested(const QString& path);
  void closeRunRequested(const QString& runId);
  void annotateRequested(const QString& runId);
  // After each filtering: how many rows show of how many, and the filter's message ("" when none).
  void filtered(int shown, int total, const QString& message);

 protected:
  // The table skips the refreshes made while it is hidden: it catches up when it shows.
  void showEvent(QShowEvent* event) override;

 public:
  // The lines of a person's name, tags and note for a tooltip ("" when none was given), each ending in a line break.
  static QString annotationText(const RunData& run);

 private:
  // The menu of the run in the row at `position`: show/hide, colour, pause/resume/stop, reveal its file, close.
  void showRunMenu(const QPoint& position);
  void addColourEntry(QMenu& menu, const QString& id);
  // The rows in the order of the column whose header was clicked (numbers as numbers), else as the runs came.
  QVector<const RunData*> runsInTableOrder(const QStringList& keys, int firstKey, bool anyLayerwise) const;
  // The headers (the fixed columns, the certificate's while a layerwise run is open, the differing keys) and a row
  // per run; a new header or fewer rows mark every column to be fitted again.
  void setHeaders(const QStringList& headers, QSet<int>& changedColumns);
  void fillRow(int row, const RunData& run, const QStringList& keys, int firstKey, bool anyLayerwise,
               QSet<int>& changedColumns);
  // The progress column: training steps, or a robustness sweep's γ and seed while one runs.
  void fillProgressCell(int row, const RunData& run);
  // The group the run is drawn in while runs are drawn as groups (hidden or not); nullptr otherwise.
  const RunGroup* groupHolding(const RunData& run) const;
  // Hides the rows of the runs the filter does not keep.
  void applyFilter();
  // Writes a cell's text where it changed, noting its column to be fitted again.
  QTableWidgetItem* setCell(int row, int column, const QString& text, QSet<int>& changedColumns);

  LabModel& model_;
  QWidget* window_ = nullptr;
  int64_t revision_ = -1;
  int sortColumn_ = -1;  // a header click's column, -1: the order runs were added
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
  QMenu* openMenu_ = nullptr;
  QString filterText_;
  QString filterMessage_;
};

}  // namespace descentlab::widgets
