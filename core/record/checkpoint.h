#pragma once
// The plain-data layer (docs/architecture.md): a checkpoint as plain data (tensors as TensorBlob, without
// LibTorch), and where trainers send checkpoints. The run file stores it (core/store); core/train/checkpoint_tensors.h
// converts tensors to and from TensorBlob.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace descentlab::record {

// A tensor without LibTorch: dtype name as torch spells it ("float32", "int64", "uint8", "bool", ...), shape, and
// the raw bytes in host order (little-endian here), C-contiguous.
struct TensorBlob {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t numel() const {
    int64_t count = 1;
    for (int64_t dim : shape) count *= dim;
    return count;
  }
};

// The labels the training loop saves checkpoints under (a run file may hold others, written by a user).
namespace checkpoint_label {
inline constexpr const char* kLatest = "latest";  // every epoch end, and when stopped: where a resume continues
inline constexpr const char* kBest = "best";      // the best test metric so far, by the task's own direction
// A state kept at one step so that a run can be branched there (issue 55): "step-120".
inline std::string at_step(int64_t step) {
  return "step-" + std::to_string(step);
}
}  // namespace checkpoint_label

// The run-file object of a checkpoint, or of one part of it ("model", "dual/lambda"), as errors name it:
// "/checkpoints/<label>" or "/checkpoints/<label>/<part>".
inline std::string checkpoint_object(const std::string& label, const std::string& part = std::string()) {
  return "/checkpoints/" + label + (part.empty() ? std::string() : "/" + part);
}
// The run-file object of one tensor of a checkpoint: "/checkpoints/<label>/<section>/<tensor>".
inline std::string checkpoint_object(const std::string& label, const std::string& section, const std::string& tensor) {
  return checkpoint_object(label, section + "/" + tensor);
}

struct CheckpointData {
  int64_t step = 0;
  int64_t epoch = 0;
  std::string created;            // ISO 8601 UTC; filled by the writer when empty
  std::string extra_json = "{}";  // optimizer options (HORST/HAM), data-order state, anything small
  // Sections, e.g. "model", "optimizer", "dual", "rng"; each maps tensor names (LibTorch parameter names such as
  // "blocks.3.attn.in_proj_weight") to tensors.
  std::map<std::string, std::map<std::string, TensorBlob>> sections;
};

// Where a trainer's checkpoints go (the run file's writer implements it).
class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;
  // Saves one captured state under every label ("best", "latest", ...); returns once it is durable.
  virtual void save_checkpoints(const std::vector<std::string>& labels, CheckpointData checkpoint) = 0;
  // The same, letting go of the checkpoints `dropped` in the same commit (kept steps past their limits).
  virtual void save_checkpoints(const std::vector<std::string>& labels, CheckpointData checkpoint,
                                const std::vector<std::string>& dropped) {
    (void)dropped;
    save_checkpoints(labels, std::move(checkpoint));
  }
};

}  // namespace descentlab::record
