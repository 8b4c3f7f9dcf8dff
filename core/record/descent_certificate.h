#pragma once
// The descent certificate of a layerwise run (issue 17): how often a test sample's loss does not rise from layer
// l-1 to layer l, per layer and over all (layer, sample) pairs, each with a 95 % interval; next to it, whether the
// mean per-layer test loss is monotone, so a user sees when a monotone mean hides a minority of samples that get
// worse. Computed one way for `compare --json`, `inspect`, the runs table and the per-layer view, from two stored
// series of one evaluation: test_descending_frequency (per layer, the share of the n test samples with
// f_l(x) <= f_(l-1)(x)) and test_descent_counts (n_k: how many samples descend at exactly k of the L layers).
//
// Intervals: per layer, Wilson's score interval over the n samples (they are independent draws); over all pairs,
// a percentile bootstrap over samples (the L pairs of one sample are not independent, so the samples are resampled,
// each with its count of descending layers; 2,000 resamples with a fixed seed, so the numbers are reproducible).
// Plain data, header only: widgets/ uses it without linking core.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace descentlab::record {

struct ShareInterval {
  double share = 0.0;  // point estimate
  double low = 0.0;    // 95 % interval
  double high = 0.0;
  int64_t count = 0;  // descending pairs
  int64_t total = 0;  // pairs
};

struct DescentCertificate {
  int64_t samples = 0;
  std::vector<ShareInterval> per_layer;  // layers 1..L
  ShareInterval overall;                 // over the L x n pairs
  // The mean curve f_0..f_L: monotone (never rises), and the layers at which it rises.
  bool mean_monotone = true;
  std::vector<int> mean_rises;  // layers l with mean f_l > mean f_(l-1)
  bool valid() const { return samples > 0 && !per_layer.empty(); }
};

// Wilson's score interval for `count` successes of `total` at 95 % (z = 1.959964).
inline ShareInterval wilson_interval(int64_t count, int64_t total) {
  ShareInterval out;
  out.count = count;
  out.total = total;
  if (total <= 0) return out;
  const double z = 1.959963984540054;
  const double n = static_cast<double>(total);
  const double p = static_cast<double>(count) / n;
  const double denominator = 1.0 + z * z / n;
  const double centre = (p + z * z / (2.0 * n)) / denominator;
  const double half = z * std::sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator;
  out.share = p;
  // Exactly 0 (1) when no (every) pair descends: the formula gives it only up to rounding.
  out.low = count == 0 ? 0.0 : std::max(0.0, centre - half);
  out.high = count == total ? 1.0 : std::min(1.0, centre + half);
  return out;
}

// Percentile bootstrap (2.5 %, 97.5 %) of the overall share from the per-sample counts: `counts[k]` samples descend
// at exactly k of the L = counts.size() - 1 layers. Each resample draws n samples with replacement (a multinomial
// draw over k, by sequential binomials).
inline ShareInterval bootstrap_overall(const std::vector<int64_t>& counts, int resamples = 2000, uint64_t seed = 17) {
  ShareInterval out;
  const int64_t layers = static_cast<int64_t>(counts.size()) - 1;
  int64_t samples = 0, descending = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    samples += counts[k];
    descending += static_cast<int64_t>(k) * counts[k];
  }
  if (layers < 1 || samples <= 0) return out;
  out.count = descending;
  out.total = layers * samples;
  out.share = static_cast<double>(descending) / static_cast<double>(out.total);
  std::mt19937_64 random(seed);
  std::vector<double> shares;
  shares.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    int64_t left = samples;
    double remaining_probability = 1.0;
    int64_t drawn_descending = 0;
    for (size_t k = 0; k < counts.size() && left > 0; ++k) {
      const double p = static_cast<double>(counts[k]) / static_cast<double>(samples);
      int64_t drawn = left;
      if (k + 1 < counts.size()) {
        const double conditional = remaining_probability > 0 ? std::clamp(p / remaining_probability, 0.0, 1.0) : 0.0;
        drawn = std::binomial_distribution<int64_t>(left, conditional)(random);
      }
      drawn_descending += static_cast<int64_t>(k) * drawn;
      left -= drawn;
      remaining_probability -= p;
    }
    shares.push_back(static_cast<double>(drawn_descending) / static_cast<double>(out.total));
  }
  std::sort(shares.begin(), shares.end());
  const auto at = [&](double q) {
    const double position = q * static_cast<double>(shares.size() - 1);
    const auto below = static_cast<size_t>(std::floor(position));
    const auto above = std::min(shares.size() - 1, below + 1);
    return shares[below] + (shares[above] - shares[below]) * (position - static_cast<double>(below));
  };
  out.low = at(0.025);
  out.high = at(0.975);
  return out;
}

// The certificate of one evaluation. `descending_frequency`: L shares; `counts`: L + 1 values n_0..n_L, whose sum is
// the number of test samples n; `mean_layer_loss`: f_0..f_L (may be empty). Invalid (valid() false) when the counts
// are missing or do not fit (a run recorded before the certificate existed).
inline DescentCertificate descent_certificate(const std::vector<double>& descending_frequency,
                                              const std::vector<double>& counts,
                                              const std::vector<double>& mean_layer_loss = {}) {
  DescentCertificate out;
  if (descending_frequency.empty() || counts.size() != descending_frequency.size() + 1) return out;
  std::vector<int64_t> whole;
  int64_t samples = 0;
  for (double value : counts) {
    if (!(value >= 0)) return out;
    whole.push_back(static_cast<int64_t>(std::llround(value)));
    samples += whole.back();
  }
  if (samples <= 0) return out;
  out.samples = samples;
  for (double share : descending_frequency) {
    out.per_layer.push_back(
        wilson_interval(static_cast<int64_t>(std::llround(share * static_cast<double>(samples))), samples));
  }
  out.overall = bootstrap_overall(whole);
  for (size_t l = 1; l < mean_layer_loss.size(); ++l) {
    if (mean_layer_loss[l] > mean_layer_loss[l - 1]) {
      out.mean_monotone = false;
      out.mean_rises.push_back(static_cast<int>(l));
    }
  }
  return out;
}

}  // namespace descentlab::record
