#include "widgets/layer_loss_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include "core/record/metrics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace {

// What is drawn of one curve f_0..f_L: the losses at layers 0..L, or (change) their changes at layers 1..L; under
// log y a value ≤ 0 is not drawn.
void plotted(const QVector<double>& losses, bool change, bool logY, QVector<double>& x, QVector<double>& y) {
  x.clear();
  y.clear();
  for (int layer = change ? 1 : 0; layer < losses.size(); ++layer) {
    const double value = change ? losses[layer] - losses[layer - 1] : losses[layer];
    x.push_back(layer);
    y.push_back(logY && value <= 0 ? qQNaN() : value);
  }
}

// `base` and as many of `notes` as the axis rect's width holds, in parentheses ("layer ℓ   (a; b)"), the first first.
QString fittedTitle(const QCPAxis* axis, const QString& base, const QStringList& notes) {
  const QFontMetrics metrics(axis->labelFont());
  for (auto kept = notes.size(); kept > 0; --kept) {
    const QString candidate = QStringLiteral("%1   (%2)").arg(base, notes.mid(0, kept).join(QStringLiteral("; ")));
    if (metrics.horizontalAdvance(candidate) + 16 <= axis->axisRect()->width()) return candidate;
  }
  return base;
}

}  // namespace

LayerLossView::LayerLossView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Per-layer loss"), parent) {
  allEvaluations_ = new QCheckBox(QStringLiteral("every evaluation"), this);
  allEvaluations_->setChecked(true);
  allEvaluations_->setToolTip(QStringLiteral("Show every evaluation of the focus run, early (light) to late (dark)"));
  logY_ = new QCheckBox(QStringLiteral("log y"), this);
  mode_ = new QComboBox(this);
  mode_->setObjectName(QStringLiteral("layer-loss-mode"));
  mode_->addItem(QStringLiteral("fₗ"), QStringLiteral("value"));
  mode_->addItem(QStringLiteral("fₗ − fₗ₋₁"), QStringLiteral("change"));
  mode_->setToolTip(
      QStringLiteral("Plot each layer's test loss fₗ, or its change from the layer before, fₗ − fₗ₋₁ "
                     "(above 0: descent breaks at that layer)"));
  fitTop_ = new QCheckBox(QStringLiteral("fit top layers"), this);
  fitTop_->setChecked(true);
  fitTop_->setToolTip(
      QStringLiteral("Fit the y range to the changes of the top half of the layers, where a rise of a "
                     "few thousandths of a nat sits; off: fit every layer"));
  fitTop_->setVisible(false);
  tools()->addWidget(mode_);
  tools()->addWidget(fitTop_);
  tools()->addWidget(allEvaluations_);
  tools()->addWidget(logY_);
  addExportButton();
  connect(allEvaluations_, &QCheckBox::toggled, this, [this] { refresh(true); });
  connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    fitTop_->setVisible(changeMode());
    logY_->setVisible(!changeMode());  // changes are negative where the loss descends: no log scale
    resetZoom();
    refresh(true);
  });
  connect(fitTop_, &QCheckBox::toggled, this, [this] {
    resetZoom();
    refresh(true);
  });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    plot()->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot()->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : distinctLabelTicker());
    refresh(true);
  });

  styleAxisRect(plot()->axisRect(), QStringLiteral("layer ℓ"), QStringLiteral("test loss fₗ"));
  bars_ = new QCPAxisRect(plot());
  styleAxisRect(bars_, QStringLiteral("layer ℓ"), QStringLiteral("descending share"));
  // Both rows share the layer axis and the left margin, so the layers line up.
  auto* margins = new QCPMarginGroup(plot());
  plot()->axisRect(0)->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  bars_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  connect(plot()->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), bars_->axis(QCPAxis::atBottom),
          qOverload<const QCPRange&>(&QCPAxis::setRange));
  for (auto* rect : {plot()->axisRect(0), bars_}) {
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    rect->axis(QCPAxis::atBottom)->setTicker(ticker);
  }
  // Shares lie in [0, 1], with room for the error bars' caps at 1.
  bars_->axis(QCPAxis::atLeft)->setRange(0, 1.05);
  QSharedPointer<QCPAxisTickerFixed> shareTicks(new QCPAxisTickerFixed);
  shareTicks->setTickStep(0.5);
  bars_->axis(QCPAxis::atLeft)->setTicker(shareTicks);
  setupLegend(plot());
  // The descending shares give their room to the losses in a short view; the runs table's descent column still
  // gives the certificate then.
  setLowerRow(bars_, 2.0, 1.0);
}

