#pragma once
// The payload of a run-log record (internal to core/store; the log's framing is core/store/run_log.h): one commit's
// metric rows, histogram snapshots and sweeps, and in a record of type 2 a person's annotation of the run after them.
// Little-endian: counts as u32, lengths as u64, text as its length and UTF-8 bytes, arrays as their count and values.

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/run_batch.h"

namespace descentlab::store {

// CRC-32 (zlib's) of `size` bytes, of any length.
uint32_t log_crc(const char* data, size_t size);

// Little-endian bytes appended one value at a time.
class Bytes {
 public:
  template <typename T>
  void put(T value) {
    const auto* raw = reinterpret_cast<const char*>(&value);
    out_.insert(out_.end(), raw, raw + sizeof(T));
  }
  void put_text(const std::string& text) {
    put<uint64_t>(text.size());
    out_.insert(out_.end(), text.begin(), text.end());
  }
  template <typename T>
  void put_array(const std::vector<T>& values) {
    put<uint64_t>(values.size());
    const auto* raw = reinterpret_cast<const char*>(values.data());
    out_.insert(out_.end(), raw, raw + values.size() * sizeof(T));
  }
  std::vector<char>& data() { return out_; }

 private:
  std::vector<char> out_;
};

// The batch's rows, snapshots and sweeps, then its annotation when it has one (a record of type 2).
std::vector<char> encode_payload(const RunBatch& batch);
// The batch a payload whose CRC matched holds; `annotated` for a record of type 2. RunFileError(Corrupt) names `log`
// and the record's byte `offset` when it is malformed (lengths past its end, shapes that do not fit, a bad
// annotation, bytes after the last field).
RunBatch decode_payload(const char* data, size_t size, bool annotated, const std::string& log, uint64_t offset);

}  // namespace descentlab::store
