#include "widgets/robustness_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QTextStream>

#include <cmath>

#include "core/record/noise.h"
#include "core/record/sweep_statistics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

RobustnessView::RobustnessView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Robustness"), parent) {
  noise_ = new QComboBox(this);
  noise_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  noise_->setToolTip(QStringLiteral("Which stored sweeps to show"));
  sweepNoise_ = new QComboBox(this);
  sweepNoise_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  sweepNoise_->setToolTip(
      QStringLiteral("The noise of the next sweep: text runs take gaussian or uniform noise on the embeddings, or "
                     "discrete token substitution; video runs take noise on the input clip"));
  gamma_ = new QLineEdit(QStringLiteral("0:2:0.25"), this);
  gamma_->setToolTip(QStringLiteral("Noise strengths γ: start:stop:step, or a list a,b,c"));
  gamma_->setMaximumWidth(90);
  seeds_ = new QSpinBox(this);
  seeds_->setRange(1, 20);
  seeds_->setValue(3);
  seeds_->setToolTip(QStringLiteral("Noise seeds per strength: the band is ± one standard deviation over them"));
  run_ = new QPushButton(QStringLiteral("Sweep selected run"), this);
  run_->setToolTip(
      QStringLiteral("Evaluate the selected run's latest checkpoint under input noise of each strength γ, in the "
                     "background; progress shows in the runs table, and the result is stored in its run file"));
  cancel_ = new QPushButton(QStringLiteral("Cancel sweep"), this);
  cancel_->setToolTip(QStringLiteral("Stop the sweep after its current cell; the run file stays as it was"));
  cancel_->hide();
  tools()->addWidget(new QLabel(QStringLiteral("show"), this));
  tools()->addWidget(noise_);
  tools()->addWidget(new QLabel(QStringLiteral("sweep"), this));
  tools()->addWidget(sweepNoise_);
  tools()->addWidget(new QLabel(QStringLiteral("γ"), this));
  tools()->addWidget(gamma_);
  tools()->addWidget(new QLabel(QStringLiteral("seeds"), this));
  tools()->addWidget(seeds_);
  tools()->addWidget(run_);
  tools()->addWidget(cancel_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("noise strength γ"), QStringLiteral("test metric"));
  setupLegend(plot());
  connect(noise_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
  connect(run_, &QPushButton::clicked, this, [this] {
    if (auto* focus = this->model()->focusRun()) emit sweepRequested(focus->id, sweepChoice());
  });
  connect(cancel_, &QPushButton::clicked, this, &RobustnessView::cancelSweepRequested);
  updateNoiseChoices();
}

SweepChoice RobustnessView::sweepChoice() const {
  SweepChoice choice;
  choice.noise = sweepNoise_->currentData().toString();
  choice.gamma = gamma_->text().trimmed();
  choice.seeds = seeds_->value();
  return choice;
}

void RobustnessView::setSweepChoice(const SweepChoice& choice) {
  updateNoiseChoices();
  selectData(sweepNoise_, choice.noise);
  gamma_->setText(choice.gamma);
  seeds_->setValue(choice.seeds);
}

void RobustnessView::updateNoiseChoices() {
  // The noises the selected run can take: a video run only video noise, a text run the other three.
  const RunData* focus = model()->focusRun();
  const QStringList kinds = noiseKindsOf(focus);
  keepChoice(sweepNoise_, kinds, kinds.front());
  // A watched run is another process's to write: a sweep (which writes the file) waits until that process lets go.
  const bool canSweep = focus && sweepable(focus) && !focus->isActive() && focus->state != RunState::Watching;
  if (!cancel_->isVisible()) run_->setEnabled(canSweep);
  run_->setToolTip(canSweep ? QStringLiteral("Evaluate %1's latest checkpoint under input noise of each strength γ, "
                                             "in the background; progress shows in the runs table, and the result "
                                             "is stored in its run file")
                                  .arg(focus->name)
                   : !sweepable(focus)
                       ? QStringLiteral("Select a layerwise-descent run (text-*, video-*) or a run of your own model "
                                        "to sweep")
                       : QStringLiteral("%1 is still training%2: sweep it once it has finished or stopped")
                             .arg(focus->name, focus->state == RunState::Watching
                                                   ? QStringLiteral(" in another process")
                                                   : QString()));
}

void RobustnessView::setSweepRunning(bool running) {
  cancel_->setVisible(running);
  cancel_->setEnabled(running);
  run_->setEnabled(!running);
  run_->setText(running ? QStringLiteral("Sweeping…") : QStringLiteral("Sweep selected run"));
  if (!running) updateNoiseChoices();
}

