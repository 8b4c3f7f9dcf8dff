// The run-log reader (core/store/run_log.h) on damaged and foreign logs. The input is the log file itself: its bytes
// become RUN.h5.log beside a valid run file (written once by RunWriter, its identity then set to kRunId, which the
// committed seeds' version-2 headers carry). Then every reader of a log runs on it: read_run_log as a reader and a
// resuming writer call it (check_log_follows, merge_records, logged_since_fold), read_run_log_from at a few offsets as
// a follower calls it, RunReader on the run and RunFollower across a cut. A bad log must give a RunFileError naming the
// log file (RunReader's may name the run file). Invariants, besides no crash: a log that reads whole also reads cut
// anywhere after its header, and a follower's read from where the cut copy's read ended gives the whole read's later
// records, byte for byte as re-encoded. Then all of it again on the input with its CRCs made to match, since a random
// change inside a record mostly stops at its CRC and would never reach the decoder of its contents. The seeds
// (fuzz/corpus/run_log) were made with encode_log_header and encode_log_record for this template, whose log_sequence
// is 2: remake them if the writer's sequence numbers change.

#include <H5Cpp.h>
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/store/hdf5_io.h"
#include "core/store/run_follower.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "fuzz/fuzz_targets.h"
#include "tests/run_file_samples.h"

