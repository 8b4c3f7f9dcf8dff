#include "widgets/hyperparameter_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {
namespace {

const QStringList kSeedKeys = {QStringLiteral("train.seed"), QStringLiteral("data.split_seed")};

// A key's values over the runs drawn: numbers when every one reads as a number, else the words in order, each run
// placed at its word's index.
struct Axis {
  QString key;
  bool numeric = true;
  QStringList words;
  QVector<double> values;  // per run drawn (NaN where the run lacks the key)
  double low = 0, high = 0;
};

Axis axisOf(const QString& key, const QVector<const StudyRunRow*>& runs, const QString& metric) {
  Axis axis;
  axis.key = key;
  QStringList texts;
  for (const auto* run : runs) {
    if (key == metric) {
      texts << (run->finals.contains(metric) ? QString::number(run->finals.value(metric), 'g', 17) : QString());
    } else {
      texts << run->config.value(key);
    }
  }
  for (const auto& text : texts) {
    bool ok = text.isEmpty();
    if (!text.isEmpty()) text.toDouble(&ok);
    axis.numeric = axis.numeric && ok;
  }
  if (!axis.numeric) {
    for (const auto& text : texts) {
      if (!text.isEmpty() && !axis.words.contains(text)) axis.words << text;
    }
    axis.words.sort();
  }
  for (const auto& text : texts) {
    if (text.isEmpty()) {
      axis.values << qQNaN();
    } else {
      axis.values << (axis.numeric ? text.toDouble() : static_cast<double>(axis.words.indexOf(text)));
    }
  }
  axis.low = std::numeric_limits<double>::infinity();
  axis.high = -axis.low;
  for (double value : axis.values) {
    if (!std::isfinite(value)) continue;
    axis.low = std::min(axis.low, value);
    axis.high = std::max(axis.high, value);
  }
  return axis;
}

QString shortKey(const QString& key) {
  return key.section(QLatin1Char('.'), -1);
}

}  // namespace

HyperparameterView::HyperparameterView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("study-hyperparameters"));
  mode_ = new QComboBox(this);
  mode_->addItem(QStringLiteral("metric against a key"), static_cast<int>(Mode::MetricAgainstKey));
  mode_->addItem(QStringLiteral("parallel coordinates"), static_cast<int>(Mode::ParallelCoordinates));
  key_ = new QComboBox(this);
  key_->setObjectName(QStringLiteral("hyperparameter-key"));
  key_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  key_->setToolTip(QStringLiteral("The config key on the x axis"));
  logX_ = new QCheckBox(QStringLiteral("log x"), this);
  logX_->setToolTip(QStringLiteral("On by itself for rates and for keys whose values span two decades or more"));
  parallel_ = new QLineEdit(this);
  parallel_->setPlaceholderText(QStringLiteral("Axes: every differing key but the seeds"));
  parallel_->setToolTip(QStringLiteral("Comma-separated config keys, one axis each; the metric is the last axis"));
  plot_ = new QCustomPlot(this);
  plot_->setMinimumHeight(120);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  // The legend in its own column right of the plot: a grid of 3 x 3 groups would cover every point inside it.
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  plot_->legend->setVisible(true);
  plot_->legend->setFont(small);
  plot_->legend->setRowSpacing(-3);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->addElement(0, 1, plot_->legend);
  plot_->plotLayout()->setColumnStretchFactor(0, 3);
  plot_->plotLayout()->setColumnStretchFactor(1, 1);
  plot_->legend->setMaximumSize(320, QWIDGETSIZE_MAX);
  auto* tools = new QHBoxLayout;
  tools->setContentsMargins(0, 0, 0, 0);
  tools->addWidget(mode_);
  tools->addWidget(key_);
  tools->addWidget(logX_);
  tools->addWidget(parallel_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(tools);
  layout->addWidget(plot_, 1);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(key_, &QComboBox::currentIndexChanged, this, [this] {
    logXChosen_ = false;
    redraw();
  });
  connect(logX_, &QCheckBox::clicked, this, [this] {
    logXChosen_ = true;
    redraw();
  });
  connect(parallel_, &QLineEdit::editingFinished, this, [this] {
    QStringList keys;
    for (const auto& key : parallel_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) keys << key.trimmed();
    setParallelKeys(keys);
  });
  redraw();
}

void HyperparameterView::setStudy(const QVector<StudyRunRow>& runs, const QVector<bool>& kept,
                                  const QVector<StudyGroupRow>& groups, const QStringList& varyingKeys,
                                  const QString& metric) {
  runs_ = runs;
  kept_ = kept;
  groups_ = groups;
  varyingKeys_ = varyingKeys;
  metric_ = metric;
  // The x key: kept while it still varies, else the first varying key that is not a seed.
  QStringList choices;
  for (const auto& key : varyingKeys) {
    if (!kSeedKeys.contains(key)) choices << key;
  }
  for (const auto& key : varyingKeys) {
    if (kSeedKeys.contains(key)) choices << key;
  }
  keepChoice(key_, choices, choices.value(0));
  redraw();
}

