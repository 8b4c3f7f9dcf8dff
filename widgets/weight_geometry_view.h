#pragma once

#include <QColor>
#include <QVector>

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"
#include "widgets/run_data.h"

class QCPColorMap;
class QCPColorScale;
class QCPLayoutElement;
class QCPLayoutGrid;
class QCPMarginGroup;
class QCPTextElement;
class QComboBox;
class QLabel;
class QTableWidget;

namespace descentlab::widgets {

// Weight geometry, AdamW vs HAM vs HORST side by side for one tensor group (global or a layer):
// - a table, one row per shown run: sparsity, the share of kept (non-zero) weights below 1e-3 and 1e-2, and the
//   kept weights' median, 90th and 99th percentile |w| at the last snapshot;
// - the kept weights' distribution on a log |w| axis, cumulative (the default for two runs or more: the runs'
//   difference shows at a glance) or as the share per bin;
// - one run's histogram over time as a heat map, any run chosen beside it (the focus run until one is chosen).
class WeightGeometryView : public PlotView {
  Q_OBJECT

 public:
  enum class Mode { Cumulative, Histogram };

  explicit WeightGeometryView(LabModel* model, QWidget* parent = nullptr);
  ~WeightGeometryView() override;
  CsvTable table() const override;
  void setGroup(const QString& name);

  // As if the user chose it: the choice then stays, whatever the number of runs.
  void setMode(Mode mode);
  Mode mode() const { return mode_; }
  // The run (by id) the heat map shows, as if chosen in its selector; false when no run has that id's histograms.
  bool setHeatMapRun(const QString& id);
  QString heatMapRun() const { return heatRunId_; }
  // Whether the heat map is drawn: in a short, narrow view it steps aside, and its chooser with it.
  bool heatMapShown() const;
  // Whether the statistics table is shown: it lists every drawn run or steps aside (a short view), and the legend,
  // which it stands in for while shown, then names each run with its share of kept weights below 1e-2.
  bool tableShown() const { return tableShown_; }
  QTableWidget* statisticsTable() const { return table_; }
  // Grouped (LabModel::grouped()): per group, the band over its members' drawn curves (x = |w|, the points all
  // members have; `atStep` the newest member snapshot's step).
  QVector<GroupBand> groupBands() const;

 protected:
  void rebuild() override;
  void resetRanges() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;
  void resizeEvent(QResizeEvent* event) override;
  void setExporting(bool exporting) override;

 private:
  // One run's curve as drawn: csv() and the readout use exactly this.
  struct Curve {
    QString runId;
    QString name;
    QColor colour;
    Qt::PenStyle style = Qt::SolidLine;
    int64_t step = 0;
    QVector<double> edges;
    QVector<double> counts;  // the last snapshot
    QVector<double> x, y;    // the drawn points
  };

  // The statistics table under the tools, its columns and their tips (the constructor calls it).
  void buildTable();
  void drawCurves(const QString& group);
  void drawGroupBands();
  void drawHeatMap(const QString& group);
  void fillTable();
  // Puts the heat map beside the distribution when the plot is wide, below it when it is tall; sizes the legend.
  void arrange();
  // The legend's arrangement: its widest entry (0 when it has none), its columns, and whether it sits beside the
  // distribution rather than above the plots.
  struct LegendFit {
    int widest = 0;
    int columns = 1;
    bool beside = false;
  };
  // Wraps the legend into as many columns as fit its part of `area`, and puts it in its box (or takes it out).
  LegendFit fitLegend(const QRect& area, bool wide, bool sideBySide, bool withLegend);
  // Places the legend's box, the distribution, and the heat map with its title and colour bar in the plot's layout
  // for the arrangement, with the margin groups that align them.
  void placeLayoutElements(bool sideBySide, bool beside, bool compact);
  // Fits the columns to the width; shows the table when the view has room for all its rows over the plot's
  // minimum height, and otherwise hides it (a refresh then renames the legend's entries).
  void fitTableColumns();
  // The legend is drawn when the table does not stand in for it: the table hidden, a run hidden (its struck-out
  // entry is the click that shows it again), or an export (the picture has no table).
  bool legendWanted() const;

  QComboBox* group_ = nullptr;
  QComboBox* modeBox_ = nullptr;
  QComboBox* heatRunBox_ = nullptr;
  QLabel* heatLabel_ = nullptr;  // "heat map": hidden with its chooser while the heat map has no room
  QTableWidget* table_ = nullptr;
  QCPAxisRect* heat_ = nullptr;
  QCPColorScale* scale_ = nullptr;
  QCPColorMap* heatMap_ = nullptr;
  QCPTextElement* heatTitle_ = nullptr;
  QCPLayoutGrid* legendBox_ = nullptr;      // the legend over a spacer
  QCPMarginGroup* alignRows_ = nullptr;     // side by side: the two plots' top and bottom
  QCPMarginGroup* alignColumns_ = nullptr;  // stacked: the two plots' left and right
  QCPMarginGroup* alignScale_ = nullptr;    // the colour bar spans the heat map's height
  int arrangedState_ = -1;                  // side by side (1) + legend shown (2); -1 before the first arrangement

  bool tableShown_ = true;
  bool exporting_ = false;
  int hiddenRuns_ = 0;  // runs with histograms of the group whose curves are hidden

  Mode mode_ = Mode::Cumulative;
  bool modeChosen_ = false;  // by the user: the default no longer follows the number of runs
  QString heatRunId_;
  bool heatRunChosen_ = false;  // by the user: the heat map no longer follows the focus run
  QVector<Curve> curves_;
  QString drawnGroup_;
  QString heatRunName_;
  HistogramTrack heatTrack_;  // the heat map's data as drawn
};

}  // namespace descentlab::widgets
