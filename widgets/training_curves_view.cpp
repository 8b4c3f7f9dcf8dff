#include "widgets/training_curves_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSet>
#include <QSlider>
#include <QTextStream>
#include <QToolButton>

#include <algorithm>
#include <cmath>

#include "core/record/metrics.h"
#include "widgets/elided_label.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"
#include "widgets/small_multiples_view.h"

namespace descentlab::widgets {
namespace {

// Words for a series, with its unit, from the metric vocabulary (core/record/metrics.h).
QString metricLabel(const QString& name) {
  const std::string key = name.toStdString();
  QString words = QString::fromStdString(record::display_name(key));
  if (const auto* info = record::find_metric(key); info && !info->unit.empty()) {
    words +=
        QStringLiteral(" (%1)").arg(QString::fromUtf8(info->unit.data(), static_cast<qsizetype>(info->unit.size())));
  }
  return words;
}

}  // namespace

TrainingCurvesView::TrainingCurvesView(LabModel* model, const QString& title, const QString& defaultMetric,
                                       QWidget* parent)
    : PlotView(model, title, parent), wanted_(defaultMetric) {
  plot()->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(plot(), &QWidget::customContextMenuRequested, this, &TrainingCurvesView::offerBranchAt);
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
  logY_->setToolTip(QStringLiteral("A logarithmic y axis; values ≤ 0 cannot be drawn on it and are counted beside"));
  // Elided, the whole note in its tooltip: a long one ("not on this axis: ...") must not widen the dock.
  logYNote_ = new ElidedLabel(this);
  logYNote_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);  // a flow layout gives Ignored no width
  logYNote_->setStyleSheet(QStringLiteral("color: #8a4b00;"));
  logYNote_->hide();
  xAxis_ = new QComboBox(this);
  xAxis_->setObjectName(QStringLiteral("x-axis"));
  xAxis_->addItem(QStringLiteral("by step"), static_cast<int>(XAxis::Step));
  xAxis_->addItem(QStringLiteral("by wall time"), static_cast<int>(XAxis::WallTime));
  xAxis_->addItem(QStringLiteral("by time since start"), static_cast<int>(XAxis::RelativeTime));
  xAxis_->addItem(QStringLiteral("by epoch"), static_cast<int>(XAxis::Epoch));
  xAxis_->addItem(QStringLiteral("by step, log scale"), static_cast<int>(XAxis::LogStep));
  xAxis_->setToolTip(
      QStringLiteral("The x axis: the training step, the wall-clock time of each row, the time since each run's "
                     "first row (runs started at different times side by side), the epoch (runs of different "
                     "batch or dataset sizes side by side), or the step on a log scale (the early steps spread out)"));
  xAxis_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tools()->addWidget(metric_);
  tools()->addWidget(xAxis_);
  tools()->addWidget(new QLabel(QStringLiteral("smoothing"), this));
  tools()->addWidget(smoothing_);
  tools()->addWidget(smoothingLabel_);
  tools()->addWidget(logY_);
  tools()->addWidget(logYNote_);
  auto* grid = new QToolButton(this);
  grid->setObjectName(QStringLiteral("small-multiples"));
  grid->setText(QStringLiteral("Grid…"));
  grid->setToolTip(
      QStringLiteral("Small multiples: a grid of small plots of the runs, one per metric or per layer, "
                     "in a window of its own"));
  connect(grid, &QToolButton::clicked, this, [this] { SmallMultiplesView::showFor(this, this->model()); });
  tools()->addWidget(grid);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("step"), metricLabel(defaultMetric));
  setupLegend(plot());
  smoothingLabel_->setText(QString::number(smoothing_->value() / 100.0, 'f', 2));
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] {
    wanted_ = metric_->currentData().toString();
    refresh(true);
  });
  connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
    const XAxis axis = xAxis();
    QCPAxis* x = plot()->xAxis;
    x->setScaleType(axis == XAxis::LogStep ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (axis == XAxis::WallTime) {
      QSharedPointer<QCPAxisTickerDateTime> ticker(new QCPAxisTickerDateTime);
      ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
      x->setTicker(ticker);
      x->setLabel(QStringLiteral("wall time"));
    } else if (axis == XAxis::RelativeTime) {
      QSharedPointer<QCPAxisTickerTime> ticker(new QCPAxisTickerTime);
      ticker->setTimeFormat(QStringLiteral("%h:%m:%s"));
      x->setTicker(ticker);
      x->setLabel(QStringLiteral("time since the run's start (h:mm:ss)"));
    } else if (axis == XAxis::Epoch) {
      x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
      x->setLabel(QStringLiteral("epoch"));
    } else if (axis == XAxis::LogStep) {
      x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
      x->setLabel(QStringLiteral("step (log scale)"));
    } else {
      x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
      x->setLabel(QStringLiteral("step"));
    }
    resetZoom();
    resetRanges();  // a linear range may start at or below 0, which a log axis cannot show
    refresh(true);
  });
  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) {
    smoothingLabel_->setText(QString::number(value / 100.0, 'f', 2));
    refresh(true);
  });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    auto* axis = plot()->yAxis;
    axis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    axis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : distinctLabelTicker());
    resetRanges();  // a linear range may start at or below 0, which a log axis cannot show
    refresh(true);
  });
}

