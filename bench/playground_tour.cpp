// The playground's implicit-bias tour (SCIENCE.md §3), measured: every optimizer at the playground's defaults
// (core/geometry's toy_defaults()) on the sparse-recovery toy over seeds 1-3 of the random problem (A, the sparse
// truth), and on the 2-D toy. Writes results/tours/implicit-bias.json and the markdown section
// results/tours/implicit-bias.md; both come from this program only, and a second run writes the same bytes.
//
//     build/bench/descentlab_bench_playground_tour [--out-dir results/tours]
//
// Torch-free and Qt-free: only core/geometry, the code the playground itself runs.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/geometry/toy_optimizers.h"

namespace {

using namespace descentlab::geometry;
using nlohmann::ordered_json;

constexpr uint64_t kSeeds[] = {1, 2, 3};
constexpr uint64_t kRobustnessSeeds = 10;  // support recovery counted over seeds 1-10 as well
constexpr double kOffSupportSmall = 1e-3;  // "off the support, |θ_i| < 1e-3"

double distance(const std::vector<double>& x, const std::vector<double>& y) {
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) sum += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(sum);
}

// One method's end point on one sparse problem.
struct SparseResult {
  uint64_t seed = 0;
  double loss = 0;
  int64_t support_found = 0;     // |θ_i| > 0.1 max|θ|, the playground table's "support"
  bool support_exact = false;    // that support is the truth's: the recovery criterion
  bool top_k_exact = false;      // the k largest |θ_i| are the truth's k non-zeros
  double relative_error = 0;     // ‖θ − truth‖ / ‖truth‖
  double l1 = 0, truth_l1 = 0;   // ‖θ‖₁ beside the truth's
  double off_support_small = 0;  // share of the off-support entries with |θ_i| < 1e-3
  double to_min_l2 = 0;          // ‖θ − θ_L2‖ / ‖θ_L2‖, θ_L2 the minimum-L2 solution
};

SparseResult run_sparse(ToyMethod method, uint64_t seed, const ToyDefaults& d = toy_defaults()) {
  const auto toy = make_sparse_toy(d.sparse_rows, d.sparse_cols, d.sparse_nonzeros, seed);
  const std::vector<double> start(static_cast<size_t>(d.sparse_cols), d.init_scale);
  const auto theta = toy_solution(method, toy.problem, start, toy_settings(d, method));
  SparseResult r;
  r.seed = seed;
  r.loss = toy.problem.loss(theta);
  const auto found = support(theta);
  r.support_found = static_cast<int64_t>(found.size());
  r.support_exact = found == support(toy.truth);
  r.top_k_exact = top_k_support(theta, d.sparse_nonzeros) == support(toy.truth);
  r.relative_error = distance(theta, toy.truth) / norm_l2(toy.truth);
  r.l1 = norm_l1(theta);
  r.truth_l1 = norm_l1(toy.truth);
  int64_t off = 0, small = 0;
  for (size_t i = 0; i < theta.size(); ++i) {
    if (toy.truth[i] != 0.0) continue;
    ++off;
    small += std::abs(theta[i]) < kOffSupportSmall ? 1 : 0;
  }
  r.off_support_small = off > 0 ? static_cast<double>(small) / static_cast<double>(off) : 0.0;
  const auto l2 = minimum_l2_solution(toy.problem);
  r.to_min_l2 = distance(theta, l2) / norm_l2(l2);
  return r;
}

