#include "core/eval/weight_histograms.h"

#include <torch/torch.h>

#include <cmath>
#include <map>

namespace descentlab::eval {

std::vector<double> log_spaced_edges(double low, double high, int64_t bins) {
  std::vector<double> edges(static_cast<size_t>(bins) + 1);
  const double step = (std::log10(high) - std::log10(low)) / static_cast<double>(bins);
  for (int64_t i = 0; i <= bins; ++i) edges[static_cast<size_t>(i)] = std::pow(10.0, std::log10(low) + step * i);
  return edges;
}

namespace {

// Counts per bin of |values|, clamping below the first and above the last edge into the end bins.
std::vector<int64_t> count(const torch::Tensor& magnitudes, const torch::Tensor& inner_edges, size_t bins) {
  const torch::Tensor index = torch::bucketize(magnitudes, inner_edges, /*out_int32=*/false, /*right=*/true);
  const torch::Tensor counts = torch::bincount(index, /*weights=*/{}, static_cast<int64_t>(bins)).to(torch::kCPU);
  return std::vector<int64_t>(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + bins);
}

}  // namespace

std::vector<record::HistogramSnapshot> weight_histograms(const torch::nn::Module& model, int64_t step,
                                                         const std::vector<double>& edges) {
  torch::NoGradGuard no_grad;
  const size_t bins = edges.size() - 1;
  std::map<std::string, std::vector<torch::Tensor>> groups;
  torch::Device device(torch::kCPU);
  for (const auto& item : model.named_parameters(true)) {
    if (item.value().dim() < 2) continue;
    device = item.value().device();
    const torch::Tensor magnitudes = item.value().detach().abs().flatten().to(torch::kFloat64);
    groups["global"].push_back(magnitudes);
    const std::string& name = item.key();
    if (name.rfind("blocks.", 0) == 0) groups[name.substr(0, name.find('.', 7))].push_back(magnitudes);
  }
  // bucketize against the inner edges: bin 0 = below edges[1], bin B-1 = at or above edges[B-1].
  const torch::Tensor inner =
      torch::tensor(std::vector<double>(edges.begin() + 1, edges.end() - 1), torch::kFloat64).to(device);
  std::vector<record::HistogramSnapshot> snapshots;
  for (const auto& [name, tensors] : groups) {
    snapshots.push_back({name, step, edges, count(torch::cat(tensors), inner, bins)});
  }
  return snapshots;
}

std::vector<double> near_zero_shares(const torch::nn::Module& model, const std::vector<double>& thresholds) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> magnitudes;
  for (const auto& item : model.named_parameters(true)) {
    if (item.value().dim() >= 2) magnitudes.push_back(item.value().detach().abs().flatten());
  }
  std::vector<double> shares(thresholds.size(), 0.0);
  if (magnitudes.empty()) return shares;
  const torch::Tensor all = torch::cat(magnitudes);
  const double total = static_cast<double>(all.numel());
  for (size_t i = 0; i < thresholds.size(); ++i) {
    shares[i] = static_cast<double>(all.lt(thresholds[i]).sum().item<int64_t>()) / total;
  }
  return shares;
}

const std::vector<double>& default_near_zero_thresholds() {
  static const std::vector<double> thresholds = {1e-4, 1e-3, 1e-2};
  return thresholds;
}

}  // namespace descentlab::eval
