// descentlab-cli compare DIR|RUN... --group-by KEYS --pair A B: runs as a study. The run files below the folders,
// grouped by configuration (every differing key but the seeds by default), each group's final metric over its
// members, and two groups paired seed by seed: the differences, their mean ± standard deviation and the wins.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
    pairs.push_back({{"seed", pair.seed},
                     {"a", pair.a},
                     {"b", pair.b},
                     {"difference", pair.difference},
                     {"a_wins", pair.a_wins},
                     {"a_runs", pair.a_runs},
                     {"b_runs", pair.b_runs}});
  }
  return {{"metric", comparison.metric},
          {"better", comparison.better == record::Direction::Lower ? "lower" : "higher"},
          {"pairs", pairs},
          {"mean_difference", comparison.mean},
          {"std_difference", comparison.standard_deviation},
          {"wins", comparison.wins},
          {"of", comparison.pairs.size()},
          {"wins_text", comparison.wins_text()},
          {"duplicates", comparison.duplicates_text()}};
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
  const std::string duplicates = comparison.value("duplicates", "");
  if (!duplicates.empty()) std::printf("  runs sharing a seed: %s\n", duplicates.c_str());
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text.empty() ? "none" : text;
}

// The run files the inputs name: files as given, folders by every run file below them. A missing input, or inputs
// that hold no run file, are refused naming them (they were an empty study with exit 0).
std::vector<std::string> study_paths(const std::vector<std::string>& inputs, int& skipped) {
  std::vector<std::string> paths;
  for (const auto& input : inputs) {
    std::error_code status;
    if (!std::filesystem::exists(input, status)) throw Error(input + ": no such run file or folder");
    if (std::filesystem::is_directory(input, status)) {
      int here = 0;
      for (auto& path : study::run_files_below(input, &here)) paths.push_back(std::move(path));
      skipped += here;
    } else {
      paths.push_back(input);
    }
  }
  if (paths.empty()) throw Error("no run file (*.h5) below " + joined(inputs));
  return paths;
}

// Each --group-by key is a configuration key of the runs: a key no run has (or a section such as "train") made one
// group "(none)" of every run.
void check_group_keys(const std::vector<std::string>& keys, const std::vector<study::RunEntry>& runs) {
  std::set<std::string> known;
  for (const auto& run : runs) {
    for (const auto& entry : run.config) known.insert(entry.first);
  }
  for (const auto& key : keys) {
    if (known.count(key)) continue;
    std::vector<std::string> inside;
    for (const auto& name : known) {
      if (name.rfind(key + ".", 0) == 0) inside.push_back(name);
    }
    if (!inside.empty()) {
      throw Error("--group-by " + key + ": a section of the configuration, not a key; its keys: " + joined(inside));
    }
    throw Error("--group-by " + key + ": no run has this configuration key; the keys that differ between these " +
                "runs: " + joined(study::varying_keys(runs)));
  }
}

// The metric is a series some run has: an unknown one reported a mean of 0.
void check_metric(const std::string& metric, const std::vector<study::RunEntry>& runs) {
  std::set<std::string> known;
  for (const auto& run : runs) {
    for (const auto& entry : run.finals) known.insert(entry.first);
  }
  if (known.count(metric)) return;
  throw Error("--metric " + metric + ": no run has this series; the runs' series: " +
              joined(std::vector<std::string>(known.begin(), known.end())));
}

// One group's final metric over its members: the statistics of those evaluated, and the runs never evaluated (left
// out of them; a group of none has no numbers, not 0.0000 ± 0.0000).
nlohmann::json group_json(const study::Group& group, const std::vector<study::RunEntry>& runs,
                          const std::string& metric) {
  std::vector<double> values;
  nlohmann::json members = nlohmann::json::array();
  nlohmann::json not_evaluated = nlohmann::json::array();
  for (size_t index : group.members) {
    members.push_back(runs[index].path);
    const auto found = runs[index].finals.find(metric);
    if (found != runs[index].finals.end()) {
      values.push_back(found->second.value);
    } else {
      not_evaluated.push_back(runs[index].path);
    }
  }
  const auto stats = study::statistics_of(values);
  const auto number = [&](double value) { return values.empty() ? nlohmann::json() : nlohmann::json(value); };
  return {{"label", group.label},
          {"values", group.values},
          {"runs", members},
          {"not_evaluated", not_evaluated},
          {"metric",
           {{"count", stats.count},
            {"mean", number(stats.mean)},
            {"std", number(stats.standard_deviation)},
            {"min", number(stats.min)},
            {"max", number(stats.max)}}}};
}

