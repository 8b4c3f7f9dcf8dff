// descentlab-cli compare DIR|RUN... --group-by KEYS --pair A B: runs as a study. The run files below the folders,
// grouped by configuration (every differing key but the seeds by default), each group's final metric over its
// members, and two groups paired seed by seed: the differences, their mean ± standard deviation and the wins.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "app/cli/study_command.h"
#include "core/record/metrics.h"
#include "core/study/study.h"
#include "core/util/error.h"

namespace descentlab::cli {
namespace {

std::vector<std::string> split_keys(const std::string& text) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) keys.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return keys;
}

// The metric a study compares when none is named: the first test metric every readable run has.
std::string default_metric(const std::vector<study::RunEntry>& runs) {
  for (const char* name : {record::metric::kTestAccuracy, record::metric::kTestPerplexity, record::metric::kTestRmse,
                           record::metric::kTestLoss}) {
    bool everyone = true, anyone = false;
    for (const auto& run : runs) {
      if (!run.error.empty()) continue;
      anyone = true;
      everyone = everyone && run.finals.count(name) > 0;
    }
    if (anyone && everyone) return name;
  }
  return record::metric::kTestLoss;
}

const study::Group& one_group(const std::vector<study::Group>& groups, const std::string& selector) {
  const auto matching = study::groups_matching(groups, selector);
  if (matching.size() == 1) return groups[matching.front()];
  std::string known;
  for (const auto& group : groups) known += "\n  " + group.label;
  throw Error("--pair " + selector + ": " + (matching.empty() ? "no group matches" : "several groups match") +
              "; the groups are:" + known);
}

nlohmann::json comparison_json(const study::PairedComparison& comparison) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& pair : comparison.pairs) {
    pairs.push_back(
        {{"seed", pair.seed}, {"a", pair.a}, {"b", pair.b}, {"difference", pair.difference}, {"a_wins", pair.a_wins}});
  }
  return {{"metric", comparison.metric},
          {"better", comparison.better == record::Direction::Lower ? "lower" : "higher"},
          {"pairs", pairs},
          {"mean_difference", comparison.mean},
          {"std_difference", comparison.standard_deviation},
          {"wins", comparison.wins},
          {"of", comparison.pairs.size()},
          {"wins_text", comparison.wins_text()}};
}

// One paired comparison as comparison_json() gives it.
void print_comparison(const nlohmann::json& comparison, const std::string& heading) {
  std::printf("\n%s (A - B, %s is better):\n", heading.c_str(), comparison["better"].get<std::string>().c_str());
  for (const auto& pair : comparison["pairs"]) {
    std::printf("  seed %-6s A %.4f  B %.4f  A - B %+.4f%s\n", pair["seed"].get<std::string>().c_str(),
                pair["a"].get<double>(), pair["b"].get<double>(), pair["difference"].get<double>(),
                pair["a_wins"].get<bool>() ? "  A wins" : "");
  }
  std::printf("  mean %+.4f ± %.4f, A better in %s seeds\n", comparison["mean_difference"].get<double>(),
              comparison["std_difference"].get<double>(), comparison["wins_text"].get<std::string>().c_str());
}

}  // namespace

