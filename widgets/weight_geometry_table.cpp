// The weight-geometry view's statistics table: one row per shown run (its line sample as the legend, sparsity, the
// shares of kept weights below 1e-3 and 1e-2, and the kept weights' median, p90 and p99 |w|), its columns fitted
// to the view's width and its height to the rows the plot leaves room for.
#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QHeaderView>
#include <QPainter>
#include <QScrollBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/histogram_statistics.h"

namespace descentlab::widgets {

namespace {

enum Column { kRun, kStep, kSparsity, kBelow1e3, kBelow1e2, kMedian, kP90, kP99, kColumns };

// A line sample in the run's pen: the table doubles as the legend, dashes included.
QIcon lineIcon(const QColor& colour, Qt::PenStyle style) {
  QPixmap pixmap(24, 12);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(colour, 2.5, style, Qt::FlatCap));
  painter.drawLine(QPointF(1, 6), QPointF(23, 6));
  return QIcon(pixmap);
}

QTableWidgetItem* numberItem(const QString& text, double value) {
  auto* item = new QTableWidgetItem(text);
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  return item;
}

// As tall as its rows when there is room (sizeHint), down to its header and a scroll bar when the view is short
// (minimumSizeHint: a 1024x700 window stacks three tab groups): the layout shrinks the table before the plot.
class StatisticsTable : public QTableWidget {
 public:
  using QTableWidget::QTableWidget;
  QSize sizeHint() const override { return {QTableWidget::sizeHint().width(), heightFor(rowCount())}; }
  QSize minimumSizeHint() const override { return {QTableWidget::minimumSizeHint().width(), heightFor(0)}; }
  void setScrolls(bool scrolls) {
    if (scrolls == scrolls_) return;
    scrolls_ = scrolls;
    updateGeometry();
  }

  int heightFor(int rows) const {
    return horizontalHeader()->sizeHint().height() + 2 * frameWidth() +
           (scrolls_ ? horizontalScrollBar()->sizeHint().height() : 0) + rows * verticalHeader()->defaultSectionSize();
  }
  bool scrolls_ = false;
};

}  // namespace

void WeightGeometryView::buildTable() {
  table_ = new StatisticsTable(0, kColumns, this);
  table_->setObjectName(QStringLiteral("geometryTable"));
  const QStringList headers = {QStringLiteral("run"),        QStringLiteral("step"),       QStringLiteral("sparsity"),
                               QStringLiteral("kept <1e-3"), QStringLiteral("kept <1e-2"), QStringLiteral("median"),
                               QStringLiteral("p90"),        QStringLiteral("p99")};
  const QStringList tips = {
      QStringLiteral("The run, drawn with this line"),
      QStringLiteral("The step of the histogram snapshot (the last one)"),
      QStringLiteral("Share of weights that are zero (|w| below the histogram's first edge, ~1.6e-8: pruned)"),
      QStringLiteral("Share of the kept (non-zero) weights with |w| < 1e-3"),
      QStringLiteral("Share of the kept (non-zero) weights with |w| < 1e-2"),
      QStringLiteral("Median |w| of the kept weights (interpolated in log |w| within its bin)"),
      QStringLiteral("90th percentile of |w| among the kept weights"),
      QStringLiteral("99th percentile of |w| among the kept weights")};
  for (int column = 0; column < kColumns; ++column) {
    auto* header = new QTableWidgetItem(headers[column]);
    header->setToolTip(tips[column]);
    table_->setHorizontalHeaderItem(column, header);
  }
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->horizontalHeader()->setMinimumSectionSize(24);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideMiddle);  // run names: both ends say which run
  table_->setIconSize(QSize(24, 12));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setFocusPolicy(Qt::NoFocus);
  table_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
  static_cast<QVBoxLayout*>(layout())->insertWidget(1, table_);
}

void WeightGeometryView::fillTable() {
  table_->setRowCount(static_cast<int>(curves_.size()));
  for (int row = 0; row < curves_.size(); ++row) {
    const Curve& curve = curves_[row];
    const HistogramStatistics statistics = histogramStatistics(curve.edges, curve.counts);
    auto* name = new QTableWidgetItem(lineIcon(curve.colour, curve.style), curve.name);
    name->setForeground(curve.colour.darker(125));
    name->setToolTip(curve.name);
    name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    table_->setItem(row, kRun, name);
    table_->setItem(row, kStep, numberItem(QString::number(curve.step), static_cast<double>(curve.step)));
    table_->setItem(row, kSparsity, numberItem(percentText(statistics.zeroShare), statistics.zeroShare));
    table_->setItem(row, kBelow1e3, numberItem(percentText(statistics.keptBelow1e3), statistics.keptBelow1e3));
    table_->setItem(row, kBelow1e2, numberItem(percentText(statistics.keptBelow1e2), statistics.keptBelow1e2));
    table_->setItem(row, kMedian, numberItem(magnitudeText(statistics.median), statistics.median));
    table_->setItem(row, kP90, numberItem(magnitudeText(statistics.p90), statistics.p90));
    table_->setItem(row, kP99, numberItem(magnitudeText(statistics.p99), statistics.p99));
  }
  table_->setVisible(!curves_.isEmpty());
  fitTableColumns();
}

void WeightGeometryView::fitTableColumns() {
  // Columns as wide as their text; the run names give way (elided in the middle) when the numbers need the room,
  // down to a readable width, and past that the table scrolls sideways.
  table_->resizeColumnsToContents();
  const int frame = 2 * table_->frameWidth();
  int numbers = 0;
  for (int column = kStep; column < kColumns; ++column) numbers += table_->columnWidth(column);
  const int nameRoom = table_->width() - frame - numbers;
  if (table_->columnWidth(kRun) > nameRoom) table_->setColumnWidth(kRun, std::max(130, nameRoom));
  auto* table = static_cast<StatisticsTable*>(table_);
  table->setScrolls(table_->columnWidth(kRun) + numbers > table_->width() - frame);
  // Whole rows only, as many as leave the plot its minimum height; a scroll bar for the rest.
  int others = 0;  // the tool row and the readout
  int shown = 0;
  auto* box = layout();
  for (int i = 0; i < box->count(); ++i) {
    QWidget* widget = box->itemAt(i)->widget();
    if (!widget || !widget->isVisibleTo(this)) continue;
    ++shown;
    if (widget != table_ && widget != plot()) others += widget->height();
  }
  const QMargins margins = box->contentsMargins();
  const int room =
      height() - margins.top() - margins.bottom() - (shown - 1) * box->spacing() - others - plot()->minimumHeight();
  const int rows = std::clamp((room - table->heightFor(0)) / table_->verticalHeader()->defaultSectionSize(), 1,
                              std::max(1, table_->rowCount()));
  table_->setMaximumHeight(table->heightFor(rows));
  table_->updateGeometry();
}

void WeightGeometryView::resizeEvent(QResizeEvent* event) {
  PlotView::resizeEvent(event);
  fitTableColumns();
}

}  // namespace descentlab::widgets
