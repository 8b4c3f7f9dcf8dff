#pragma once
// descentlab-cli compare over a study: run files and folders of them, grouped, two groups paired by seed.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace descentlab::cli {

struct StudyCompareOptions {
  std::vector<std::string> inputs;  // run files and folders (every run file below)
  std::string group_by;             // comma-separated config keys; empty: every differing key but the seeds
  std::vector<std::string> pair;    // two group selectors ("optimizer.kind=horst"), or none
  std::string metric;               // empty: the first test metric every run has
  bool json = false;
};

// What `compare` prints with --json: runs, groups with the metric's statistics, the paired comparison.
nlohmann::json study_comparison(const StudyCompareOptions& options);
int run_study_compare(const StudyCompareOptions& options);

}  // namespace descentlab::cli
