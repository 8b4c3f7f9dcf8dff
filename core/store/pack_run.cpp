#include "core/store/pack_run.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/record/checkpoint.h"
#include "core/store/checkpoint_files.h"
#include "core/store/durable_file.h"
#include "core/store/file_version.h"
#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"
#include "core/store/run_lock.h"
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
  CheckpointFiles files(source);
  format::embed_module_copy(file, source, files);  // a user's module, kept once as long as the run
  if (data_files.empty()) return true;
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
    check_log_follows(log, folded, format::run_id_of(version.file()), source);
    version.add_rows(merge_records(log));
    version.set_log_sequence(std::max(folded, log.last_sequence));
    if (!embed_checkpoint_data(version.file(), source, may_retry)) return std::nullopt;
    return Packed{version.finish(), log.records.size()};
  } catch (const H5::Exception& error) {
    throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, source, "");
  }
}

// Whether `path` is an HDF5 file with a run file's root attributes (a run another run could lose by a pack).
bool is_run_file(const std::string& path) {
  try {
    const RunReader reader(path);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// `path` made absolute and free of "." and "..", following the links that exist, for comparing names.
fs::path normal(const std::string& path) {
  std::error_code status;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, status), status);
  return status ? fs::absolute(path).lexically_normal() : resolved;
}

// Which run `target` belongs to as a companion ("the log of", "the lock of", "checkpoint data of"), naming that run's
// file; "" when it is none's. A companion's run is its name without the suffix, when that is a run file.
std::string companion_of(const fs::path& target) {
  std::error_code status;
  const std::string name = target.string();
  for (const auto& [suffix, what] : {std::pair<std::string, std::string>{".log", "the log of the run "},
                                     std::pair<std::string, std::string>{".lock", "the lock of the run "}}) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string run = name.substr(0, name.size() - suffix.size());
      if (fs::is_regular_file(run, status) && is_run_file(run)) return what + run;
    }
  }
  const std::string folder_suffix = ".checkpoints";
  for (fs::path folder = target.parent_path(); !folder.empty() && folder != folder.root_path();
       folder = folder.parent_path()) {
    const std::string folder_name = folder.string();
    if (folder_name.size() > folder_suffix.size() &&
        folder_name.compare(folder_name.size() - folder_suffix.size(), folder_suffix.size(), folder_suffix) == 0) {
      const std::string run = folder_name.substr(0, folder_name.size() - folder_suffix.size());
      if (fs::is_regular_file(run, status) && is_run_file(run))
        return "in the checkpoint data folder of the run " + run;
    }
  }
  return "";
}

// Refuses a target that is the run being packed, one of its companions or another run's, a folder, or (without
// `overwrite`) any existing file.
void check_pack_target(const std::string& source, const std::string& target, bool overwrite) {
  const auto refuse = [&](const std::string& why) {
    throw RunFileError(RunFileError::Kind::InvalidArgument, target, "", why);
  };
  const fs::path run = normal(source);
  const fs::path out = normal(target);
  if (out == run) refuse("is the run being packed; choose another name");
  // The run's own companions, also under names that only resolve to them (a link, "..").
  if (out == normal(log_path_for(source)) || out == normal(RunFileLock::lock_path_for(source))) {
    refuse("is a companion of the run being packed (" + source + "); choose another name");
  }
  const fs::path own_data = normal(checkpoint_folder_for(source));
  const auto inside = std::mismatch(own_data.begin(), own_data.end(), out.begin(), out.end());
  if (inside.first == own_data.end()) {
    refuse("is in the checkpoint data folder of the run being packed (" + source + "); choose another name");
  }
  const std::string companion = companion_of(out);
  if (!companion.empty()) refuse("is " + companion + "; choose another name");
  std::error_code status;
  if (fs::is_directory(target, status)) refuse("is a folder; give the packed file's name");
  if (fs::exists(target, status) && !overwrite) {
    refuse("already exists; choose another name, or overwrite it (descentlab-cli pack --overwrite)");
  }
}

}  // namespace

PackResult pack_run(const std::string& source, const std::string& target, const PackOptions& options) {
  const RunReader validated(source);  // names what is wrong with the source before anything is written
  (void)validated;
  check_pack_target(source, target, options.overwrite);
  // Overwriting a run: its writer (if any) must not be writing meanwhile, and it keeps its lock until we are done.
  std::unique_ptr<RunFileLock> lock;
  std::error_code status;
  const bool replaces_run = fs::exists(target, status) && is_run_file(target);
  if (replaces_run) lock = RunFileLock::acquire(target, "being replaced by a packed copy of " + source);
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
  // The replaced run's checkpoint data (the packed file holds its own tensors): a folder of its own goes, a link to
  // another run's folder goes as a link only.
  const fs::path data_folder = checkpoint_folder_for(target);
  if (fs::is_symlink(data_folder, status) || fs::exists(data_folder, status)) {
    fs::remove_all(data_folder, status);
    if (status && result.warning.empty()) {
      result.warning = "could not remove " + data_folder.string() +
                       ", the replaced run's checkpoint data: " + status.message() +
                       " (the packed file does not use it; remove it by hand)";
    }
  }
  return result;
}

}  // namespace descentlab::store
