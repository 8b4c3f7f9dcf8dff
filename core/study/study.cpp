#include "core/study/study.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include "core/store/run_reader.h"
#include "core/util/error.h"

namespace descentlab::study {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// A run's own parts beside its file, and a writer's temporaries: not runs, and not "other files" either.
bool part_of_a_run(const std::string& name) {
  return ends_with(name, ".h5.log") || ends_with(name, ".h5.lock") || name.find(".h5.tmp-") != std::string::npos ||
         name.find(".h5.log.tmp-") != std::string::npos;
}

std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(value)) return std::nullopt;
  return value;
}

bool same_value(const std::string& a, const std::string& b) {
  const auto x = as_number(a), y = as_number(b);
  if (x && y) return *x == *y;
  return a == b;
}

void flatten_into(const nlohmann::json& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) flatten_into(child, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out[prefix] = node.is_string() ? node.get<std::string>() : node.dump();
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The value of `key` for a run: a config key first, then a final metric; nullopt when the run has neither.
std::optional<std::string> value_of(const RunEntry& run, const std::string& key) {
  const auto config = run.config.find(key);
  if (config != run.config.end()) return config->second;
  const auto final_value = run.finals.find(key);
  if (final_value != run.finals.end()) {
    nlohmann::json number = final_value->second.value;
    return number.dump();
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> run_files_below(const std::string& folder, int* skipped) {
  std::error_code status;
  if (!fs::is_directory(folder, status)) throw Error(folder + ": not a folder");
  std::vector<std::string> runs;
  int others = 0;
  fs::recursive_directory_iterator walk(folder, fs::directory_options::skip_permission_denied, status);
  if (status) throw Error(folder + ": cannot list it: " + status.message());
  for (auto entry = fs::begin(walk); entry != fs::end(walk); entry.increment(status)) {
    if (status) throw Error(folder + ": cannot list it: " + status.message());
    const std::string name = entry->path().filename().string();
    if (entry->is_directory(status)) {
      if (ends_with(name, ".h5.checkpoints")) entry.disable_recursion_pending();  // a run's data files
      continue;
    }
    if (part_of_a_run(name)) continue;
    if (ends_with(name, ".h5") && entry->is_regular_file(status)) {
      runs.push_back(entry->path().string());
    } else {
      ++others;
    }
  }
  std::sort(runs.begin(), runs.end());
  if (skipped) *skipped = others;
  return runs;
}

std::map<std::string, std::string> flatten_config(const std::string& config_json) {
  std::map<std::string, std::string> flat;
  const auto parsed = nlohmann::json::parse(config_json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return flat;
  flatten_into(parsed, "", flat);
  return flat;
}

void add_input_keys(const store::RunHeader& header, std::map<std::string, std::string>& config) {
  const auto add = [&](const std::optional<store::RunInputFile>& file, const char* key, const char* sha_key) {
    if (!file) return;
    config[key] = fs::path(file->path).filename().string();
    config[sha_key] = file->sha256.substr(0, kInputHashDigits);
  };
  add(header.model_file, kModelInputKey, kModelHashKey);
  add(header.data_file, kDataInputKey, kDataHashKey);
}

RunEntry read_entry(const std::string& path, const std::string& study_folder) {
  RunEntry entry;
  entry.path = path;
  std::error_code status;
  const fs::path below = study_folder.empty() ? fs::path() : fs::relative(path, study_folder, status);
  entry.name = below.empty() || status || *below.begin() == ".." ? fs::path(path).filename().string() : below.string();
  if (ends_with(entry.name, ".h5")) entry.name.resize(entry.name.size() - 3);
  try {
    const store::RunReader reader(path);
    entry.config = flatten_config(reader.header().config_json);
    add_input_keys(reader.header(), entry.config);
    entry.label = reader.header().annotation.name;
    entry.tags = reader.header().annotation.tags;
    entry.note = reader.header().annotation.note;
    if (const auto& lineage = reader.header().lineage) {
      entry.branch_parent = lineage->parent_file;
      entry.branch_step = lineage->branch_step;
      entry.branch_changes = lineage->changes;
    }
    // Each scalar series' last row alone (a series of several columns is known by its shape and not read); the few
    // once-per-compression series whole (one value per compression).
    for (const auto& name : reader.metric_names()) {
      const bool per_compression = ends_with(name, "_compression");
      const store::MetricSeries series =
          per_compression ? reader.metric(name) : reader.last_metric_row(name, /*scalars_only=*/true);
      if (series.rows() == 0) continue;
      entry.last_step = std::max(entry.last_step, series.steps.back());
      if (series.width != 1) continue;
      entry.finals[name] = {series.steps.back(), series.values.back()};
      if (per_compression) entry.per_compression[name] = series.values;
    }
  } catch (const std::exception& error) {
    entry.config.clear();
    entry.finals.clear();
    entry.per_compression.clear();
    entry.error = error.what();
  }
  return entry;
}

std::vector<std::string> varying_keys(const std::vector<RunEntry>& runs) {
  std::map<std::string, std::set<std::string>> seen;
  size_t readable = 0;
  for (const auto& run : runs) {
    if (!run.error.empty()) continue;
    ++readable;
    for (const auto& [key, value] : run.config) seen[key].insert(value);
  }
  std::vector<std::string> keys;
  for (const auto& [key, values] : seen) {
    size_t having = 0;
    for (const auto& run : runs) having += run.error.empty() && run.config.count(key) ? 1 : 0;
    if (values.size() > 1 || having != readable) keys.push_back(key);
  }
  return keys;
}

std::vector<std::string> default_group_keys(const std::vector<RunEntry>& runs) {
  std::vector<std::string> keys;
  // A user's module and data are told apart by their content (name and SHA-256), not by where the files were: the
  // same module moved, or trained on another machine, is one group.
  bool has_inputs = false;
  for (const auto& run : runs) has_inputs = has_inputs || run.config.count(kModelInputKey) > 0;
  for (const auto& key : varying_keys(runs)) {
    if (key == kSeedKey || key == kSplitSeedKey) continue;
    if (has_inputs && (key == "model.file" || key == "data.file")) continue;
    keys.push_back(key);
  }
  return keys;
}

std::vector<Group> group_runs(const std::vector<RunEntry>& runs, const std::vector<std::string>& keys) {
  std::vector<Group> groups;
  std::map<std::vector<std::string>, size_t> index;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].error.empty()) continue;
    std::vector<std::string> values;
    for (const auto& key : keys) values.push_back(value_of(runs[i], key).value_or(""));
    auto found = index.find(values);
    if (found == index.end()) {
      found = index.emplace(values, groups.size()).first;
      Group group;
      for (size_t k = 0; k < keys.size(); ++k) group.values[keys[k]] = values[k];
      groups.push_back(std::move(group));
    }
    groups[found->second].members.push_back(i);
  }
  // A key is named by its last part ("alpha") unless two keys share it.
  std::map<std::string, int> last_parts;
  const auto last_part = [](const std::string& key) { return key.substr(key.rfind('.') + 1); };
  for (const auto& key : keys) ++last_parts[last_part(key)];
  const bool by_experiment = std::find(keys.begin(), keys.end(), "name") != keys.end();
  for (auto& group : groups) {
    // The experiment's name first, bare ("vit-horst-quick"); then each other key as "alpha 5", except a word the
    // name already says ("optimizer.name horst" beside "vit-horst-quick").
    std::string words = by_experiment ? group.values["name"] : "";
    std::set<std::string> seeds;
    for (const auto& key : keys) {
      const std::string& value = group.values[key];
      if (key == "name") continue;
      if (by_experiment && !value.empty() && key.size() > 5 && key.compare(key.size() - 5, 5, ".name") == 0 &&
          group.values["name"].find(value) != std::string::npos) {
        continue;
      }
      if (!words.empty()) words += ", ";
      const std::string shown =
          last_parts[last_part(key)] == 1 || key.find('.') == std::string::npos ? last_part(key) : key;
      words += shown + " " + (value.empty() ? "(none)" : value);
    }
    for (size_t index : group.members) {
      const auto seed = runs[index].config.find(kSeedKey);
      if (seed != runs[index].config.end()) seeds.insert(seed->second);
    }
    // "3 seeds" when the members are one run per seed, "5 runs, 3 seeds" when seeds repeat, "3 runs" without seeds.
    const size_t count = group.members.size();
    const auto counted = [](size_t n, const char* one, const char* many) {
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    std::string members;
    if (seeds.size() == count)
      members = counted(count, "seed", "seeds");
    else if (seeds.empty())
      members = counted(count, "run", "runs");
    else
      members = counted(count, "run", "runs") + ", " + counted(seeds.size(), "seed", "seeds");
    group.label = words.empty() ? "all runs (" + members + ")" : words + " (" + members + ")";
  }
  return groups;
}

std::vector<size_t> groups_matching(const std::vector<Group>& groups, const std::string& selector) {
  std::vector<std::pair<std::string, std::string>> wanted;
  size_t start = 0;
  while (start <= selector.size()) {
    const size_t comma = std::min(selector.find(',', start), selector.size());
    const std::string part = selector.substr(start, comma - start);
    const size_t equals = part.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw Error("group selector '" + selector + "': '" + part + "' is not key=value");
    }
    wanted.emplace_back(part.substr(0, equals), part.substr(equals + 1));
    start = comma + 1;
  }
  std::vector<size_t> matching;
  for (size_t g = 0; g < groups.size(); ++g) {
    bool all = true;
    for (const auto& [key, value] : wanted) {
      const auto found = groups[g].values.find(key);
      all = all && found != groups[g].values.end() && same_value(found->second, value);
    }
    if (all) matching.push_back(g);
  }
  return matching;
}

Statistics statistics_of(const std::vector<double>& values) {
  Statistics stats;
  stats.count = values.size();
  if (values.empty()) return stats;
  double sum = 0.0;
  for (double v : values) sum += v;
  stats.mean = sum / static_cast<double>(values.size());
  stats.min = *std::min_element(values.begin(), values.end());
  stats.max = *std::max_element(values.begin(), values.end());
  stats.standard_deviation = record::seed_statistics(values.data(), values.size()).std;
  return stats;
}

Band band_of(const std::vector<const store::MetricSeries*>& members, BandKind kind) {
  std::vector<const store::MetricSeries*> drawn;
  for (const auto* series : members) {
    if (series && series->rows() > 0) drawn.push_back(series);
  }
  Band band;
  if (drawn.empty()) return band;
  band.width = drawn.front()->width;
  for (const auto* series : drawn) {
    if (series->width != band.width) throw Error(series->name + ": members have different widths");
  }
  const auto width = static_cast<size_t>(band.width);
  const auto rows = record::band_over(
      drawn.size(), width, [&](size_t m) { return drawn[m]->steps.size(); },
      [&](size_t m, size_t r) { return static_cast<double>(drawn[m]->steps[r]); },
      [&](size_t m, size_t r, size_t c) { return drawn[m]->values[r * width + c]; }, kind);
  band.members = rows.members;
  for (double step : rows.steps) band.steps.push_back(static_cast<int64_t>(step));
  band.mean = rows.mean;
  band.low = rows.low;
  band.high = rows.high;
  band.shortened = rows.shortened;
  band.longest_step = static_cast<int64_t>(rows.longest_step);
  return band;
}

std::string PairedComparison::wins_text() const {
  return std::to_string(wins) + " of " + std::to_string(pairs.size());
}

std::string PairedComparison::duplicates_text() const {
  std::string text;
  const auto runs = [](int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); };
  for (const auto& pair : pairs) {
    if (pair.a_runs == 1 && pair.b_runs == 1) continue;
    text += (text.empty() ? "seed " : "; seed ") + pair.seed + ": A " + runs(pair.a_runs) + ", B " + runs(pair.b_runs);
  }
  return text.empty() ? text : text + " (averaged, each seed counted once)";
}

