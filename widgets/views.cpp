#include "widgets/views.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSlider>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include "widgets/lab_model.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace {

// A grey hint in the middle of an empty axis rect.
void placeholder(QCustomPlot* plot, QCPAxisRect* rect, const QString& text) {
  auto* item = new QCPItemText(plot);
  item->setClipToAxisRect(false);
  item->position->setType(QCPItemPosition::ptAxisRectRatio);
  item->position->setAxisRect(rect);
  item->position->setCoords(0.5, 0.5);
  item->setText(text);
  item->setColor(QColor(120, 120, 120));
  item->setTextAlignment(Qt::AlignCenter);
}

QColor faded(const QColor& colour, double amount) {  // amount 0: the colour; 1: white
  return QColor::fromRgbF(colour.redF() + (1 - colour.redF()) * amount,
                          colour.greenF() + (1 - colour.greenF()) * amount,
                          colour.blueF() + (1 - colour.blueF()) * amount);
}

// The legend in its own row above the plots, filled left to right: it never hides data, however small the dock.
void setupLegend(QCustomPlot* plot) {
  plot->legend->setVisible(true);
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setBorderPen(Qt::NoPen);
  QFont legendFont = plot->font();
  legendFont.setPointSizeF(legendFont.pointSizeF() * 0.9);
  plot->legend->setFont(legendFont);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->legend->setWrap(2);
  plot->legend->setMargins(QMargins(4, 3, 4, 0));
  plot->axisRect(0)->insetLayout()->take(plot->legend);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);
  plot->plotLayout()->setRowSpacing(0);
}

// The data of every entry of `box`, in order.
QStringList itemDataList(const QComboBox* box) {
  QStringList data;
  for (int i = 0; i < box->count(); ++i) data << box->itemData(i).toString();
  return data;
}

// Selects the entry whose data is `value`; returns false, leaving the selection as it was, when there is none.
bool selectData(QComboBox* box, const QString& value) {
  const int index = box->findData(value);
  if (index < 0) return false;
  box->setCurrentIndex(index);
  return true;
}

QComboBox* keepChoice(QComboBox* box, const QStringList& items, const QString& fallback) {
  const QString current = box->currentData().toString().isEmpty() ? fallback : box->currentData().toString();
  if (itemDataList(box) == items) return box;
  const QSignalBlocker blocker(box);
  box->clear();
  for (const auto& item : items) box->addItem(item, item);
  if (!selectData(box, current)) box->setCurrentIndex(0);
  return box;
}

QString metricLabel(const QString& name) {
  if (name == QStringLiteral("loss")) return QStringLiteral("training loss");
  if (name.startsWith(QStringLiteral("test_"))) return QStringLiteral("test ") + name.mid(5).replace('_', ' ');
  return QString(name).replace('_', ' ');
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Training curves

TrainingCurvesView::TrainingCurvesView(LabModel* model, const QString& title, const QString& defaultMetric,
                                       QWidget* parent)
    : PlotView(model, title, parent), wanted_(defaultMetric) {
  metric_ = new QComboBox(this);
  metric_->setToolTip(QStringLiteral("The series to plot; \"test metric\" is each run's accuracy, RMSE or perplexity"));
  metric_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  smoothing_ = new QSlider(Qt::Horizontal, this);
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMinimumWidth(70);
  smoothing_->setMaximumWidth(120);
  smoothing_->setToolTip(QStringLiteral("Smoothing: exponential moving average weight, as in TensorBoard"));
  smoothingLabel_ = new QLabel(this);
  logY_ = new QCheckBox(QStringLiteral("log y"), this);
  tools()->addWidget(metric_);
  tools()->addWidget(new QLabel(QStringLiteral("smoothing"), this));
  tools()->addWidget(smoothing_);
  tools()->addWidget(smoothingLabel_);
  tools()->addWidget(logY_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("step"), metricLabel(defaultMetric));
  setupLegend(plot());
  smoothingLabel_->setText(QString::number(smoothing_->value() / 100.0, 'f', 2));
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] {
    wanted_ = metric_->currentData().toString();
    refresh(true);
  });
  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) {
    smoothingLabel_->setText(QString::number(value / 100.0, 'f', 2));
    refresh(true);
  });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    auto* axis = plot()->yAxis;
    axis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    axis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                       : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    refresh(true);
  });
}

void TrainingCurvesView::setMetric(const QString& metric) {
  wanted_ = metric;
  refresh(true);
}
void TrainingCurvesView::setSmoothing(double weight) {
  smoothing_->setValue(static_cast<int>(weight * 100 + 0.5));
}
void TrainingCurvesView::setLogY(bool on) {
  logY_->setChecked(on);
}