void TrainingCurvesView::setMetric(const QString& metric) {
  wanted_ = metric;
  refresh(true);
}
void TrainingCurvesView::setXAxis(XAxis axis) {
  xAxis_->setCurrentIndex(xAxis_->findData(static_cast<int>(axis)));
}
TrainingCurvesView::XAxis TrainingCurvesView::xAxis() const {
  return static_cast<XAxis>(xAxis_->currentData().toInt());
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
      metric_->addItem(name == QStringLiteral("@test") ? QStringLiteral("test metric") : metricLabel(name), name);
      if (const auto* info = record::find_metric(name.toStdString())) {
        metric_->setItemData(
            metric_->count() - 1,
            QStringLiteral("%1: %2").arg(
                name, QString::fromUtf8(info->meaning.data(), static_cast<qsizetype>(info->meaning.size()))),
            Qt::ToolTipRole);
      }
    }
  }
  selectData(metric_, wanted_);
}

QVector<double> epochsAt(const RunData& run, const QVector<double>& steps) {
  // The run's "epoch" series (epochs done, with the current one's share) between its rows, linearly; past its last
  // row at the pace of its last two.
  const auto found = run.scalars.constFind(QLatin1String(record::metric::kEpoch));
  if (found == run.scalars.cend() || found->steps.isEmpty()) return {};
  const QVector<double>& at = found->steps;
  const QVector<double>& epoch = found->values;
  QVector<double> x;
  x.reserve(steps.size());
  for (double step : steps) {
    if (at.size() == 1) {  // one row: the pace from step 0
      x.push_back(at.front() > 0 ? epoch.front() * step / at.front() : epoch.front());
      continue;
    }
    // The rows around the step (the first or last two outside them).
    const qsizetype hi =
        std::clamp<qsizetype>(std::upper_bound(at.begin(), at.end(), step) - at.begin(), 1, at.size() - 1);
    const qsizetype lo = hi - 1;
    const double span = at[hi] - at[lo];
    x.push_back(span > 0 ? epoch[lo] + (epoch[hi] - epoch[lo]) * (step - at[lo]) / span : epoch[hi]);
  }
  return x;
}

QString TrainingCurvesView::axisUnitOf(const RunData& run) const {
  const QString series = scalarFor(run);
  if (wanted_ == QStringLiteral("@test")) return series;
  if (!isLossSeries(series)) return QString();
  return lossUnit(run);
}

QString TrainingCurvesView::shownAxisUnit() const {
  QString first;
  bool any = false;
  for (auto* run : model()->runs()) {
    const QString series = scalarFor(*run);
    if (series.isEmpty() || !run->scalars.contains(series)) continue;
    if (run == model()->focusRun()) return axisUnitOf(*run);
    if (!any) first = axisUnitOf(*run);
    any = true;
  }
  return first;
}