record::Direction direction_of(const std::string& metric) {
  const auto* info = record::find_metric(metric);
  return info && info->better == record::Direction::Lower ? record::Direction::Lower : record::Direction::Higher;
}

PairedComparison pair_groups(const std::vector<RunEntry>& runs, const Group& a, const Group& b,
                             const std::string& metric, std::optional<record::Direction> better) {
  return pair_groups_by(runs, a, b, metric, better.value_or(direction_of(metric)),
                        [&](const RunEntry& run) -> std::optional<double> {
                          const auto found = run.finals.find(metric);
                          if (found == run.finals.end()) return std::nullopt;
                          return found->second.value;
                        });
}

PairedComparison pair_groups_by(const std::vector<RunEntry>& runs, const Group& a, const Group& b,
                                const std::string& what, record::Direction better,
                                const std::function<std::optional<double>(const RunEntry&)>& value) {
  PairedComparison comparison;
  comparison.metric = what;
  comparison.better = better;
  // Each group's values by seed: a seed's runs (re-runs, copies) are averaged, so that it counts once.
  struct SeedValues {
    double sum = 0.0;
    int runs = 0;
  };
  const auto by_seed = [&](const Group& group) {
    std::map<std::string, SeedValues> values;
    for (size_t index : group.members) {
      const auto seed = runs[index].config.find(kSeedKey);
      const auto found = value(runs[index]);
      if (seed == runs[index].config.end() || !found) continue;
      values[seed->second].sum += *found;
      ++values[seed->second].runs;
    }
    return values;
  };
  const auto a_by_seed = by_seed(a), b_by_seed = by_seed(b);
  for (const auto& [seed, a_values] : a_by_seed) {
    const auto other = b_by_seed.find(seed);
    if (other == b_by_seed.end()) continue;
    PairedComparison::Pair pair;
    pair.seed = seed;
    pair.a = a_values.sum / a_values.runs;
    pair.b = other->second.sum / other->second.runs;
    pair.a_runs = a_values.runs;
    pair.b_runs = other->second.runs;
    pair.difference = pair.a - pair.b;
    pair.a_wins = better == record::Direction::Lower ? pair.a < pair.b : pair.a > pair.b;
    comparison.pairs.push_back(pair);
  }
  std::sort(comparison.pairs.begin(), comparison.pairs.end(), [](const auto& x, const auto& y) {
    const auto nx = as_number(x.seed), ny = as_number(y.seed);
    return nx && ny ? *nx < *ny : x.seed < y.seed;
  });
  std::vector<double> differences;
  for (const auto& pair : comparison.pairs) {
    differences.push_back(pair.difference);
    comparison.wins += pair.a_wins ? 1 : 0;
  }
  const Statistics stats = statistics_of(differences);
  comparison.mean = stats.mean;
  comparison.standard_deviation = stats.standard_deviation;
  return comparison;
}