void HyperparameterView::setMode(Mode mode) {
  mode_->setCurrentIndex(mode_->findData(static_cast<int>(mode)));
}
HyperparameterView::Mode HyperparameterView::mode() const {
  return static_cast<Mode>(mode_->currentData().toInt());
}
void HyperparameterView::setKey(const QString& key) {
  selectData(key_, key);
}
QString HyperparameterView::key() const {
  return key_->currentData().toString();
}
bool HyperparameterView::logX() const {
  return logX_->isChecked();
}
void HyperparameterView::setLogX(bool on) {
  logX_->setChecked(on);
  logXChosen_ = true;
  redraw();
}
void HyperparameterView::setParallelKeys(const QStringList& keys) {
  parallelKeys_ = keys;
  const QSignalBlocker quiet(parallel_);
  parallel_->setText(keys.join(QStringLiteral(", ")));
  redraw();
}

void HyperparameterView::redraw() {
  plot_->clearPlottables();
  plot_->clearItems();
  points_.clear();
  lines_.clear();
  parallelAxes_.clear();
  const bool parallel = mode() == Mode::ParallelCoordinates;
  key_->setVisible(!parallel);
  logX_->setVisible(!parallel);
  parallel_->setVisible(parallel);
  if (parallel) {
    drawParallelCoordinates();
  } else {
    drawMetricAgainstKey();
  }
  plot_->replot();
}

QVector<const StudyRunRow*> HyperparameterView::drawnRuns(QVector<int>& groupOf) const {
  // The runs in a group (those the filter keeps) that have the metric, group by group.
  QVector<const StudyRunRow*> runs;
  groupOf.clear();
  for (int g = 0; g < groups_.size(); ++g) {
    for (int member : groups_[g].members) {
      if (member < 0 || member >= runs_.size() || !runs_[member].finals.contains(metric_)) continue;
      runs << &runs_[member];
      groupOf << g;
    }
  }
  return runs;
}

void HyperparameterView::drawMetricAgainstKey() {
  const QString key = this->key();
  QVector<int> groupOf;
  const QVector<const StudyRunRow*> runs = drawnRuns(groupOf);
  plot_->yAxis->setLabel(QStringLiteral("final ") + metric_);
  plot_->xAxis->setLabel(key);
  if (key.isEmpty() || runs.isEmpty()) {
    plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    placeholder(
        plot_, plot_->axisRect(),
        runs_.isEmpty() ? QStringLiteral("No study open") : QStringLiteral("No config key differs between the runs"));
    return;
  }
  const Axis axis = axisOf(key, runs, metric_);
  const QString lower = key.toLower();
  const bool rate = lower.endsWith(QStringLiteral("lr")) || lower.contains(QStringLiteral("learning_rate")) ||
                    lower.contains(QStringLiteral("rate"));
  const bool canLog = axis.numeric && axis.low > 0;
  if (!logXChosen_) {
    const QSignalBlocker quiet(logX_);
    logX_->setChecked(canLog && (rate || axis.high / axis.low >= 100.0));
  }
  logX_->setEnabled(canLog);
  const bool log = canLog && logX_->isChecked();
  QVector<QCPGraph*> graphs(groups_.size(), nullptr);
  for (int i = 0; i < runs.size(); ++i) {
    if (!std::isfinite(axis.values[i])) continue;
    const int g = groupOf[i];
    if (!graphs[g]) {
      const QColor colour = runPalette().at(g % runPalette().size());
      graphs[g] = plot_->addGraph();
      graphs[g]->setLineStyle(QCPGraph::lsNone);
      graphs[g]->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 8));
      graphs[g]->setName(groups_[g].label);
    }
    graphs[g]->addData(axis.values[i], runs[i]->finals.value(metric_));
    points_.push_back({runs[i]->name, g, axis.values[i], runs[i]->finals.value(metric_)});
  }
  if (axis.numeric) {
    plot_->xAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot_->xAxis->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : distinctLabelTicker());
  } else {
    plot_->xAxis->setScaleType(QCPAxis::stLinear);
    QSharedPointer<QCPAxisTickerText> words(new QCPAxisTickerText);
    for (int w = 0; w < axis.words.size(); ++w) words->addTick(w, axis.words[w]);
    plot_->xAxis->setTicker(words);
  }
  plot_->rescaleAxes();
  // A margin around the points: a log axis by a factor, a linear one by a share of the span.
  const QCPRange x = plot_->xAxis->range();
  if (log) {
    plot_->xAxis->setRange(x.lower / 1.5, x.upper * 1.5);
    fitLogTicks(plot_->xAxis);
  } else {
    const double pad = x.size() > 0 ? x.size() * 0.08 : 0.5;
    plot_->xAxis->setRange(x.lower - pad, x.upper + pad);
  }
  const QCPRange y = plot_->yAxis->range();
  const double padY = y.size() > 0 ? y.size() * 0.1 : std::max(1e-3, std::abs(y.lower) * 0.01);
  plot_->yAxis->setRange(y.lower - padY, y.upper + padY);
  fitYAxisToHeight();
}

