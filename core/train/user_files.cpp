#include "core/train/user_files.h"

#include <filesystem>
#include <system_error>

#include "core/store/run_reader.h"
#include "core/util/error.h"
#include "core/util/sha256.h"

namespace descentlab::train {
namespace fs = std::filesystem;
namespace {

store::RunInputFile input_of_file(const std::string& path) {
  std::error_code status;
  if (!fs::is_regular_file(path, status)) throw DataError(path, "no such file");
  const uintmax_t bytes = fs::file_size(path, status);
  if (status) throw DataError(path, "cannot be read: " + status.message());
  return {path, static_cast<uint64_t>(bytes), sha256_of_file(path)};
}

// `path` checked against what the run recorded of its `role` ("model", "data") file.
void check_same_file(const std::string& path, const store::RunInputFile& recorded, const std::string& role,
                     const std::string& run_path) {
  std::error_code status;
  if (!fs::is_regular_file(path, status)) {
    throw DataError(path, "the " + role + " file the run " + run_path + " trained on (" +
                              std::to_string(recorded.bytes) + " bytes, SHA-256 " + recorded.sha256 +
                              ") is not there: give where it is now (train --resume RUN --" + role + " FILE)");
  }
  const store::RunInputFile now = input_of_file(path);
  if (now.sha256 != recorded.sha256) {
    throw DataError(path, "is not the " + role + " file the run " + run_path + " trained on: its SHA-256 is " +
                              now.sha256 + " (" + std::to_string(now.bytes) + " bytes), the run began on " +
                              recorded.path + " with " + recorded.sha256 + " (" + std::to_string(recorded.bytes) +
                              " bytes); a run continues only on the files it began with");
  }
}

}  // namespace

UserFiles read_user_files(const config::ExperimentConfig& config) {
  UserFiles files;
  files.sources.model = models::read_module_file(config.model.file);
  files.model = {config.model.file, files.sources.model.bytes->size(), sha256_of_bytes(*files.sources.model.bytes)};
  files.sources.data_path = config.data.file;
  files.data = input_of_file(config.data.file);
  return files;
}

void record_user_files(const UserFiles& files, store::RunHeader& header) {
  header.model_file = files.model;
  header.data_file = files.data;
  header.module_copy = files.sources.model.bytes;
}

tasks::ScriptSources saved_user_files(const store::RunReader& reader, const config::ExperimentConfig& config,
                                      const GivenFiles& given) {
  const store::RunHeader& header = reader.header();
  tasks::ScriptSources sources;
  sources.data_path = given.data.empty() ? config.data.file : given.data;
  if (header.model_file) {
    if (!given.model.empty()) check_same_file(given.model, *header.model_file, "model", reader.path());
    sources.model.path = reader.path() + " (its copy of " + fs::path(header.model_file->path).filename().string() + ")";
    sources.model.bytes = std::make_shared<const std::string>(reader.module_copy());
  } else {
    sources.model = models::read_module_file(given.model.empty() ? config.model.file : given.model);
  }
  if (header.data_file) check_same_file(sources.data_path, *header.data_file, "data", reader.path());
  return sources;
}

UserFiles kept_user_files(const store::RunReader& reader, const tasks::ScriptSources& sources) {
  const store::RunHeader& header = reader.header();
  UserFiles files;
  files.sources = sources;
  const std::string& module = *sources.model.bytes;
  files.model = header.model_file ? *header.model_file
                                  : store::RunInputFile{sources.model.path, module.size(), sha256_of_bytes(module)};
  files.data = header.data_file ? *header.data_file : input_of_file(sources.data_path);
  files.data.path = fs::absolute(sources.data_path).lexically_normal().string();
  return files;
}

}  // namespace descentlab::train
