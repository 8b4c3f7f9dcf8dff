#include "widgets/frontier_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/record/metrics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace metric = record::metric;
namespace {

QString frontierName(const QString& taskMetric) {
  return QString::fromStdString(record::frontier_series(taskMetric.toStdString()));
}

QString percent(double share) {
  return QString::number(share * 100.0, 'g', 3) + QStringLiteral(" %");
}

// The sparsity levels of a run's frontier (its newest row of frontier_sparsity).
QVector<double> levelsOf(const RunData& run) {
  const auto it = run.vectors.constFind(QLatin1String(metric::kFrontierSparsity));
  return it == run.vectors.cend() || it->rows.isEmpty() ? QVector<double>{} : it->rows.back();
}

// The runs with frontier rows of `taskMetric`.
QVector<const RunData*> frontierRuns(const LabModel& model, const QString& taskMetric) {
  QVector<const RunData*> runs;
  for (auto* run : model.runs()) {
    const auto it = run->vectors.constFind(frontierName(taskMetric));
    if (it != run->vectors.cend() && !it->rows.isEmpty() && !levelsOf(*run).isEmpty()) runs.push_back(run);
  }
  return runs;
}

// The level at which the shown runs' newest frontiers differ most, relative to their mean (the highest such level
// on a tie); NaN with fewer than two shown runs. At 90 % a tour's runs had both collapsed and their curves crossed,
// so the plot over time said nothing about the 50-80 % where HORST's lead is (issue 33).
double levelOfWidestSpread(const QVector<const RunData*>& runs, const QString& series, const QVector<double>& levels) {
  double best = qQNaN();
  double widest = -1;
  for (double level : levels) {
    QVector<double> values;
    for (auto* run : runs) {
      if (!run->visible) continue;
      const QVector<double> x = levelsOf(*run);
      const auto at = std::find_if(x.begin(), x.end(), [&](double known) { return std::abs(known - level) < 1e-9; });
      const auto track = run->vectors.constFind(series);
      if (track == run->vectors.cend() || track->rows.isEmpty()) continue;
      const auto& newest = track->rows.back();
      const auto column = at - x.begin();
      if (at != x.end() && column < newest.size() && std::isfinite(newest[column])) values.push_back(newest[column]);
    }
    if (values.size() < 2) continue;
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
    const double spread = std::abs(mean) > 0 ? (*high - *low) / std::abs(mean) : 0.0;
    if (spread >= widest) {
      widest = spread;
      best = level;
    }
  }
  return best;
}

// Why no frontier is drawn: no ViT or GPT run, one that has not reached its first frontier, or one with it off.
QString noFrontierReason(const LabModel& model) {
  QStringList waiting, off;
  QString interval;
  for (auto* run : model.runs()) {
    if (run->kind != RunKind::Sparse) continue;
    const QString every = run->config.value(QStringLiteral("sparsity.frontier_interval"));
    (every == QStringLiteral("0") ? off : waiting) << run->name;
    if (every != QStringLiteral("0")) interval = every;
  }
  const auto named = [](const QStringList& runs) {
    return runs.size() == 1 ? runs.front() : QStringLiteral("%1 runs").arg(runs.size());
  };
  QString reason = QStringLiteral("No ViT or GPT run open\n(presets vit-* and gpt-*, or Help > Tours)");
  if (!waiting.isEmpty()) {
    reason = QStringLiteral("No frontier yet: %1\n(every %2 steps and at the last step)")
                 .arg(named(waiting), interval.isEmpty() ? QStringLiteral("N") : interval);
  } else if (!off.isEmpty()) {
    reason = QStringLiteral("The live frontier is off: %1\n(sparsity.frontier_interval = 0)").arg(named(off));
  }
  return reason;
}

// The sparsities to follow over time: every level any of `runs` has, in order.
QVector<double> frontierLevels(const QVector<const RunData*>& runs) {
  QVector<double> levels;
  for (auto* run : runs) {
    for (double level : levelsOf(*run)) {
      if (std::none_of(levels.begin(), levels.end(), [&](double known) { return std::abs(known - level) < 1e-9; }))
        levels.push_back(level);
    }
  }
  std::sort(levels.begin(), levels.end());
  return levels;
}

// How many of the older evaluations are drawn behind the newest (evenly spread over the run).
constexpr int kHistoryCurves = 12;

}  // namespace