QString TrainingCurvesView::scalarFor(const RunData& run) const {
  if (wanted_ == QStringLiteral("@test"))
    return run.metric.isEmpty() ? QString() : QStringLiteral("test_") + run.metric;
  return wanted_;
}

void TrainingCurvesView::updateMetricChoices() {
  QSet<QString> names;
  for (auto* run : model()->runs()) {
    for (auto it = run->scalars.cbegin(); it != run->scalars.cend(); ++it) names.insert(it.key());
  }
  names.insert(wanted_);  // the chosen series stays listed before any run has it
  names.remove(QStringLiteral("@test"));
  QStringList sorted(names.begin(), names.end());
  sorted.sort();
  sorted.prepend(QStringLiteral("@test"));
  const QSignalBlocker blocker(metric_);
  if (itemDataList(metric_) != sorted) {
    metric_->clear();
    for (const auto& name : sorted) {
      metric_->addItem(name == QStringLiteral("@test") ? QStringLiteral("test metric") : name, name);
    }
  }
  selectData(metric_, wanted_);
}

void TrainingCurvesView::rebuild() {
  updateMetricChoices();
  plot()->clearPlottables();
  plot()->clearItems();
  const double weight = smoothing_->value() / 100.0;
  const bool logY = logY_->isChecked();
  QString label = wanted_ == QStringLiteral("@test") ? QString() : metricLabel(wanted_);
  int drawn = 0;
  for (auto* run : model()->runs()) {
    const QString name = scalarFor(*run);
    if (name.isEmpty() || !run->scalars.contains(name)) continue;
    const auto& track = run->scalars[name];
    if (wanted_ == QStringLiteral("@test")) {
      const QString runLabel = metricLabel(name);
      if (label.isEmpty()) {
        label = runLabel;
      } else if (!label.contains(runLabel)) {
        label += QStringLiteral(" / ") + runLabel;
      }
    }
    QVector<double> values = track.values;
    if (logY) {
      for (auto& value : values) value = value > 0 ? value : qQNaN();
    }
    // Few points (one per evaluation): no smoothing, markers instead.
    const bool sparse = track.values.size() < 40;
    if (!sparse && weight > 0) {
      auto* raw = plot()->addGraph();
      raw->setData(track.steps, values, true);
      QColor light = run->colour;
      light.setAlpha(55);
      raw->setPen(QPen(light, 1));
      raw->removeFromLegend();
    }
    auto* smooth = plot()->addGraph();
    smooth->setData(track.steps, sparse || weight <= 0 ? values : smoothExponential(values, weight), true);
    smooth->setPen(QPen(run->colour, 2));
    if (sparse) smooth->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    smooth->setName(run->name);
    ++drawn;
  }
  plot()->yAxis->setLabel(label.isEmpty() ? QStringLiteral("test metric") : label);
  if (drawn == 0) {
    placeholder(plot(), plot()->axisRect(),
                model()->count() == 0 ? QStringLiteral("No run yet: pick a preset and press Start")
                                      : QStringLiteral("No run has \"%1\" yet").arg(metric_->currentText()));
  }
}

QString TrainingCurvesView::readout(QCPAxisRect*, double x, double y) const {
  return QStringLiteral("step %1   %2 %3").arg(std::llround(x)).arg(plot()->yAxis->label()).arg(y, 0, 'g', 5);
}

QString TrainingCurvesView::csv() const {
  QString text;
  QTextStream out(&text);
  out << "run,metric,step,value,smoothed\n";
  const double weight = smoothing_->value() / 100.0;
  for (auto* run : model()->runs()) {
    const QString name = scalarFor(*run);
    if (name.isEmpty() || !run->scalars.contains(name)) continue;
    const auto& track = run->scalars[name];
    const auto smoothed = smoothExponential(track.values, weight);
    for (int i = 0; i < track.steps.size(); ++i) {
      out << csvField(run->name) << ',' << name << ',' << static_cast<qint64>(track.steps[i]) << ','
          << QString::number(track.values[i], 'g', 9) << ',' << QString::number(smoothed[i], 'g', 9) << '\n';
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------
// Per-layer loss

LayerLossView::LayerLossView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Per-layer loss"), parent) {
  allEvaluations_ = new QCheckBox(QStringLiteral("every evaluation"), this);
  allEvaluations_->setChecked(true);
  allEvaluations_->setToolTip(QStringLiteral("Show every evaluation of the focus run, early (light) to late (dark)"));
  logY_ = new QCheckBox(QStringLiteral("log y"), this);
  tools()->addWidget(allEvaluations_);
  tools()->addWidget(logY_);
  addExportButton();
  connect(allEvaluations_, &QCheckBox::toggled, this, [this] { refresh(true); });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    plot()->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot()->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    refresh(true);
  });

  styleAxisRect(plot()->axisRect(), QStringLiteral("layer l"), QStringLiteral("test loss f_l"));
  bars_ = new QCPAxisRect(plot());
  plot()->plotLayout()->addElement(1, 0, bars_);
  plot()->plotLayout()->setRowStretchFactor(0, 2.0);
  plot()->plotLayout()->setRowStretchFactor(1, 1.0);
  styleAxisRect(bars_, QStringLiteral("layer l"), QStringLiteral("descending share"));
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
  bars_->axis(QCPAxis::atLeft)->setRange(0, 1.05);
  bars_->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);
  setupLegend(plot());
}

