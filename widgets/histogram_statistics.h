#pragma once
// Statistics of one weight-magnitude histogram as core/eval/weight_histograms writes it: log-spaced |w| edges,
// where the first bin takes everything below edges[1], exact zeros included. That first bin is the pruned (zero)
// weights; the other bins are the kept weights. Pure functions on plain vectors, so the numbers the weight-geometry
// view shows can be checked by hand; and how that view writes them (percentText, magnitudeText).

#include <QString>
#include <QVector>

namespace descentlab::widgets {

struct HistogramStatistics {
  double total = 0;  // weights counted, zeros included
  double zeros = 0;  // in the first bin
  double kept = 0;   // in the other bins
  // The share of zeros among all weights (the sparsity); NaN for an empty histogram.
  double zeroShare = 0;
  // Shares among the kept weights and their quantiles; NaN when nothing is kept.
  double keptBelow1e3 = 0;  // |w| < 1e-3
  double keptBelow1e2 = 0;  // |w| < 1e-2
  double median = 0;
  double p90 = 0;
  double p99 = 0;
};

// The share of kept weights with |w| < threshold, linear in log |w| inside the bin that holds the threshold (the
// bins are log-spaced, so that is the even spread within a bin). NaN when nothing is kept.
double keptShareBelow(const QVector<double>& edges, const QVector<double>& counts, double threshold);

// The |w| below which a share q (0..1) of the kept weights lie, interpolated in log |w| within its bin. NaN when
// nothing is kept.
double keptQuantile(const QVector<double>& edges, const QVector<double>& counts, double q);

HistogramStatistics histogramStatistics(const QVector<double>& edges, const QVector<double>& counts);

// The kept weights' cumulative distribution at the edges from edges[1] to the last: share of kept weights with |w|
// below each edge, from 0 to 1. Empty when nothing is kept.
struct Cumulative {
  QVector<double> edges;
  QVector<double> shares;
};
Cumulative keptCumulative(const QVector<double>& edges, const QVector<double>& counts);

// The kept weights' share in each bin from the second on (summing to 1); empty when nothing is kept.
QVector<double> keptShares(const QVector<double>& counts);

// "86.8 %", "0.05 %": enough digits to tell small shares apart; "–" when undefined.
QString percentText(double share);

// "1.26e-3": three significant digits, the exponent short, so every magnitude reads the same way.
QString magnitudeText(double value);

}  // namespace descentlab::widgets