// The layerwise runs evaluated on the test set, of the focus run's task (the focus run falls back to the first of
// them); `otherTask` counts those of another task.
QVector<const RunData*> LayerLossView::runsOfFocusTask(const RunData*& focus, int& otherTask) const {
  focus = model()->focusRun();
  if (focus && !focus->vectors.contains(QLatin1String(record::metric::kTestLayerLoss))) focus = nullptr;
  QVector<const RunData*> layerwise;
  for (auto* run : model()->runs()) {
    if (run->vectors.contains(QLatin1String(record::metric::kTestLayerLoss))) layerwise.push_back(run);
  }
  if (!focus && !layerwise.isEmpty()) focus = layerwise.front();
  // Text losses (nats of cross-entropy) and video losses (mean squared error) never share the axis: the selected
  // run's task is drawn, and the others are counted in a note.
  otherTask = 0;
  if (focus) {
    QVector<const RunData*> sameTask;
    for (auto* run : layerwise) {
      if (run->metric == focus->metric) {
        sameTask.push_back(run);
      } else {
        ++otherTask;
      }
    }
    layerwise = sameTask;
  }
  return layerwise;
}

// Returns the first layer of the change mode's fitted range (the top half of the layers).
int LayerLossView::drawNewestCurves(const QVector<const RunData*>& layerwise, const RunData* focus, bool change,
                                    bool logY) {
  // The newest curve of every layerwise run; the focus run's solid and bold, the others dashed. Where a run's
  // descent breaks, a marker in its own colour, outlined red, named after it in the legend.
  int topFrom = 1;
  QVector<double> x, y;
  for (auto* run : layerwise) {
    const auto& track = run->vectors[QLatin1String(record::metric::kTestLayerLoss)];
    const auto& newest = track.rows.back();
    auto* graph = plot()->addGraph();
    plotted(newest, change, logY, x, y);
    graph->setData(x, y, true);
    const bool isFocus = run == focus;
    graph->setPen(QPen(run->colour, isFocus ? 3.0 : 2.0, isFocus ? Qt::SolidLine : Qt::DashLine));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    graph->setName(run->name);
    bindToRun(plot(), graph, *run);
    if (!run->visible) continue;
    drawn_.push_back({run->name, run->colour, newest});
    QVector<double> breakX, breakY;
    QStringList breakLayers;
    for (int layer = 1; layer < newest.size(); ++layer) {
      if (newest[layer] > newest[layer - 1]) {
        breakX.push_back(layer);
        breakY.push_back(change ? newest[layer] - newest[layer - 1] : newest[layer]);
        breakLayers << QString::number(layer);
      }
    }
    // The change mode's range: 0 and the changes of the top half of the layers.
    const int layers = static_cast<int>(newest.size()) - 1;
    topFrom = std::max(1, layers / 2 + 1);
    for (int layer = topFrom; layer <= layers; ++layer) {
      const double delta = newest[layer] - newest[layer - 1];
      changeLow_ = changeRangeValid_ ? std::min(changeLow_, delta) : std::min(0.0, delta);
      changeHigh_ = changeRangeValid_ ? std::max(changeHigh_, delta) : std::max(0.0, delta);
      changeRangeValid_ = true;
    }
    if (breakX.isEmpty()) continue;
    auto* breaks = plot()->addGraph();
    breaks->setLineStyle(QCPGraph::lsNone);
    breaks->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QPen(QColor(200, 0, 0), 1.6), run->colour, 12));
    breaks->setData(breakX, breakY);
    breaks->setName(
        QStringLiteral("%1: descent breaks at ℓ %2").arg(run->name, breakLayers.join(QStringLiteral(", "))));
  }
  return topFrom;
}

