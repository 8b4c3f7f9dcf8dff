#include "widgets/robustness_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QTextStream>

#include <cmath>

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
    line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, run->colour, Qt::white, 6));
    line->setName(QStringLiteral("%1 (%2 seeds)").arg(run->name).arg(it->seeds));
    bindToRun(plot(), line, *run);
    for (auto* part : {lower, upper}) part->setVisible(run->visible);
    drawn += run->visible ? 1 : 0;
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
