// The study folder reader (core/study: run_files_below, read_entry, then the grouping, the paired comparison, the
// bands and the runs filter) on a folder of damaged and foreign files, as `descentlab-cli compare DIR` and the
// window's study browser read one. The input is a small program that fills the folder (fuzz/input_bytes.h), entry by
// entry: a run file copied from one of four valid templates (two optimizers x two seeds) as it is, with a few bytes of
// its stored values overwritten (not of HDF5's own structures: see Template) or cut short; a file that is no run (not
// HDF5, empty, a folder named RUN.h5, a symlink loop, a dangling link, a link to another entry); a run with a log
// beside it; the parts of a run (RUN.h5.checkpoints/, its lock, a temporary, an orphan log); a subfolder. Then the
// study runs over it. A bad file must be reported in its own entry, with an error naming it: never an exception out of
// the scan or the entries, never a crash. Invariants: the scan lists exactly the regular *.h5 files made, sorted; a
// template copied as it is reads without error and one that is empty or not HDF5 does not; every readable run is in
// exactly one group; a group's own values select it; paired seeds belong to both groups.

#include <H5Cpp.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/study/study.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/input_bytes.h"
#include "tests/run_file_samples.h"

namespace descentlab::fuzz {

namespace {

namespace fs = std::filesystem;

struct Template {
  std::vector<char> bytes;
  // Where it stores values that HDF5 does not interpret: its text attributes (in HDF5's global heap) and its series'
  // values. Bytes overwritten there reach our reader; bytes overwritten in HDF5's own structures test Debian's HDF5,
  // whose 1.10 reads past a heap buffer on a damaged global heap object size (H5HG_read).
  std::vector<std::pair<size_t, size_t>> spans;  // offset, length
  int64_t folded = 0;                            // its log_sequence
  std::string run_id;
};

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void add_spans(Template& t, const std::string& value) {
  if (value.empty()) return;
  for (auto at = std::search(t.bytes.begin(), t.bytes.end(), value.begin(), value.end()); at != t.bytes.end();
       at = std::search(at + 1, t.bytes.end(), value.begin(), value.end())) {
    t.spans.emplace_back(static_cast<size_t>(at - t.bytes.begin()), value.size());
  }
}

// One valid run of `optimizer` and `seed` (seed 2 one evaluation longer), with scalar, per-layer and
// once-per-compression series.
Template make_template(const std::string& folder, const std::string& optimizer, int seed) {
  const std::string path = folder + "/" + optimizer + std::to_string(seed) + ".h5";
  store::RunHeader header = testing::sample_header();
  header.config_json = R"({"name": "vit-)" + optimizer + R"(", "optimizer": {"name": ")" + optimizer +
                       R"(", "alpha": 5}, "train": {"seed": )" + std::to_string(seed) +
                       R"(, "lr": 0.003}, "data": {"split_seed": )" + std::to_string(seed) + "}}";
  std::vector<double> values;
  {
    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    options.overwrite = true;
    auto writer = store::RunWriter::create(path, header, options);
    const double better = optimizer == "horst" ? 0.05 : 0.0;
    const auto scalar = [&](const char* name, int64_t step, double value) {
      writer->scalar(name, step, 1.8e9, value);
      values.push_back(value);
    };
    for (int64_t step = 10; step <= 20 + 10 * seed; step += 10) {
      const double at = static_cast<double>(step) / 100.0;
      scalar("test_accuracy", step, 0.5 + at + better + 0.01 * seed);
      scalar("loss", step, 2.0 - at);
      writer->vector("layer_loss", step, 1.8e9, {0.7 - at, 0.5 - at});
    }
    scalar("test_accuracy_before_compression", 15, 0.6 + better);
    scalar("test_accuracy_after_compression", 15, 0.4 + better);
    // A fold: the rows in the file itself (its tensors' data file is not copied; the study does not read it).
    writer->save_checkpoint("latest", testing::sample_checkpoint(30));
  }
  Template t;
  t.bytes = file_bytes(path);
  const store::RunReader reader(path);
  if (reader.metric_names().size() != 5 || reader.log_position().exists) {
    finding("the template run file does not hold its rows");
  }
  t.folded = reader.log_position().last_sequence;
  t.run_id = reader.header().run_id;
  const store::RunHeader& stored = reader.header();
  for (const std::string& text : {std::string("descentlab-run"), stored.app_version, stored.torch_version,
                                  stored.device, stored.created, stored.config_json, stored.run_id}) {
    add_spans(t, text);
  }
  for (const double value : values) add_spans(t, std::string(reinterpret_cast<const char*>(&value), sizeof value));
  if (t.spans.empty()) finding("no stored value found in the template run file");
  return t;
}

