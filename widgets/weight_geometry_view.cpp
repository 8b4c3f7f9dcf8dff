#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSet>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include "core/record/metrics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

WeightGeometryView::WeightGeometryView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Weight geometry"), parent) {
  group_ = new QComboBox(this);
  group_->setToolTip(QStringLiteral("All weight matrices together (global), or one layer"));
  group_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(new QLabel(QStringLiteral("weights"), this));
  tools()->addWidget(group_);
  zeros_ = new QCheckBox(QStringLiteral("include zeros"), this);
  zeros_->setToolTip(
      QStringLiteral("Include |w| < 1e-8 (pruned and exact zeros) in the histogram; off, it shows the "
                     "kept weights and the zeros are counted in the sparsity above"));
  tools()->addWidget(zeros_);
  connect(zeros_, &QCheckBox::toggled, this, [this] { refresh(true); });
  addExportButton();
  summary_ = new QLabel(this);
  summary_->setTextFormat(Qt::RichText);
  summary_->setWordWrap(true);
  static_cast<QVBoxLayout*>(layout())->insertWidget(1, summary_);

  auto* top = plot()->axisRect(0);
  styleAxisRect(top, QStringLiteral("|w| (log scale)"), QStringLiteral("share of weights"));
  plot()->xAxis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
  logTicker->setSubTickCount(0);
  logTicker->setLogBase(10);
  plot()->xAxis->setTicker(logTicker);
  plot()->xAxis->setNumberFormat(QStringLiteral("eb"));
  plot()->xAxis->setNumberPrecision(0);

  heat_ = new QCPAxisRect(plot());
  plot()->plotLayout()->addElement(1, 0, heat_);
  plot()->plotLayout()->setRowStretchFactor(0, 1.0);
  plot()->plotLayout()->setRowStretchFactor(1, 1.0);
  styleAxisRect(heat_, QStringLiteral("step"), QStringLiteral("log10 |w|"));
  scale_ = new QCPColorScale(plot());
  auto* scale = scale_;
  plot()->plotLayout()->addElement(1, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(10);
  scale->axis()->setLabel(QStringLiteral("share (log10)"));
  scale->setGradient(QCPColorGradient(QCPColorGradient::gpHot).inverted());
  auto* margins = new QCPMarginGroup(plot());
  top->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  heat_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  auto* vertical = new QCPMarginGroup(plot());  // the colour bar spans exactly the heat map's height
  heat_->setMarginGroup(QCP::msTop | QCP::msBottom, vertical);
  scale->setMarginGroup(QCP::msTop | QCP::msBottom, vertical);
  // An empty cell on the right of the top row, so the two plots have the same width.
  plot()->plotLayout()->addElement(0, 1, new QCPLayoutElement(plot()));
  plot()->plotLayout()->setColumnStretchFactor(1, 0.01);
  setupLegend(plot());
  connect(group_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
}

void WeightGeometryView::setGroup(const QString& name) {
  selectData(group_, name);
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
  const QString name = group_->currentData().toString();

  plot()->clearPlottables();
  plot()->clearItems();
  QStringList lines;
  int drawn = 0;
  for (auto* run : model()->runs()) {
    const auto it = run->histograms.constFind(name);
    if (it == run->histograms.cend() || it->counts.isEmpty()) continue;
    const auto& counts = it->counts.back();
    const int firstBin = zeros_->isChecked() ? 0 : 1;  // bin 0 holds |w| below the lowest edge, zeros included
    double total = 0;
    for (int bin = firstBin; bin < counts.size(); ++bin) total += counts[bin];
    QVector<double> x, y;
    for (int bin = firstBin; bin < counts.size() && bin + 1 < it->edges.size(); ++bin) {
      // The first bin holds everything below its upper edge (exact zeros too); draw it at that edge.
      const double low = bin == 0 ? it->edges[1] / 10 : it->edges[bin];
      x.push_back(std::sqrt(low * it->edges[bin + 1]));
      y.push_back(total > 0 ? counts[bin] / total : 0.0);
    }
    auto* graph = plot()->addGraph();
    graph->setData(x, y, true);
    graph->setLineStyle(QCPGraph::lsStepCenter);
    graph->setPen(QPen(run->colour, 2));
    QColor fill = run->colour;
    fill.setAlpha(40);
    graph->setBrush(fill);
    graph->setName(run->name);
    ++drawn;
    QString line = QStringLiteral("<span style='color:%1'>&#9632;</span> <b>%2</b> step %3")
                       .arg(run->colour.name(), run->name.toHtmlEscaped())
                       .arg(static_cast<qint64>(it->steps.back()));
    if (run->scalars.contains(QLatin1String(record::metric::kSparsity))) {
      line += QStringLiteral(" sparsity %1 %")
                  .arg(100.0 * run->scalars[QLatin1String(record::metric::kSparsity)].values.back(), 0, 'f', 1);
    }
    const auto share = run->vectors.constFind(QLatin1String(record::metric::kNearZeroShare));
    if (share != run->vectors.cend() && !share->rows.isEmpty() && share->rows.back().size() >= 2) {
      line += QStringLiteral(" · |w| &lt; 1e-3: %1 %").arg(100.0 * share->rows.back()[1], 0, 'f', 1);
    }
    lines << line;
  }
  plot()->yAxis->setLabel(zeros_->isChecked() ? QStringLiteral("share of weights")
                                              : QStringLiteral("share of weights ≠ 0"));
  summary_->setText(lines.join(QStringLiteral("&nbsp;&nbsp; ")));
  summary_->setVisible(!lines.isEmpty());
  if (drawn == 0) {
    placeholder(plot(), plot()->axisRect(0), QStringLiteral("No weight histograms yet"));
    return;
  }
  // The focus run's histogram over time.
  RunData* focus = model()->focusRun();
  if (!focus || !focus->histograms.contains(name)) {
    for (auto* run : model()->runs()) {
      if (run->histograms.contains(name)) {
        focus = run;
        break;
      }
    }
  }
  const auto& track = focus->histograms[name];
  const int snapshots = static_cast<int>(track.counts.size());
  const int bins = static_cast<int>(track.edges.size()) - 1;
  if (snapshots < 1 || bins < 2) return;
  auto* map = new QCPColorMap(heat_->axis(QCPAxis::atBottom), heat_->axis(QCPAxis::atLeft));
  map->data()->setSize(snapshots, bins);
  const double firstStep = track.steps.front();
  const double lastStep = snapshots > 1 ? track.steps.back() : firstStep + 1;
  map->data()->setRange(QCPRange(firstStep, lastStep),
                        QCPRange(std::log10(track.edges[1]) - 0.5 * std::log10(track.edges[2] / track.edges[1]),
                                 std::log10(std::sqrt(track.edges[bins - 1] * track.edges[bins]))));
  for (int column = 0; column < snapshots; ++column) {
    double total = 0;
    for (double count : track.counts[column]) total += count;
    for (int bin = 0; bin < bins; ++bin) {
      const double share = total > 0 ? track.counts[column][bin] / total : 0.0;
      map->data()->setCell(column, bin, share > 0 ? std::log10(share) : qQNaN());
    }
  }
  map->setInterpolate(false);
  map->setColorScale(scale_);
  map->setDataRange(QCPRange(-5, 0));
  map->removeFromLegend();
  auto* caption = new QCPItemText(plot());
  caption->setClipAxisRect(heat_);
  caption->position->setType(QCPItemPosition::ptAxisRectRatio);
  caption->position->setAxisRect(heat_);
  caption->position->setCoords(0.99, 0.03);
  caption->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
  caption->setText(QStringLiteral("%1 over time").arg(focus->name));
  caption->setColor(focus->colour.darker(130));
  caption->setBrush(QColor(255, 255, 255, 200));
}

void WeightGeometryView::resetRanges() {
  PlotView::resetRanges();
  plot()->xAxis->setRange(1e-9, 20);
  plot()->yAxis->setRangeLower(0);
  for (int i = 0; i < plot()->plottableCount(); ++i) {
    if (auto* map = qobject_cast<QCPColorMap*>(plot()->plottable(i))) map->rescaleAxes();
  }
}

QString WeightGeometryView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == heat_) return QStringLiteral("step %1   |w| ≈ %2").arg(std::llround(x)).arg(std::pow(10.0, y), 0, 'g', 3);
  return QStringLiteral("|w| %1   share %2").arg(x, 0, 'g', 3).arg(y, 0, 'f', 4);
}

QString WeightGeometryView::csv() const {
  QString text;
  QTextStream out(&text);
  out << "run,group,step,bin_low,bin_high,count\n";
  const QString name = group_->currentData().toString();
  for (auto* run : model()->runs()) {
    const auto it = run->histograms.constFind(name);
    if (it == run->histograms.cend()) continue;
    for (int row = 0; row < it->counts.size(); ++row) {
      for (int bin = 0; bin < it->counts[row].size(); ++bin) {
        out << csvField(run->name) << ',' << csvField(name) << ',' << static_cast<qint64>(it->steps[row]) << ','
            << QString::number(it->edges[bin], 'g', 6) << ',' << QString::number(it->edges[bin + 1], 'g', 6) << ','
            << static_cast<qint64>(it->counts[row][bin]) << '\n';
      }
    }
  }
  return text;
}

}  // namespace descentlab::widgets