namespace descentlab::fuzz {

namespace {

using store::RunLog;

// The template's identity (root attribute run_id), which the seeds' version-2 headers carry.
constexpr const char* kRunId = "0123456789abcdef0123456789abcdef";
constexpr int64_t kAll = std::numeric_limits<int64_t>::min();  // after_sequence that takes every record

struct Run {
  std::string path;    // the run file; the input becomes log_path_for(path)
  std::string log;     // log_path_for(path)
  int64_t folded = 0;  // the run file's log_sequence: records after it are the reader's
};

// A valid run file with rows of both shapes, histogram snapshots, a sweep and a checkpoint (whose commit folds the
// rows into the file), for logged rows to follow.
const Run& run() {
  static const Run made = [] {
    Run r;
    const std::string folder = scratch_path("run_log");
    std::filesystem::create_directories(folder);
    r.path = folder + "/run.h5";
    r.log = store::log_path_for(r.path);
    {
      store::RunWriterOptions options;
      options.flush_interval_seconds = 0;
      options.overwrite = true;
      auto writer = store::RunWriter::create(r.path, testing::sample_header(), options);
      for (int64_t step = 1; step <= 4; ++step) {
        writer->scalar("loss", step, 1.8e9 + static_cast<double>(step), 2.0 / static_cast<double>(step));
        writer->vector("layer_loss", step, 1.8e9, {0.69, 0.5, 0.25});
      }
      writer->histogram(testing::sample_histogram(2));
      writer->sweep(testing::sample_sweep());
      writer->save_checkpoint("latest", testing::sample_checkpoint(4));  // a fold: the rows in the file itself
    }
    {
      H5::H5File file(r.path, H5F_ACC_RDWR);
      H5::Group root = file.openGroup("/");
      store::hdf5::set_string_attribute(root, "run_id", kRunId);
    }
    std::filesystem::remove(r.log);
    const store::RunReader reader(r.path);
    if (reader.metric_names().size() != 2) finding("the template run file does not hold its rows");
    r.folded = reader.log_position().last_sequence;
    return r;
  }();
  return made;
}

// Runs `read`: true when it succeeded; a RunFileError must name `file` (false then), and any other exception goes on
// to the entry, which calls it a finding.
template <typename Read>
bool succeeds(const std::string& file, const char* what, Read read) {
  try {
    read();
    return true;
  } catch (const store::RunFileError& error) {
    if (std::strstr(error.what(), file.c_str()) == nullptr) {
      finding(std::string(what) + ": a refusal that does not name " + file + ": " + error.what());
    }
    return false;
  }
}

std::optional<RunLog> read_log(const Run& r, int64_t after, uint64_t from) {
  RunLog log;
  if (!succeeds(r.log, "read_run_log_from", [&] { log = store::read_run_log_from(r.path, after, from); })) {
    return std::nullopt;
  }
  return log;
}

void expect(bool holds, const std::string& what) {
  if (!holds) finding(what);
}

void check_batch(const store::RunBatch& batch) {
  // Counts compared without products that could wrap around: rows x width values, cells x layers layer losses.
  const auto holds = [](size_t values, size_t rows, int64_t width) {
    return rows == 0 ? values == 0 : values % rows == 0 && values / rows == static_cast<uint64_t>(width);
  };
  for (const auto& [name, rows] : batch.metrics) {
    expect(rows.width >= 1 && rows.wall_times.size() == rows.steps.size() &&
               holds(rows.values.size(), rows.steps.size(), rows.width),
           "inconsistent logged rows of " + name + " (" + std::to_string(rows.steps.size()) + " x " +
               std::to_string(rows.width) + ", " + std::to_string(rows.values.size()) + " values)");
  }
  for (const auto& [name, snapshots] : batch.histograms) {
    expect(
        snapshots.edges.size() >= 2 && snapshots.counts.size() == snapshots.steps.size() * (snapshots.edges.size() - 1),
        "inconsistent logged snapshots of " + name);
  }
  for (const auto& [name, sweep] : batch.sweeps) {
    const size_t cells = sweep.gamma.size() * sweep.seeds.size();
    expect(sweep.layers >= 0 && sweep.metric.size() == cells && holds(sweep.layer_loss.size(), cells, sweep.layers),
           "inconsistent logged sweep " + name + " (" + std::to_string(sweep.gamma.size()) + " x " +
               std::to_string(sweep.seeds.size()) + " x " + std::to_string(sweep.layers) + " layers, " +
               std::to_string(sweep.layer_loss.size()) + " layer losses)");
  }
}

// What every successful read of the whole log (from 0) must say of itself.
void check_log(const RunLog& log, int64_t after, size_t size) {
  expect(log.exists, "a log that exists read as missing");
  expect(log.file_length == size,
         "file_length " + std::to_string(log.file_length) + " of a log of " + std::to_string(size) + " bytes");
  expect(log.valid_length <= log.file_length, "valid_length past the end of the log");
  expect(log.last_sequence >= log.base_sequence, "last_sequence before the base sequence");
  int64_t previous = after;
  for (const auto& record : log.records) {
    expect(record.sequence > previous, "records out of order, or not after after_sequence");
    previous = record.sequence;
    check_batch(record.batch);
  }
  expect(log.records.empty() || previous == log.last_sequence, "last_sequence is not the last record's");
}

// The records after `after`, each as encode_log_record writes it: what two reads of the same records must share.
std::vector<char> encoded(const RunLog& log, int64_t after) {
  std::vector<char> out;
  for (const auto& record : log.records) {
    if (record.sequence <= after) continue;
    const auto bytes = store::encode_log_record(record.sequence, record.batch);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

// A follower's two reads: the log cut at `cut` (a commit half-written), then the whole log from where that read ended.
void follow_across(const Run& r, const uint8_t* data, size_t size, size_t cut, const std::optional<RunLog>& whole) {
  write_file(r.log, data, cut);
  const auto before = read_log(r, kAll, 0);
  write_file(r.log, data, size);
  if (!before) {
    expect(!whole, "a log that reads whole is refused cut at byte " + std::to_string(cut));
    return;
  }
  const auto after = read_log(r, before->last_sequence, before->valid_length);
  if (!whole) return;
  const std::string at =
      " (cut at byte " + std::to_string(cut) + ", read on from " + std::to_string(before->valid_length) + ")";
  expect(before->valid_length <= whole->valid_length && before->base_sequence == whole->base_sequence,
         "the cut log reads past the whole one" + at);
  const auto first = encoded(*before, kAll), all = encoded(*whole, kAll);
  expect(first.size() <= all.size() && std::equal(first.begin(), first.end(), all.begin()),
         "the cut log's records are not the first records of the whole log" + at);
  expect(after.has_value(), "a log that reads whole is refused read on from the end of a first read" + at);
  expect(after->valid_length == whole->valid_length && after->last_sequence == whole->last_sequence &&
             after->base_sequence == whole->base_sequence,
         "the follower's read ends elsewhere than the whole read" + at);
  expect(encoded(*after, kAll) == encoded(*whole, before->last_sequence),
         "the follower's read gives other records than the whole read after the first" + at);
}

void read_series(const store::RunReader& reader) {
  const std::string& path = reader.path();
  for (const auto& name : reader.metric_names()) {
    succeeds(path, "RunReader::metric", [&] {
      const auto series = reader.metric(name);
      expect(series.width >= 1 && series.wall_times.size() == series.rows() &&
                 series.values.size() == series.rows() * static_cast<size_t>(series.width),
             "inconsistent series " + name);
    });
    succeeds(path, "RunReader::last_metric_row", [&] { reader.last_metric_row(name); });
    succeeds(path, "RunReader::last_metric_row", [&] { reader.last_metric_row(name, /*scalars_only=*/true); });
  }
  for (const auto& name : reader.histogram_names()) {
    succeeds(path, "RunReader::histogram", [&] {
      const auto series = reader.histogram(name);
      expect(series.counts.size() == series.steps.size() * series.bins(), "inconsistent histogram " + name);
    });
  }
  for (const auto& name : reader.sweep_names()) succeeds(path, "RunReader::sweep", [&] { reader.sweep(name); });
}

// CRC-32 as zlib computes it (the log's checksums).
uint32_t crc32_of(const uint8_t* data, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

template <typename T>
T load(const std::vector<uint8_t>& bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

void store_crc(std::vector<uint8_t>& bytes, size_t at, size_t from, size_t to) {
  const uint32_t crc = crc32_of(bytes.data() + from, to - from);
  std::memcpy(bytes.data() + at, &crc, 4);
}

// The input with the CRCs of its header and of every record its lengths chain together made to match (layout in
// core/store/run_log.h), so that mutated record contents reach the payload decoder instead of the CRC check.
std::vector<uint8_t> with_crcs_fixed(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (size < 12 || std::memcmp(data, "DLRUNLOG", 8) != 0) return bytes;
  const size_t header = load<uint32_t>(bytes, 8) == 1 ? 32 : store::kLogHeaderBytes;  // version 1's was 32 bytes
  if (size < header) return bytes;
  store_crc(bytes, header - 8, 0, header - 8);
  constexpr size_t kRecordHeader = 28;  // marker, type, sequence, length, their CRC
  for (size_t at = header; size - at >= kRecordHeader && load<uint32_t>(bytes, at) == 0x52474F4C;) {
    store_crc(bytes, at + 24, at + 4, at + 24);
    const auto length = load<uint64_t>(bytes, at + 16);
    if (length > size - at - kRecordHeader || size - at - kRecordHeader - length < 4) break;
    const size_t end = at + kRecordHeader + static_cast<size_t>(length) + 4;
    store_crc(bytes, end - 4, at + 4, end - 4);
    at = end;
  }
  return bytes;
}

void read_as_everyone(const Run& r, const uint8_t* data, size_t size) {
  const auto whole = read_log(r, kAll, 0);
  if (whole) check_log(*whole, kAll, size);

  // As RunReader and a resuming writer read it: the records after the run file's own, which must continue it.
  const auto logged = read_log(r, r.folded, 0);
  expect(logged || !whole, "a log that reads whole is refused after the run file's sequence");
  bool follows = false;
  if (logged) {
    check_log(*logged, r.folded, size);
    expect(!whole || encoded(*logged, kAll) == encoded(*whole, r.folded),
           "the records after the run file's sequence differ from the whole read's");
    follows =
        succeeds(r.log, "check_log_follows", [&] { store::check_log_follows(*logged, r.folded, kRunId, r.path); });
    RunLog merged_from = *logged;
    check_batch(store::merge_records(merged_from));
  }
  std::string missing;
  succeeds(r.log, "logged_since_fold", [&] {
    check_batch(
        store::logged_since_fold(r.path, r.folded, kRunId, whole ? whole->last_sequence + 1 : r.folded, &missing));
  });

  // A follower's reads: across cuts after the header, then from a few offsets anywhere (no expectation but a typed
  // refusal).
  for (const size_t cut : {size / 2, size - size / 4, size - 1}) {
    if (cut > store::kLogHeaderBytes && cut < size) follow_across(r, data, size, cut, whole);
  }
  for (const uint64_t from : {uint64_t{1}, uint64_t{store::kLogHeaderBytes} + 1, uint64_t{size}, uint64_t{size} + 7}) {
    read_log(r, r.folded, from);
  }

  // The run as the GUI and the CLI open it: the file's rows, then the log's.
  const bool opened = succeeds(r.path, "RunReader", [&] { read_series(store::RunReader(r.path)); });
  expect(opened || !logged || !follows, "RunReader refuses a log that read_run_log and check_log_follows accept");

  // A follower polled with the log cut short, then whole: the second poll reads only what was appended.
  if (!whole || size / 2 <= store::kLogHeaderBytes) return;
  write_file(r.log, data, size / 2);
  store::RunFollower follower(r.path);
  int64_t seen = 0;
  const bool first = succeeds(r.path, "RunFollower::poll", [&] {
    const auto update = follower.poll();
    expect(update.whole != nullptr, "a follower's first poll is not a whole read");
    seen = update.whole->log_position().last_sequence;
  });
  write_file(r.log, data, size);
  succeeds(r.path, "RunFollower::poll", [&] {
    const auto update = follower.poll();
    if (!first || update.whole) return;
    size_t expected = 0;
    for (const auto& record : whole->records) expected += record.sequence > seen ? 1 : 0;
    expect(update.records == expected, "the follower's second poll read " + std::to_string(update.records) +
                                           " records, the whole read has " + std::to_string(expected) + " after " +
                                           std::to_string(seen));
    check_batch(update.appended);
  });
}

}  // namespace

int run_log(const uint8_t* data, size_t size) {
  H5::Exception::dontPrint();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Run& r = run();
  const std::vector<uint8_t> fixed = with_crcs_fixed(data, size);
  try {
    write_file(r.log, data, size);
    read_as_everyone(r, data, size);
    if (fixed != std::vector<uint8_t>(data, data + size)) {
      write_file(r.log, fixed.data(), fixed.size());
      read_as_everyone(r, fixed.data(), fixed.size());
    }
  } catch (const Error& error) {
    finding(std::string("a log reader threw an error that is not a RunFileError: ") + error.what());
  }
  return 0;
}

}  // namespace descentlab::fuzz
