#pragma once
// Runs as a study (torch-free): the run files below a folder, each summarised by its configuration and its final
// values; groups of runs that differ only by their seeds, drawn as a mean with a band; two groups paired seed by
// seed; a filter over runs. The CLI (`compare`, `report DIR`) and the window's runs browser both build on this.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/record/band.h"
#include "core/record/metrics.h"
#include "core/store/run_file.h"

namespace descentlab::study {

// The keys that tell seeds of one configuration apart: left out of the default grouping and used to pair runs.
inline constexpr const char* kSeedKey = "train.seed";
inline constexpr const char* kSplitSeedKey = "data.split_seed";

// A run of a user's module on a user's data (docs/your-model.md) has four more keys, from what its run file keeps of
// the two files: the file names ("inputs.model" -> "cnn.pt") and the first 12 hex digits of their SHA-256s
// ("inputs.model_sha256" -> "c0c1f711a268"). Runs group and filter by them; the files' paths (model.file, data.file)
// are left out of the default grouping, so a module moved between runs is still one model.
inline constexpr const char* kModelInputKey = "inputs.model";
inline constexpr const char* kModelHashKey = "inputs.model_sha256";
inline constexpr const char* kDataInputKey = "inputs.data";
inline constexpr const char* kDataHashKey = "inputs.data_sha256";
inline constexpr size_t kInputHashDigits = 12;
// Adds those keys for the run file header `header` to `config` (a flattened configuration).
void add_input_keys(const store::RunHeader& header, std::map<std::string, std::string>& config);

// A scalar series' last row.
struct FinalValue {
  int64_t step = 0;
  double value = 0.0;
};

// What the runs table shows of one run file, read without its series: its configuration flattened to dotted keys
// ("train.lr" -> "0.003"; strings without quotes, lists as JSON) and each scalar series' last row.
struct RunEntry {
  std::string path;
  std::string name;  // its path below the study's folder, without ".h5"
  std::map<std::string, std::string> config;
  std::map<std::string, FinalValue> finals;
  // Every value of the scalar series recorded once per event rather than per step: the test metric just before and
  // right after each AC/DC compression ("test_accuracy_after_compression"), in order.
  std::map<std::string, std::vector<double>> per_compression;
  int64_t last_step = 0;  // the largest step any scalar series reached
  std::string error;      // why the file could not be read (the entry then holds only path and name)
  // What a person said of the run (store::RunAnnotation): a name of their choosing ("" for none), tags and a note.
  std::string label;
  std::vector<std::string> tags;
  std::string note;
  // A branch (issue 55): its parent's run file (absolute, as recorded), the step and what it changed; -1: none.
  std::string branch_parent;
  int64_t branch_step = -1;
  std::string branch_changes;
};

// The run files below `folder` (recursively, sorted by path): every "*.h5" that is not a writer's temporary. The
// parts of a run beside its file (RUN.h5.log, RUN.h5.checkpoints/) are not counted; any other file adds to
// `*skipped`. Throws Error naming the folder when it cannot be listed.
std::vector<std::string> run_files_below(const std::string& folder, int* skipped);

// Reads one run file's entry; a file that cannot be read gives an entry whose `error` says why (never throws). Its
// name is its path below `study_folder` without ".h5" ("vit-horst/seed2"; the file's name alone when none is given).
RunEntry read_entry(const std::string& path, const std::string& study_folder = "");

// "train.lr" -> "0.003" for every leaf of a JSON object's text (empty map when the text is not a JSON object).
std::map<std::string, std::string> flatten_config(const std::string& config_json);

// The configuration keys whose values differ between the runs (a key missing in some runs differs), sorted.
std::vector<std::string> varying_keys(const std::vector<RunEntry>& runs);
// The default grouping: every varying key except the seeds (kSeedKey, kSplitSeedKey).
std::vector<std::string> default_group_keys(const std::vector<RunEntry>& runs);

struct Group {
  // "name horst, alpha 5 (3 seeds)": a key by its last part; "(5 runs, 3 seeds)" when seeds repeat, "(3 runs)"
  // when the runs have no seed.
  std::string label;
  std::map<std::string, std::string> values;  // the group keys' values ("" when a run lacks the key)
  std::vector<size_t> members;                // indices into the runs, in run order
};

// The runs grouped by the values of `keys`, in order of the first member. Runs with an error are left out. With no
// keys every run is one group.
std::vector<Group> group_runs(const std::vector<RunEntry>& runs, const std::vector<std::string>& keys);

// A selector such as "optimizer.name=horst,optimizer.alpha=5": the groups whose values match every part (a value
// compared as a number when both sides are numbers).
std::vector<size_t> groups_matching(const std::vector<Group>& groups, const std::string& selector);

using record::BandKind;

// One group's series drawn as its mean with a band, over the steps every member reached (a member's series may have
// more rows than another's; the band then stops at the shortest, and `shortened` says so).
struct Band {
  std::vector<int64_t> steps;
  std::vector<double> mean, low, high;  // rows x width, row-major
  int64_t width = 1;
  size_t members = 0;
  bool shortened = false;    // some member has rows past the last step drawn
  int64_t longest_step = 0;  // the last step of the longest member
};
// Members' rows are matched by step. Members without the series are skipped (`members` counts those drawn).
Band band_of(const std::vector<const store::MetricSeries*>& members, BandKind kind);

// Two groups paired seed by seed (kSeedKey) on one metric's final value.
struct PairedComparison {
  std::string metric;
  record::Direction better = record::Direction::Higher;
  struct Pair {
    std::string seed;
    double a = 0.0, b = 0.0;     // each the mean over the group's runs of that seed
    double difference = 0.0;     // a - b
    bool a_wins = false;         // a better than b in the metric's direction
    int a_runs = 1, b_runs = 1;  // runs of this seed with the metric in A and B (more than 1: re-runs, averaged)
  };
  // One pair per distinct seed in both groups, where both have the metric; in seed order. Runs that share a seed
  // (re-runs, copies) are averaged into one value, so a seed counts once in the wins and the spread.
  std::vector<Pair> pairs;
  double mean = 0.0;                // of the differences
  double standard_deviation = 0.0;  // sample (n - 1); 0 for one pair
  int wins = 0;
  std::string wins_text() const;  // "3 of 3"
  // "" when every seed has one run a side; else "seed 0: A 20 runs, B 20 runs; seed 1: ... (averaged)".
  std::string duplicates_text() const;
};
// `better` defaults to the metric vocabulary's direction (Higher for an unknown metric).
PairedComparison pair_groups(const std::vector<RunEntry>& runs, const Group& a, const Group& b,
                             const std::string& metric, std::optional<record::Direction> better = std::nullopt);
// The same over any value of a run (nullopt: the run has none and is left unpaired); `what` names it.
PairedComparison pair_groups_by(const std::vector<RunEntry>& runs, const Group& a, const Group& b,
                                const std::string& what, record::Direction better,
                                const std::function<std::optional<double>(const RunEntry&)>& value);
// The direction the vocabulary gives `metric` (Higher for an unknown or descriptive one).
record::Direction direction_of(const std::string& metric);

// Up to `count` of `candidates` nearest to `key` by edit distance (ties in the candidates' order), for "did you mean".
std::vector<std::string> nearest_keys(const std::string& key, const std::vector<std::string>& candidates,
                                      size_t count = 3);

// Mean, sample standard deviation, min and max of values (all 0 for none).
struct Statistics {
  size_t count = 0;
  double mean = 0.0, standard_deviation = 0.0, min = 0.0, max = 0.0;
};
Statistics statistics_of(const std::vector<double>& values);

// The runs table's filter: terms separated by spaces, all of which a run must match. A term is
//   text               the run's name, path, own name (label), a tag or its note contains it (any case)
//   tag=t  tag!=t      the run has (has not) the tag t (any case)
//   key=value          a config key or final metric equals it (as numbers when both are)
//   key!=value         ... differs
//   key>v key>=v key<v key<=v   compared as numbers
//   key=a..b           a number in [a, b]
// A key is a config key ("optimizer.alpha") or a final metric ("test_accuracy"). Throws Error naming the term when
// it cannot be read ("test_accuracy>" has no value).
// The filter's key for a run's tags ("tag=baseline").
inline constexpr const char* kTagFilterKey = "tag";

class RunFilter {
 public:
  explicit RunFilter(const std::string& text = "");
  bool matches(const RunEntry& run) const;
  bool empty() const { return terms_.empty(); }
  // "" when every key the filter names is a config key or final metric of some run; else what no run has and the
  // nearest keys the runs do have: `no run has the key "optimiser.name" (nearest: optimizer.name, ...)`. A filter on
  // a misspelt key matches nothing, and this says why.
  std::string unknown_keys_text(const std::vector<RunEntry>& runs) const;

 private:
  struct Term {
    std::string key;  // empty for text
    std::string op;   // "", "=", "!=", ">", ">=", "<", "<=", ".."
    std::string value;
    double low = 0.0, high = 0.0;
  };
  std::vector<Term> terms_;
};

}  // namespace descentlab::study