nlohmann::json study_comparison(const StudyCompareOptions& options) {
  std::vector<std::string> paths;
  int skipped = 0;
  for (const auto& input : options.inputs) {
    if (std::filesystem::is_directory(input)) {
      int here = 0;
      for (auto& path : study::run_files_below(input, &here)) paths.push_back(std::move(path));
      skipped += here;
    } else {
      paths.push_back(input);
    }
  }
  std::vector<study::RunEntry> runs;
  nlohmann::json unreadable = nlohmann::json::array();
  for (const auto& path : paths) {
    runs.push_back(study::read_entry(path));
    if (!runs.back().error.empty()) unreadable.push_back({{"run", path}, {"error", runs.back().error}});
  }
  const std::vector<std::string> keys =
      options.group_by.empty() ? study::default_group_keys(runs) : split_keys(options.group_by);
  const std::string metric = options.metric.empty() ? default_metric(runs) : options.metric;
  const auto groups = study::group_runs(runs, keys);
  nlohmann::json groups_json = nlohmann::json::array();
  for (const auto& group : groups) {
    std::vector<double> values;
    nlohmann::json members = nlohmann::json::array();
    for (size_t index : group.members) {
      members.push_back(runs[index].path);
      const auto found = runs[index].finals.find(metric);
      if (found != runs[index].finals.end()) values.push_back(found->second.value);
    }
    const auto stats = study::statistics_of(values);
    groups_json.push_back({{"label", group.label},
                           {"values", group.values},
                           {"runs", members},
                           {"metric",
                            {{"count", stats.count},
                             {"mean", stats.mean},
                             {"std", stats.standard_deviation},
                             {"min", stats.min},
                             {"max", stats.max}}}});
  }
  nlohmann::json result = {{"runs", runs.size()}, {"skipped_files", skipped}, {"unreadable", unreadable},
                           {"group_by", keys},    {"metric", metric},         {"groups", groups_json},
                           {"pair", nullptr}};
  if (options.pair.size() == 2) {
    const study::Group& a = one_group(groups, options.pair[0]);
    const study::Group& b = one_group(groups, options.pair[1]);
    nlohmann::json pair = comparison_json(study::pair_groups(runs, a, b, metric));
    pair["a"] = a.label;
    pair["b"] = b.label;
    // AC/DC runs: the metric just before and right after each compression, paired too.
    nlohmann::json compressions = nlohmann::json::array();
    for (const char* when : {"before", "after"}) {
      const std::string series = metric + "_" + when + "_compression";
      size_t count = 0;
      for (size_t index : a.members) {
        const auto found = runs[index].per_compression.find(series);
        if (found != runs[index].per_compression.end()) count = std::max(count, found->second.size());
      }
      for (size_t k = 0; k < count; ++k) {
        auto at = study::pair_groups_by(runs, a, b, series, study::direction_of(metric),
                                        [&](const study::RunEntry& run) -> std::optional<double> {
                                          const auto found = run.per_compression.find(series);
                                          if (found == run.per_compression.end() || found->second.size() <= k) {
                                            return std::nullopt;
                                          }
                                          return found->second[k];
                                        });
        nlohmann::json entry = comparison_json(at);
        entry["compression"] = k + 1;
        entry["when"] = when;
        compressions.push_back(entry);
      }
    }
    pair["compressions"] = compressions;
    result["pair"] = pair;
  }
  return result;
}

int run_study_compare(const StudyCompareOptions& options) {
  const nlohmann::json result = study_comparison(options);
  if (options.json) {
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  std::printf("%zu runs (%d other files skipped, %zu unreadable); grouped by %s; metric %s\n",
              result["runs"].get<size_t>(), result["skipped_files"].get<int>(), result["unreadable"].size(),
              result["group_by"].empty() ? "nothing" : result["group_by"].dump().c_str(),
              result["metric"].get<std::string>().c_str());
  for (const auto& entry : result["unreadable"]) {
    std::printf("  unreadable: %s\n", entry["error"].get<std::string>().c_str());
  }
  for (const auto& group : result["groups"]) {
    const auto& m = group["metric"];
    std::printf("  %-60s %.4f ± %.4f  (min %.4f, max %.4f, %zu)\n", group["label"].get<std::string>().c_str(),
                m["mean"].get<double>(), m["std"].get<double>(), m["min"].get<double>(), m["max"].get<double>(),
                m["count"].get<size_t>());
  }
  if (!result["pair"].is_null()) {
    const auto& pair = result["pair"];
    std::printf("\nA = %s\nB = %s\n", pair["a"].get<std::string>().c_str(), pair["b"].get<std::string>().c_str());
    print_comparison(pair, "final " + pair["metric"].get<std::string>());
    // AC/DC: one line per compression, before → after its mask.
    if (!pair["compressions"].empty()) {
      std::printf("\nat each AC/DC compression, A - B just before → right after its mask (mean ± std, A wins):\n");
    }
    std::map<int, std::string> lines;
    for (const auto& entry : pair["compressions"]) {
      char text[120];
      std::snprintf(text, sizeof text, "%+.4f ± %.4f (%s)", entry["mean_difference"].get<double>(),
                    entry["std_difference"].get<double>(), entry["wins_text"].get<std::string>().c_str());
      std::string& line = lines[entry["compression"].get<int>()];
      line += line.empty() ? text : std::string(" → ") + text;
    }
    for (const auto& [k, line] : lines) std::printf("  compression %d: %s\n", k, line.c_str());
  }
  return 0;
}

}  // namespace descentlab::cli