void LayerLossView::rebuild() {
  plot()->clearPlottables();
  plot()->clearItems();
  RunData* focus = model()->focusRun();
  if (focus && !focus->vectors.contains(QStringLiteral("test_layer_loss"))) focus = nullptr;
  QVector<RunData*> layerwise;
  for (auto* run : model()->runs()) {
    if (run->vectors.contains(QStringLiteral("test_layer_loss"))) layerwise.push_back(run);
  }
  if (!focus && !layerwise.isEmpty()) focus = layerwise.front();
  if (layerwise.isEmpty()) {
    placeholder(plot(), plot()->axisRect(0),
                QStringLiteral("No layerwise-descent run yet\n(presets text-* and video-*)"));
    return;
  }
  const bool logY = logY_->isChecked();
  auto clean = [logY](QVector<double> values) {
    if (logY) {
      for (auto& value : values) value = value > 0 ? value : qQNaN();
    }
    return values;
  };
  QVector<double> breakX, breakY;
  auto layerAxis = [](int width) {
    QVector<double> x;
    for (int layer = 0; layer < width; ++layer) x.push_back(layer);
    return x;
  };
  // The focus run's history, light to dark.
  const auto& history = focus->vectors[QStringLiteral("test_layer_loss")];
  const int evaluations = static_cast<int>(history.rows.size());
  if (allEvaluations_->isChecked()) {
    for (int row = 0; row + 1 < evaluations; ++row) {
      auto* graph = plot()->addGraph();
      graph->setData(layerAxis(history.width), clean(history.rows[row]), true);
      const double age = evaluations > 1 ? 1.0 - static_cast<double>(row) / (evaluations - 1) : 0.0;
      graph->setPen(QPen(faded(focus->colour, 0.25 + 0.6 * age), 1.2));
      graph->removeFromLegend();
    }
  }
  // The newest curve of every layerwise run; the focus run's solid and bold, the others dashed.
  for (auto* run : layerwise) {
    const auto& track = run->vectors[QStringLiteral("test_layer_loss")];
    const auto& newest = track.rows.back();
    auto* graph = plot()->addGraph();
    graph->setData(layerAxis(track.width), clean(newest), true);
    const bool isFocus = run == focus;
    graph->setPen(QPen(run->colour, isFocus ? 3.0 : 2.0, isFocus ? Qt::SolidLine : Qt::DashLine));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    graph->setName(run->name);
    for (int layer = 1; layer < newest.size(); ++layer) {
      if (newest[layer] > newest[layer - 1]) {
        breakX.push_back(layer);
        breakY.push_back(newest[layer]);
      }
    }
  }
  auto* breaks = plot()->addGraph();
  breaks->setLineStyle(QCPGraph::lsNone);
  breaks->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QColor(200, 0, 0), QColor(200, 0, 0), 11));
  breaks->setData(breakX, breakY);
  breaks->setName(QStringLiteral("descent breaks"));
  if (breakX.isEmpty()) breaks->removeFromLegend();

  // Descending share per layer, newest evaluation, bars side by side.
  auto* group = new QCPBarsGroup(plot());
  const double width = 0.8 / std::max<int>(1, static_cast<int>(layerwise.size()));
  for (auto* run : layerwise) {
    const auto it = run->vectors.constFind(QStringLiteral("test_descending_frequency"));
    if (it == run->vectors.cend() || it->rows.isEmpty()) continue;
    auto* bars = new QCPBars(bars_->axis(QCPAxis::atBottom), bars_->axis(QCPAxis::atLeft));
    bars->setWidth(width);
    bars->setPen(QPen(run->colour.darker(120)));
    bars->setBrush(run->colour);
    bars->setData(layerAxis(it->width), it->rows.back(), true);
    bars->setBarsGroup(group);
    bars->removeFromLegend();
  }
}