QVector<DrawnCurve> TrainingCurvesView::curves() const {
  QVector<DrawnCurve> result;
  const QString shownUnit = shownAxisUnit();
  const double weight = smoothing_->value() / 100.0;
  const bool logY = logY_->isChecked();
  for (auto* run : model()->runs()) {
    const QString name = scalarFor(*run);
    if (name.isEmpty() || !run->scalars.contains(name)) continue;
    if (axisUnitOf(*run) != shownUnit) continue;  // another unit: not on this axis, named beside it
    const auto& track = run->scalars[name];
    DrawnCurve curve;
    curve.run = run;
    curve.series = name;
    curve.steps = track.steps;
    curve.raw = track.values;
    const XAxis axis = xAxis();
    if (axis == XAxis::Epoch) {
      curve.x = epochsAt(*run, track.steps);
      if (curve.x.isEmpty()) continue;  // a run with no epoch series: named beside the plot
    } else if (axis == XAxis::LogStep) {
      curve.x = track.steps;
      for (auto& step : curve.x) {
        if (step <= 0) step = qQNaN();  // step 0 has no place on a log axis
      }
    } else if (axis == XAxis::Step || track.wallTimes.size() != track.steps.size()) {
      curve.x = track.steps;
    } else {
      // The run's start: its first training-loss row (every run has one), else this series' first row.
      const auto loss = run->scalars.constFind(QLatin1String(record::metric::kLoss));
      const double start =
          loss != run->scalars.cend() && !loss->wallTimes.isEmpty() ? loss->wallTimes.front() : track.wallTimes.front();
      curve.x = track.wallTimes;
      if (axis == XAxis::RelativeTime) {
        for (auto& seconds : curve.x) seconds -= start;
      }
    }
    if (logY) {
      for (auto& value : curve.raw) {
        if (value > 0) continue;
        value = qQNaN();
        ++curve.hiddenByLogY;
      }
    }
    // Only noisy interval means are smoothed; an evaluation (a test value, the accuracy around a compression) or a
    // set value (the learning rate) is drawn as measured, since an average over a few points only lags behind them.
    const auto* info = record::find_metric(name.toStdString());
    curve.smoothable = info == nullptr || info->smoothable;
    curve.smoothed = weight > 0 && curve.smoothable ? smoothExponential(curve.raw, weight) : curve.raw;
    // Identical so far to an earlier visible run (a repeated seed, an unchanged config): said, and drawn dashed.
    if (run->visible && curve.raw.size() >= 2) {
      for (const auto& earlier : result) {
        if (earlier.run->visible && earlier.sameAs.isEmpty() && earlier.steps == curve.steps &&
            earlier.raw == curve.raw) {
          curve.sameAs = earlier.run->name;
          break;
        }
      }
      if (!curve.sameAs.isEmpty()) {
        for (const auto& earlier : result) curve.duplicateRank += earlier.sameAs == curve.sameAs ? 1 : 0;
        ++curve.duplicateRank;
      }
    }
    result.push_back(std::move(curve));
  }
  return result;
}

QString TrainingCurvesView::logYNote() const {
  return logYNote_->fullText();  // empty unless log y hides points
}

QStringList TrainingCurvesView::axisNotes(const QString& shownUnit) const {
  // Runs of different tasks: curves() keeps one unit (the "test metric" of one task, a loss in one unit); the others
  // are said beside.
  QStringList notes;
  QMap<QString, int> others;
  for (auto* run : model()->runs()) {
    const QString series = scalarFor(*run);
    if (series.isEmpty() || !run->scalars.contains(series)) continue;
    const QString unit = axisUnitOf(*run);
    if (unit != shownUnit) ++others[unit];
  }
  QStringList parts;
  for (auto it = others.cbegin(); it != others.cend(); ++it) {
    const QString what = wanted_ == QStringLiteral("@test") ? metricLabel(it.key()) : it.key();
    parts << QStringLiteral("%1 (%2 run%3)").arg(what).arg(it.value()).arg(it.value() == 1 ? "" : "s");
  }
  if (!parts.isEmpty()) {
    notes << QStringLiteral("not on this axis: %1 (select such a run)").arg(parts.join(QStringLiteral(", ")));
  }
  if (xAxis() == XAxis::Epoch && !model()->grouped()) {
    int withoutEpochs = 0;
    for (auto* run : model()->runs()) {
      const QString series = scalarFor(*run);
      if (run->scalars.contains(series) && !run->scalars.contains(QLatin1String(record::metric::kEpoch))) {
        ++withoutEpochs;
      }
    }
    if (withoutEpochs > 0) {
      notes << QStringLiteral("%1 run%2 without an epoch series left out")
                   .arg(withoutEpochs)
                   .arg(withoutEpochs == 1 ? "" : "s");
    }
  }
  return notes;
}