// The lower plot, with the focus run's certificate in words under it.
void LayerLossView::drawDescendingShares(const QVector<const RunData*>& layerwise, const RunData& focus) {
  auto layerAxis = [](int width) {
    QVector<double> x;
    for (int layer = 0; layer < width; ++layer) x.push_back(layer);
    return x;
  };
  // Descending share per layer, newest evaluation, bars side by side.
  auto* group = new QCPBarsGroup(plot());
  const double width = 0.8 / std::max<int>(1, static_cast<int>(layerwise.size()));
  for (auto* run : layerwise) {
    const auto it = run->vectors.constFind(QLatin1String(record::metric::kTestDescendingFrequency));
    if (it == run->vectors.cend() || it->rows.isEmpty() || !run->visible) continue;
    auto* bars = new QCPBars(bars_->axis(QCPAxis::atBottom), bars_->axis(QCPAxis::atLeft));
    bars->setWidth(width);
    bars->setPen(QPen(run->colour.darker(120)));
    bars->setBrush(run->colour);
    bars->setData(layerAxis(it->width), it->rows.back(), true);
    bars->setBarsGroup(group);
    bars->removeFromLegend();
    // The descent certificate: each layer's 95 % Wilson interval over the test samples as an error bar.
    const record::DescentCertificate certificate = descentCertificate(*run);
    if (certificate.valid() && static_cast<int>(certificate.per_layer.size()) == it->width) {
      auto* errors = new QCPErrorBars(bars_->axis(QCPAxis::atBottom), bars_->axis(QCPAxis::atLeft));
      errors->removeFromLegend();
      errors->setDataPlottable(bars);
      QVector<double> below, above;
      for (const auto& layer : certificate.per_layer) {
        below.push_back(layer.share - layer.low);
        above.push_back(layer.high - layer.share);
      }
      errors->setData(below, above);
      errors->setPen(QPen(run->colour.darker(170), 1.2));
    }
  }
  // The focus run's certificate in words, under the bars in its colour (over them it covered their tops, so equal
  // bars looked unequal): the overall share with its interval, and whether the mean curve above hides a minority of
  // samples that get worse. Short enough for a narrow dock; the runs table's tooltip has every layer.
  QCPAxis* barsLayer = bars_->axis(QCPAxis::atBottom);
  const record::DescentCertificate certificate = descentCertificate(focus);
  const bool captioned = certificate.valid() && focus.visible;
  barsLayer->setLabel(captioned ? fittedTitle(barsLayer, QStringLiteral("layer ℓ"),
                                              {QStringLiteral("descending pairs %1").arg(certificateText(certificate))})
                                : QStringLiteral("layer ℓ"));
  barsLayer->setLabelColor(captioned ? focus.colour.darker(130) : plot()->xAxis->labelColor());
}

