#include "core/store/log_payload.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/store/run_file.h"

namespace descentlab::store {

uint32_t log_crc(const char* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {  // zlib takes uInt lengths
    const auto piece = static_cast<uInt>(std::min<size_t>(size, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), piece);
    data += piece;
    size -= piece;
  }
  return static_cast<uint32_t>(crc);
}

namespace {

// Reads a payload whose CRC matched; a count that does not fit what is left means a bug or a forged file.
class Reader {
 public:
  Reader(const char* data, size_t size, const std::string& log, uint64_t offset)
      : data_(data), size_(size), log_(log), offset_(offset) {}
  template <typename T>
  T get() {
    need(sizeof(T), 1);
    T value;
    std::memcpy(&value, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::string get_text() {
    const auto size = get<uint64_t>();
    need(size, 1);
    std::string text(data_ + at_, static_cast<size_t>(size));
    at_ += static_cast<size_t>(size);
    return text;
  }
  template <typename T>
  std::vector<T> get_array() {
    const auto count = get<uint64_t>();
    need(count, sizeof(T));
    std::vector<T> values(static_cast<size_t>(count));
    if (!values.empty()) std::memcpy(values.data(), data_ + at_, values.size() * sizeof(T));
    at_ += values.size() * sizeof(T);
    return values;
  }
  bool done() const { return at_ == size_; }
  [[noreturn]] void malformed(const std::string& what) const {
    throw RunFileError(RunFileError::Kind::Corrupt, log_, "record at byte " + std::to_string(offset_),
                       "malformed (" + what + ") although its CRC matches: written by another program?");
  }

 private:
  void need(uint64_t count, size_t element) const {
    if (count > (size_ - at_) / element) malformed("a length runs past the record's end");
  }
  const char* data_;
  size_t size_;
  size_t at_ = 0;
  const std::string& log_;
  uint64_t offset_;
};

// Whether `count` is a * b, compared by division: a forged factor must not wrap the product around to the count.
bool is_product(uint64_t count, uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return count == 0;
  return count % a == 0 && count / a == b;
}

void decode_series(Reader& in, RunBatch& batch) {
  const auto metrics = in.get<uint32_t>();
  for (uint32_t i = 0; i < metrics; ++i) {
    const std::string name = in.get_text();
    auto& rows = batch.metrics[name];
    const auto shape = in.get<int32_t>();
    if (shape < 0 || shape > static_cast<int32_t>(record::SeriesShape::Vector)) in.malformed("series shape");
    rows.shape = static_cast<record::SeriesShape>(shape);
    rows.width = in.get<int64_t>();
    rows.steps = in.get_array<int64_t>();
    rows.wall_times = in.get_array<double>();
    rows.values = in.get_array<double>();
    if (rows.width < 1 || rows.wall_times.size() != rows.steps.size() ||
        !is_product(rows.values.size(), rows.steps.size(), static_cast<uint64_t>(rows.width))) {
      in.malformed("rows of " + name);
    }
  }
  const auto histograms = in.get<uint32_t>();
  for (uint32_t i = 0; i < histograms; ++i) {
    const std::string name = in.get_text();
    auto& snapshots = batch.histograms[name];
    snapshots.edges = in.get_array<double>();
    snapshots.steps = in.get_array<int64_t>();
    snapshots.counts = in.get_array<int64_t>();
    if (snapshots.edges.size() < 2 ||
        !is_product(snapshots.counts.size(), snapshots.steps.size(), snapshots.edges.size() - 1)) {
      in.malformed("snapshots of " + name);
    }
  }
}

void decode_sweeps_and_annotation(Reader& in, bool annotated, const std::string& log, RunBatch& batch) {
  const auto sweeps = in.get<uint32_t>();
  for (uint32_t i = 0; i < sweeps; ++i) {
    record::SweepResult sweep;
    sweep.name = in.get_text();
    sweep.noise = in.get_text();
    sweep.metric_name = in.get_text();
    sweep.layers = in.get<int64_t>();
    sweep.gamma = in.get_array<double>();
    sweep.seeds = in.get_array<int64_t>();
    sweep.metric = in.get_array<double>();
    sweep.layer_loss = in.get_array<double>();
    const bool cells_fit = sweep.seeds.empty() || sweep.gamma.size() <= SIZE_MAX / sweep.seeds.size();
    const size_t cells = cells_fit ? sweep.gamma.size() * sweep.seeds.size() : 0;
    if (!cells_fit || sweep.layers < 0 || sweep.metric.size() != cells ||
        !is_product(sweep.layer_loss.size(), cells, static_cast<uint64_t>(sweep.layers))) {
      in.malformed("sweep " + sweep.name);
    }
    batch.sweeps[sweep.name] = std::move(sweep);
  }
  if (annotated) {
    RunAnnotation annotation;
    annotation.name = in.get_text();
    const auto tags = in.get<uint32_t>();
    if (tags > kMaxTags) in.malformed(std::to_string(tags) + " tags");
    for (uint32_t i = 0; i < tags; ++i) annotation.tags.push_back(in.get_text());
    annotation.note = in.get_text();
    try {
      batch.annotation = checked_annotation(annotation, log);
    } catch (const RunFileError& error) {
      in.malformed(std::string("annotation: ") + error.what());
    }
  }
  if (!in.done()) in.malformed("bytes after the last field");
}

}  // namespace

std::vector<char> encode_payload(const RunBatch& batch) {
  Bytes payload;
  payload.put<uint32_t>(static_cast<uint32_t>(batch.metrics.size()));
  for (const auto& [name, rows] : batch.metrics) {
    payload.put_text(name);
    payload.put<int32_t>(static_cast<int32_t>(rows.shape));
    payload.put<int64_t>(rows.width);
    payload.put_array(rows.steps);
    payload.put_array(rows.wall_times);
    payload.put_array(rows.values);
  }
  payload.put<uint32_t>(static_cast<uint32_t>(batch.histograms.size()));
  for (const auto& [name, snapshots] : batch.histograms) {
    payload.put_text(name);
    payload.put_array(snapshots.edges);
    payload.put_array(snapshots.steps);
    payload.put_array(snapshots.counts);
  }
  payload.put<uint32_t>(static_cast<uint32_t>(batch.sweeps.size()));
  for (const auto& [name, sweep] : batch.sweeps) {
    payload.put_text(name);
    payload.put_text(sweep.noise);
    payload.put_text(sweep.metric_name);
    payload.put<int64_t>(sweep.layers);
    payload.put_array(sweep.gamma);
    payload.put_array(sweep.seeds);
    payload.put_array(sweep.metric);
    payload.put_array(sweep.layer_loss);
  }
  if (batch.annotation) {
    payload.put_text(batch.annotation->name);
    payload.put<uint32_t>(static_cast<uint32_t>(batch.annotation->tags.size()));
    for (const auto& tag : batch.annotation->tags) payload.put_text(tag);
    payload.put_text(batch.annotation->note);
  }
  return std::move(payload.data());
}

RunBatch decode_payload(const char* data, size_t size, bool annotated, const std::string& log, uint64_t offset) {
  Reader in(data, size, log, offset);
  RunBatch batch;
  decode_series(in, batch);
  decode_sweeps_and_annotation(in, annotated, log, batch);
  return batch;
}

}  // namespace descentlab::store