RunFilter::RunFilter(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
    size_t end = start;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end == start) break;
    const std::string word = text.substr(start, end - start);
    start = end;
    Term term;
    const size_t at = word.find_first_of("=!<>");
    if (at == std::string::npos) {
      term.value = lower(word);
      terms_.push_back(term);
      continue;
    }
    term.key = word.substr(0, at);
    size_t after = at + 1;
    if (word[at] == '!' || word[at] == '<' || word[at] == '>') {
      if (after < word.size() && word[after] == '=')
        ++after;
      else if (word[at] == '!')
        throw Error("filter term '" + word + "': '!' must be followed by '='");
    }
    term.op = word.substr(at, after - at);
    term.value = word.substr(after);
    if (term.key.empty() || term.value.empty()) throw Error("filter term '" + word + "': needs a key and a value");
    const size_t dots = term.value.find("..");
    if (term.op == "=" && dots != std::string::npos) {
      const auto low = as_number(term.value.substr(0, dots)), high = as_number(term.value.substr(dots + 2));
      if (!low || !high) throw Error("filter term '" + word + "': a range is two numbers, a..b");
      term.op = "..";
      term.low = *low;
      term.high = *high;
    } else if (term.op != "=" && term.op != "!=") {
      const auto number = as_number(term.value);
      if (!number) throw Error("filter term '" + word + "': '" + term.value + "' is not a number");
      term.low = *number;
    }
    terms_.push_back(term);
  }
}

