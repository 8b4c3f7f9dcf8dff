#pragma once
// A branch's run (internal to core/train; the door is session::TrainingSession::branch): its new run file with its
// lineage, and the trainer restored from its parent's checkpoint.

#include <torch/torch.h>

#include <memory>
#include <string>

#include "core/config/experiment_config.h"
#include "core/session/training_session.h"
#include "core/store/run_writer.h"
#include "core/train/trainer.h"
#include "core/train/user_files.h"

namespace descentlab::session {

// What a session's new run file starts with (defined in training_session.cpp, shared with the branch): the header of
// this build, `device` and `config`, and the writer options `options` give, with `purpose` for a second writer.
store::RunHeader new_run_header(const config::ExperimentConfig& config, const torch::Device& device);
store::RunWriterOptions writer_options_of(const SessionOptions& options, const std::string& purpose);

// Where a branch continues from: the parent's file (absolute), its checkpoint's label, and the changes made.
struct BranchPoint {
  std::string parent, label, changes;
};

// Creates the child's run file at options.run_path (its header records the lineage: the parent's file and identity,
// the checkpoint's SHA-256 and step, the changes; and `files`, a user's module and data as the parent kept them,
// nullptr for the other tasks) and restores `trainer` from the parent's checkpoint.
std::unique_ptr<store::RunWriter> open_branch(train::Trainer& trainer, const config::ExperimentConfig& config,
                                              const SessionOptions& options, const torch::Device& device,
                                              const BranchPoint& from, const train::UserFiles* files);

}  // namespace descentlab::session
