// The weight-geometry view's statistics table: one row per shown run (its line sample as the legend, sparsity, the
// shares of kept weights below 1e-3 and 1e-2, and the kept weights' median, p90 and p99 |w|), its columns fitted
// to the view's width and its height to the rows the plot leaves room for.
#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QHeaderView>
#include <QPainter>
#include <QScrollBar>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/histogram_statistics.h"
#include "widgets/plot_helpers.h"

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
  fitTableColumns();
}

void WeightGeometryView::fitTableColumns() {
  // Columns as wide as their text; the run names give way (elided in the middle) when the numbers need the room,
  // down to a readable width, and past that the table scrolls sideways. The table's width is the layout's, shown
  // or not.
  for (int row = 0; row < table_->rowCount() && row < curves_.size(); ++row) {
    if (QTableWidgetItem* item = table_->item(row, kRun)) item->setText(curves_[row].name);  // whole, to measure
  }
  table_->resizeColumnsToContents();
  const int width = layout()->contentsRect().width() > 0 ? layout()->contentsRect().width() : table_->width();
  const int frame = 2 * table_->frameWidth();
  int numbers = 0;
  for (int column = kStep; column < kColumns; ++column) numbers += table_->columnWidth(column);
  const int nameRoom = width - frame - numbers;
  // Names too long for their column are shortened around what tells each from the others (the whole name in the
  // tooltip): elided in the middle, two runs reopened from their files read the same.
  const int wholeWidth = table_->columnWidth(kRun);
  if (wholeWidth > nameRoom) {
    table_->setColumnWidth(kRun, std::max(130, nameRoom));
    QStringList names;
    int widest = 0;
    for (const Curve& curve : curves_) {
      names << curve.name;
      widest = std::max(widest, table_->fontMetrics().horizontalAdvance(curve.name));
    }
    const int textRoom = table_->columnWidth(kRun) - (wholeWidth - widest);  // the icon and margins stay
    const QStringList shortened = distinctElide(names, table_->fontMetrics(), std::max(textRoom, 40));
    for (int row = 0; row < table_->rowCount() && row < shortened.size(); ++row) {
      if (QTableWidgetItem* item = table_->item(row, kRun)) item->setText(shortened[row]);
    }
  }
  auto* table = static_cast<StatisticsTable*>(table_);
  table->setScrolls(table_->columnWidth(kRun) + numbers > width - frame);
  // Every row or none: a table that showed its header and a scroll bar over no row at 1024x700 told nothing. Shown
  // when all rows fit over the plot's minimum height; otherwise the legend names each run with its share below
  // 1e-2, the figure that tells the optimizers apart.
  int others = 0;  // the tool row and the readout
  int parts = 1;   // the table, shown or not, and the other visible widgets
  auto* box = layout();
  for (int i = 0; i < box->count(); ++i) {
    QWidget* widget = box->itemAt(i)->widget();
    if (!widget || widget == table_ || !widget->isVisibleTo(this)) continue;
    ++parts;
    if (widget != plot()) others += widget->height();
  }
  const QMargins margins = box->contentsMargins();
  const int room =
      height() - margins.top() - margins.bottom() - (parts - 1) * box->spacing() - others - plot()->minimumHeight();
  // Back only with a tool row to spare: hiding the table hides the heat map's chooser too, which may unwrap the
  // tools onto one row, and that row's room must not bring the table back (it would wrap them again).
  const int spare = tableShown_ ? 0 : heatRunBox_->sizeHint().height() + 3;
  const bool shown = !curves_.isEmpty() && room >= table->heightFor(table_->rowCount()) + spare;
  table_->setMaximumHeight(table->heightFor(table_->rowCount()));
  table_->setVisible(shown);
  table_->updateGeometry();
  if (shown != tableShown_) {
    tableShown_ = shown;
    // The legend's entries and place change with it: redrawn after the event that got here (a rebuild or a resize).
    QTimer::singleShot(0, this, [this] { refresh(true); });
  }
}

void WeightGeometryView::resizeEvent(QResizeEvent* event) {
  PlotView::resizeEvent(event);
  fitTableColumns();
}

}  // namespace descentlab::widgets