void LayerLossView::rebuild() {
  // The rotated label must fit beside the bars: a short one when the view is squeezed (a 1024x700 window).
  const QFontMetrics labelMetrics(bars_->axis(QCPAxis::atLeft)->labelFont());
  const QString longLabel = QStringLiteral("descending share");
  bars_->axis(QCPAxis::atLeft)
      ->setLabel(labelMetrics.horizontalAdvance(longLabel) + 8 < bars_->rect().height() ? longLabel
                                                                                        : QStringLiteral("share"));
  plot()->clearPlottables();
  plot()->clearItems();
  int otherTask = 0;
  const RunData* focus = nullptr;
  const QVector<const RunData*> layerwise = runsOfFocusTask(focus, otherTask);
  // The y axis says which losses it shows: test ones, or training ones while no run has been evaluated yet; just
  // "fₗ" where the title would not fit beside the curves (the legend names training curves as such).
  QCPAxis* lossAxis = plot()->axisRect(0)->axis(QCPAxis::atLeft);
  const auto setLossLabel = [&](const QString& label) {
    const bool fits = labelMetrics.horizontalAdvance(label) + 8 < plot()->axisRect(0)->rect().height();
    lossAxis->setLabel(fits ? label : changeMode() ? QStringLiteral("Δfₗ") : QStringLiteral("fₗ"));
  };
  setLossLabel(QStringLiteral("test loss fₗ"));
  plot()->xAxis->setLabel(QStringLiteral("layer ℓ"));
  bars_->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("layer ℓ"));
  bars_->axis(QCPAxis::atBottom)->setLabelColor(plot()->xAxis->labelColor());
  drawn_.clear();
  changeRangeValid_ = false;
  if (layerwise.isEmpty() && drawTrainingLayerLoss()) {
    setLossLabel(changeMode() ? QStringLiteral("training fₗ − fₗ₋₁") : QStringLiteral("training loss fₗ"));
    return;
  }
  if (layerwise.isEmpty()) {
    // The real reason: no layerwise run open, or one that has not reached its first test evaluation.
    QStringList waiting, ownSparse;
    for (auto* run : model()->runs()) {
      if (run->kind == RunKind::Layerwise) waiting << run->name;
      if (run->config.value(QStringLiteral("task")) == QLatin1String("torchscript")) ownSparse << run->name;
    }
    placeholder(plot(), plot()->axisRect(0),
                waiting.isEmpty() && !ownSparse.isEmpty()
                    ? QStringLiteral("%1: sparse training reads no layers.\n"
                                     "Per-layer losses need layerwise descent:\nyour-model-layerwise")
                          .arg(ownSparse.join(QStringLiteral(", ")))
                : waiting.isEmpty()
                    ? QStringLiteral("No layerwise-descent run open\n(presets text-* and video-*)")
                    : QStringLiteral("Not evaluated yet: %1 run%2\n(test losses come at each epoch's end)")
                          .arg(waiting.size())
                          .arg(waiting.size() == 1 ? "" : "s"));
    return;
  }
  const bool change = changeMode();
  const bool logY = logY_->isChecked() && !change;
  if (change) setLossLabel(QStringLiteral("change fₗ − fₗ₋₁"));
  if (model()->grouped()) {
    drawGroups(change, logY);
    return;
  }
  // The focus run's history, light to dark.
  QVector<double> x, y;
  const auto& history = focus->vectors[QLatin1String(record::metric::kTestLayerLoss)];
  const int evaluations = static_cast<int>(history.rows.size());
  if (allEvaluations_->isChecked() && focus->visible) {
    for (int row = 0; row + 1 < evaluations; ++row) {
      auto* graph = plot()->addGraph();
      plotted(history.rows[row], change, logY, x, y);
      graph->setData(x, y, true);
      const double age = evaluations > 1 ? 1.0 - static_cast<double>(row) / (evaluations - 1) : 0.0;
      graph->setPen(QPen(towardsWhite(focus->colour, 0.25 + 0.6 * age), 1.2));
      graph->removeFromLegend();
    }
  }
  const int topFrom = drawNewestCurves(layerwise, focus, change, logY);
  // What the plot leaves out is said under it, in the layer axis' title, never over the data: at 1280x800 a note in
  // the top right corner covered ERM's rise at the last layer, the very thing the descent-breaks tour is about.
  QStringList notes;
  if (change) {
    auto* zero = new QCPItemStraightLine(plot());
    zero->setClipAxisRect(plot()->axisRect(0));
    zero->point1->setAxes(plot()->xAxis, plot()->yAxis);
    zero->point2->setAxes(plot()->xAxis, plot()->yAxis);
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(QColor(120, 120, 120), 1.2, Qt::DashLine));
    notes << QStringLiteral("above 0: breaks");
    if (fitTop_->isChecked() && changeRangeValid_ && topFrom > 1) notes << QStringLiteral("y fits ℓ ≥ %1").arg(topFrom);
  }
  if (otherTask > 0)
    notes << QStringLiteral("%1 other-task run%2 hidden").arg(otherTask).arg(otherTask == 1 ? "" : "s");
  // As many notes as the axis' width holds (a docked 1024x700 view cut the title at both ends).
  plot()->xAxis->setLabel(fittedTitle(plot()->xAxis, QStringLiteral("layer ℓ"), notes));

  if (!lowerRowShown()) return;
  drawDescendingShares(layerwise, *focus);
}

