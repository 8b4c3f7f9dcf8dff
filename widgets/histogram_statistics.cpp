#include "widgets/histogram_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace descentlab::widgets {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bins with an edge on both sides: counts and edges can disagree by a bin when a track was cut short.
int binCount(const QVector<double>& edges, const QVector<double>& counts) {
  return std::min(static_cast<int>(counts.size()), static_cast<int>(edges.size()) - 1);
}

double keptTotal(const QVector<double>& edges, const QVector<double>& counts) {
  double kept = 0;
  for (int bin = 1; bin < binCount(edges, counts); ++bin) kept += counts[bin];
  return kept;
}

}  // namespace

double keptShareBelow(const QVector<double>& edges, const QVector<double>& counts, double threshold) {
  const double kept = keptTotal(edges, counts);
  if (kept <= 0) return kNaN;
  double below = 0;
  for (int bin = 1; bin < binCount(edges, counts); ++bin) {
    const double low = edges[bin];
    const double high = edges[bin + 1];
    if (threshold >= high) {
      below += counts[bin];
    } else {
      if (threshold > low) below += counts[bin] * std::log(threshold / low) / std::log(high / low);
      break;
    }
  }
  return below / kept;
}

double keptQuantile(const QVector<double>& edges, const QVector<double>& counts, double q) {
  const double kept = keptTotal(edges, counts);
  if (kept <= 0) return kNaN;
  const double target = std::clamp(q, 0.0, 1.0) * kept;
  double below = 0;
  int last = 1;
  for (int bin = 1; bin < binCount(edges, counts); ++bin) {
    if (counts[bin] <= 0) continue;
    last = bin;
    if (below + counts[bin] >= target) {
      const double fraction = (target - below) / counts[bin];
      return edges[bin] * std::pow(edges[bin + 1] / edges[bin], fraction);
    }
    below += counts[bin];
  }
  return edges[last + 1];  // rounding left the target a hair above the total
}

HistogramStatistics histogramStatistics(const QVector<double>& edges, const QVector<double>& counts) {
  HistogramStatistics statistics;
  const int bins = binCount(edges, counts);
  for (int bin = 0; bin < bins; ++bin) statistics.total += counts[bin];
  statistics.zeros = bins > 0 ? counts[0] : 0.0;
  statistics.kept = statistics.total - statistics.zeros;
  statistics.zeroShare = statistics.total > 0 ? statistics.zeros / statistics.total : kNaN;
  statistics.keptBelow1e3 = keptShareBelow(edges, counts, 1e-3);
  statistics.keptBelow1e2 = keptShareBelow(edges, counts, 1e-2);
  statistics.median = keptQuantile(edges, counts, 0.5);
  statistics.p90 = keptQuantile(edges, counts, 0.9);
  statistics.p99 = keptQuantile(edges, counts, 0.99);
  return statistics;
}

Cumulative keptCumulative(const QVector<double>& edges, const QVector<double>& counts) {
  Cumulative cumulative;
  const double kept = keptTotal(edges, counts);
  if (kept <= 0) return cumulative;
  double below = 0;
  cumulative.edges.push_back(edges[1]);
  cumulative.shares.push_back(0.0);
  for (int bin = 1; bin < binCount(edges, counts); ++bin) {
    below += counts[bin];
    cumulative.edges.push_back(edges[bin + 1]);
    cumulative.shares.push_back(below / kept);
  }
  cumulative.shares.back() = 1.0;  // exactly, whatever the rounding of the sum
  return cumulative;
}

QVector<double> keptShares(const QVector<double>& counts) {
  QVector<double> shares;
  double kept = 0;
  for (int bin = 1; bin < counts.size(); ++bin) kept += counts[bin];
  if (kept <= 0) return shares;
  for (int bin = 1; bin < counts.size(); ++bin) shares.push_back(counts[bin] / kept);
  return shares;
}

QString percentText(double share) {
  if (!std::isfinite(share)) return QStringLiteral("–");
  const double percent = 100.0 * share;
  return QStringLiteral("%1 %").arg(percent, 0, 'f', percent > 0 && percent < 0.1 ? 2 : 1);
}

QString magnitudeText(double value) {
  if (!std::isfinite(value) || value <= 0) return QStringLiteral("–");
  int exponent = static_cast<int>(std::floor(std::log10(value)));
  double mantissa = value / std::pow(10.0, exponent);
  if (mantissa >= 9.995) {  // rounds up to 10.0
    mantissa /= 10;
    ++exponent;
  }
  return QStringLiteral("%1e%2").arg(mantissa, 0, 'f', 2).arg(exponent);
}

}  // namespace descentlab::widgets