void RobustnessView::rebuild() {
  updateNoiseChoices();
  QSet<QString> names;
  for (auto* run : model()->runs()) {
    for (auto it = run->sweeps.cbegin(); it != run->sweeps.cend(); ++it) {
      if (!it->gamma.isEmpty()) names.insert(it.key());
    }
  }
  QStringList sorted(names.begin(), names.end());
  sorted.sort();
  keepChoice(noise_, sorted, QString::fromStdString(record::default_noise(/*video=*/false)));
  const QString name = noise_->currentData().toString();
  plot()->clearPlottables();
  plot()->clearItems();
  int drawn = 0;
  QString metric;
  if (model()->grouped()) {
    // Each group: the mean over its members of each member's mean over noise seeds, with the band across members.
    for (const auto& band : groupBands()) {
      bindToGroup(addBand(plot(), plot()->xAxis, plot()->yAxis, band.steps, band.mean, band.low, band.high,
                          band.group->colour, band.group->label),
                  *band.group);
      metric = band.series;
      ++drawn;
    }
  }
  for (auto* run : model()->grouped() ? QVector<const RunData*>() : model()->runs()) {
    const auto it = run->sweeps.constFind(name);
    if (it == run->sweeps.cend() || it->gamma.isEmpty() || it->seeds < 1) continue;
    metric = it->metric;
    QVector<double> mean, low, high;
    for (int g = 0; g < it->gamma.size(); ++g) {
      // The same statistics as `descentlab-cli sweep` and `compare` (core/record/sweep_statistics.h).
      const auto statistics =
          record::seed_statistics(it->values.constData() + g * it->seeds, static_cast<size_t>(it->seeds));
      mean.push_back(statistics.mean);
      low.push_back(statistics.mean - statistics.std);
      high.push_back(statistics.mean + statistics.std);
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
    // A marker at each γ while they stand apart; a fine grid (a hundred γ) is drawn as a line.
    if (it->gamma.size() <= 40) {
      line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    }
    line->setName(QStringLiteral("%1 (%2 seeds)").arg(run->name).arg(it->seeds));
    bindToRun(plot(), line, *run);
    for (auto* part : {lower, upper}) part->setVisible(run->visible);
    drawn += run->visible ? 1 : 0;
  }
  plot()->yAxis->setLabel(metric.isEmpty() ? QStringLiteral("test metric") : QStringLiteral("test ") + metric);
  if (drawn == 0) {
    placeholder(plot(), plot()->axisRect(),
                QStringLiteral("No robustness sweep yet\n(select a finished layerwise run or a run of your own model,\n"
                               "press \"Sweep selected run\")"));
  }
}

QVector<GroupBand> RobustnessView::groupBands() const {
  QVector<GroupBand> bands;
  const QString name = noise_->currentData().toString();
  for (const auto& group : model()->groups()) {
    QVector<ScalarTrack> means;  // per member: its mean over noise seeds at each γ ("steps" are the γ)
    QString metric;
    for (auto* run : group.members) {
      const auto it = run->sweeps.constFind(name);
      if (it == run->sweeps.cend() || it->gamma.isEmpty() || it->seeds < 1) continue;
      ScalarTrack track;
      track.steps = it->gamma;
      for (int g = 0; g < it->gamma.size(); ++g) {
        track.values.push_back(
            record::seed_statistics(it->values.constData() + g * it->seeds, static_cast<size_t>(it->seeds)).mean);
      }
      means.push_back(track);
      metric = it->metric;
    }
    if (means.isEmpty()) continue;
    QVector<const ScalarTrack*> members;
    for (const auto& track : means) members.push_back(&track);
    GroupBand band = scalarBand(members, model()->bandKind());
    band.group = &group;
    band.series = metric;
    bands.push_back(band);
  }
  return bands;
}

CsvTable RobustnessView::table() const {
  if (model()->grouped()) {
    CsvTable table(CsvTable::bandColumns({QStringLiteral("noise"), QStringLiteral("metric"), QStringLiteral("gamma")}));
    for (const auto& band : groupBands()) {
      table.addBand(band, {noise_->currentData().toString(), band.series},
                    [&band](int row, int) { return QStringList{roundTripNumber(band.steps[row])}; });
    }
    return table;
  }
  CsvTable table({QStringLiteral("run"), QStringLiteral("noise"), QStringLiteral("metric"), QStringLiteral("gamma"),
                  QStringLiteral("seed"), QStringLiteral("value")});
  for (auto* run : model()->runs()) {
    if (!run->visible) continue;  // what the plot draws
    for (auto it = run->sweeps.cbegin(); it != run->sweeps.cend(); ++it) {
      for (int g = 0; g < it->gamma.size(); ++g) {
        for (int s = 0; s < it->seeds; ++s) {
          table.add({run->name, it.key(), it->metric, QString::number(it->gamma[g], 'g', 6), QString::number(s),
                     QString::number(it->values[g * it->seeds + s], 'g', 9)});
        }
      }
    }
  }
  return table;
}

}  // namespace descentlab::widgets