bool LayerLossView::drawTrainingLayerLoss() {
  // Before any test evaluation (a one-epoch run has none until its end): each layerwise run's newest training
  // per-layer loss, the batch means of its last metric interval, thin and dotted and named as training, so the view
  // moves from the first interval on instead of waiting.
  QVector<const RunData*> training;
  for (auto* run : model()->runs()) {
    const auto it = run->vectors.constFind(QLatin1String(record::metric::kLayerLoss));
    if (it != run->vectors.cend() && !it->rows.isEmpty()) training.push_back(run);
  }
  if (training.isEmpty()) return false;
  const bool change = changeMode();
  const bool logY = logY_->isChecked() && !change;
  for (auto* run : training) {
    const auto& track = run->vectors[QLatin1String(record::metric::kLayerLoss)];
    QVector<double> x, y;
    plotted(track.rows.back(), change, logY, x, y);
    auto* graph = plot()->addGraph();
    graph->setData(x, y, true);
    graph->setPen(QPen(run->colour, 1.8, Qt::DotLine));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 5));
    graph->setName(QStringLiteral("%1 (training, step %2)").arg(run->name).arg(track.steps.back(), 0, 'f', 0));
    bindToRun(plot(), graph, *run);
  }
  // Said in words where there is room; in a squeezed dock (1024x700) the axis title and the legend's "(training,
  // step N)" say it, and text over the curves would only cover them.
  if (plot()->axisRect(0)->rect().height() >= 110) {
    cornerNote(plot(), plot()->axisRect(0), 0.99, 0.02, Qt::AlignTop | Qt::AlignRight,
               QStringLiteral("training fₗ so far; test fₗ comes at the epoch's end"));
  }
  if (lowerRowShown() && bars_->rect().height() >= 60) {
    placeholder(plot(), bars_, QStringLiteral("descending shares come with the first test evaluation"));
  }
  return true;
}

void LayerLossView::setMode(const QString& mode) {
  const int index = mode_->findData(mode);
  if (index >= 0) mode_->setCurrentIndex(index);
}

QString LayerLossView::mode() const {
  return mode_->currentData().toString();
}

bool LayerLossView::changeMode() const {
  return mode() == QLatin1String("change");
}

void LayerLossView::setFitTopLayers(bool fit) {
  fitTop_->setChecked(fit);
}

void LayerLossView::resetRanges() {
  PlotView::resetRanges();
  if (changeMode() && fitTop_->isChecked() && changeRangeValid_) {
    // Margins in proportion, so a rise of 0.007 against falls of 0.08 stands clear of the zero line.
    const double span = std::max(changeHigh_ - changeLow_, 1e-6);
    plot()->axisRect(0)->axis(QCPAxis::atLeft)->setRange(changeLow_ - 0.12 * span, changeHigh_ + 0.12 * span);
  }
  // Shares lie in [0, 1], with room for the error bars' caps at 1.
  bars_->axis(QCPAxis::atLeft)->setRange(0, 1.05);
}