// Four valid runs: horst and adamw, seeds 1 and 2.
const std::vector<Template>& templates() {
  static const std::vector<Template> made = [] {
    const std::string folder = scratch_path("study-templates");
    fs::create_directories(folder);
    std::vector<Template> out;
    for (const char* optimizer : {"horst", "adamw"}) {
      for (int seed = 1; seed <= 2; ++seed) out.push_back(make_template(folder, optimizer, seed));
    }
    return out;
  }();
  return made;
}

// What the folder program made, for the invariants.
struct Made {
  bool listed = false;      // a regular *.h5 file (or a link to one): the scan must list it
  bool readable = false;    // a template as it is, without a log: its entry must have no error
  bool unreadable = false;  // empty, or not HDF5: its entry must have an error
  bool link = false;        // a symlink: its entry's name is not checked (read_entry names it through fs::relative,
                            // which resolves links: by its target's path, or by its bare file name)
};

class Folder {
 public:
  Folder(std::string root, InputBytes& in) : root_(std::move(root)), in_(in) { dirs_.push_back(root_); }

  const std::string& root() const { return root_; }
  const std::map<std::string, Made>& made() const { return made_; }

  void fill() {
    for (int entry = 0; entry < 16 && !in_.empty(); ++entry) add(in_.byte());
  }

