#include "core/train/branch_session.h"

#include <filesystem>

#include "core/session/branch_rules.h"
#include "core/store/run_reader.h"
#include "core/util/error.h"

namespace descentlab::session {

// A branch's new run file, with its lineage, and the trainer restored from its parent's checkpoint.
std::unique_ptr<store::RunWriter> open_branch(train::Trainer& trainer, const config::ExperimentConfig& config,
                                              const SessionOptions& options, const torch::Device& device,
                                              const BranchPoint& from, const train::UserFiles* files) {
  const store::RunReader parent_run(from.parent);
  const record::CheckpointData state = parent_run.checkpoint(from.label);
  store::RunHeader header = new_run_header(config, device);
  if (files) train::record_user_files(*files, header);
  store::RunLineage lineage;
  lineage.parent_file = from.parent;
  lineage.parent_run_id = parent_run.header().run_id;
  for (const auto& kept : parent_run.checkpoints()) {
    if (kept.label == from.label) lineage.parent_checkpoint_sha256 = kept.sha256;
  }
  lineage.branch_step = state.step;
  lineage.changes = from.changes;
  header.lineage = lineage;
  auto writer = store::RunWriter::create(options.run_path, header, writer_options_of(options, "training a branch"));
  trainer.resume_from(state, from.parent, from.label);
  trainer.continue_as_branch(config::stored_config(parent_run.header().config_json, from.parent));
  return writer;
}

std::unique_ptr<TrainingSession> TrainingSession::branch(const std::string& parent_path, int64_t step,
                                                         config::ExperimentConfig config, SessionOptions options) {
  namespace fs = std::filesystem;
  const std::string parent = fs::absolute(parent_path).lexically_normal().string();
  if (fs::absolute(options.run_path).lexically_normal().string() == parent) {
    throw Error(options.run_path + ": is the run being branched; a branch is a new run file (--out CHILD.h5)");
  }
  const store::RunReader parent_run(parent);
  std::string label, kept;
  for (const auto& checkpoint : parent_run.checkpoints()) {
    kept += (kept.empty() ? "" : ", ") + checkpoint.label + " at step " + std::to_string(checkpoint.step);
    const bool wanted = step < 0 ? checkpoint.label == record::checkpoint_label::kLatest : checkpoint.step == step;
    if (wanted && (label.empty() || checkpoint.label == record::checkpoint_label::kLatest)) label = checkpoint.label;
  }
  if (label.empty()) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, parent_path, "/checkpoints",
                              (step < 0 ? std::string("has no \"latest\" checkpoint to branch from")
                                        : "keeps no checkpoint at step " + std::to_string(step)) +
                                  "; it keeps " + (kept.empty() ? std::string("none") : kept));
  }
  const config::ExperimentConfig parent_config = config::stored_config(parent_run.header().config_json, parent_path);
  const std::string changes =
      descentlab::session::branch_changes(parent_config.to_json(), config.to_json(), options.run_path);
  auto session = std::unique_ptr<TrainingSession>(new TrainingSession(std::move(config), std::move(options), false));
  session->branch_parent_ = parent;
  session->branch_label_ = label;
  session->branch_changes_ = changes;
  session->branch_notes_ = descentlab::session::branch_notes(parent_config.to_json(), session->config_.to_json());
  return session;
}

}  // namespace descentlab::session
