#include "core/store/parent_check.h"

#include <exception>
#include <filesystem>

#include "core/store/run_reader.h"

namespace descentlab::store {

std::string parent_problem(const RunLineage& lineage) {
  const std::string& path = lineage.parent_file;
  std::error_code status;
  if (!std::filesystem::exists(path, status)) {
    return "its parent " + path + " is not there (moved or deleted); the branch recorded run " + lineage.parent_run_id +
           " and its checkpoint at step " + std::to_string(lineage.branch_step) + " with SHA-256 " +
           lineage.parent_checkpoint_sha256;
  }
  try {
    const RunReader parent(path);
    if (parent.header().run_id != lineage.parent_run_id) {
      return "the run at " + path + " is not its parent: its run id is " + parent.header().run_id +
             ", the branch recorded " + lineage.parent_run_id;
    }
    // Changed: it keeps states at the branch step, and none is the one branched from. (Two states at one step may
    // differ, a kept step-N and the "latest" of a stop there: either may have been the one.)
    const CheckpointInfo* differing = nullptr;
    for (const auto& kept : parent.checkpoints()) {
      if (kept.step != lineage.branch_step || kept.sha256.empty() || lineage.parent_checkpoint_sha256.empty()) continue;
      if (kept.sha256 == lineage.parent_checkpoint_sha256) return "";
      differing = &kept;
    }
    if (differing) {
      return "its parent " + path + " changed: its checkpoint \"" + differing->label + "\" at step " +
             std::to_string(differing->step) + " has SHA-256 " + differing->sha256 + ", the branch recorded " +
             lineage.parent_checkpoint_sha256;
    }
  } catch (const std::exception& error) {
    return "its parent " + path + " cannot be read: " + error.what();
  }
  return "";
}

}  // namespace descentlab::store