bool RunFilter::matches(const RunEntry& run) const {
  for (const auto& term : terms_) {
    if (term.key.empty()) {
      const auto holds = [&](const std::string& text) { return lower(text).find(term.value) != std::string::npos; };
      if (!holds(run.name) && !holds(run.path) && !holds(run.label) && !holds(run.note) &&
          std::none_of(run.tags.begin(), run.tags.end(), holds)) {
        return false;
      }
      continue;
    }
    if (term.key == kTagFilterKey) {
      const std::string wanted = lower(term.value);
      const bool has =
          std::any_of(run.tags.begin(), run.tags.end(), [&](const auto& tag) { return lower(tag) == wanted; });
      if (term.op == "=" ? !has : term.op == "!=" ? has : true) return false;
      continue;
    }
    const auto value = value_of(run, term.key);
    if (!value) return false;
    if (term.op == "=" && !same_value(*value, term.value)) return false;
    if (term.op == "!=" && same_value(*value, term.value)) return false;
    if (term.op == "=" || term.op == "!=") continue;
    const auto number = as_number(*value);
    if (!number) return false;
    if (term.op == ".." && (*number < term.low || *number > term.high)) return false;
    if (term.op == ">" && !(*number > term.low)) return false;
    if (term.op == ">=" && !(*number >= term.low)) return false;
    if (term.op == "<" && !(*number < term.low)) return false;
    if (term.op == "<=" && !(*number <= term.low)) return false;
  }
  return true;
}

}  // namespace descentlab::study
