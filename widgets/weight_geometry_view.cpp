// The weight-geometry view: its tools, the distribution plot and the heat map's axes, the group, mode and heat-map
// run choices, the distribution's curves (cumulative or histogram), the ranges and the CSV of what is drawn. The
// statistics table is in weight_geometry_table.cpp; the heat map, the plots' arrangement and the readout in
// weight_geometry_heat_map.cpp.
#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QLabel>
#include <QSet>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include "widgets/flow_layout.h"
#include "widgets/histogram_statistics.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

namespace {

// The share of kept weights the |w| axis may leave off at its left end.
constexpr double kTailShare = 1e-3;

bool sameCurve(const QVector<double>& ax, const QVector<double>& ay, const QVector<double>& bx,
               const QVector<double>& by) {
  if (ax.size() != bx.size() || ay.size() != by.size()) return false;
  for (int i = 0; i < ax.size(); ++i) {
    if (std::abs(ax[i] - bx[i]) > 1e-12 * std::abs(ax[i]) || std::abs(ay[i] - by[i]) > 1e-9) return false;
  }
  return true;
}

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
  heatLabel_ = new QLabel(QStringLiteral("heat map"), this);
  tools()->addWidget(heatLabel_);
  heatRunBox_ = new QComboBox(this);
  heatRunBox_->setObjectName(QStringLiteral("heatMapRun"));
  heatRunBox_->setToolTip(QStringLiteral("The run whose histogram over time the heat map shows"));
  heatRunBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(heatRunBox_);
  addExportButton();

  buildTable();

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
  hiddenRuns_ = static_cast<int>(hidden.size());
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
  if (model()->grouped()) {
    drawGroupBands();
    return;
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
    // While the table steps aside (a short view), the legend gives each run's share below 1e-2 instead.
    const bool withShare = !tableShown_ && shown != curves_.end();
    graph->setName(withShare ? QStringLiteral("%1 · %2 < 1e-2")
                                   .arg(curve.name, percentText(keptShareBelow(curve.edges, curve.counts, 1e-2)))
                             : curve.name);
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

void WeightGeometryView::resetRanges() {
  PlotView::resetRanges();
  // |w| from the smallest run's 0.1 % quantile to a bin above the largest kept weight, over every run drawn: a few
  // weights far below the rest (1e-7 where the body sits at 1e-2) left the plot two-thirds empty (issue 33). What
  // lies left of the edge is under 0.1 % of any run's kept weights; the cumulative curves start there, and a zoom
  // out shows it.
  double low = 0;
  double high = 0;
  double tallest = 0;
  for (const Curve& curve : curves_) {
    const double tail = keptQuantile(curve.edges, curve.counts, kTailShare);
    if (std::isfinite(tail) && tail > 0) low = low > 0 ? std::min(low, tail) : tail;
    for (int bin = 1; bin < curve.counts.size() && bin + 1 < curve.edges.size(); ++bin) {
      if (curve.counts[bin] > 0) high = std::max(high, curve.edges[bin + 1]);
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

CsvTable WeightGeometryView::table() const {
  // What is drawn, in one table of its three kinds of rows (so not the other views' band shape): the distribution
  // (per run, as in the current mode; grouped, each group's mean, low and high share as three rows) and the heat
  // map's cells. Cumulative rows give the share of kept weights from the lowest kept edge up to abs_w_high.
  CsvTable table({QStringLiteral("plot"), QStringLiteral("run"), QStringLiteral("group"), QStringLiteral("step"),
                  QStringLiteral("abs_w_low"), QStringLiteral("abs_w_high"), QStringLiteral("share")});
  const auto number = [](double value) { return QString::number(value, 'g', 8); };
  const bool cumulative = mode_ == Mode::Cumulative;
  if (model()->grouped()) {
    for (const auto& band : groupBands()) {
      for (int point = 0; point < band.steps.size(); ++point) {
        for (const auto& [kind, values] : {std::pair<const char*, const QVector<double>*>{"mean", &band.mean},
                                           {"low", &band.low},
                                           {"high", &band.high}}) {
          table.add({(cumulative ? QStringLiteral("cumulative ") : QStringLiteral("histogram ")) + QLatin1String(kind),
                     band.group->label, drawnGroup_, QString::number(band.atStep), QString(), number(band.steps[point]),
                     number((*values)[point])});
        }
      }
    }
  }
  for (const Curve& curve : curves_) {
    for (int point = 0; point < curve.x.size(); ++point) {
      const int bin = point + 1;
      table.add({cumulative ? QStringLiteral("cumulative") : QStringLiteral("histogram"), curve.name, drawnGroup_,
                 QString::number(curve.step), number(cumulative ? curve.edges[1] : curve.edges[bin]),
                 number(cumulative ? curve.x[point] : curve.edges[bin + 1]), number(curve.y[point])});
    }
  }
  for (int column = 0; column < heatTrack_.counts.size(); ++column) {
    const auto& counts = heatTrack_.counts[column];
    double total = 0;
    for (double count : counts) total += count;
    for (int bin = 0; bin < counts.size() && bin + 1 < heatTrack_.edges.size(); ++bin) {
      table.add({QStringLiteral("heat map"), heatRunName_, drawnGroup_,
                 QString::number(static_cast<qint64>(heatTrack_.steps[column])),
                 number(bin == 0 ? 0.0 : heatTrack_.edges[bin]), number(heatTrack_.edges[bin + 1]),
                 number(total > 0 ? counts[bin] / total : 0.0)});
    }
  }
  return table;
}

}  // namespace descentlab::widgets