QString LayerLossView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == bars_) return QStringLiteral("layer %1   descending share %2").arg(std::lround(x)).arg(y, 0, 'f', 3);
  const long layer = std::lround(x);
  QString text = changeMode() ? QStringLiteral("layer %1   fₗ − fₗ₋₁ %2").arg(layer).arg(y, 0, 'g', 5)
                              : QStringLiteral("layer %1   fₗ %2").arg(layer).arg(y, 0, 'g', 5);
  // Which runs' descent breaks at this layer: a marker says whose it is in its colour, the readout in words.
  QStringList breaking;
  for (const auto& run : drawn_) {
    if (layer >= 1 && layer < run.losses.size() && run.losses[layer] > run.losses[layer - 1]) {
      breaking << QStringLiteral("%1 (+%2)").arg(run.name).arg(run.losses[layer] - run.losses[layer - 1], 0, 'g', 3);
    }
  }
  if (!breaking.isEmpty()) text += QStringLiteral("   descent breaks here: ") + breaking.join(QStringLiteral(", "));
  return text;
}

QString LayerLossView::hoverTable(QCPAxisRect* rect, double x, double) const {
  if (rect != plot()->axisRect(0) || drawn_.isEmpty()) return {};
  const long layer = std::lround(x);
  QString rows;
  for (const auto& run : drawn_) {
    if (layer < 0 || layer >= run.losses.size()) continue;
    const double value = run.losses[layer];
    const QString delta = layer >= 1 ? QString::number(value - run.losses[layer - 1], 'g', 4) : QStringLiteral("–");
    const bool breaks = layer >= 1 && value > run.losses[layer - 1];
    rows += QStringLiteral(
                "<tr><td><span style=\"color:%1\">■</span> %2</td><td align=right>%3</td>"
                "<td align=right>%4</td><td>%5</td></tr>")
                .arg(run.colour.name(), run.name.toHtmlEscaped(), QString::number(value, 'g', 5), delta,
                     breaks ? QStringLiteral("<b style=\"color:#c80000\">breaks</b>") : QString());
  }
  if (rows.isEmpty()) return {};
  return QStringLiteral(
             "<b>layer %1</b><table cellspacing=4><tr><th></th><th>fₗ</th><th>fₗ − fₗ₋₁</th><th></th></tr>"
             "%2</table>")
      .arg(layer)
      .arg(rows);
}

CsvTable LayerLossView::table() const {
  if (model()->grouped()) {
    CsvTable table(CsvTable::bandColumns({QStringLiteral("series"), QStringLiteral("step"), QStringLiteral("layer")}));
    const QString shown = QLatin1String(record::metric::kTestLayerLoss);
    const QString series = changeMode() ? shown + QStringLiteral("_change") : shown;
    for (const auto& band : groupBands()) {
      table.addBand(band, {series}, [&band](int row, int) {
        return QStringList{QString::number(static_cast<qint64>(band.atStep)), QString::number(band.steps[row])};
      });
    }
    return table;
  }
  CsvTable table({QStringLiteral("run"), QStringLiteral("series"), QStringLiteral("step"), QStringLiteral("layer"),
                  QStringLiteral("value")});
  // In the change mode the losses are written as drawn: f_l - f_(l-1) for l = 1..L, as series "..._change".
  const bool change = changeMode();
  for (auto* run : model()->runs()) {
    if (!run->visible) continue;  // what the plot draws
    for (const char* name : {record::metric::kTestLayerLoss, record::metric::kTestDescendingFrequency}) {
      const QString series = QLatin1String(name);
      const auto it = run->vectors.constFind(series);
      if (it == run->vectors.cend()) continue;
      const bool differenced = change && series == QLatin1String(record::metric::kTestLayerLoss);
      const QString written = differenced ? series + QStringLiteral("_change") : series;
      for (int row = 0; row < it->rows.size(); ++row) {
        const auto& values = it->rows[row];
        for (int layer = differenced ? 1 : 0; layer < values.size(); ++layer) {
          const double value = differenced ? values[layer] - values[layer - 1] : values[layer];
          table.add({run->name, written, QString::number(static_cast<qint64>(it->steps[row])), QString::number(layer),
                     QString::number(value, 'g', 9)});
        }
      }
    }
  }
  return table;
}

}  // namespace descentlab::widgets
