#pragma once
// LibTorch side of checkpoints: tensors <-> record::TensorBlob, and a module's parameters and buffers under their
// LibTorch names (e.g. "blocks.3.attn.in_proj_weight"), so state_dict-style loading works and h5py users see the same
// names.

#include <torch/nn/module.h>
#include <torch/types.h>

#include <map>
#include <string>

#include "core/record/checkpoint.h"

namespace descentlab::train {

record::TensorBlob to_blob(const torch::Tensor& tensor);  // copies to CPU, contiguous
torch::Tensor to_tensor(const record::TensorBlob& blob);  // a new CPU tensor owning its memory
std::string shape_text(torch::IntArrayRef shape);         // "[3, 4]", for messages

// Every parameter and buffer of `module` (recursively), by its LibTorch name.
std::map<std::string, record::TensorBlob> module_state(const torch::nn::Module& module);

// Copies stored tensors into `module`'s parameters and buffers (on their device), strictly: every parameter and
// buffer must be present with the same shape and dtype, and nothing else may be stored. Throws RunFileError
// (ShapeMismatch / MissingObject) naming `path` and `object_prefix` + "/" + tensor name; the module is left
// unchanged when anything does not fit.
void load_module_state(torch::nn::Module& module, const std::map<std::string, record::TensorBlob>& state,
                       const std::string& path, const std::string& object_prefix);

}  // namespace descentlab::train