// Numbers as the markdown shows them: 3 significant digits, "diverged" when not finite.
std::string number(double value) {
  if (!std::isfinite(value)) return "diverged";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// Settings as written: up to 6 significant digits, never an exponent for the round values used here.
std::string setting(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string share(double value) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", 100.0 * value);
  return text;
}

std::string point(const std::vector<double>& p) {
  return "(" + number(p[0]) + ", " + number(p[1]) + ")";
}

// A JSON number, or null when not finite (JSON has no inf or NaN).
ordered_json value(double x) {
  return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path out_dir = "results/tours";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out-dir" && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0] << " [--out-dir DIR]   (writes DIR/implicit-bias.json and .md)\n";
      return 2;
    }
  }
  const auto& d = toy_defaults();
  const auto& methods = all_toy_methods();

  ordered_json json;
  json["tour"] = "implicit-bias";
  json["written_by"] = "bench/playground_tour.cpp";
  ordered_json settings;
  settings["steps"] = d.steps;
  settings["alpha"] = d.alpha;
  settings["beta"] = d.beta;
  settings["weight_decay"] = d.weight_decay;
  settings["init_scale"] = d.init_scale;
  for (size_t m = 0; m < methods.size(); ++m) settings["lr"][toy_method_name(methods[m])] = d.lr[m];
  json["settings"] = settings;

  // The sparse toy.
  std::string md;
  auto line = [&md](const std::string& text = "") { md += text + "\n"; };
  ordered_json sparse;
  sparse["rows"] = d.sparse_rows;
  sparse["cols"] = d.sparse_cols;
  sparse["nonzeros"] = d.sparse_nonzeros;
  sparse["seeds"] = std::vector<uint64_t>(std::begin(kSeeds), std::end(kSeeds));
  sparse["playground_seed"] = d.sparse_seed;
  sparse["recovered_means"] = "support_exact: the entries with |theta_i| > 0.1 max|theta| are exactly the truth's";
  struct Summary {
    std::vector<SparseResult> seeds;
    int recovered = 0, top_k = 0, recovered_of_ten = 0;
  };
  std::vector<Summary> summaries(methods.size());
  for (size_t m = 0; m < methods.size(); ++m) {
    auto& summary = summaries[m];
    for (const uint64_t seed : kSeeds) summary.seeds.push_back(run_sparse(methods[m], seed));
    for (const auto& r : summary.seeds) {
      summary.recovered += r.support_exact ? 1 : 0;
      summary.top_k += r.top_k_exact ? 1 : 0;
    }
    for (uint64_t seed = 1; seed <= kRobustnessSeeds; ++seed) {
      summary.recovered_of_ten += run_sparse(methods[m], seed).support_exact ? 1 : 0;
    }
    ordered_json entry;
    entry["method"] = toy_method_name(methods[m]);
    entry["lr"] = d.lr[m];
    auto mean = [&](auto field) {
      double sum = 0.0;
      for (const auto& r : summary.seeds) sum += field(r);
      return sum / static_cast<double>(summary.seeds.size());
    };
    for (const auto& r : summary.seeds) {
      entry["per_seed"].push_back({{"seed", r.seed},
                                   {"loss", value(r.loss)},
                                   {"support_found", r.support_found},
                                   {"support_exact", r.support_exact},
                                   {"top_k_exact", r.top_k_exact},
                                   {"relative_error", value(r.relative_error)},
                                   {"l1", value(r.l1)},
                                   {"truth_l1", r.truth_l1},
                                   {"off_support_below_1e-3", r.off_support_small},
                                   {"relative_distance_to_min_l2", value(r.to_min_l2)}});
    }
    entry["mean"] = {{"loss", value(mean([](const SparseResult& r) { return r.loss; }))},
                     {"support_found", mean([](const SparseResult& r) { return double(r.support_found); })},
                     {"relative_error", value(mean([](const SparseResult& r) { return r.relative_error; }))},
                     {"l1", value(mean([](const SparseResult& r) { return r.l1; }))},
                     {"truth_l1", mean([](const SparseResult& r) { return r.truth_l1; })},
                     {"off_support_below_1e-3", mean([](const SparseResult& r) { return r.off_support_small; })},
                     {"relative_distance_to_min_l2", value(mean([](const SparseResult& r) { return r.to_min_l2; }))}};
    entry["recovered_seeds"] = summary.recovered;
    entry["top_k_exact_seeds"] = summary.top_k;
    entry["recovered_seeds_of_1_to_10"] = summary.recovered_of_ten;
    sparse["methods"].push_back(entry);
  }
  json["sparse"] = sparse;

  // The 2-D toy.
  const auto plane = two_d_toy();
  const std::vector<double> start(2, d.init_scale);
  const auto min_l2 = minimum_l2_solution(plane), min_l1 = minimum_l1_solution_one_equation(plane),
             min_linf = minimum_linf_solution_one_equation(plane);
  ordered_json two_d;
  two_d["equation"] = "0.8 x + 0.3 y = 1";
  two_d["start"] = start;
  two_d["min_l2"] = min_l2;
  two_d["min_l1"] = min_l1;
  two_d["linf_corner"] = min_linf;
  struct PlaneResult {
    std::vector<double> end;
    double loss, to_l2, to_l1, to_linf;
    std::string nearest;
  };
  std::vector<PlaneResult> plane_results;
  for (size_t m = 0; m < methods.size(); ++m) {
    PlaneResult r;
    r.end = toy_solution(methods[m], plane, start, toy_settings(d, methods[m]));
    r.loss = plane.loss(r.end);
    r.to_l2 = distance(r.end, min_l2);
    r.to_l1 = distance(r.end, min_l1);
    r.to_linf = distance(r.end, min_linf);
    const double nearest = std::min({r.to_l2, r.to_l1, r.to_linf});
    r.nearest = nearest == r.to_l2 ? "min-L2 point" : (nearest == r.to_l1 ? "min-L1 point" : "L∞ corner");
    two_d["methods"].push_back({{"method", toy_method_name(methods[m])},
                                {"lr", d.lr[m]},
                                {"end", {value(r.end[0]), value(r.end[1])}},
                                {"loss", value(r.loss)},
                                {"distance_to_min_l2", value(r.to_l2)},
                                {"distance_to_min_l1", value(r.to_l1)},
                                {"distance_to_linf_corner", value(r.to_linf)},
                                {"nearest", r.nearest}});
    plane_results.push_back(r);
  }
  json["two_d"] = two_d;

  // The markdown section.
  line("## Implicit bias (the playground)");
  line();
  line("Written by `bench/playground_tour.cpp` from `core/geometry` (the code the playground runs); numbers in");
  line("`results/tours/implicit-bias.json`. An underdetermined least-squares problem has a whole affine set of exact");
  line("solutions, and which one an optimizer ends at is its implicit bias (SCIENCE.md §3). The tour runs every");
  line("optimizer at the playground's defaults on the sparse-recovery toy (" + std::to_string(d.sparse_rows) +
       " random equations, " + std::to_string(d.sparse_cols) + " unknowns, a " + std::to_string(d.sparse_nonzeros) +
       "-sparse truth) for seeds 1-3 of the random problem (A and the truth; the");
  line("playground shows seed " + std::to_string(d.sparse_seed) + "), and on the 2-D toy 0.8 x + 0.3 y = 1.");
  line();
  line("**Settings** (the playground's defaults, `toy_defaults()` in `core/geometry/toy_optimizers.cpp`): " +
       std::to_string(d.steps) + " steps, α = " + setting(d.alpha) + ", β = " + setting(d.beta) +
       " (HAM, HORST), weight decay " + setting(d.weight_decay) +
       " (so AdamW is Adam), every coordinate starting at the"
       " initial scale " +
       setting(d.init_scale) +
       ", which is also the hyperbolic potential's scale. Each optimizer has its own learning"
       " rate (shown in the playground beside its name):");
  line();
  line("| optimizer | learning rate |");
  line("| --- | --- |");
  for (size_t m = 0; m < methods.size(); ++m)
    line("| " + toy_method_name(methods[m]) + " | " + setting(d.lr[m]) + " |");
  line();
  line("**Recovered** means the support found (entries with |θ_i| > 0.1 max|θ|, the playground table's \"support\")");
  line("is exactly the truth's. \"Top 5\": the 5 largest |θ_i| are the truth's non-zeros. \"Off-support small\": the");
  line("share of the " + std::to_string(d.sparse_cols - d.sparse_nonzeros) +
       " off-support entries with |θ_i| < 1e-3. \"To min-L2\": ‖θ − θ_L2‖ / ‖θ_L2‖, θ_L2 the minimum-L2 solution.");
  line();
  line("### Sparse recovery, summary (mean over seeds 1-3)");
  line();
  line(
      "| optimizer | recovered | top 5 | loss | support found | relative error | L1 (truth) | off-support small "
      "| to min-L2 | recovered, seeds 1-10 |");
  line("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (size_t m = 0; m < methods.size(); ++m) {
    const auto& mean = json["sparse"]["methods"][m]["mean"];
    auto get = [&](const char* key) { return mean[key].is_null() ? NAN : mean[key].get<double>(); };
    line("| " + toy_method_name(methods[m]) + " | " + std::to_string(summaries[m].recovered) + "/3 | " +
         std::to_string(summaries[m].top_k) + "/3 | " + number(get("loss")) + " | " + number(get("support_found")) +
         " | " + number(get("relative_error")) + " | " + number(get("l1")) + " (" + number(get("truth_l1")) + ") | " +
         share(get("off_support_below_1e-3")) + " | " + number(get("relative_distance_to_min_l2")) + " | " +
         std::to_string(summaries[m].recovered_of_ten) + "/10 |");
  }
  line();
  line("### Sparse recovery, per optimizer");
  for (size_t m = 0; m < methods.size(); ++m) {
    const auto& summary = summaries[m];
    line();
    line("**" + toy_method_name(methods[m]) + "** (learning rate " + setting(d.lr[m]) + ")");
    line();
    line(
        "| seed | loss | support found | recovered | top 5 | relative error | L1 (truth) | off-support small | to "
        "min-L2 |");
    line("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const auto& r : summary.seeds) {
      line("| " + std::to_string(r.seed) + " | " + number(r.loss) + " | " + std::to_string(r.support_found) + " | " +
           (r.support_exact ? "yes" : "no") + " | " + (r.top_k_exact ? "yes" : "no") + " | " +
           number(r.relative_error) + " | " + number(r.l1) + " (" + number(r.truth_l1) + ") | " +
           share(r.off_support_small) + " | " + number(r.to_min_l2) + " |");
    }
    const auto& mean = json["sparse"]["methods"][m]["mean"];
    auto get = [&](const char* key) { return mean[key].is_null() ? NAN : mean[key].get<double>(); };
    line("| mean | " + number(get("loss")) + " | " + number(get("support_found")) + " | " +
         std::to_string(summary.recovered) + "/3 | " + std::to_string(summary.top_k) + "/3 | " +
         number(get("relative_error")) + " | " + number(get("l1")) + " (" + number(get("truth_l1")) + ") | " +
         share(get("off_support_below_1e-3")) + " | " + number(get("relative_distance_to_min_l2")) + " |");
    line();
    std::string reading = "Recovers the support in " + std::to_string(summary.recovered) + "/3 seeds (" +
                          std::to_string(summary.recovered_of_ten) + "/10 over seeds 1-10)";
    if (summary.recovered < 3) {
      reading += "; dense: " + number(get("support_found")) + " of " + std::to_string(d.sparse_cols) +
                 " entries above 10% of its largest on average, L1 norm " + number(get("l1")) +
                 " against the truth's " + number(get("truth_l1"));
      if (summary.top_k > 0) {
        reading += "; its " + std::to_string(d.sparse_nonzeros) + " largest entries are the true support in " +
                   std::to_string(summary.top_k) + "/3 seeds";
      }
    } else {
      reading += ", relative error " + number(get("relative_error")) + ", " + share(get("off_support_below_1e-3")) +
                 " of the off-support entries below 1e-3";
    }
    if (get("relative_distance_to_min_l2") < 0.01) {
      reading += "; it ends at the minimum-L2 solution (" + number(get("relative_distance_to_min_l2")) + " away)";
    }
    line(reading + ".");
  }
  // What β does: HAM and HORST at the same settings with β = 0, the pull α alone.
  ToyDefaults no_decay = d;
  no_decay.beta = 0.0;
  line();
  line("### HAM and HORST without the decay (β = 0, everything else the same)");
  line();
  line("| optimizer | recovered | support found (mean) | L1 (mean) | loss (mean) |");
  line("| --- | --- | --- | --- | --- |");
  for (const ToyMethod method : {ToyMethod::ham, ToyMethod::horst}) {
    int recovered = 0;
    double found = 0, l1 = 0, loss = 0;
    ordered_json entry;
    entry["method"] = toy_method_name(method);
    for (const uint64_t seed : kSeeds) {
      const auto r = run_sparse(method, seed, no_decay);
      recovered += r.support_exact ? 1 : 0;
      found += static_cast<double>(r.support_found) / 3.0;
      l1 += r.l1 / 3.0;
      loss += r.loss / 3.0;
      entry["per_seed"].push_back({{"seed", r.seed},
                                   {"support_found", r.support_found},
                                   {"support_exact", r.support_exact},
                                   {"l1", value(r.l1)},
                                   {"loss", value(r.loss)}});
    }
    entry["recovered_seeds"] = recovered;
    json["sparse"]["beta_zero"].push_back(entry);
    line("| " + toy_method_name(method) + " | " + std::to_string(recovered) + "/3 | " + number(found) + " | " +
         number(l1) + " | " + number(loss) + " |");
  }
  line();
  line("### The 2-D toy: 0.8 x + 0.3 y = 1, from " + point(start));
  line();
  line("The minimum-L2 point is " + point(min_l2) + ", the minimum-L1 point " + point(min_l1) +
       ", the L∞ corner (x = y) " + point(min_linf) + ".");
  line();
  line("| optimizer | learning rate | end point | loss | to min-L2 | to min-L1 | to L∞ corner | nearest |");
  line("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (size_t m = 0; m < methods.size(); ++m) {
    const auto& r = plane_results[m];
    line("| " + toy_method_name(methods[m]) + " | " + setting(d.lr[m]) + " | " + point(r.end) + " | " + number(r.loss) +
         " | " + number(r.to_l2) + " | " + number(r.to_l1) + " | " + number(r.to_linf) + " | " + r.nearest + " |");
  }

  line();
  for (const char* place : {"min-L2 point", "min-L1 point", "L∞ corner"}) {
    std::string names;
    for (size_t m = 0; m < methods.size(); ++m) {
      if (plane_results[m].nearest != place) continue;
      names += (names.empty() ? "" : ", ") + toy_method_name(methods[m]);
    }
    line("- Nearest the " + std::string(place) + ": " + (names.empty() ? std::string("none") : names) + ".");
  }
  const size_t horst = methods.size() - 1;
  if (methods[horst] == ToyMethod::horst && plane_results[horst].nearest == "L∞ corner") {
    line();
    line("HORST recovers the sparse toy's support but ends at the 2-D toy's L∞ corner: its mirror factor");
    line("exp(−α sign(θ) s_k − ηβ) scales AdamW's step s_k, and with one equation the gradients of x and y are");
    line("proportional, so AdamW's normalised step is the same for both; from x = y it stays on the diagonal.");
  }

  std::filesystem::create_directories(out_dir);
  const auto json_path = out_dir / "implicit-bias.json", md_path = out_dir / "implicit-bias.md";
  std::ofstream(json_path) << json.dump(2) << "\n";
  std::ofstream(md_path) << md;
  std::cout << md;
  std::cerr << "wrote " << json_path.string() << " and " << md_path.string() << "\n";
  return 0;
}
