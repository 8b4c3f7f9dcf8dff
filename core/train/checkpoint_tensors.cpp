#include "core/train/checkpoint_tensors.h"

#include <torch/torch.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "core/store/run_file.h"

namespace descentlab::train {

using store::RunFileError;

namespace {

struct DtypeName {
  torch::ScalarType type;
  const char* name;
};

constexpr DtypeName kDtypeNames[] = {
    {torch::kFloat32, "float32"},   {torch::kFloat64, "float64"}, {torch::kFloat16, "float16"},
    {torch::kBFloat16, "bfloat16"}, {torch::kInt64, "int64"},     {torch::kInt32, "int32"},
    {torch::kInt16, "int16"},       {torch::kInt8, "int8"},       {torch::kUInt8, "uint8"},
    {torch::kBool, "bool"},
};

std::string dtype_name(torch::ScalarType type) {
  for (const auto& entry : kDtypeNames) {
    if (entry.type == type) return entry.name;
  }
  throw RunFileError(RunFileError::Kind::InvalidArgument, "", "",
                     std::string("tensors of dtype ") + c10::toString(type) + " cannot be stored");
}

torch::ScalarType dtype_of(const std::string& name) {
  for (const auto& entry : kDtypeNames) {
    if (name == entry.name) return entry.type;
  }
  throw RunFileError(RunFileError::Kind::InvalidArgument, "", "", "unknown stored dtype '" + name + "'");
}

}  // namespace

std::string shape_text(torch::IntArrayRef shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

namespace {

// Copies `size` bytes into `bytes`, which is empty. A checkpoint's copy is fresh memory touched once, so its cost is
// mostly the kernel's page faults (one per 4 KB page: 1.5 s for 500 MB on a virtual machine, measured in
// docs/benchmarks.md); a large buffer is reserved untouched and marked for transparent huge pages first (one fault
// per 2 MB where the kernel offers them; a hint it may ignore), and filled by one copy without zeroing it before.
void copy_into(std::vector<uint8_t>& bytes, const void* source, size_t size) {
  constexpr size_t kHugePage = size_t{2} << 20;
  bytes.reserve(size);
  if (size >= 4 * kHugePage) {
    const auto begin = reinterpret_cast<uintptr_t>(bytes.data());
    const uintptr_t aligned = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t end = (begin + size) & ~(kHugePage - 1);
    if (end > aligned) (void)::madvise(reinterpret_cast<void*>(aligned), end - aligned, MADV_HUGEPAGE);
  }
  const auto* from = static_cast<const uint8_t*>(source);
  bytes.assign(from, from + size);
}

}  // namespace

record::TensorBlob to_blob(const torch::Tensor& tensor) {
  const torch::Tensor cpu = tensor.detach().to(torch::kCPU).contiguous();
  record::TensorBlob blob;
  blob.dtype = dtype_name(cpu.scalar_type());
  blob.shape.assign(cpu.sizes().begin(), cpu.sizes().end());
  const auto size = static_cast<size_t>(cpu.numel() * cpu.element_size());
  if (size > 0) copy_into(blob.bytes, cpu.data_ptr(), size);
  return blob;
}

torch::Tensor to_tensor(const record::TensorBlob& blob) {
  torch::Tensor tensor = torch::empty(blob.shape, torch::TensorOptions().dtype(dtype_of(blob.dtype)));
  if (static_cast<size_t>(tensor.numel() * tensor.element_size()) != blob.bytes.size()) {
    throw RunFileError(RunFileError::Kind::Corrupt, "", "", "tensor bytes do not match its shape and dtype");
  }
  if (!blob.bytes.empty()) std::memcpy(tensor.data_ptr(), blob.bytes.data(), blob.bytes.size());
  return tensor;
}

std::map<std::string, record::TensorBlob> module_state(const torch::nn::Module& module) {
  std::map<std::string, record::TensorBlob> state;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) state[item.key()] = to_blob(item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) state[item.key()] = to_blob(item.value());
  return state;
}

void load_module_state(torch::nn::Module& module, const std::map<std::string, record::TensorBlob>& state,
                       const std::string& path, const std::string& object_prefix) {
  std::map<std::string, torch::Tensor> targets;
  for (const auto& item : module.named_parameters(true)) targets[item.key()] = item.value();
  for (const auto& item : module.named_buffers(true)) targets[item.key()] = item.value();

  // Check everything first, so that a mismatch leaves the module untouched.
  std::map<std::string, torch::Tensor> loaded;
  for (const auto& [name, target] : targets) {
    const auto found = state.find(name);
    if (found == state.end()) {
      throw RunFileError(RunFileError::Kind::MissingObject, path, object_prefix + "/" + name,
                         "the model has this tensor but the checkpoint does not");
    }
    torch::Tensor value;
    try {
      value = to_tensor(found->second);
    } catch (const RunFileError& error) {
      throw RunFileError(error.kind(), path, object_prefix + "/" + name, error.what());
    }
    if (value.sizes() != target.sizes()) {
      throw RunFileError(
          RunFileError::Kind::ShapeMismatch, path, object_prefix + "/" + name,
          "shape " + shape_text(value.sizes()) + " in the checkpoint, " + shape_text(target.sizes()) + " in the model");
    }
    if (value.scalar_type() != target.scalar_type()) {
      throw RunFileError(
          RunFileError::Kind::ShapeMismatch, path, object_prefix + "/" + name,
          "dtype " + found->second.dtype + " in the checkpoint, " + dtype_name(target.scalar_type()) + " in the model");
    }
    loaded[name] = value;
  }
  for (const auto& [name, blob] : state) {
    if (!targets.count(name)) {
      throw RunFileError(RunFileError::Kind::ShapeMismatch, path, object_prefix + "/" + name,
                         "the checkpoint has this tensor but the model does not (a different architecture?)");
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, target] : targets) target.copy_(loaded[name]);
}

}  // namespace descentlab::train