 private:
  // "r7" plus, at times, '-' and up to three raw bytes (no '/' or NUL), plus `suffix`, in the current folder.
  std::string name(const std::string& suffix) {
    std::string name = "r" + std::to_string(count_++);
    const uint8_t odd = in_.byte();
    if (odd & 0x80) {  // after a '-', so that no name is another's
      name += '-';
      for (char c : in_.text(1 + odd % 3)) name += c == '/' || c == '\0' ? '_' : c;
    }
    return dirs_.back() + "/" + name + suffix;
  }
  const Template& pick() { return templates()[in_.byte() % templates().size()]; }
  void write(const std::string& path, const std::vector<char>& bytes) {
    write_file(path, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  size_t inside_a_value(const Template& t) {
    const auto& span = t.spans[in_.byte() % t.spans.size()];
    return span.first + in_.byte() % span.second;
  }

  void add(uint8_t kind) {
    switch (kind % 11) {
      case 0: {  // a template as it is
        const std::string path = name(".h5");
        write(path, pick().bytes);
        made_[path] = {true, true, false, false};
        break;
      }
      case 1: {  // a few bytes of its stored values overwritten
        const Template& t = pick();
        std::vector<char> bytes = t.bytes;
        for (int n = 1 + in_.byte() % 4; n > 0; --n) bytes[inside_a_value(t)] = static_cast<char>(in_.byte());
        const std::string path = name(".h5");
        write(path, bytes);
        made_[path] = {true, false, false, false};
        break;
      }
      case 2: {  // cut short
        const Template& t = pick();
        const std::string path = name(".h5");
        const size_t length = scaled(in_.u16(), t.bytes.size());
        write(path, std::vector<char>(t.bytes.begin(), t.bytes.begin() + static_cast<long>(length)));
        made_[path] = {true, false, false, false};
        break;
      }
      case 3: {  // not HDF5 (shorter than HDF5's first signature offset)
        const std::string path = name(".h5");
        const std::string text = "x" + in_.text(in_.byte() % 48);
        write(path, std::vector<char>(text.begin(), text.end()));
        made_[path] = {true, false, true, false};
        break;
      }
      case 4: {  // empty
        const std::string path = name(".h5");
        write(path, {});
        made_[path] = {true, false, true, false};
        break;
      }
      case 5: {  // a folder named like a run file, with a run inside
        const std::string path = name(".h5");
        fs::create_directory(path);
        write(path + "/inner.h5", pick().bytes);
        made_[path + "/inner.h5"] = {true, true, false, false};
        break;
      }
      case 6: {  // a symlink loop: to itself, or two links to each other
        const std::string a = name(".h5");
        if (in_.byte() & 1) {
          fs::create_symlink(a, a);
        } else {
          const std::string b = name(".h5");
          fs::create_symlink(b, a);
          fs::create_symlink(a, b);
        }
        break;
      }
      case 7: add_run_with_log(); break;
      case 8: {  // a link to an earlier run file (perhaps itself a link), or to nothing
        const std::string path = name(".h5");
        if (made_.empty() || (in_.byte() & 3) == 0) {
          fs::create_symlink(root_ + "/missing.h5", path);
          break;
        }
        auto target = made_.begin();
        std::advance(target, static_cast<long>(in_.byte() % made_.size()));
        fs::create_symlink(target->first, path);
        made_[path] = target->second;
        made_[path].link = true;
        break;
      }
      case 9: add_run_part(); break;
      default:  // into a new subfolder, or back out of one
        if (in_.byte() & 1) {
          if (dirs_.size() > 1) dirs_.pop_back();
        } else if (dirs_.size() < 4) {
          const std::string dir = name("");
          fs::create_directory(dir);
          dirs_.push_back(dir);
        }
        break;
    }
  }

  // A run with a log beside it: raw bytes, or a log that continues it (or not: another base or identity) with rows of
  // the input's steps and values, one byte of it then overwritten at times.
  void add_run_with_log() {
    const Template& t = pick();
    const std::string path = name(".h5");
    write(path, t.bytes);
    made_[path] = {true, false, false, false};
    const uint8_t mode = in_.byte();
    std::vector<char> log;
    if (mode % 3 == 0) {
      const std::string raw = in_.text(in_.byte() % 96);
      log.assign(raw.begin(), raw.end());
    } else {
      const int64_t base = mode % 3 == 1 ? t.folded : t.folded + 1 + in_.byte() % 3;
      log = store::encode_log_header(base, mode & 8 ? "" : mode & 16 ? templates()[0].run_id : t.run_id);
      for (int64_t sequence = t.folded + 1, end = sequence + in_.byte() % 4; sequence < end; ++sequence) {
        store::RunBatch batch;
        auto& rows = batch.metrics[in_.byte() & 1 ? "test_accuracy" : "layer_loss"];
        rows.width = 1 + in_.byte() % 3;
        rows.shape = rows.width == 1 ? record::SeriesShape::Scalar : record::SeriesShape::Vector;
        rows.steps = {static_cast<int64_t>(in_.u16()) - 8};
        rows.wall_times = {1.8e9};
        for (int64_t c = 0; c < rows.width; ++c) rows.values.push_back(in_.f64());
        const auto record = store::encode_log_record(sequence, batch);
        log.insert(log.end(), record.begin(), record.end());
      }
      if (mode & 32) log[scaled(in_.u16(), log.size())] = static_cast<char>(in_.byte());
    }
    write(store::log_path_for(path), log);
  }

  // The parts of a run beside its file and other files the scan passes over.
  void add_run_part() {
    const std::string path = name(".h5");
    switch (in_.byte() % 5) {
      case 0:  // a checkpoint data folder, with a run file inside that the scan must not list
        fs::create_directory(path + ".checkpoints");
        write(path + ".checkpoints/1.bin", {'d'});
        write(path + ".checkpoints/hidden.h5", pick().bytes);
        break;
      case 1: write(path + ".lock", {}); break;
      case 2: write(path + ".tmp-7", pick().bytes); break;
      case 3: write(path + ".log", {'L'}); break;
      default: write(path.substr(0, path.size() - 3) + ".txt", {'n'}); break;
    }
  }

  std::string root_;
  InputBytes& in_;
  std::vector<std::string> dirs_;
  std::map<std::string, Made> made_;
  int count_ = 0;
};

void expect(bool holds, const std::string& what) {
  if (!holds) finding(what);
}

// The entries of the scanned runs, each checked against what was made.
std::vector<study::RunEntry> read_entries(const Folder& folder) {
  int skipped = -1;
  const auto files = study::run_files_below(folder.root(), &skipped);
  std::vector<std::string> expected;
  for (const auto& [path, made] : folder.made()) {
    if (made.listed) expected.push_back(path);
  }
  std::sort(expected.begin(), expected.end());
  std::string listed;
  for (const auto& file : files) listed += " " + file;
  expect(files == expected && skipped >= 0, "the scan listed" + listed + " (" + std::to_string(skipped) + " skipped)");
  std::vector<study::RunEntry> runs;
  for (const auto& file : files) {
    runs.push_back(study::read_entry(file, folder.root()));
    const study::RunEntry& entry = runs.back();
    const Made& made = folder.made().at(file);
    const std::string below = fs::path(file).lexically_relative(folder.root()).string();
    expect(made.link || entry.name == below.substr(0, below.size() - 3),
           "the entry of " + file + " is named " + entry.name);
    expect(!made.readable || entry.error.empty(), "a valid run is unreadable: " + entry.error);
    expect(!made.unreadable || !entry.error.empty(), file + " is not a run file but reads as one");
    expect(entry.error.empty() || entry.error.find(file) != std::string::npos,
           "the error of " + file + " does not name it: " + entry.error);
    expect(entry.error.empty() || (entry.config.empty() && entry.finals.empty()), "an unreadable entry has values");
  }
  return runs;
}

void check_groups(const std::vector<study::RunEntry>& runs, const std::vector<study::Group>& groups) {
  std::vector<int> seen(runs.size(), 0);
  for (const auto& group : groups) {
    expect(!group.members.empty() && std::is_sorted(group.members.begin(), group.members.end()),
           "group " + group.label + " is empty or out of order");
    for (size_t index : group.members) ++seen.at(index);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    expect(seen[i] == (runs[i].error.empty() ? 1 : 0), runs[i].path + " is in " + std::to_string(seen[i]) + " groups");
  }
}

// "key=value,..." of a group's values; empty when one of them cannot be written so.
std::string selector_of(const study::Group& group) {
  std::string selector;
  for (const auto& [key, value] : group.values) {
    if (key.empty() || key.find_first_of("=,") != std::string::npos || value.find(',') != std::string::npos) return "";
    selector += (selector.empty() ? "" : ",") + key + "=" + value;
  }
  return selector;
}

void check_pairing(const std::vector<study::RunEntry>& runs, const study::Group& a, const study::Group& b) {
  const auto seeds_of = [&](const study::Group& group) {
    std::set<std::string> seeds;
    for (size_t index : group.members) {
      const auto found = runs[index].config.find(study::kSeedKey);
      if (found != runs[index].config.end()) seeds.insert(found->second);
    }
    return seeds;
  };
  const auto in_a = seeds_of(a), in_b = seeds_of(b);
  const auto comparison = study::pair_groups(runs, a, b, "test_accuracy");
  expect(comparison.wins >= 0 && static_cast<size_t>(comparison.wins) <= comparison.pairs.size(), "wins > pairs");
  for (const auto& pair : comparison.pairs) {
    expect(in_a.count(pair.seed) && in_b.count(pair.seed), "seed " + pair.seed + " paired outside its groups");
  }
  study::pair_groups_by(runs, a, b, "test_accuracy_before_compression", record::Direction::Higher,
                        [](const study::RunEntry& run) -> std::optional<double> {
                          const auto found = run.per_compression.find("test_accuracy_before_compression");
                          if (found == run.per_compression.end() || found->second.empty()) return std::nullopt;
                          return found->second.front();
                        });
}

// Each readable run's series as the window reads them to draw a group's band (one opening of each run file).
using Series = std::map<std::string, store::MetricSeries>;
std::vector<Series> read_series(const std::vector<study::RunEntry>& runs) {
  std::vector<Series> series(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].error.empty()) continue;
    try {
      const store::RunReader reader(runs[i].path);
      for (const char* name : {"test_accuracy", "layer_loss"}) {
        try {
          series[i][name] = reader.metric(name);
        } catch (const store::RunFileError&) {  // left out of the band, as in the window
        }
      }
    } catch (const store::RunFileError&) {
    }
  }
  return series;
}