FrontierView::FrontierView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Sparsity frontier"), parent) {
  history_ = new QCheckBox(QStringLiteral("earlier evaluations"), this);
  history_->setChecked(true);
  history_->setToolTip(QStringLiteral(
      "Draw earlier evaluations of each run's frontier behind the newest, fading with age: how pruning-ready the "
      "model became while it trained"));
  sparsity_ = new QComboBox(this);
  sparsity_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  sparsity_->setToolTip(QStringLiteral("The sparsity the lower plot follows over the training steps"));
  tools()->addWidget(history_);
  tools()->addWidget(new QLabel(QStringLiteral("over time at"), this));
  tools()->addWidget(sparsity_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("sparsity pruned to (share of prunable weights)"),
                QStringLiteral("accuracy"));
  overTime_ = new QCPAxisRect(plot());
  styleAxisRect(overTime_, QStringLiteral("step"), QStringLiteral("accuracy"));
  auto* margins = new QCPMarginGroup(plot());
  plot()->axisRect(0)->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  overTime_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  setupLegend(plot());
  // The chosen sparsity over time gives its room to the frontier itself in a short view (a tour at 1280x800).
  setLowerRow(overTime_, 3.0, 2.0);
  connect(history_, &QCheckBox::toggled, this, [this] { refresh(true); });
  connect(sparsity_, &QComboBox::currentIndexChanged, this, [this] {
    sparsityChosen_ = true;  // filling the list blocks this signal: only a choice gets here
    refresh(true);
  });
}

double FrontierView::chosenSparsity() const {
  bool ok = false;
  const double value = sparsity_->currentData().toDouble(&ok);
  return ok ? value : qQNaN();
}

bool FrontierView::setChosenSparsity(double sparsity) {
  refresh(true);
  for (int i = 0; i < sparsity_->count(); ++i) {
    if (std::abs(sparsity_->itemData(i).toDouble() - sparsity) < 1e-9) {
      sparsityChosen_ = true;  // also when it is already the one shown
      sparsity_->setCurrentIndex(i);
      return true;
    }
  }
  return false;
}

void FrontierView::rebuild() {
  plot()->clearPlottables();
  plot()->clearItems();
  // The metric to draw: the focus run's when it has a frontier, else the first run's that has one.
  metric_.clear();
  const RunData* focus = model()->focusRun();
  for (auto* run : model()->runs()) {
    if (!frontierRuns(*model(), run->metric).isEmpty() && (metric_.isEmpty() || run == focus)) metric_ = run->metric;
  }
  const QVector<const RunData*> runs = metric_.isEmpty() ? QVector<const RunData*>{} : frontierRuns(*model(), metric_);
  if (runs.isEmpty()) {
    // The real reason: no ViT or GPT run, one that has not reached its first frontier, or one with it off.
    const QString reason = noFrontierReason(*model());
    // The axes name the metric the waiting runs will draw (perplexity for GPT runs), not always accuracy.
    QString waitingMetric = QStringLiteral("accuracy");
    const RunData* sparse = focus && focus->kind == RunKind::Sparse ? focus : nullptr;
    for (auto* run : model()->runs()) {
      if (!sparse && run->kind == RunKind::Sparse) sparse = run;
    }
    if (sparse && !sparse->metric.isEmpty()) waitingMetric = sparse->metric;
    plot()->axisRect(0)->axis(QCPAxis::atLeft)->setLabel(waitingMetric);
    overTime_->axis(QCPAxis::atLeft)->setLabel(waitingMetric);
    placeholder(plot(), plot()->axisRect(0), reason);
    keepChoice(sparsity_, {}, QString());
    return;
  }

  // The sparsities to follow over time: every level any drawn run has, in order.
  const QVector<double> levels = frontierLevels(runs);
  QStringList items;
  for (double level : levels) items << QString::number(level, 'g', 6);
  const QString name = frontierName(metric_);
  const double widest = levelOfWidestSpread(runs, name, levels);
  const QString fallback = std::isfinite(widest) ? QString::number(widest, 'g', 6) : items.last();
  keepChoice(sparsity_, items, fallback);
  if (!sparsityChosen_) {
    const QSignalBlocker blocker(sparsity_);
    selectData(sparsity_, fallback);
  }
  for (int i = 0; i < sparsity_->count(); ++i) sparsity_->setItemText(i, percent(sparsity_->itemData(i).toDouble()));
  const double chosen = chosenSparsity();
  sparsity_->setEnabled(lowerRowShown());
  sparsity_->setToolTip(lowerRowShown()
                            ? QStringLiteral("The sparsity the lower plot follows over the training steps")
                            : QStringLiteral("The view is too short for the plot over time: make it taller"));

  // Short axis titles: the dock is often small (the series' long names are in docs/run-file.md and the tooltips).
  overTime_->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("at %1").arg(percent(chosen)));
  plot()->axisRect(0)->axis(QCPAxis::atLeft)->setLabel(metric_);

  if (model()->grouped()) {
    drawGroups(chosen);
    plot()->axisRect(0)->axis(QCPAxis::atBottom)->setRange(levels.front() - 0.02, levels.back() + 0.02);
    return;
  }
  for (auto* run : runs) drawRunFrontier(*run, name, chosen);
  plot()->axisRect(0)->axis(QCPAxis::atBottom)->setRange(levels.front() - 0.02, levels.back() + 0.02);
}

