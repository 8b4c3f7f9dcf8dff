#pragma once
// The frame every live view shares: a QCustomPlot under a tool row, with drag-to-zoom (a rectangle), wheel zoom,
// double-click to reset, a crosshair with a readout of the point under the mouse, and export of the picture
// (PNG, SVG, PDF) and of the plotted data (CSV).

#include <QPoint>
#include <QSet>
#include <QString>
#include <QWidget>

#include "widgets/csv_table.h"

class QCustomPlot;
class QCPAxisRect;
class QCPItemStraightLine;
class QLabel;
class QMouseEvent;

namespace descentlab::widgets {

class FlowLayout;
class LabModel;

class PlotView : public QWidget {
  Q_OBJECT

 public:
  PlotView(LabModel* model, QString title, QWidget* parent = nullptr);
  ~PlotView() override;

  const QString& title() const { return title_; }
  // The title as a file name: "Per-layer loss" -> "per-layer-loss" (exports, reports, screenshots).
  QString fileStem() const;
  QCustomPlot* plot() const { return plot_; }

  // Redraws from the model when it changed since the last refresh (or always with force).
  void refresh(bool force = false);

  // What the plot draws, as a table (one row per point drawn; a group as its mean and band): the one CSV export
  // every view shares (widgets/csv_table.h).
  virtual CsvTable table() const = 0;
  QString csv() const { return table().text(); }

  // Writes the picture; the format follows the suffix (.png, .svg, .pdf). Throws nothing: false on failure.
  bool exportImage(const QString& path, int width = 0, int height = 0);
  bool exportCsv(const QString& path) const;

  // True when at least one plottable has data: the screenshot test's "not blank".
  bool hasData() const;

  // What hovering at plot coordinates (x, y) of the first axis rect shows: the one-line readout under the plot and
  // the table beside the cursor (HTML; empty when the view has none). Public for tests.
  QString readoutAt(double x, double y) const { return readout(firstAxisRect(), x, y); }
  QString hoverTableAt(double x, double y) const { return hoverTable(firstAxisRect(), x, y); }
  // The table the last hover showed (for tests; the tooltip itself is the platform's).
  const QString& lastHoverTable() const { return lastHoverTable_; }

 signals:
  void exported(const QString& path);

 protected:
  // Rebuilds the plottables from the model. Axis ranges are kept once the user zoomed, reset otherwise.
  virtual void rebuild() = 0;
  // Rescales every axis to the data (double click, and after a rebuild while not zoomed).
  virtual void resetRanges();
  void resizeEvent(QResizeEvent* event) override;
  // A hidden view is not redrawn as runs change (MainWindow::refreshViews): shown again, it catches up.
  void showEvent(QShowEvent* event) override;
  // Text for the readout at plot coordinates (x, y) in axis rect `rect`.
  virtual QString readout(QCPAxisRect* rect, double x, double y) const;
  // A table of every visible run's values at the step nearest x, shown beside the cursor (TensorBoard's hover);
  // empty for views without one.
  virtual QString hoverTable(QCPAxisRect* rect, double x, double y) const;

  // The tool row above the plot: it wraps onto a second line when the view is narrow.
  FlowLayout* tools() const { return tools_; }
  LabModel* model() const { return model_; }
  void addExportButton();
  void styleAxisRect(QCPAxisRect* rect, const QString& xLabel, const QString& yLabel);
  // A second plot in the plot layout's last row (the descending shares, the frontier over time) that gives its room
  // to the plot above where the view is short: under 200 px of plot, a tour's two plots were about 30 px each at
  // 1024x700 and 1280x800. `upper` and `lower` are the two rows' stretch factors while both show; between 200 and
  // 320 px the upper row gets half as much again. Rebuilds skip the lower plot while it is out (lowerRowShown()).
  void setLowerRow(QCPAxisRect* rect, double upper, double lower);
  bool lowerRowShown() const { return lowerRowShown_; }
  // Forgets the user's zoom: the next refresh fits the ranges to the data again (a change of what is plotted).
  void resetZoom() { userZoomed_ = false; }
  // Whether the legend lists the model's groups by their labels (every multi-run view; λ lists layers).
  virtual bool listsGroups() const { return true; }
  // Around an image export (true, then false): a view that shows on screen what the picture needs elsewhere (the
  // weight geometry's table stands in for its legend) puts it into the picture.
  virtual void setExporting(bool exporting) { Q_UNUSED(exporting); }

 private:
  // Puts the lower row in or takes it out for the room the legend leaves; true when that changed.
  bool fitLowerRow();
  // Lists hidden groups in the legend (struck out) to be shown again, every group's entry in the groups' order.
  void bindGroupEntries();
  // As many legend columns as the widest entry allows; an entry wider than the plot is shortened in the middle.
  void fitLegend();
  QCPAxisRect* firstAxisRect() const;
  void onMouseMove(QMouseEvent* event);
  // Shows `text` under the plot, elided to the label's width (the whole text in its tooltip).
  void setReadoutText(const QString& text);
  void onDoubleClick(QMouseEvent* event);
  void exportWithDialog();

  LabModel* model_;
  QString title_;
  QString readoutText_;  // the readout's whole text (shown elided)
  QCustomPlot* plot_ = nullptr;
  FlowLayout* tools_ = nullptr;
  QLabel* readout_ = nullptr;
  QCPItemStraightLine* crossVertical_ = nullptr;
  QCPItemStraightLine* crossHorizontal_ = nullptr;
  QString lastHoverTable_;
  QCPAxisRect* lowerRow_ = nullptr;
  int lowerRowIndex_ = -1;
  double upperStretch_ = 1.0;
  double lowerStretch_ = 1.0;
  bool lowerRowShown_ = true;
  QPoint pressedAt_;
  int64_t drawnRevision_ = -1;
  QSet<QString> drawnInGroups_;  // runs this view has drawn as members of a group (their group, hidden, is listed)
  bool userZoomed_ = false;
  bool legendTaken_ = false;
};

}  // namespace descentlab::widgets
