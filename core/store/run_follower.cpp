#include "core/store/run_follower.h"

#include <sys/stat.h>

#include <algorithm>

#include "core/store/run_log.h"

namespace descentlab::store {
namespace {

std::string identity_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "missing";
  return std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

}  // namespace

RunFollower::RunFollower(std::string path) : path_(std::move(path)) {}

RunFollower::Update RunFollower::poll() {
  Update update;
  const std::string identity = identity_of(path_);
  if (identity_.empty() || identity != identity_) {
    // Before the read: if a fold replaces the file meanwhile, the next poll sees a new identity and reads again.
    update.whole = std::make_unique<RunReader>(path_);
    const RunReader::LogPosition position = update.whole->log_position();
    identity_ = identity;
    log_exists_ = position.exists;
    log_base_ = position.base_sequence;
    last_sequence_ = position.last_sequence;
    log_offset_ = position.valid_length;
    return update;
  }
  RunLog log = read_run_log_from(path_, last_sequence_, log_exists_ ? log_offset_ : 0);
  if (!log.exists) return update;
  if (log_exists_ && log.base_sequence != log_base_) {
    // A new log beside the same run file can only follow a fold whose rename this poll has not seen yet.
    reset();
    return poll();
  }
  update.bytes_read = log.file_length - (log_exists_ ? log_offset_ : 0);
  log_exists_ = true;
  log_base_ = log.base_sequence;
  log_offset_ = log.valid_length;
  last_sequence_ = std::max(last_sequence_, log.last_sequence);
  update.records = log.records.size();
  for (auto& record : log.records) update.appended.merge_newer(std::move(record.batch));
  return update;
}

}  // namespace descentlab::store