void FrontierView::drawRunFrontier(const RunData& run, const QString& series, double chosen) {
  const auto& track = run.vectors[series];
  const QVector<double> x = levelsOf(run);
  const int rows = static_cast<int>(track.rows.size());
  // Earlier evaluations behind, light (old) to darker (recent), at most kHistoryCurves of them.
  if (history_->isChecked() && run.visible && rows > 1) {
    const int stride = std::max(1, (rows - 1 + kHistoryCurves - 1) / kHistoryCurves);
    for (int row = (rows - 2) % stride; row + 1 < rows; row += stride) {
      if (track.rows[row].size() != x.size()) continue;
      auto* graph =
          plot()->addGraph(plot()->axisRect(0)->axis(QCPAxis::atBottom), plot()->axisRect(0)->axis(QCPAxis::atLeft));
      graph->setData(x, track.rows[row], true);
      const double age = 1.0 - static_cast<double>(row) / (rows - 1);
      graph->setPen(QPen(towardsWhite(run.colour, 0.35 + 0.55 * age), 1.0));
      graph->removeFromLegend();
    }
  }
  auto* newest =
      plot()->addGraph(plot()->axisRect(0)->axis(QCPAxis::atBottom), plot()->axisRect(0)->axis(QCPAxis::atLeft));
  newest->setData(x, track.rows.back(), true);
  newest->setPen(QPen(run.colour, 3.0));
  newest->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run.colour, Qt::white, 6));
  newest->setName(run.name);
  bindToRun(plot(), newest, run);

  // The chosen sparsity over time.
  const int column = static_cast<int>(
      std::find_if(x.begin(), x.end(), [&](double level) { return std::abs(level - chosen) < 1e-9; }) - x.begin());
  if (column >= x.size() || !lowerRowShown()) return;
  QVector<double> values;
  for (const auto& row : track.rows) values.push_back(column < row.size() ? row[column] : qQNaN());
  auto* line = plot()->addGraph(overTime_->axis(QCPAxis::atBottom), overTime_->axis(QCPAxis::atLeft));
  line->setData(track.steps, values, true);
  line->setPen(QPen(run.colour, 2.0));
  line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, run.colour, run.colour, 5));
  line->removeFromLegend();
  line->setVisible(run.visible);
}

QString FrontierView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == overTime_) return QStringLiteral("step %1, %2 %3").arg(std::llround(x)).arg(metric_).arg(y, 0, 'g', 4);
  return QStringLiteral("sparsity %1, %2 %3").arg(percent(x), metric_).arg(y, 0, 'g', 4);
}

QVector<GroupBand> FrontierView::groupBands() const {
  QVector<GroupBand> bands;
  if (metric_.isEmpty()) return bands;
  const QString name = frontierName(metric_);
  for (const auto& group : model()->groups()) {
    QVector<const VectorTrack*> members;
    QVector<double> levels;
    for (auto* run : group.members) {
      const auto it = run->vectors.constFind(name);
      if (it == run->vectors.cend() || it->rows.isEmpty() || levelsOf(*run).isEmpty()) continue;
      if (levels.isEmpty()) levels = levelsOf(*run);
      if (levelsOf(*run) != levels) continue;  // other levels: not comparable column by column
      members.push_back(&*it);
    }
    if (members.isEmpty()) continue;
    GroupBand band = vectorBand(members, model()->bandKind());
    band.group = &group;
    band.series = name;
    band.columns = levels;
    bands.push_back(band);
  }
  return bands;
}