// The seeds (kSeedKey) of a group's runs, for a refusal.
std::string seeds_of(const study::Group& group, const std::vector<study::RunEntry>& runs) {
  std::set<std::string> seeds;
  for (size_t index : group.members) {
    const auto found = runs[index].config.find(study::kSeedKey);
    seeds.insert(found == runs[index].config.end() ? "?" : found->second);
  }
  return joined(std::vector<std::string>(seeds.begin(), seeds.end()));
}

// The AC/DC runs' metric just before and right after each compression, paired too.
nlohmann::json paired_compressions(const std::vector<study::RunEntry>& runs, const study::Group& a,
                                   const study::Group& b, const std::string& metric) {
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
  return compressions;
}

// Two different groups paired seed by seed; a group with itself, or two with no seed in common, are refused.
nlohmann::json paired_groups(const std::vector<study::RunEntry>& runs, const std::vector<study::Group>& groups,
                             const std::vector<std::string>& selectors, const std::string& metric) {
  const study::Group& a = one_group(groups, selectors[0]);
  const study::Group& b = one_group(groups, selectors[1]);
  if (&a == &b) {
    throw Error("--pair " + selectors[0] + " " + selectors[1] + ": both select the group " + a.label +
                "; pair two different groups");
  }
  const study::PairedComparison comparison = study::pair_groups(runs, a, b, metric);
  if (comparison.pairs.empty()) {
    throw Error("--pair: " + a.label + " and " + b.label + " have no seed in common where both have " + metric +
                " (seeds: " + seeds_of(a, runs) + "; and " + seeds_of(b, runs) + ")");
  }
  nlohmann::json pair = comparison_json(comparison);
  pair["a"] = a.label;
  pair["b"] = b.label;
  pair["compressions"] = paired_compressions(runs, a, b, metric);
  return pair;
}

}  // namespace

nlohmann::json study_comparison(const StudyCompareOptions& options) {
  int skipped = 0;
  const std::vector<std::string> paths = study_paths(options.inputs, skipped);
  std::vector<study::RunEntry> runs;
  nlohmann::json unreadable = nlohmann::json::array();
  for (const auto& path : paths) {
    runs.push_back(study::read_entry(path));
    if (!runs.back().error.empty()) unreadable.push_back({{"run", path}, {"error", runs.back().error}});
  }
  const std::vector<std::string> keys =
      options.group_by.empty() ? study::default_group_keys(runs) : split_keys(options.group_by);
  if (!options.group_by.empty()) check_group_keys(keys, runs);
  const std::string metric = options.metric.empty() ? default_metric(runs) : options.metric;
  if (!options.metric.empty()) check_metric(metric, runs);
  const auto groups = study::group_runs(runs, keys);
  nlohmann::json groups_json = nlohmann::json::array();
  for (const auto& group : groups) groups_json.push_back(group_json(group, runs, metric));
  nlohmann::json result = {{"runs", runs.size()}, {"skipped_files", skipped}, {"unreadable", unreadable},
                           {"group_by", keys},    {"metric", metric},         {"groups", groups_json},
                           {"pair", nullptr}};
  if (options.pair.size() == 2) result["pair"] = paired_groups(runs, groups, options.pair, metric);
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
    const size_t unevaluated = group["not_evaluated"].size();
    const std::string also = unevaluated == 0 ? "" : ", " + std::to_string(unevaluated) + " not evaluated";
    if (m["count"].get<size_t>() == 0) {
      std::printf("  %-60s not evaluated  (%zu runs)\n", group["label"].get<std::string>().c_str(), unevaluated);
      continue;
    }
    std::printf("  %-60s %.4f ± %.4f  (min %.4f, max %.4f, %zu%s)\n", group["label"].get<std::string>().c_str(),
                m["mean"].get<double>(), m["std"].get<double>(), m["min"].get<double>(), m["max"].get<double>(),
                m["count"].get<size_t>(), also.c_str());
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
