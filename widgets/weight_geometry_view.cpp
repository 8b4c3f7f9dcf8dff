#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSet>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/flow_layout.h"
#include "widgets/histogram_statistics.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

namespace {

enum Column { kRun, kStep, kSparsity, kBelow1e3, kBelow1e2, kMedian, kP90, kP99, kColumns };

// "86.8 %", "0.05 %": enough digits to tell small shares apart; "–" when undefined.
QString percentText(double share) {
  if (!std::isfinite(share)) return QStringLiteral("–");
  const double percent = 100.0 * share;
  return QStringLiteral("%1 %").arg(percent, 0, 'f', percent > 0 && percent < 0.1 ? 2 : 1);
}

// "1.26e-3": three significant digits, the exponent short, so every magnitude reads the same way.
QString magnitudeText(double value) {
  if (!std::isfinite(value) || value <= 0) return QStringLiteral("–");
  int exponent = static_cast<int>(std::floor(std::log10(value)));
  double mantissa = value / std::pow(10.0, exponent);
  if (mantissa >= 9.995) {  // rounds up to 10.0
    mantissa /= 10;
    ++exponent;
  }
  return QStringLiteral("%1e%2").arg(mantissa, 0, 'f', 2).arg(exponent);
}

bool sameCurve(const QVector<double>& ax, const QVector<double>& ay, const QVector<double>& bx,
               const QVector<double>& by) {
  if (ax.size() != bx.size() || ay.size() != by.size()) return false;
  for (int i = 0; i < ax.size(); ++i) {
    if (std::abs(ax[i] - bx[i]) > 1e-12 * std::abs(ax[i]) || std::abs(ay[i] - by[i]) > 1e-9) return false;
  }
  return true;
}

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

WeightGeometryView::WeightGeometryView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Weight geometry"), parent) {
  group_ = new QComboBox(this);
  group_->setToolTip(QStringLiteral("All weight matrices together (global), or one layer"));
  group_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(new QLabel(QStringLiteral("weights"), this));
  tools()->addWidget(group_);
  modeBox_ = new QComboBox(this);
  modeBox_->setObjectName(QStringLiteral("geometryMode"));
  modeBox_->addItem(QStringLiteral("Cumulative"), QStringLiteral("cumulative"));
  modeBox_->addItem(QStringLiteral("Histogram"), QStringLiteral("histogram"));
  modeBox_->setToolTip(
      QStringLiteral("Cumulative: the share of kept weights below each |w| (runs apart at a glance). Histogram: "
                     "the share of kept weights in each |w| bin. Kept: not zero; the zeros are the sparsity."));
  modeBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(modeBox_);
  tools()->addWidget(new QLabel(QStringLiteral("heat map"), this));
  heatRunBox_ = new QComboBox(this);
  heatRunBox_->setObjectName(QStringLiteral("heatMapRun"));
  heatRunBox_->setToolTip(QStringLiteral("The run whose histogram over time the heat map shows"));
  heatRunBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(heatRunBox_);
  addExportButton();

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

  auto* distribution = plot()->axisRect(0);
  styleAxisRect(distribution, QStringLiteral("|w| of kept weights"), QStringLiteral("share below |w|"));
  plot()->xAxis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
  logTicker->setSubTickCount(0);
  logTicker->setLogBase(10);
  plot()->xAxis->setTicker(logTicker);
  plot()->xAxis->setNumberFormat(QStringLiteral("eb"));
  plot()->xAxis->setNumberPrecision(0);