QString LayerLossView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == bars_) return QStringLiteral("layer %1   descending share %2").arg(std::lround(x)).arg(y, 0, 'f', 3);
  return QStringLiteral("layer %1   f_l %2").arg(std::lround(x)).arg(y, 0, 'g', 5);
}

QString LayerLossView::csv() const {
  QString text;
  QTextStream out(&text);
  out << "run,series,step,layer,value\n";
  for (auto* run : model()->runs()) {
    for (const QString& series : {QStringLiteral("test_layer_loss"), QStringLiteral("test_descending_frequency")}) {
      const auto it = run->vectors.constFind(series);
      if (it == run->vectors.cend()) continue;
      for (int row = 0; row < it->rows.size(); ++row) {
        for (int layer = 0; layer < it->rows[row].size(); ++layer) {
          out << csvField(run->name) << ',' << series << ',' << static_cast<qint64>(it->steps[row]) << ',' << layer
              << ',' << QString::number(it->rows[row][layer], 'g', 9) << '\n';
        }
      }
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------
// λ trajectories

LambdaView::LambdaView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Lagrange multipliers"), parent) {
  series_ = new QComboBox(this);
  series_->addItem(QStringLiteral("λ_l (multipliers)"), QStringLiteral("lambda"));
  series_->addItem(QStringLiteral("g_l (training slack)"), QStringLiteral("slack"));
  series_->addItem(QStringLiteral("u_l (resilient relaxation)"), QStringLiteral("resilient_slack"));
  tools()->addWidget(series_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("step"), QStringLiteral("λ_l"));
  setupLegend(plot());
  connect(series_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
}

void LambdaView::setSeries(const QString& name) {
  selectData(series_, name);
}

void LambdaView::rebuild() {
  plot()->clearPlottables();
  plot()->clearItems();
  const QString name = series_->currentData().toString();
  plot()->yAxis->setLabel(series_->currentText());
  RunData* focus = model()->focusRun();
  if (focus && !focus->vectors.contains(name)) {
    focus = nullptr;
    for (auto* run : model()->runs()) {
      if (run->vectors.contains(name)) {
        focus = run;
        break;
      }
    }
  }
  if (!focus) {
    placeholder(plot(), plot()->axisRect(),
                name == QStringLiteral("resilient_slack")
                    ? QStringLiteral("No resilient constrained run\n(constraints.resilient = true)")
                    : QStringLiteral("No constrained layerwise run yet\n(text-constrained, video-constrained)"));
    return;
  }
  const auto& track = focus->vectors[name];
  QCPColorGradient gradient(QCPColorGradient::gpSpectrum);
  for (int layer = 0; layer < track.width; ++layer) {
    QVector<double> values;
    values.reserve(track.rows.size());
    for (const auto& row : track.rows) values.push_back(layer < row.size() ? row[layer] : qQNaN());
    auto* graph = plot()->addGraph();
    graph->setData(track.steps, values, true);
    const double position = track.width > 1 ? static_cast<double>(layer) / (track.width - 1) : 0.0;
    graph->setPen(QPen(QColor(gradient.color(position * 0.85, QCPRange(0, 1))), 1.8));
    graph->setName(QStringLiteral("layer %1").arg(layer + 1));
  }
  if (name == QStringLiteral("slack")) {
    auto* zero = new QCPItemStraightLine(plot());
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
  }
  auto* caption = new QCPItemText(plot());
  caption->position->setType(QCPItemPosition::ptAxisRectRatio);
  caption->position->setCoords(0.99, 0.02);
  caption->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
  caption->setText(focus->name);
  caption->setColor(focus->colour);
}

QString LambdaView::csv() const {
  QString text;
  QTextStream out(&text);
  out << "run,series,step,layer,value\n";
  const QString name = series_->currentData().toString();
  for (auto* run : model()->runs()) {
    const auto it = run->vectors.constFind(name);
    if (it == run->vectors.cend()) continue;
    for (int row = 0; row < it->rows.size(); ++row) {
      for (int layer = 0; layer < it->rows[row].size(); ++layer) {
        out << csvField(run->name) << ',' << name << ',' << static_cast<qint64>(it->steps[row]) << ',' << layer + 1
            << ',' << QString::number(it->rows[row][layer], 'g', 9) << '\n';
      }
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------
// Weight geometry

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
    if (run->scalars.contains(QStringLiteral("sparsity"))) {
      line += QStringLiteral(" sparsity %1 %")
                  .arg(100.0 * run->scalars[QStringLiteral("sparsity")].values.back(), 0, 'f', 1);
    }
    const auto share = run->vectors.constFind(QStringLiteral("near_zero_share"));
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

// ---------------------------------------------------------------------------------------------------------------
// Robustness

RobustnessView::RobustnessView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Robustness"), parent) {
  noise_ = new QComboBox(this);
  noise_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  run_ = new QPushButton(QStringLiteral("Sweep focus run"), this);
  run_->setToolTip(
      QStringLiteral("Evaluate the focus run's checkpoint under input noise of growing strength γ "
                     "(3 seeds), in the background"));
  tools()->addWidget(new QLabel(QStringLiteral("noise"), this));
  tools()->addWidget(noise_);
  tools()->addWidget(run_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("noise strength γ"), QStringLiteral("test metric"));
  setupLegend(plot());
  connect(noise_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
  connect(run_, &QPushButton::clicked, this, [this] {
    if (auto* focus = this->model()->focusRun()) {
      emit sweepRequested(focus->id, noise_->currentData().toString().isEmpty() ? QStringLiteral("gaussian")
                                                                                : noise_->currentData().toString());
    }
  });
}

void RobustnessView::setSweepRunning(bool running) {
  run_->setEnabled(!running);
  run_->setText(running ? QStringLiteral("Sweeping…") : QStringLiteral("Sweep focus run"));
}

void RobustnessView::rebuild() {
  QSet<QString> names;
  for (auto* run : model()->runs()) {
    for (auto it = run->sweeps.cbegin(); it != run->sweeps.cend(); ++it) {
      if (!it->gamma.isEmpty()) names.insert(it.key());
    }
  }
  QStringList sorted(names.begin(), names.end());
  sorted.sort();
  keepChoice(noise_, sorted, QStringLiteral("gaussian"));
  const QString name = noise_->currentData().toString();
  plot()->clearPlottables();
  plot()->clearItems();
  int drawn = 0;
  QString metric;
  for (auto* run : model()->runs()) {
    const auto it = run->sweeps.constFind(name);
    if (it == run->sweeps.cend() || it->gamma.isEmpty() || it->seeds < 1) continue;
    metric = it->metric;
    QVector<double> mean, low, high;
    for (int g = 0; g < it->gamma.size(); ++g) {
      double sum = 0, squares = 0;
      for (int s = 0; s < it->seeds; ++s) sum += it->values[g * it->seeds + s];
      const double average = sum / it->seeds;
      for (int s = 0; s < it->seeds; ++s) {
        const double deviation = it->values[g * it->seeds + s] - average;
        squares += deviation * deviation;
      }
      const double spread = it->seeds > 1 ? std::sqrt(squares / (it->seeds - 1)) : 0.0;
      mean.push_back(average);
      low.push_back(average - spread);
      high.push_back(average + spread);
    }
    QColor band = run->colour;
    band.setAlpha(50);
    auto* lower = plot()->addGraph();
    lower->setData(it->gamma, low, true);
    lower->setPen(Qt::NoPen);
    lower->removeFromLegend();
    auto* upper = plot()->addGraph();
    upper->setData(it->gamma, high, true);
    upper->setPen(Qt::NoPen);
    upper->setBrush(band);
    upper->setChannelFillGraph(lower);
    upper->removeFromLegend();
    auto* line = plot()->addGraph();
    line->setData(it->gamma, mean, true);
    line->setPen(QPen(run->colour, 2));
    line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    line->setName(QStringLiteral("%1 (%2 seeds)").arg(run->name).arg(it->seeds));
    ++drawn;
  }
  plot()->yAxis->setLabel(metric.isEmpty() ? QStringLiteral("test metric") : QStringLiteral("test ") + metric);
  if (drawn == 0) {
    placeholder(
        plot(), plot()->axisRect(),
        QStringLiteral("No robustness sweep yet\n(select a finished layerwise run, press \"Sweep focus run\")"));
  }
}

QString RobustnessView::csv() const {
  QString text;
  QTextStream out(&text);
  out << "run,noise,metric,gamma,seed,value\n";
  for (auto* run : model()->runs()) {
    for (auto it = run->sweeps.cbegin(); it != run->sweeps.cend(); ++it) {
      for (int g = 0; g < it->gamma.size(); ++g) {
        for (int s = 0; s < it->seeds; ++s) {
          out << csvField(run->name) << ',' << csvField(it.key()) << ',' << it->metric << ','
              << QString::number(it->gamma[g], 'g', 6) << ',' << s << ','
              << QString::number(it->values[g * it->seeds + s], 'g', 9) << '\n';
        }
      }
    }
  }
  return text;
}

}  // namespace descentlab::widgets