void TrainingCurvesView::rebuild() {
  updateMetricChoices();
  plot()->clearPlottables();
  plot()->clearItems();
  const bool sliderSmoothing = smoothing_->value() > 0;
  QString label = wanted_ == QStringLiteral("@test") ? QString() : metricLabel(wanted_);
  int drawn = 0;
  int hiddenByLogY = 0;
  bool anySmoothable = false;
  const QVector<DrawnCurve> all = curves();
  const QString shownUnit = shownAxisUnit();
  if (wanted_ == QStringLiteral("@test")) {
    if (!shownUnit.isEmpty()) label = metricLabel(shownUnit);
  } else if (!shownUnit.isEmpty()) {
    label += QStringLiteral(" (%1)").arg(shownUnit);
  }
  QStringList notes;
  if (model()->grouped()) {
    drawn = drawGroups(notes, anySmoothable);
  }
  for (const auto& curve : model()->grouped() ? QVector<DrawnCurve>() : all) {
    const RunData& run = *curve.run;
    // Steps only grow; wall times may step back where a resumed run's rows follow a stopped one's (a clock change).
    const bool sortedX = std::is_sorted(curve.x.begin(), curve.x.end());
    // Few points (one per evaluation) are marked, so a single evaluation still shows.
    const bool sparse = curve.raw.size() < 40;
    const bool smoothing = sliderSmoothing && curve.smoothable;
    anySmoothable = anySmoothable || curve.smoothable;
    if (smoothing) {
      auto* raw = plot()->addGraph();
      raw->setData(curve.x, curve.raw, !sortedX);
      QColor light = run.colour;
      light.setAlpha(70);
      raw->setPen(QPen(light, 1));
      if (sparse) raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, light, Qt::white, 5));
      raw->removeFromLegend();
      bindToRun(plot(), raw, run);
    }
    auto* line = plot()->addGraph();
    line->setData(curve.x, curve.smoothed, !sortedX);
    // A run that repeats an earlier one is drawn dashed over it, so both colours show.
    static const Qt::PenStyle kRepeatStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
    line->setPen(QPen(run.colour, 2, kRepeatStyles[std::min(curve.duplicateRank, 3)]));
    if (sparse && (!smoothing || curve.raw.size() < 3)) {  // a single evaluation is a point, not a line
      line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run.colour, Qt::white, 6));
    }
    line->setName(curve.sameAs.isEmpty() ? run.name
                                         : QStringLiteral("%1 (identical to %2 so far)").arg(run.name, curve.sameAs));
    bindToRun(plot(), line, run);
    drawBranchJoin(curve, all);
    if (run.visible) {
      ++drawn;
      hiddenByLogY += curve.hiddenByLogY;
    }
  }
  plot()->yAxis->setLabel(label.isEmpty() ? QStringLiteral("test metric") : label);
  if (hiddenByLogY > 0)
    notes << QStringLiteral("hides %1 point%2 ≤ 0").arg(hiddenByLogY).arg(hiddenByLogY == 1 ? "" : "s");
  notes << axisNotes(shownUnit);
  logYNote_->setFullText(notes.join(QStringLiteral("; ")));
  logYNote_->setVisible(!notes.isEmpty());
  // The slider says when it has nothing to smooth, rather than seeming to do nothing.
  const bool canSmooth = all.isEmpty() || anySmoothable;
  smoothing_->setEnabled(canSmooth);
  smoothingLabel_->setEnabled(canSmooth);
  smoothing_->setToolTip(canSmooth ? QStringLiteral("Smoothing: exponential moving average weight, as in TensorBoard")
                                   : QStringLiteral("Not smoothed: this series is an evaluation or a set value, drawn "
                                                    "as measured; smoothing applies to interval means such as the "
                                                    "training loss"));
  if (drawn == 0) {
    placeholder(plot(), plot()->axisRect(),
                model()->count() == 0 ? QStringLiteral("No run yet: pick a preset and press Start")
                : all.isEmpty()       ? QStringLiteral("No run has \"%1\" yet").arg(metric_->currentText())
                                      : QStringLiteral("Every run is hidden: click a legend entry to show it"));
  }
}

