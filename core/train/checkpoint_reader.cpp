#include "core/train/checkpoint_reader.h"

#include <torch/torch.h>

#include <utility>

#include "core/store/run_file.h"
#include "core/train/checkpoint_tensors.h"
#include "core/util/number_text.h"

namespace descentlab::train {

using store::RunFileError;

CheckpointReader::CheckpointReader(const record::CheckpointData& checkpoint, std::string path, std::string label)
    : checkpoint_(checkpoint), path_(std::move(path)), label_(std::move(label)) {}

const CheckpointReader::Section* CheckpointReader::section(const std::string& name) const {
  const auto found = checkpoint_.sections.find(name);
  return found == checkpoint_.sections.end() ? nullptr : &found->second;
}

const record::TensorBlob* CheckpointReader::find(const std::string& section_name, const std::string& name) const {
  const Section* in = section(section_name);
  if (!in) return nullptr;
  const auto found = in->find(name);
  return found == in->end() ? nullptr : &found->second;
}

const CheckpointReader::Section& CheckpointReader::require_section(const std::string& name,
                                                                   const std::string& why) const {
  const Section* found = section(name);
  if (!found) missing(name, why);
  return *found;
}

const record::TensorBlob& CheckpointReader::require(const std::string& section_name, const std::string& name,
                                                    const std::string& why) const {
  const record::TensorBlob* found = find(section_name, name);
  if (!found) missing(section_name + "/" + name, why);
  return *found;
}

torch::Tensor CheckpointReader::shaped_like(const record::TensorBlob& blob, const std::string& section_name,
                                            const std::string& name, const torch::Tensor& like, Values values) const {
  const std::string part = section_name + "/" + name;
  torch::Tensor value;
  try {
    value = to_tensor(blob);
  } catch (const RunFileError& error) {
    throw RunFileError(error.kind(), path_, object(part), error.what());
  }
  if (value.sizes() != like.sizes()) {
    mismatch(part, "has shape " + shape_text(value.sizes()) + "; this run needs " + shape_text(like.sizes()));
  }
  if (values == Values::Any) return value;
  if (!value.is_floating_point() || !torch::isfinite(value).all().item<bool>()) {
    corrupt(part, "holds values that are not finite numbers");
  }
  if (values == Values::NonNegative && (value < 0).any().item<bool>()) {
    corrupt(part, "holds a negative value (min " + number_text(value.min().item<double>()) +
                      "); the dual steps keep every multiplier and slack >= 0");
  }
  return value;
}

torch::Tensor CheckpointReader::one_value(const std::string& section_name, const std::string& name) const {
  const std::string part = section_name + "/" + name;
  torch::Tensor value;
  try {
    value = to_tensor(require(section_name, name, "missing"));
  } catch (const RunFileError& error) {
    if (error.object() == object(part)) throw;
    throw RunFileError(error.kind(), path_, object(part), error.what());
  }
  if (value.numel() != 1) mismatch(part, "must hold one value, holds " + std::to_string(value.numel()));
  return value.reshape({});
}

void CheckpointReader::missing(const std::string& part, const std::string& why) const {
  throw RunFileError(RunFileError::Kind::MissingObject, path_, object(part), why);
}

void CheckpointReader::corrupt(const std::string& part, const std::string& why) const {
  throw RunFileError(RunFileError::Kind::Corrupt, path_, object(part), why);
}

void CheckpointReader::mismatch(const std::string& part, const std::string& why) const {
  throw RunFileError(RunFileError::Kind::ShapeMismatch, path_, object(part), why);
}

}  // namespace descentlab::train