  heat_ = new QCPAxisRect(plot());
  styleAxisRect(heat_, QStringLiteral("step"), QStringLiteral("log₁₀ |w|"));
  scale_ = new QCPColorScale(plot());
  scale_->setType(QCPAxis::atRight);
  scale_->setBarWidth(10);
  scale_->axis()->setLabel(QStringLiteral("log₁₀ share"));
  scale_->setGradient(QCPColorGradient(QCPColorGradient::gpHot).inverted());
  scale_->setDataRange(QCPRange(-5, 0));
  QFont titleFont = font();
  titleFont.setBold(true);
  heatTitle_ = new QCPTextElement(plot(), QString(), titleFont);
  heatTitle_->setMargins(QMargins(2, 3, 2, 0));
  alignRows_ = new QCPMarginGroup(plot());
  alignColumns_ = new QCPMarginGroup(plot());
  alignScale_ = new QCPMarginGroup(plot());
  heat_->setMarginGroup(QCP::msTop | QCP::msBottom, alignScale_);
  scale_->setMarginGroup(QCP::msTop | QCP::msBottom, alignScale_);
  setupLegend(plot());
  plot()->legend->setIconSize(24, 12);  // a line sample needs no more; the room goes to the run names
  // The legend lives in a box of its own, moved above or beside the plots by arrange(); PlotView's handling of a
  // legend at the layout's first cell never applies.
  legendBox_ = new QCPLayoutGrid;
  plot()->plotLayout()->take(plot()->legend);
  legendBox_->addElement(0, 0, plot()->legend);
  legendBox_->addElement(1, 0, new QCPLayoutElement(plot()));  // takes the height the legend leaves
  legendBox_->setRowStretchFactors({0.001, 1.0});
  legendBox_->setRowSpacing(0);
  plot()->plotLayout()->addElement(0, 0, legendBox_);
  arrange();
  // Arranged at every replot, after PlotView sized the legend for the whole width: it has one column here.
  connect(plot(), &QCustomPlot::beforeReplot, this, &WeightGeometryView::arrange);