void HyperparameterView::fitYAxisToHeight() {
  // In the Study dock at 1280x800 the plot is about 90 px tall: seven tick labels ran together and the axis label
  // was cut. As many ticks as 28 px each allow, and the label shortened to the axis' height.
  const int height = std::max(plot_->axisRect()->height(), plot_->height() - 70);
  plot_->yAxis->ticker()->setTickCount(std::clamp(height / 28, 2, 6));
  const QFontMetrics metrics(plot_->yAxis->labelFont());
  plot_->yAxis->setLabel(metrics.elidedText(QStringLiteral("final ") + metric_, Qt::ElideMiddle, std::max(height, 40)));
}

void HyperparameterView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (mode() == Mode::MetricAgainstKey && !points_.isEmpty()) {
    fitYAxisToHeight();
    plot_->replot(QCustomPlot::rpQueuedReplot);
  }
}

void HyperparameterView::drawParallelCoordinates() {
  QStringList keys = parallelKeys_;
  if (keys.isEmpty()) {
    for (const auto& key : varyingKeys_) {
      if (!kSeedKeys.contains(key)) keys << key;
    }
  }
  QVector<int> groupOf;
  const QVector<const StudyRunRow*> runs = drawnRuns(groupOf);
  parallelAxes_ = keys;
  parallelAxes_ << metric_;
  plot_->xAxis->setScaleType(QCPAxis::stLinear);
  plot_->xAxis->setLabel(QString());
  plot_->yAxis->setLabel(QStringLiteral("each axis from its least to its largest value"));
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  for (int a = 0; a < parallelAxes_.size(); ++a) names->addTick(a, shortKey(parallelAxes_[a]));
  plot_->xAxis->setTicker(names);
  plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  plot_->xAxis->setRange(-0.3, std::max(1, static_cast<int>(parallelAxes_.size()) - 1) + 0.3);
  plot_->yAxis->setRange(-0.12, 1.12);
  if (runs.isEmpty() || parallelAxes_.size() < 2) {
    placeholder(plot_, plot_->axisRect(), QStringLiteral("No run with %1 and a differing key").arg(metric_));
    return;
  }
  QVector<Axis> axes;
  for (const auto& key : parallelAxes_) axes << axisOf(key, runs, metric_);
  lines_.resize(runs.size());
  QVector<bool> named(groups_.size(), false);
  for (int i = 0; i < runs.size(); ++i) {
    QVector<double> x, y;
    for (int a = 0; a < axes.size(); ++a) {
      const Axis& axis = axes[a];
      const double value = axis.values[i];
      // Keys spanning two decades or more (rates) are scaled by their logarithm, as the log x of the other mode.
      const bool log = axis.numeric && axis.low > 0 && axis.high / axis.low >= 100.0;
      const auto place = [log](double v) { return log ? std::log10(v) : v; };
      const double scaled = !std::isfinite(value) ? qQNaN()
                            : axis.high > axis.low
                                ? (place(value) - place(axis.low)) / (place(axis.high) - place(axis.low))
                                : 0.5;
      lines_[i] << scaled;
      x << a;
      y << scaled;
    }
    const int g = groupOf[i];
    QColor colour = runPalette().at(g % runPalette().size());
    colour.setAlpha(170);
    auto* curve = new QCPCurve(plot_->xAxis, plot_->yAxis);
    curve->setData(x, y);
    curve->setPen(QPen(colour, 1.6));
    curve->setName(groups_[g].label);
    if (named[g]) curve->removeFromLegend();
    named[g] = true;
  }
  // Each axis: a vertical line with its least value below and its largest above.
  for (int a = 0; a < axes.size(); ++a) {
    auto* line = new QCPItemLine(plot_);
    line->start->setCoords(a, 0);
    line->end->setCoords(a, 1);
    line->setPen(QPen(QColor(120, 120, 120), 1));
    const Axis& axis = axes[a];
    const auto label = [&](double value) {
      if (!std::isfinite(value)) return QStringLiteral("–");
      return axis.numeric ? QString::number(value, 'g', 4) : axis.words.value(static_cast<int>(value));
    };
    for (const auto& [at, value] : {std::pair<double, double>{1.06, axis.high}, {-0.06, axis.low}}) {
      auto* text = new QCPItemText(plot_);
      text->position->setCoords(a, at);
      text->setText(label(value));
      text->setColor(QColor(60, 60, 60));
    }
  }
}

}  // namespace descentlab::widgets
