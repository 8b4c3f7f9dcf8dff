#include "core/store/pack_run.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "core/record/checkpoint.h"
#include "core/store/checkpoint_files.h"
#include "core/store/durable_file.h"
#include "core/store/file_version.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"

namespace descentlab::store {
namespace fs = std::filesystem;
namespace {

// A writer replaced the file or a checkpoint while it was being packed: it is read again (as RunReader does; a
// fold takes a moment, so a few tries suffice).
constexpr int kAttempts = 20;

struct Packed {
  std::vector<char> image;
  size_t log_records = 0;
};

// Brings the checkpoints whose tensors are in data files into the file itself (checked against their sums on the
// way), so that it is one file h5py reads whole. False when a data file is missing (replaced by a writer meanwhile)
// and `may_retry`.
bool embed_checkpoint_data(H5::H5File& file, const std::string& source, bool may_retry) {
  H5::Group checkpoints = file.openGroup(format::kCheckpoints);
  const std::set<std::string> data_files = format::external_file_names(checkpoints);
  if (data_files.empty()) return true;
  CheckpointFiles files(source);
  if (!files.open(data_files).empty() && may_retry) return false;
  const int64_t version = hdf5::int_attribute(file.openGroup("/"), "format_version");
  for (const auto& label : hdf5::child_names(checkpoints)) {
    if (format::external_file_names(checkpoints.openGroup(label)).empty()) continue;
    const record::CheckpointData checkpoint = format::read_checkpoint(
        checkpoints.openGroup(label), source, record::checkpoint_object(label), version, &files);
    format::write_checkpoint(checkpoints, label, checkpoint, source);
  }
  return true;
}

// The packed version of `source` from its committed bytes and the log beside it; nullopt when a writer changed them
// meanwhile and `may_retry`.
std::optional<Packed> pack_version(const std::string& source, const std::vector<char>& committed, bool may_retry) {
  try {
    FileVersion version = FileVersion::from_image(committed, size_t{1} << 20, "packed");
    const int64_t folded = format::log_sequence(version.file());
    RunLog log = read_run_log(source, folded);
    // A writer folded after the file was read: read both again.
    if (log.exists && log.base_sequence > folded && may_retry) return std::nullopt;
    check_log_follows(log, folded, source);
    version.add_rows(merge_records(log));
    version.set_log_sequence(std::max(folded, log.last_sequence));
    if (!embed_checkpoint_data(version.file(), source, may_retry)) return std::nullopt;
    return Packed{version.finish(), log.records.size()};
  } catch (const H5::Exception& error) {
    throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, source, "");
  }
}

}  // namespace

PackResult pack_run(const std::string& source, const std::string& target) {
  std::error_code status;
  if (fs::weakly_canonical(source, status) == fs::weakly_canonical(target, status)) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, target, "", "is the run being packed; choose another name");
  }
  const RunReader validated(source);  // names what is wrong with the source before anything is written
  (void)validated;
  std::optional<Packed> packed;
  for (int attempt = 1; !packed; ++attempt) packed = pack_version(source, read_whole_file(source), attempt < kAttempts);
  // A log beside the target belongs to whatever was there before: it must not be read as the packed run's.
  fs::remove(log_path_for(target), status);
  if (status) {
    throw RunFileError(RunFileError::Kind::WriteFailed, log_path_for(target), "",
                       "cannot remove it (it would be read as part of " + target + "): " + status.message());
  }
  PackResult result;
  result.warning = replace_file_durably(target, temporary_for(target), packed->image.data(), packed->image.size());
  result.bytes = packed->image.size();
  result.log_records = packed->log_records;
  return result;
}

}  // namespace descentlab::store
