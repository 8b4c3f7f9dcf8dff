#include "core/store/checkpoint_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>

#include "core/store/checkpoint_checksums.h"
#include "core/store/durable_file.h"
#include "core/store/run_file.h"

namespace descentlab::store {
namespace fs = std::filesystem;

std::string checkpoint_folder_for(const std::string& run_path) {
  return run_path + ".checkpoints";
}

std::string checkpoint_file_name(const std::string& run_path, int64_t sequence, const std::string& run_id) {
  return fs::path(run_path).filename().string() + ".checkpoints/" + std::to_string(sequence) +
         (run_id.empty() ? "" : "-" + run_id) + ".bin";
}

std::string module_copy_file_name(const std::string& run_path, const std::string& run_id) {
  return fs::path(run_path).filename().string() + ".checkpoints/module-" + run_id + ".bin";
}

namespace {

// Whether `name` is "<sequence>-<run_id>.bin" or "module-<run_id>.bin".
bool named_for_run(const std::string& name, const std::string& run_id) {
  if (!run_id.empty() && name == "module-" + run_id + ".bin") return true;
  const std::string tail = "-" + run_id + ".bin";
  if (run_id.empty() || name.size() <= tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
    return false;
  }
  const std::string sequence = name.substr(0, name.size() - tail.size());
  return std::all_of(sequence.begin(), sequence.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string checkpoint_file_path(const std::string& run_path, const std::string& stored_name) {
  return (fs::path(checkpoint_folder_for(run_path)) / fs::path(stored_name).filename()).string();
}

CheckpointFiles::CheckpointFiles(std::string run_path) : run_path_(std::move(run_path)) {}

CheckpointFiles::~CheckpointFiles() {
  for (const auto& entry : descriptors_) {
    if (entry.second >= 0) ::close(entry.second);
  }
}

int CheckpointFiles::descriptor_for(const std::string& stored_name) {
  const std::string path = checkpoint_file_path(run_path_, stored_name);
  const auto known = descriptors_.find(path);
  if (known != descriptors_.end()) return known->second;
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor >= 0) descriptors_[path] = descriptor;
  return descriptor;
}

std::vector<std::string> CheckpointFiles::open(const std::set<std::string>& stored_names) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> missing;
  for (const auto& name : stored_names) {
    if (descriptor_for(name) < 0) missing.push_back(name);
  }
  return missing;
}

void CheckpointFiles::read(const std::string& stored_name, uint64_t offset, uint64_t size, const std::string& object,
                           std::vector<uint8_t>& into) {
  const std::string path = checkpoint_file_path(run_path_, stored_name);
  int descriptor = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    descriptor = descriptor_for(stored_name);
  }
  if (descriptor < 0) {
    const int error_number = errno;
    throw RunFileError(error_number == ENOENT ? RunFileError::Kind::NotFound : RunFileError::Kind::Corrupt, run_path_,
                       object,
                       "its data file " + path + " cannot be opened: " + std::strerror(error_number) +
                           " (a run file moves with its .checkpoints folder beside it, under the same name; "
                           "`descentlab-cli pack` makes one file of both)");
  }
  struct stat info {};
  if (::fstat(descriptor, &info) != 0 || offset > static_cast<uint64_t>(info.st_size) ||
      size > static_cast<uint64_t>(info.st_size) - offset) {
    throw RunFileError(RunFileError::Kind::Corrupt, run_path_, object,
                       "claims bytes " + std::to_string(offset) + " to " + std::to_string(offset + size) + " of " +
                           path + ", which holds " + std::to_string(info.st_size) + " bytes (cut short or damaged)");
  }
  into.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < into.size()) {
    const ssize_t got = ::pread(descriptor, into.data() + done, into.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw RunFileError(RunFileError::Kind::Corrupt, run_path_, object,
                         "read error in " + path + ": " + (got < 0 ? std::strerror(errno) : "unexpected end"));
    }
    done += static_cast<size_t>(got);
  }
}

