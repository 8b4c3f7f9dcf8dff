#include "core/store/run_follower.h"

#include <algorithm>

#include "core/store/run_log.h"

namespace descentlab::store {

RunFollower::RunFollower(std::string path) : path_(std::move(path)) {}

RunFollower::Update RunFollower::poll() {
  Update update;
  const std::string identity = run_file_version(path_);
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
