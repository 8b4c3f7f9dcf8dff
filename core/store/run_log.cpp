#include "core/store/run_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "core/store/durable_file.h"
#include "core/store/log_payload.h"
#include "core/store/run_file.h"
#include "core/store/run_lock.h"

namespace descentlab::store {
namespace {

constexpr char kMagic[8] = {'D', 'L', 'R', 'U', 'N', 'L', 'O', 'G'};
constexpr uint32_t kLogVersion = 2;          // 1: without the run's identity (32-byte header)
constexpr size_t kFirstLogHeaderBytes = 32;  // version 1's header
constexpr size_t kRunIdBytes = 16;
constexpr uint32_t kRecordMarker = 0x52474F4C;  // "LOGR" little-endian
constexpr uint32_t kBatchRecord = 1;
// 2 (2026-12, issue 54): a batch followed by a person's annotation of the run (RunAnnotation: its name, u32 tag count,
// the tags, its note). A build before it refuses the record naming its type.
constexpr uint32_t kAnnotatedBatchRecord = 2;
constexpr size_t kRecordHeaderBytes = 4 + 4 + 8 + 8 + 4;  // marker, type, sequence, length, their CRC

bool all_zero(const std::vector<char>& bytes, size_t from) {
  for (size_t i = from; i < bytes.size(); ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

template <typename T>
T load(const std::vector<char>& bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

}  // namespace

std::string log_path_for(const std::string& run_path) {
  return run_path + ".log";
}

std::vector<char> encode_log_header(int64_t base_sequence, const std::string& run_id) {
  Bytes out;
  out.data().insert(out.data().end(), kMagic, kMagic + sizeof kMagic);
  out.put<uint32_t>(kLogVersion);
  out.put<uint32_t>(0);
  out.put<int64_t>(base_sequence);
  for (size_t i = 0; i < kRunIdBytes; ++i) {  // 32 hex digits as 16 bytes; zeros for a run without identity
    out.put<uint8_t>(is_run_id(run_id) ? static_cast<uint8_t>(std::stoul(run_id.substr(2 * i, 2), nullptr, 16)) : 0);
  }
  out.put<uint32_t>(log_crc(out.data().data(), out.data().size()));
  out.put<uint32_t>(0);
  return std::move(out.data());
}

std::vector<char> encode_log_record(int64_t sequence, const RunBatch& batch) {
  const std::vector<char> payload = encode_payload(batch);
  Bytes record;
  record.put<uint32_t>(kRecordMarker);
  record.put<uint32_t>(batch.annotation ? kAnnotatedBatchRecord : kBatchRecord);
  record.put<int64_t>(sequence);
  record.put<uint64_t>(payload.size());
  record.put<uint32_t>(log_crc(record.data().data() + 4, 20));
  auto& out = record.data();
  out.insert(out.end(), payload.begin(), payload.end());
  out.reserve(out.size() + 4);
  const uint32_t crc = log_crc(out.data() + 4, out.size() - 4);
  record.put<uint32_t>(crc);
  return std::move(out);
}

RunLog read_run_log(const std::string& run_path, int64_t after_sequence) {
  return read_run_log_from(run_path, after_sequence, 0);
}

namespace {

// The log's header and its bytes from `from` on (from <= the header's end: all of it), or nullopt when the log does
// not exist (folded and replaced meanwhile).
std::optional<std::vector<char>> log_bytes_from(const std::string& path, uint64_t from) {
  if (from <= kLogHeaderBytes) {
    try {
      return read_whole_file(path);
    } catch (const RunFileError& error) {
      if (error.kind() == RunFileError::Kind::NotFound) return std::nullopt;
      throw RunFileError(RunFileError::Kind::Corrupt, path, "", std::string("cannot read it: ") + error.what());
    }
  }
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw RunFileError(RunFileError::Kind::Corrupt, path, "", std::string("cannot read it: ") + std::strerror(errno));
  }
  struct stat info {};
  const off_t size = ::fstat(descriptor, &info) == 0 ? info.st_size : 0;
  const size_t tail = size > static_cast<off_t>(from) ? static_cast<size_t>(size - static_cast<off_t>(from)) : 0;
  std::vector<char> bytes(kLogHeaderBytes + tail);
  size_t done = 0;
  bool failed = false;
  while (done < bytes.size() && !failed) {
    const off_t at =
        done < kLogHeaderBytes ? static_cast<off_t>(done) : static_cast<off_t>(from + (done - kLogHeaderBytes));
    const size_t want = done < kLogHeaderBytes ? kLogHeaderBytes - done : bytes.size() - done;
    const ssize_t got = ::pread(descriptor, bytes.data() + done, want, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      failed = got < 0;
      bytes.resize(done);  // shorter than when it was sized: read what is there
      break;
    }
    done += static_cast<size_t>(got);
  }
  const int error_number = errno;
  ::close(descriptor);
  if (failed) {
    throw RunFileError(RunFileError::Kind::Corrupt, path, "",
                       std::string("read error: ") + std::strerror(error_number));
  }
  return bytes;
}

RunFileError corrupt(const std::string& path, const std::string& object, const std::string& message) {
  return RunFileError(RunFileError::Kind::Corrupt, path, object,
                      message + "; the run file beside it holds everything up to its last checkpoint");
}

// Checks the header of the log `path` (its first bytes in `bytes`) and returns its length: 0 for a new log whose header
// is still being written (no bytes, or only zeros), which holds no record yet. Sets `log`'s base sequence and run id.
size_t check_header(const std::vector<char>& bytes, const std::string& path, RunLog& log) {
  if (bytes.size() < kFirstLogHeaderBytes && (bytes.empty() || all_zero(bytes, 0))) return 0;
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw corrupt(path, "header", "not a DescentLab run log, or its header is damaged");
  }
  const auto version = load<uint32_t>(bytes, 8);
  if (version != 1 && version != kLogVersion) {
    throw RunFileError(RunFileError::Kind::NewerVersion, path, "header",
                       "log version " + std::to_string(version) + " is not one this DescentLab reads; update it");
  }
  const size_t length = version == 1 ? kFirstLogHeaderBytes : kLogHeaderBytes;
  if (bytes.size() < length) {
    if (all_zero(bytes, 12)) return 0;
    throw corrupt(path, "header", "cut short (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (load<uint32_t>(bytes, length - 8) != log_crc(bytes.data(), length - 8)) {
    throw corrupt(path, "header", "not a DescentLab run log, or its header is damaged");
  }
  log.base_sequence = load<int64_t>(bytes, 16);
  if (version == 1 || std::all_of(bytes.begin() + 24, bytes.begin() + 40, [](char c) { return c == 0; })) {
    return length;
  }
  static const char* digits = "0123456789abcdef";
  for (size_t i = 0; i < kRunIdBytes; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[24 + i]);
    log.run_id += digits[byte >> 4];
    log.run_id += digits[byte & 15];
  }
  return length;
}

}  // namespace

RunLog read_run_log_from(const std::string& run_path, int64_t after_sequence, uint64_t from) {
  const std::string path = log_path_for(run_path);
  RunLog log;
  const auto read = log_bytes_from(path, from);
  if (!read) return log;
  const std::vector<char>& bytes = *read;
  // Index i >= the header's end of `bytes` is byte i + shift of the log.
  const uint64_t shift = from > kLogHeaderBytes ? from - kLogHeaderBytes : 0;
  log.exists = true;
  log.file_length = bytes.size() + shift;
  const size_t header_length = check_header(bytes, path, log);
  if (header_length == 0) return log;
  log.last_sequence = shift > 0 ? std::max(log.base_sequence, after_sequence) : log.base_sequence;
  size_t at = shift > 0 ? kLogHeaderBytes : header_length;
  log.valid_length = at + shift;
  while (at < bytes.size()) {
    const std::string where = "record at byte " + std::to_string(at + shift);
    const size_t left = bytes.size() - at;
    if (left < kRecordHeaderBytes) break;  // a header cut short: the last commit, not yet whole
    if (load<uint32_t>(bytes, at) != kRecordMarker) {
      if (all_zero(bytes, at)) break;  // space the file system extended with zeros before the data landed
      throw corrupt(path, where, "damaged (no record marker)");
    }
    const auto type = load<uint32_t>(bytes, at + 4);
    const auto sequence = load<int64_t>(bytes, at + 8);
    const auto length = load<uint64_t>(bytes, at + 16);
    // A damaged length must not pass for a record cut short (that would drop the records after it unseen).
    if (load<uint32_t>(bytes, at + 24) != log_crc(bytes.data() + at + 4, 20)) {
      throw corrupt(path, where, "damaged (its header's CRC does not match)");
    }
    if (length > left - kRecordHeaderBytes || left - kRecordHeaderBytes - length < 4) break;  // cut short
    const size_t end = at + kRecordHeaderBytes + static_cast<size_t>(length) + 4;
    const uint32_t stored = load<uint32_t>(bytes, end - 4);
    if (stored != log_crc(bytes.data() + at + 4, end - 4 - (at + 4))) {
      if (end == bytes.size()) break;  // the last record, not wholly on disk: a commit that never returned
      throw corrupt(path, where, "damaged (CRC mismatch)");
    }
    if (type != kBatchRecord && type != kAnnotatedBatchRecord)
      throw corrupt(path, where, "unknown record type " + std::to_string(type));
    if (sequence <= log.last_sequence) {
      throw corrupt(path, where,
                    "sequence " + std::to_string(sequence) + " does not follow " + std::to_string(log.last_sequence));
    }
    if (sequence > after_sequence) {
      log.records.push_back(
          {sequence, decode_payload(bytes.data() + at + kRecordHeaderBytes, static_cast<size_t>(length),
                                    type == kAnnotatedBatchRecord, path, at + shift)});
    }
    log.last_sequence = sequence;
    at = end;
    log.valid_length = at + shift;
  }
  return log;
}

void check_log_follows(const RunLog& log, int64_t folded_sequence, const std::string& run_id, const std::string& path) {
  if (!log.exists) return;
  if (!log.run_id.empty() && !run_id.empty() && log.run_id != run_id) {
    throw RunFileError(RunFileError::Kind::Corrupt, log_path_for(path), "header",
                       "belongs to the run " + log.run_id + ", not to " + path + ", which is the run " + run_id +
                           " (copied from another run?): nothing is read from it; move it away to use the run "
                           "file without it");
  }
  if (log.base_sequence > folded_sequence) {
    throw RunFileError(RunFileError::Kind::Corrupt, log_path_for(path), "header",
                       "continues version " + std::to_string(log.base_sequence) + " of the run file, which is at " +
                           std::to_string(folded_sequence) +
                           ": the two do not belong together (copied from different moments?)");
  }
}

RunBatch merge_records(RunLog& log) {
  RunBatch merged;
  for (auto& record : log.records) merged.merge_newer(std::move(record.batch));
  return merged;
}

RunBatch logged_since_fold(const std::string& run_path, int64_t folded_sequence, const std::string& run_id,
                           int64_t last_committed, std::string* missing) {
  RunLog log = read_run_log(run_path, folded_sequence);
  check_log_follows(log, folded_sequence, run_id, run_path);
  if (log.last_sequence < last_committed) {
    *missing = log_path_for(run_path) + " lost the records " +
               std::to_string(std::max(log.last_sequence, folded_sequence) + 1) + " to " +
               std::to_string(last_committed) +
               " committed to it (deleted or replaced by another program?); "
               "their rows are missing from the run file";
  }
  return merge_records(log);
}

RunLogAppender::RunLogAppender(std::string run_path) : run_path_(std::move(run_path)) {}

RunLogAppender::~RunLogAppender() {
  close();
}

void RunLogAppender::close() {
  if (descriptor_ >= 0) ::close(descriptor_);
  descriptor_ = -1;
}

void RunLogAppender::reopen() {
  close();
  const std::string log = log_path_for(run_path_);
  descriptor_ = ::open(log.c_str(), O_RDWR | O_CLOEXEC);
  if (descriptor_ < 0) return;
  // The log is held (flock) by its writer from open to close: a second writer that got past the run's lock file (it
  // was deleted or replaced meanwhile) cannot take it, so it can never append beside this one.
  if (::flock(descriptor_, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    close();
    if (error_number == EWOULDBLOCK) throw_log_held(run_path_);
  }
}

void RunLogAppender::continue_after(const RunLog& log) {
  if (!log.exists) return;
  // A log shorter than its header (0 bytes, or zeros: its writer died before the header landed) holds no record, and a
  // record appended to it would have no header before it: it stays closed, so the first commit folds and starts a new
  // log in its place, as readers already read it.
  if (log.valid_length == 0) return;
  length_ = log.valid_length;
  reopen();
  if (descriptor_ >= 0 && log.file_length != log.valid_length &&
      (::ftruncate(descriptor_, static_cast<off_t>(log.valid_length)) != 0 || ::fsync(descriptor_) != 0)) {
    close();  // the first commit folds and starts a new log
  }
}

void RunLogAppender::append(int64_t sequence, const RunBatch& batch) {
  const std::vector<char> record = encode_log_record(sequence, batch);
  bool cut_back = true;
  try {
    append_durably(descriptor_, length_, record.data(), record.size(), run_path_, log_path_for(run_path_), &cut_back);
  } catch (const RunFileError&) {
    // Bytes of the failed record may be left past length_: the next commit folds and starts a new log, so no later
    // record can end up between them and a reader.
    if (!cut_back) close();
    throw;
  }
  length_ += record.size();
}

std::string RunLogAppender::start_new(int64_t base_sequence, const std::string& run_id) {
  const std::string log = log_path_for(run_path_);
  const std::vector<char> header = encode_log_header(base_sequence, run_id);
  int held = -1;  // the new log, locked before it takes the log's name
  const std::string warning = replace_file_durably(log, temporary_for(log), header.data(), header.size(), &held);
  close();
  descriptor_ = held;
  length_ = header.size();
  return warning;
}

void RunLogAppender::close_and_remove() {
  close();
  std::error_code removed;
  std::filesystem::remove(log_path_for(run_path_), removed);
}

}  // namespace descentlab::store