void remove_unreferenced_checkpoint_files(const std::string& run_path, const std::set<std::string>& referenced,
                                          const std::string& run_id, const std::set<std::string>& known) {
  const std::string folder = checkpoint_folder_for(run_path);
  std::error_code status;
  if (!fs::is_directory(folder, status)) return;
  std::set<std::string> kept, ours;
  for (const auto& name : referenced) kept.insert(fs::path(name).filename().string());
  for (const auto& name : known) ours.insert(fs::path(name).filename().string());
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(folder, status)) {
    const std::string name = entry.path().filename().string();
    if (kept.count(name) || !(ours.count(name) || named_for_run(name, run_id))) {
      empty = false;
      continue;
    }
    std::error_code removed;
    fs::remove(entry.path(), removed);
    if (removed) empty = false;
  }
  if (empty) fs::remove(folder, status);
}

std::vector<const record::TensorBlob*> tensors_in_order(const record::CheckpointData& checkpoint) {
  std::vector<const record::TensorBlob*> tensors;
  for (const auto& section : checkpoint.sections) {
    for (const auto& tensor : section.second) {
      if (!tensor.second.bytes.empty()) tensors.push_back(&tensor.second);
    }
  }
  return tensors;
}

CheckpointPlacements write_checkpoint_data(const std::string& run_path, const LabelledCheckpoints& checkpoints,
                                           int64_t sequence, const std::string& run_id) {
  CheckpointPlacements placements;
  if (checkpoints.empty()) return placements;
  const std::string name = checkpoint_file_name(run_path, sequence, run_id);
  std::vector<FilePiece> pieces;
  uint64_t offset = 0;
  for (const auto& entry : checkpoints) {
    const record::CheckpointData* checkpoint = entry.second.get();
    if (placements.count(checkpoint)) continue;  // the same checkpoint under another label: written once
    ExternalPlacement& placement = placements[checkpoint];
    placement.name = name;
    placement.offset = offset;
    for (const record::TensorBlob* blob : tensors_in_order(*checkpoint)) {
      pieces.push_back({blob->bytes.data(), blob->bytes.size()});
      offset += blob->bytes.size();
    }
  }
  // The checksums are computed beside the write (another core), so they add little to its time.
  auto sums = std::async(std::launch::async, [&placements] {
    std::map<const record::CheckpointData*, std::map<std::string, std::string>> all;
    for (const auto& entry : placements) {
      for (const auto& section : entry.first->sections) {
        all[entry.first][section.first] = format::section_checksum(section.second);
      }
    }
    return all;
  });
  const std::string file = checkpoint_file_path(run_path, name);
  try {
    make_folder_durably(run_path, checkpoint_folder_for(run_path));
    write_file_durably(run_path, file, pieces);
  } catch (...) {
    sums.wait();
    throw;
  }
  for (auto& entry : sums.get()) placements[entry.first].section_sums = std::move(entry.second);
  return placements;
}

std::string write_module_copy(const std::string& run_path, const std::string& run_id, const std::string& bytes) {
  const std::string name = module_copy_file_name(run_path, run_id);
  make_folder_durably(run_path, checkpoint_folder_for(run_path));
  write_file_durably(run_path, checkpoint_file_path(run_path, name), {{bytes.data(), bytes.size()}});
  return name;
}

StoredCheckpoints::StoredCheckpoints(std::string run_path) : run_path_(std::move(run_path)) {}

void StoredCheckpoints::keep(const std::set<std::string>& data_files) {
  kept_.insert(data_files.begin(), data_files.end());
  known_.insert(data_files.begin(), data_files.end());
}

void StoredCheckpoints::add(const std::string& label, std::set<std::string> data_files) {
  known_.insert(data_files.begin(), data_files.end());
  data_files_[label] = std::move(data_files);
}

void StoredCheckpoints::replace(const LabelledCheckpoints& checkpoints, int64_t sequence) {
  for (const auto& entry : checkpoints) {
    auto& files = data_files_[entry.first];
    files.clear();
    if (!tensors_in_order(*entry.second).empty()) files.insert(checkpoint_file_name(run_path_, sequence, run_id_));
  }
}

void StoredCheckpoints::remove_unused_files() const {
  std::set<std::string> referenced = kept_;
  for (const auto& entry : data_files_) referenced.insert(entry.second.begin(), entry.second.end());
  remove_unreferenced_checkpoint_files(run_path_, referenced, run_id_, known_);
}

}  // namespace descentlab::store
