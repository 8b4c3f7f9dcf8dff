#pragma once
// Weight-magnitude histograms: counts of |w| over fixed log-spaced bins, for all weight matrices together
// ("global") and per layer (the parameter-name prefix before the last component group, e.g. "blocks.3").

#include <torch/nn/module.h>

#include <vector>

#include "core/record/events.h"

namespace descentlab::eval {

// `bins` log-spaced edges from `low` to `high`; the first bin also takes |w| < low (including exact zeros) and the
// last |w| >= high.
std::vector<double> log_spaced_edges(double low = 1e-8, double high = 10.0, int64_t bins = 45);

// Histograms of the tensors with dim >= 2 (weights, not biases or norms): "global" and one per block
// ("blocks.0", "blocks.1", ...) when the model has blocks.
std::vector<record::HistogramSnapshot> weight_histograms(const torch::nn::Module& model, int64_t step,
                                                         const std::vector<double>& edges);

// The share of weights (tensors with dim >= 2, as in the "global" histogram) with |w| < each threshold; exact
// zeros count as below every threshold.
std::vector<double> near_zero_shares(const torch::nn::Module& model, const std::vector<double>& thresholds);
const std::vector<double>& default_near_zero_thresholds();  // 1e-4, 1e-3, 1e-2

}  // namespace descentlab::eval