  connect(group_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
  connect(modeBox_, &QComboBox::currentIndexChanged, this, [this] {
    modeChosen_ = true;
    mode_ = modeBox_->currentData().toString() == QStringLiteral("histogram") ? Mode::Histogram : Mode::Cumulative;
    refresh(true);
    resetRanges();  // the two modes' share axes have nothing in common
    plot()->replot(QCustomPlot::rpQueuedReplot);
  });
  connect(heatRunBox_, &QComboBox::currentIndexChanged, this, [this] {
    heatRunChosen_ = true;
    heatRunId_ = heatRunBox_->currentData().toString();
    refresh(true);
  });
}

WeightGeometryView::~WeightGeometryView() {
  // A legend left out of its box (no runs) is owned by no one: hand it back, so the plot deletes it.
  if (!plot()->legend->layout()) legendBox_->addElement(0, 0, plot()->legend);
}

void WeightGeometryView::setGroup(const QString& name) {
  selectData(group_, name);
}

void WeightGeometryView::setMode(Mode mode) {
  selectData(modeBox_, mode == Mode::Histogram ? QStringLiteral("histogram") : QStringLiteral("cumulative"));
  if (!modeChosen_) {  // already showing it: the choice is still the user's from now on
    modeChosen_ = true;
    mode_ = mode;
    refresh(true);
  }
}

bool WeightGeometryView::setHeatMapRun(const QString& id) {
  if (heatRunBox_->findData(id) < 0) return false;
  if (heatRunBox_->currentData().toString() == id) {
    heatRunChosen_ = true;
    return true;
  }
  return selectData(heatRunBox_, id);
}

void WeightGeometryView::rebuild() {
  QSet<QString> names;
  for (auto* run : model()->runs()) {
    for (auto it = run->histograms.cbegin(); it != run->histograms.cend(); ++it) names.insert(it.key());
  }
  QStringList sorted(names.begin(), names.end());
  std::sort(sorted.begin(), sorted.end(), [](const QString& a, const QString& b) {
    if (a == QStringLiteral("global") || b == QStringLiteral("global")) return a == QStringLiteral("global") && b != a;
    return a < b;
  });
  keepChoice(group_, sorted, QStringLiteral("global"));
  drawnGroup_ = group_->currentData().toString();

  plot()->clearPlottables();
  plot()->clearItems();
  heatMap_ = nullptr;
  drawCurves(drawnGroup_);
  fillTable();
  drawHeatMap(drawnGroup_);
}

void WeightGeometryView::drawCurves(const QString& group) {
  curves_.clear();
  QVector<Curve> hidden;
  for (auto* run : model()->runs()) {
    const auto it = run->histograms.constFind(group);
    if (it == run->histograms.cend() || it->counts.isEmpty()) continue;
    Curve curve;
    curve.runId = run->id;
    curve.name = run->name;
    curve.colour = run->colour;
    curve.step = static_cast<int64_t>(it->steps.back());
    curve.edges = it->edges;
    curve.counts = it->counts.back();
    (run->visible ? curves_ : hidden).push_back(curve);
  }
  if (!modeChosen_) {
    mode_ = curves_.size() >= 2 ? Mode::Cumulative : Mode::Histogram;
    const QSignalBlocker blocker(modeBox_);
    selectData(modeBox_, mode_ == Mode::Histogram ? QStringLiteral("histogram") : QStringLiteral("cumulative"));
  }
  const bool cumulative = mode_ == Mode::Cumulative;
  plot()->xAxis->setLabel(QStringLiteral("|w| of kept (non-zero) weights"));
  plot()->yAxis->setLabel(cumulative ? QStringLiteral("share below |w|") : QStringLiteral("share per bin"));
  const auto computePoints = [cumulative](Curve& curve) {
    if (cumulative) {
      const Cumulative points = keptCumulative(curve.edges, curve.counts);
      curve.x = points.edges;
      curve.y = points.shares;
    } else {
      curve.y = keptShares(curve.counts);
      for (int bin = 1; bin <= curve.y.size(); ++bin) {
        curve.x.push_back(std::sqrt(curve.edges[bin] * curve.edges[bin + 1]));
      }
    }
  };
  // Identical runs draw on top of each other: each later copy gets the next dash pattern, so all stay visible.
  static const Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
  for (int index = 0; index < curves_.size(); ++index) {
    Curve& curve = curves_[index];
    computePoints(curve);
    int copies = 0;
    for (int earlier = 0; earlier < index; ++earlier) {
      if (sameCurve(curve.x, curve.y, curves_[earlier].x, curves_[earlier].y)) ++copies;
    }
    curve.style = kStyles[copies % 4];
  }
  // A graph per run in the model's order; a hidden run's is not drawn, but its legend entry stays (greyed, struck
  // out) for a click to show it again.
  for (auto* run : model()->runs()) {
    const auto shown = std::find_if(curves_.begin(), curves_.end(), [&](const Curve& c) { return c.runId == run->id; });
    const auto off = std::find_if(hidden.begin(), hidden.end(), [&](const Curve& c) { return c.runId == run->id; });
    if (shown == curves_.end() && off == hidden.end()) continue;
    Curve& curve = shown != curves_.end() ? *shown : *off;
    if (shown == curves_.end()) computePoints(curve);
    if (curve.x.isEmpty()) continue;  // every weight is zero: only the table has something to say
    auto* graph = plot()->addGraph();
    graph->setData(curve.x, curve.y, true);
    graph->setLineStyle(cumulative ? QCPGraph::lsLine : QCPGraph::lsStepCenter);
    graph->setPen(QPen(curve.colour, curve.style == Qt::SolidLine ? 2.5 : 2.0, curve.style));
    if (!cumulative && curves_.size() <= 2) {
      QColor fill = curve.colour;
      fill.setAlpha(40);
      graph->setBrush(fill);
    }
    graph->setName(curve.name);
    graph->setProperty("runId", curve.runId);  // PlotView's legend click toggles this run
    graph->setVisible(shown != curves_.end());
    if (!graph->visible()) {
      if (auto* item = plot()->legend->itemWithPlottable(graph)) {
        QFont struck = plot()->legend->font();
        struck.setStrikeOut(true);
        item->setFont(struck);
        item->setTextColor(QColor(150, 150, 150));
      }
    }
  }
  if (curves_.isEmpty()) {
    placeholder(plot(), plot()->axisRect(0),
                hidden.isEmpty() ? QStringLiteral("No weight histograms yet")
                                 : QStringLiteral("Every run with histograms is hidden"));
  }
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

void WeightGeometryView::drawHeatMap(const QString& group) {
  // Any run with histograms of this group may be shown, hidden ones too.
  QStringList ids;
  QStringList names;
  for (auto* run : model()->runs()) {
    const auto it = run->histograms.constFind(group);
    if (it == run->histograms.cend() || it->counts.isEmpty()) continue;
    ids << run->id;
    names << run->name;
  }
  RunData* focus = model()->focusRun();
  QString chosen = heatRunChosen_ && ids.contains(heatRunId_) ? heatRunId_ : QString();
  if (chosen.isEmpty() && focus && ids.contains(focus->id)) chosen = focus->id;
  if (chosen.isEmpty() && !ids.isEmpty()) chosen = ids.front();
  heatRunId_ = chosen;
  {
    const QSignalBlocker blocker(heatRunBox_);
    if (itemDataList(heatRunBox_) != ids) {
      heatRunBox_->clear();
      for (int i = 0; i < ids.size(); ++i) heatRunBox_->addItem(names[i], ids[i]);
    }
    for (int i = 0; i < ids.size(); ++i) heatRunBox_->setItemText(i, names[i]);
    selectData(heatRunBox_, chosen);
  }
  heatRunBox_->setEnabled(ids.size() > 1);
  heatTrack_ = HistogramTrack();
  heatRunName_.clear();
  RunData* run = model()->run(chosen);
  if (!run) {
    heatTitle_->setText(QStringLiteral("histogram over steps"));
    heatTitle_->setTextColor(QColor(120, 120, 120));
    return;
  }
  const HistogramTrack& track = run->histograms[group];
  const int snapshots = static_cast<int>(track.counts.size());
  const int bins = static_cast<int>(track.edges.size()) - 1;
  heatTitle_->setText(QStringLiteral("%1: histogram over steps").arg(run->name));
  heatTitle_->setTextColor(run->colour.darker(125));
  if (snapshots < 1 || bins < 3) return;
  heatTrack_ = track;
  heatRunName_ = run->name;
  heatMap_ = new QCPColorMap(heat_->axis(QCPAxis::atBottom), heat_->axis(QCPAxis::atLeft));
  heatMap_->data()->setSize(snapshots, bins);
  const double firstStep = track.steps.front();
  const double lastStep = snapshots > 1 ? track.steps.back() : firstStep + 1;
  // Cell centres on the log-spaced bins; the first cell (zeros and |w| below the second edge) sits one bin lower.
  const double binWidth = std::log10(track.edges[2] / track.edges[1]);
  heatMap_->data()->setRange(QCPRange(firstStep, lastStep),
                             QCPRange(std::log10(track.edges[1]) - 0.5 * binWidth,
                                      std::log10(std::sqrt(track.edges[bins - 1] * track.edges[bins]))));
  for (int column = 0; column < snapshots; ++column) {
    double total = 0;
    for (double count : track.counts[column]) total += count;
    for (int bin = 0; bin < bins && bin < track.counts[column].size(); ++bin) {
      const double share = total > 0 ? track.counts[column][bin] / total : 0.0;
      heatMap_->data()->setCell(column, bin, share > 0 ? std::log10(share) : qQNaN());
    }
  }
  heatMap_->setInterpolate(false);
  heatMap_->setColorScale(scale_);
  heatMap_->setDataRange(QCPRange(-5, 0));
  heatMap_->removeFromLegend();
}

void WeightGeometryView::resizeEvent(QResizeEvent* event) {
  PlotView::resizeEvent(event);
  fitTableColumns();
}

void WeightGeometryView::arrange() {
  auto* layout = plot()->plotLayout();
  auto* legend = plot()->legend;
  auto* distribution = plot()->axisRect(0);
  const QRect area = plot()->viewport();
  const bool sideBySide = area.width() >= 560 && area.width() >= 1.6 * area.height();
  const bool withLegend = legend->itemCount() > 0;
  // The legend's columns: as many as fit its part of the width, so an entry is never clipped. Above the plots
  // when its rows take little of the height; beside the distribution in a short, wide plot (the dock), where
  // rows above would leave the plots too low to read.
  const QFontMetrics metrics(legend->font());
  const int entryHeight = metrics.height() + 4;
  int widest = 0;
  for (int i = 0; i < legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
      widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()) + 40);
    }
  }
  const int entries = std::max(1, legend->itemCount());
  const int aboveColumns =
      widest > 0 ? std::clamp(((sideBySide ? area.width() / 2 : area.width()) - 60) / widest, 1, 4) : 1;
  const int aboveRows = (entries + aboveColumns - 1) / aboveColumns;
  const bool beside = sideBySide && aboveRows * entryHeight > area.height() / 5;
  const int besideRows = std::max(1, (area.height() - 60) / entryHeight);
  const int columns = beside ? (entries + besideRows - 1) / besideRows : aboveColumns;
  if (legend->wrap() != columns || legend->columnCount() > columns ||
      legend->columnCount() < std::min(columns, legend->itemCount())) {
    legend->setWrap(columns);
    legend->setFillOrder(QCPLegend::foColumnsFirst, /*rearrange=*/true);  // setWrap alone moves no entry
  }
  // An empty legend has no maximum width and would squeeze its column to nothing: it waits outside its box for
  // its first entry. The box always holds a spacer, so it never squeezes anything.
  if (withLegend && !legend->layout()) {
    legendBox_->addElement(0, 0, legend);
  } else if (!withLegend && legend->layout()) {
    legend->layout()->take(legend);
  }
  // As many |w| ticks as the distribution's width has room for ("0.0001" is wide), so labels never run together.
  const int besideWidth = beside ? columns * (widest + 8) : 0;
  const double share = sideBySide ? (beside ? 1.3 / 2.3 : 0.5) : 1.0;
  const int distributionWidth = static_cast<int>((area.width() - besideWidth - 70) * share) - 60;
  plot()->xAxis->ticker()->setTickCount(std::clamp(distributionWidth / 75, 2, 6));
  // Stacked in a short view (a docked cell of a 1920x1080 window), the distribution and the heat map would both be
  // too low to read: the heat map steps aside until the view has room (float it, or give the dock more height).
  const bool compact = !sideBySide && area.height() < 360;
  const int state = (sideBySide ? 1 : 0) + (beside ? 2 : 0) + (compact ? 4 : 0);
  if (state == arrangedState_) return;
  arrangedState_ = state;
  for (QCPLayerable* part : std::initializer_list<QCPLayerable*>{heatTitle_, heat_, scale_}) part->setVisible(!compact);

  for (QCPLayoutElement* element :
       std::initializer_list<QCPLayoutElement*>{legendBox_, distribution, heatTitle_, heat_, scale_}) {
    if (element->layout()) element->layout()->take(element);
  }
  layout->simplify();
  if (sideBySide && beside) {  // title above the heat map; distribution | legend | heat map | colour bar
    layout->addElement(0, 2, heatTitle_);
    layout->addElement(1, 0, distribution);
    layout->addElement(1, 1, legendBox_);
    layout->addElement(1, 2, heat_);
    layout->addElement(1, 3, scale_);
    layout->setRowStretchFactors({0.001, 1.0});
    layout->setColumnStretchFactors({1.3, 0.001, 1.0, 0.001});
  } else if (sideBySide) {  // legend | title above, distribution | heat map | colour bar below
    layout->addElement(0, 0, legendBox_);
    layout->addElement(0, 1, heatTitle_);
    layout->addElement(1, 0, distribution);
    layout->addElement(1, 1, heat_);
    layout->addElement(1, 2, scale_);
    layout->setRowStretchFactors({0.001, 1.0});
    layout->setColumnStretchFactors({1.0, 1.0, 0.001});
  } else if (compact) {  // legend, distribution
    layout->addElement(0, 0, legendBox_);
    layout->addElement(1, 0, distribution);
    layout->setRowStretchFactors({0.001, 1.0});
  } else {  // legend, distribution, title, heat map beside its colour bar
    layout->addElement(0, 0, legendBox_);
    layout->addElement(1, 0, distribution);
    layout->addElement(2, 0, heatTitle_);
    layout->addElement(3, 0, heat_);
    layout->addElement(3, 1, scale_);
    layout->setRowStretchFactors({0.001, 1.0, 0.001, 1.0});
    layout->setColumnStretchFactors({1.0, 0.001});
  }
  if (sideBySide) {
    distribution->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
    heat_->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
    distribution->setMarginGroup(QCP::msTop | QCP::msBottom, alignScale_);
  } else {
    distribution->setMarginGroup(QCP::msTop | QCP::msBottom, nullptr);
    distribution->setMarginGroup(QCP::msLeft | QCP::msRight, alignColumns_);
    heat_->setMarginGroup(QCP::msLeft | QCP::msRight, alignColumns_);
  }
  layout->setRowSpacing(0);
}