QString TrainingCurvesView::readout(QCPAxisRect*, double x, double) const {
  QStringList parts;
  const bool smoothing = smoothing_->value() > 0;
  for (const auto& curve : curves()) {
    if (!curve.run->visible || model()->grouped()) continue;
    const int i = nearestIndex(curve.x, x);
    if (i < 0) continue;
    QString part = QStringLiteral("%1 @%2: %3")
                       .arg(curve.run->name)
                       .arg(std::llround(curve.steps[i]))
                       .arg(shortNumber(curve.raw[i]));
    if (smoothing && curve.smoothable) part += QStringLiteral(" (smoothed %1)").arg(shortNumber(curve.smoothed[i]));
    parts << part;
  }
  if (model()->grouped()) parts = groupReadout(x);
  if (parts.isEmpty()) {
    if (xAxis() == XAxis::Epoch) return QStringLiteral("epoch %1").arg(x, 0, 'f', 2);
    return xAxis() == XAxis::Step || xAxis() == XAxis::LogStep ? QStringLiteral("step %1").arg(std::llround(x))
                                                               : QStringLiteral("%1 s").arg(x, 0, 'f', 1);
  }
  return parts.join(QStringLiteral("   "));
}

QString TrainingCurvesView::hoverTable(QCPAxisRect*, double x, double) const {
  QString rows;
  if (model()->grouped()) return groupHoverTable(x);
  for (const auto& curve : curves()) {
    if (!curve.run->visible) continue;
    const int i = nearestIndex(curve.x, x);
    if (i < 0) continue;
    rows += QStringLiteral(
                "<tr><td><span style='color:%1'>■</span> %2</td><td align=right>%3</td>"
                "<td align=right>%4</td><td align=right>%5</td></tr>")
                .arg(curve.run->colour.name(), curve.run->name.toHtmlEscaped())
                .arg(std::llround(curve.steps[i]))
                .arg(shortNumber(curve.smoothed[i]), shortNumber(curve.raw[i]));
  }
  if (rows.isEmpty()) return {};
  return QStringLiteral(
             "<b>%1</b><table cellspacing=4><tr><th align=left>run</th><th>step</th><th>smoothed</th>"
             "<th>value</th></tr>%2</table>")
      .arg(plot()->yAxis->label().toHtmlEscaped(), rows);
}

CsvTable TrainingCurvesView::table() const {
  // Exactly what is drawn: the visible runs, the values log y keeps (a hidden one is an empty field) and the
  // smoothing at the slider's weight.
  if (model()->grouped()) return groupTable();
  const bool byTime = xAxis() != XAxis::Step && xAxis() != XAxis::LogStep;
  QStringList columns = {QStringLiteral("run"), QStringLiteral("metric"), QStringLiteral("step")};
  if (byTime) {
    columns << (xAxis() == XAxis::WallTime ? QStringLiteral("wall_time")
                : xAxis() == XAxis::Epoch  ? QStringLiteral("epoch")
                                           : QStringLiteral("seconds_since_start"));
  }
  columns << QStringLiteral("value") << QStringLiteral("smoothed");
  CsvTable table(columns);
  for (const auto& curve : curves()) {
    if (!curve.run->visible) continue;
    for (int i = 0; i < curve.steps.size(); ++i) {
      QStringList row = {curve.run->name, curve.series, QString::number(static_cast<qint64>(curve.steps[i]))};
      if (byTime) row << roundTripNumber(curve.x[i]);
      row << roundTripNumber(curve.raw[i]) << roundTripNumber(curve.smoothed[i]);
      table.add(row);
    }
  }
  return table;
}

}  // namespace descentlab::widgets
