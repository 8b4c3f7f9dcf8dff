#include "widgets/run_data.h"

#include <cmath>

#include "core/record/metrics.h"

namespace descentlab::widgets {

QString runStateName(RunState state) {
  switch (state) {
    case RunState::Loaded: return QStringLiteral("saved");
    case RunState::Starting: return QStringLiteral("starting");
    case RunState::Running: return QStringLiteral("running");
    case RunState::Paused: return QStringLiteral("paused");
    case RunState::Stopping: return QStringLiteral("stopping");
    case RunState::Finished: return QStringLiteral("finished");
    case RunState::Stopped: return QStringLiteral("stopped");
    case RunState::Failed: return QStringLiteral("failed");
    case RunState::Watching: return QStringLiteral("watching");
  }
  return {};
}

void RunData::addScalar(const QString& name, int64_t step, double wallTime, double value) {
  auto& track = scalars[name];
  track.steps.push_back(static_cast<double>(step));
  track.values.push_back(value);
  track.wallTimes.push_back(wallTime);
  if (step > currentStep) currentStep = step;
  if (name == QLatin1String(record::metric::kLoss) && wallTime > 0) {
    speedSamples_.push_back({wallTime, step});
    // Keep about ten seconds of samples: the speed follows pauses and phase changes without jitter.
    while (speedSamples_.size() > 2 && wallTime - speedSamples_.front().first > 10.0) speedSamples_.removeFirst();
    const auto& first = speedSamples_.front();
    const double elapsed = wallTime - first.first;
    if (elapsed > 0) stepsPerSecond = static_cast<double>(step - first.second) / elapsed;
  }
  touch();
}

void RunData::addVector(const QString& name, int64_t step, const QVector<double>& values) {
  auto& track = vectors[name];
  track.width = static_cast<int>(values.size());
  track.steps.push_back(static_cast<double>(step));
  track.rows.push_back(values);
  touch();
}

void RunData::addHistogram(const QString& name, int64_t step, const QVector<double>& edges,
                           const QVector<double>& counts) {
  auto& track = histograms[name];
  if (track.edges.isEmpty()) track.edges = edges;
  track.steps.push_back(static_cast<double>(step));
  track.counts.push_back(counts);
  touch();
}

void RunData::setSweep(const QString& name, const SweepTrack& sweep) {
  sweeps[name] = sweep;
  touch();
}

void RunData::appendLog(const QString& line) {
  log.push_back(line);
  touch();
}

void RunData::replaceRecord(RunData&& reread) {
  certificate_ = {};
  scalars = std::move(reread.scalars);
  vectors = std::move(reread.vectors);
  histograms = std::move(reread.histograms);
  sweeps = std::move(reread.sweeps);
  totalSteps = reread.totalSteps;
  firstStep = reread.firstStep;
  currentStep = reread.currentStep;
  stepsPerSecond = reread.stepsPerSecond;
  speedSamples_ = std::move(reread.speedSamples_);
  hasLatestCheckpoint = reread.hasLatestCheckpoint;
  touch();
}

void RunData::truncateAfter(int64_t step) {
  certificate_ = {};  // rows after `step` go; the ones that replace them may differ
  const double last = static_cast<double>(step);
  for (auto& track : scalars) {
    while (!track.steps.isEmpty() && track.steps.back() > last) {
      track.steps.removeLast();
      track.values.removeLast();
      track.wallTimes.removeLast();
    }
  }
  for (auto& track : vectors) {
    while (!track.steps.isEmpty() && track.steps.back() > last) {
      track.steps.removeLast();
      track.rows.removeLast();
    }
  }
  for (auto& track : histograms) {
    while (!track.steps.isEmpty() && track.steps.back() > last) {
      track.steps.removeLast();
      track.counts.removeLast();
    }
  }
  speedSamples_.clear();
  currentStep = step;
  touch();
}

double RunData::etaSeconds() const {
  if (stepsPerSecond <= 0 || totalSteps <= 0) return -1.0;
  return static_cast<double>(totalSteps - currentStep) / stepsPerSecond;
}

double RunData::progress() const {
  if (totalSteps <= 0) return state == RunState::Finished ? 1.0 : 0.0;
  return std::min(1.0, static_cast<double>(currentStep) / static_cast<double>(totalSteps));
}

QString lossUnit(const RunData& run) {
  if (run.metric.isEmpty()) return QString();
  return run.metric == QStringLiteral("rmse") ? QStringLiteral("squared error") : QStringLiteral("cross-entropy, nats");
}

bool isLossSeries(const QString& series) {
  return series == QLatin1String(record::metric::kLoss) || series == QLatin1String(record::metric::kTestLoss) ||
         series == QLatin1String(record::metric::kLagrangian);
}

RunActions availableActions(const RunData& run) {
  RunActions actions;
  actions.pause = run.state == RunState::Running;
  actions.stop = run.state == RunState::Running || run.state == RunState::Paused || run.state == RunState::Starting;
  // A watched run's file is another process's to write: nothing here can resume it until that process lets go.
  actions.resume = run.state == RunState::Paused || (!run.isActive() && run.state != RunState::Finished &&
                                                     run.state != RunState::Watching && run.hasLatestCheckpoint);
  actions.close = !run.isActive();
  actions.branch = !run.path.isEmpty() && run.state != RunState::Starting && run.state != RunState::Stopping;
  return actions;
}

QVector<double> smoothExponential(const QVector<double>& values, double weight) {
  QVector<double> smoothed;
  smoothed.reserve(values.size());
  double last = 0.0;
  int64_t count = 0;
  for (double value : values) {
    if (!std::isfinite(value)) {
      smoothed.push_back(value);
      continue;
    }
    last = last * weight + (1.0 - weight) * value;
    ++count;
    const double debias = weight > 0 ? 1.0 - std::pow(weight, static_cast<double>(count)) : 1.0;
    smoothed.push_back(last / debias);
  }
  return smoothed;
}

QString clockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("--:--");
  const auto total = static_cast<int64_t>(seconds + 0.5);
  if (total >= 3600) {
    return QStringLiteral("%1:%2:%3")
        .arg(total / 3600)
        .arg(total / 60 % 60, 2, 10, QLatin1Char('0'))
        .arg(total % 60, 2, 10, QLatin1Char('0'));
  }
  return QStringLiteral("%1:%2").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
}