void WeightGeometryView::resetRanges() {
  PlotView::resetRanges();
  // |w| from a bin below the smallest kept weight to a bin above the largest, over every run drawn.
  double low = 0;
  double high = 0;
  double tallest = 0;
  for (const Curve& curve : curves_) {
    for (int bin = 1; bin < curve.counts.size() && bin + 1 < curve.edges.size(); ++bin) {
      if (curve.counts[bin] <= 0) continue;
      low = low > 0 ? std::min(low, curve.edges[bin]) : curve.edges[bin];
      high = std::max(high, curve.edges[bin + 1]);
    }
    for (double value : curve.y) tallest = std::max(tallest, value);
  }
  if (low > 0) {
    plot()->xAxis->setRange(low / 2, high * 2);
  } else {
    plot()->xAxis->setRange(1e-8, 10);
  }
  plot()->yAxis->setRange(0, mode_ == Mode::Cumulative ? 1.03 : std::max(0.01, tallest * 1.08));
  if (heatMap_) heatMap_->rescaleAxes();
}

QString WeightGeometryView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == heat_) {
    if (!heatMap_ || heatTrack_.counts.isEmpty()) return QString();
    int column = 0;
    int bin = 0;
    heatMap_->data()->coordToCell(x, y, &column, &bin);
    column = std::clamp(column, 0, static_cast<int>(heatTrack_.counts.size()) - 1);
    bin = std::clamp(bin, 0, static_cast<int>(heatTrack_.edges.size()) - 2);
    const auto& counts = heatTrack_.counts[column];
    double total = 0;
    for (double count : counts) total += count;
    const double share = total > 0 && bin < counts.size() ? counts[bin] / total : 0.0;
    const QString range =
        bin == 0 ? QStringLiteral("|w| < %1 (zeros)").arg(magnitudeText(heatTrack_.edges[1]))
                 : QStringLiteral("|w| %1 – %2")
                       .arg(magnitudeText(heatTrack_.edges[bin]), magnitudeText(heatTrack_.edges[bin + 1]));
    return QStringLiteral("%1 · step %2 · %3: %4 of all weights")
        .arg(heatRunName_)
        .arg(static_cast<qint64>(heatTrack_.steps[column]))
        .arg(range, percentText(share));
  }
  Q_UNUSED(y);
  if (curves_.isEmpty() || x <= 0) return QString();
  QStringList parts;
  QString where;
  for (const Curve& curve : curves_) {
    if (mode_ == Mode::Cumulative) {
      where = QStringLiteral("kept |w| < %1").arg(magnitudeText(x));
      parts << QStringLiteral("%1 %2").arg(curve.name, percentText(keptShareBelow(curve.edges, curve.counts, x)));
    } else {
      const auto upper = std::upper_bound(curve.edges.begin() + 1, curve.edges.end(), x);
      if (upper == curve.edges.begin() + 1 || upper == curve.edges.end()) continue;
      const int bin = static_cast<int>(upper - curve.edges.begin()) - 1;
      where =
          QStringLiteral("kept |w| %1 – %2").arg(magnitudeText(curve.edges[bin]), magnitudeText(curve.edges[bin + 1]));
      const int point = bin - 1;  // the drawn points start at the second bin
      parts << QStringLiteral("%1 %2").arg(curve.name,
                                           point < curve.y.size() ? percentText(curve.y[point]) : QStringLiteral("–"));
    }
  }
  if (parts.isEmpty()) return QString();
  return QStringLiteral("%1: %2").arg(where, parts.join(QStringLiteral(", ")));
}

