#pragma once
// Reading a checkpoint back into training or evaluation: the one place that checks what a checkpoint holds before
// anything is restored from it. Every part is found, shaped and valued as this run needs it, or refused with a
// store::RunFileError that names the run file and the part's object ("/checkpoints/<label>/<section>/<name>"), so a
// damaged file is met as a sentence, never as a LibTorch stack trace.

#include <torch/types.h>

#include <map>
#include <string>

#include "core/record/checkpoint.h"

namespace descentlab::train {

class CheckpointReader {
 public:
  using Section = std::map<std::string, record::TensorBlob>;

  // `path` and `label` name the checkpoint in errors; `checkpoint` must outlive the reader.
  CheckpointReader(const record::CheckpointData& checkpoint, std::string path, std::string label);

  const record::CheckpointData& checkpoint() const { return checkpoint_; }
  const std::string& path() const { return path_; }
  const std::string& label() const { return label_; }
  // "/checkpoints/<label>/<part>" ("/checkpoints/<label>" for an empty part).
  std::string object(const std::string& part) const { return record::checkpoint_object(label_, part); }

  // A section or one tensor of it; nullptr when absent.
  const Section* section(const std::string& name) const;
  const record::TensorBlob* find(const std::string& section, const std::string& name) const;
  // The same, refused as a MissingObject ("<object>: <why>") when absent.
  const Section& require_section(const std::string& name, const std::string& why) const;
  const record::TensorBlob& require(const std::string& section, const std::string& name, const std::string& why) const;

  // What a restored tensor's values must be.
  enum class Values {
    Any,
    Finite,       // floating point, every value finite
    NonNegative,  // finite and >= 0 (λ and the resilient slack: every dual step projects onto >= 0)
  };
  // `blob` (stored as `section`/`name`) as a CPU tensor of `like`'s shape (ShapeMismatch otherwise) whose values
  // are as `values` asks (Corrupt otherwise).
  torch::Tensor shaped_like(const record::TensorBlob& blob, const std::string& section, const std::string& name,
                            const torch::Tensor& like, Values values) const;
  // A one-value entry as a 0-dimensional tensor (ShapeMismatch when it holds another number of values).
  torch::Tensor one_value(const std::string& section, const std::string& name) const;

  // Refusals naming `part` (a path below the checkpoint: "model", "dual/lambda").
  [[noreturn]] void missing(const std::string& part, const std::string& why) const;
  [[noreturn]] void corrupt(const std::string& part, const std::string& why) const;
  [[noreturn]] void mismatch(const std::string& part, const std::string& why) const;

 private:
  const record::CheckpointData& checkpoint_;
  std::string path_;
  std::string label_;
};

}  // namespace descentlab::train