record::DescentCertificate descentCertificate(const RunData& run) {
  const auto frequency = run.vectors.constFind(QLatin1String(record::metric::kTestDescendingFrequency));
  const auto counts = run.vectors.constFind(QLatin1String(record::metric::kTestDescentCounts));
  const auto losses = run.vectors.constFind(QLatin1String(record::metric::kTestLayerLoss));
  if (frequency == run.vectors.cend() || counts == run.vectors.cend() || frequency->rows.isEmpty() ||
      counts->rows.isEmpty() || frequency->steps.back() != counts->steps.back()) {
    return {};
  }
  const qsizetype lossRows = losses == run.vectors.cend() ? 0 : losses->rows.size();
  auto& cache = run.certificate_;
  if (cache.counts == counts->rows.size() && cache.losses == lossRows && cache.step == counts->steps.back()) {
    return cache.value;
  }
  std::vector<double> mean;
  if (lossRows > 0 && losses->steps.back() == counts->steps.back()) {
    mean.assign(losses->rows.back().begin(), losses->rows.back().end());
  }
  cache.value =
      record::descent_certificate(std::vector<double>(frequency->rows.back().begin(), frequency->rows.back().end()),
                                  std::vector<double>(counts->rows.back().begin(), counts->rows.back().end()), mean);
  cache.counts = counts->rows.size();
  cache.losses = lossRows;
  cache.step = counts->steps.back();
  return cache.value;
}

QString certificateText(const record::DescentCertificate& certificate) {
  if (!certificate.valid()) return {};
  QStringList rises;
  for (int layer : certificate.mean_rises) rises << QString::number(layer);
  return QStringLiteral("%1 % [%2, %3] · %4")
      .arg(100.0 * certificate.overall.share, 0, 'f', 1)
      .arg(100.0 * certificate.overall.low, 0, 'f', 1)
      .arg(100.0 * certificate.overall.high, 0, 'f', 1)
      .arg(certificate.mean_monotone ? QStringLiteral("mean monotone")
                                     : QStringLiteral("mean rises at ") + rises.join(QStringLiteral(", ")));
}

QString certificateDetails(const record::DescentCertificate& certificate) {
  if (!certificate.valid()) return {};
  QStringList lines;
  lines << QStringLiteral(
               "Descent certificate over %1 test samples: the share of (layer, sample) pairs whose loss "
               "does not rise from layer ℓ−1 to ℓ")
               .arg(certificate.samples);
  lines << QStringLiteral("all layers: %1 of %2 pairs, %3 % [%4, %5] (95 %, bootstrap over samples)")
               .arg(certificate.overall.count)
               .arg(certificate.overall.total)
               .arg(100.0 * certificate.overall.share, 0, 'f', 1)
               .arg(100.0 * certificate.overall.low, 0, 'f', 1)
               .arg(100.0 * certificate.overall.high, 0, 'f', 1);
  for (size_t l = 0; l < certificate.per_layer.size(); ++l) {
    const auto& layer = certificate.per_layer[l];
    lines << QStringLiteral("layer %1: %2 % [%3, %4] (Wilson)")
                 .arg(l + 1)
                 .arg(100.0 * layer.share, 0, 'f', 1)
                 .arg(100.0 * layer.low, 0, 'f', 1)
                 .arg(100.0 * layer.high, 0, 'f', 1);
  }
  lines << (certificate.mean_monotone
                ? QStringLiteral("The mean test loss never rises from layer to layer.")
                : QStringLiteral("The mean test loss rises at %1 layer(s).").arg(certificate.mean_rises.size()));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace descentlab::widgets