QString WeightGeometryView::csv() const {
  // What is drawn, in one table: the distribution (per run, as in the current mode) and the heat map's cells.
  // Cumulative rows give the share of kept weights from the lowest kept edge up to abs_w_high.
  QString text;
  QTextStream out(&text);
  out << "plot,run,group,step,abs_w_low,abs_w_high,share\n";
  const auto number = [](double value) { return QString::number(value, 'g', 8); };
  for (const Curve& curve : curves_) {
    for (int point = 0; point < curve.x.size(); ++point) {
      const int bin = point + 1;
      const bool cumulative = mode_ == Mode::Cumulative;
      out << (cumulative ? "cumulative" : "histogram") << ',' << csvField(curve.name) << ',' << csvField(drawnGroup_)
          << ',' << curve.step << ',' << number(cumulative ? curve.edges[1] : curve.edges[bin]) << ','
          << number(cumulative ? curve.x[point] : curve.edges[bin + 1]) << ',' << number(curve.y[point]) << '\n';
    }
  }
  for (int column = 0; column < heatTrack_.counts.size(); ++column) {
    const auto& counts = heatTrack_.counts[column];
    double total = 0;
    for (double count : counts) total += count;
    for (int bin = 0; bin < counts.size() && bin + 1 < heatTrack_.edges.size(); ++bin) {
      out << "heat map," << csvField(heatRunName_) << ',' << csvField(drawnGroup_) << ','
          << static_cast<qint64>(heatTrack_.steps[column]) << ',' << number(bin == 0 ? 0.0 : heatTrack_.edges[bin])
          << ',' << number(heatTrack_.edges[bin + 1]) << ',' << number(total > 0 ? counts[bin] / total : 0.0) << '\n';
    }
  }
  return text;
}

}  // namespace descentlab::widgets