void FrontierView::drawGroups(double chosen) {
  QStringList shortened;
  for (const auto& band : groupBands()) {
    if (band.steps.isEmpty()) continue;
    const int width = band.width;
    const int last = static_cast<int>(band.steps.size()) - 1;
    QCPAxis* levelAxis = plot()->axisRect(0)->axis(QCPAxis::atBottom);
    QCPAxis* valueAxis = plot()->axisRect(0)->axis(QCPAxis::atLeft);
    bindToGroup(addBand(plot(), levelAxis, valueAxis, band.columns, band.mean.mid(last * width, width),
                        band.low.mid(last * width, width), band.high.mid(last * width, width), band.group->colour,
                        QStringLiteral("%1, step %2").arg(band.group->label).arg(band.steps.back(), 0, 'f', 0)),
                *band.group);
    if (band.shortened) shortened << band.group->label;
    const auto column =
        std::find_if(band.columns.begin(), band.columns.end(), [&](double l) { return std::abs(l - chosen) < 1e-9; }) -
        band.columns.begin();
    if (column >= band.columns.size() || !lowerRowShown()) continue;
    QVector<double> mean, low, high;
    for (int row = 0; row <= last; ++row) {
      mean.push_back(band.mean[row * width + column]);
      low.push_back(band.low[row * width + column]);
      high.push_back(band.high[row * width + column]);
    }
    addBand(plot(), overTime_->axis(QCPAxis::atBottom), overTime_->axis(QCPAxis::atLeft), band.steps, mean, low, high,
            band.group->colour, QString())
        ->removeFromLegend();
  }
  QString note = QStringLiteral("groups: mean, %1 band").arg(bandKindName(model()->bandKind()));
  if (!shortened.isEmpty()) note += QStringLiteral("\nat the last step all members reached");
  // Bottom left: frontiers start high at low sparsity and fall at the right, so that corner is the empty one. In a
  // squeezed view (a 1280x800 window) it would cover the curves: the legend's "(3 seeds)" says it is a group.
  if (plot()->axisRect(0)->rect().height() >= 110) {
    cornerNote(plot(), plot()->axisRect(0), 0.01, 0.98, Qt::AlignBottom | Qt::AlignLeft, note);
  }
}

CsvTable FrontierView::table() const {
  if (model()->grouped()) {
    CsvTable table(
        CsvTable::bandColumns({QStringLiteral("metric"), QStringLiteral("step"), QStringLiteral("sparsity")}));
    for (const auto& band : groupBands()) {
      table.addBand(band, {metric_}, [&band](int row, int column) {
        return QStringList{QString::number(static_cast<qint64>(band.steps[row])),
                           roundTripNumber(band.columns.value(column))};
      });
    }
    return table;
  }
  CsvTable table({QStringLiteral("run"), QStringLiteral("metric"), QStringLiteral("step"), QStringLiteral("sparsity"),
                  QStringLiteral("achieved_sparsity"), QStringLiteral("value")});
  for (auto* run : model()->runs()) {
    if (!run->visible) continue;  // as drawn: a run hidden from the plots is not exported
    for (const QString& taskMetric : {QStringLiteral("accuracy"), QStringLiteral("perplexity")}) {
      const auto it = run->vectors.constFind(frontierName(taskMetric));
      const auto levels = run->vectors.constFind(QLatin1String(metric::kFrontierSparsity));
      const auto achieved = run->vectors.constFind(QLatin1String(metric::kFrontierAchieved));
      if (it == run->vectors.cend() || levels == run->vectors.cend()) continue;
      for (int row = 0; row < it->rows.size() && row < levels->rows.size(); ++row) {
        for (int column = 0; column < it->rows[row].size() && column < levels->rows[row].size(); ++column) {
          const bool hasAchieved =
              achieved != run->vectors.cend() && row < achieved->rows.size() && column < achieved->rows[row].size();
          table.add({run->name, taskMetric, QString::number(static_cast<qint64>(it->steps[row])),
                     QString::number(levels->rows[row][column], 'g', 6),
                     hasAchieved ? QString::number(achieved->rows[row][column], 'g', 6) : QString(),
                     QString::number(it->rows[row][column], 'g', 9)});
        }
      }
    }
  }
  return table;
}

}  // namespace descentlab::widgets