// A group's band of one series (its members that have it).
void check_band(const std::vector<Series>& series, const study::Group& group, const std::string& metric) {
  std::vector<const store::MetricSeries*> members;
  for (size_t index : group.members) {
    const auto found = series[index].find(metric);
    if (found != series[index].end()) members.push_back(&found->second);
  }
  for (const auto kind : {study::BandKind::MinMax, study::BandKind::StandardDeviation}) {
    try {
      const auto band = study::band_of(members, kind);
      const size_t cells = band.steps.size() * static_cast<size_t>(band.width);
      expect(band.mean.size() == cells && band.low.size() == cells && band.high.size() == cells &&
                 band.members <= members.size(),
             "the band of " + metric + " over " + group.label + " is inconsistent");
    } catch (const Error&) {  // members of different widths
    }
  }
}

void run_study(const Folder& folder, InputBytes& in) {
  const std::vector<study::RunEntry> runs = read_entries(folder);
  const auto keys = study::default_group_keys(runs);
  for (const std::vector<std::string>& by : std::vector<std::vector<std::string>>{
           keys, {"optimizer.name"}, {study::kSeedKey}, {"name", "optimizer.name", "train.lr"}, {}}) {
    check_groups(runs, study::group_runs(runs, by));
  }
  const auto groups = study::group_runs(runs, keys);
  const std::vector<Series> series = read_series(runs);
  for (size_t g = 0; g < groups.size() && g < 4; ++g) {
    const std::string selector = selector_of(groups[g]);
    if (!selector.empty()) {
      const auto matching = study::groups_matching(groups, selector);
      expect(std::find(matching.begin(), matching.end(), g) != matching.end(), "'" + selector + "' misses its group");
    }
    for (size_t h = 0; h < groups.size() && h < 4; ++h) {
      if (h != g) check_pairing(runs, groups[g], groups[h]);
    }
    std::vector<double> finals;
    for (size_t index : groups[g].members) {
      const auto found = runs[index].finals.find("test_accuracy");
      if (found != runs[index].finals.end()) finals.push_back(found->second.value);
    }
    expect(study::statistics_of(finals).count == finals.size(), "statistics count");
    check_band(series, groups[g], "test_accuracy");
    check_band(series, groups[g], "layer_loss");
  }
  for (const std::string& text :
       {std::string("horst optimizer.name=horst test_accuracy>0.5 train.seed=1..2"), in.text(in.byte() % 48)}) {
    try {
      const study::RunFilter filter(text);
      for (const auto& run : runs) filter.matches(run);
    } catch (const Error&) {  // a term that cannot be read
    }
  }
}

}  // namespace

int study_folder(const uint8_t* data, size_t size) {
  H5::Exception::dontPrint();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  templates();
  static const std::string root = scratch_path("study");
  fs::remove_all(root);
  fs::create_directories(root);
  InputBytes in(data, size);
  Folder folder(root, in);
  folder.fill();
  try {
    run_study(folder, in);
  } catch (const Error& error) {
    finding(std::string("the study stopped on an error instead of reporting it per file: ") + error.what());
  }
  return 0;
}

}  // namespace descentlab::fuzz
