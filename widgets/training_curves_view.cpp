#include "widgets/training_curves_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSet>
#include <QSlider>
#include <QTextStream>

#include <cmath>

#include "core/record/metrics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

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

}  // namespace descentlab::widgets
