#pragma once
// A user's TorchScript module (issue 53; docs/your-model.md) as a torch::nn::Module the engines train like their own
// models. The module is loaded with torch::jit::load onto the run's device; its parameters and buffers are
// registered here under the module's own names ("blocks.0.conv.weight") as the same tensors, so the optimizers,
// pruning, checkpoints and histograms see and change the module's own weights. forward and layer_outputs call the
// module's methods; train()/eval() switch the module's mode too.

#include <torch/nn/module.h>
#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

namespace descentlab::models {

// A TorchScript module's bytes and where they came from: its file when a run begins, the run file's copy of it
// after (core/store/run_reader.h module_copy), so that a run resumes after the original moved or changed.
struct ModuleSource {
  std::string path;  // named in every message
  std::shared_ptr<const std::string> bytes;
};
// Reads the module file `path` whole. Throws DataError naming it when it is missing or unreadable.
ModuleSource read_module_file(const std::string& path);

class ScriptModelImpl : public torch::nn::Module {
 public:
  // Loads the TorchScript file `path` onto `device`. Throws DataError naming the file: not a TorchScript module,
  // saved by a newer PyTorch than this LibTorch reads (both versions named), or unreadable.
  ScriptModelImpl(const std::string& path, torch::Device device);
  // The same from bytes already read (the module file's or a run file's copy); `source.path` is named.
  ScriptModelImpl(const ModuleSource& source, torch::Device device);

  // The module's forward(x). An exception raised inside the module is a DataError naming the file, the method and
  // the module's own message.
  torch::Tensor forward(const torch::Tensor& x);
  // Whether the module has layer_outputs(x) -> List[Tensor] (layerwise descent needs it).
  bool has_layer_outputs() const { return has_layer_outputs_; }
  // The module's layer_outputs(x): its prediction read out after each layer 0..L. Throws DataError naming the file
  // when the module has none, or when it does not return a list of tensors.
  std::vector<torch::Tensor> layer_outputs(const torch::Tensor& x);

  void train(bool on = true) override;
  const std::string& path() const { return path_; }
  int64_t parameter_count() const;

 private:
  // Registers `tensor` under the dotted `name`, making a plain child module for each part before the last.
  void adopt(const std::string& name, const torch::Tensor& tensor, bool is_parameter);
  torch::jit::IValue call(const std::string& method, const torch::Tensor& x);

  std::string path_;
  torch::jit::Module module_;
  bool has_layer_outputs_ = false;
};

// A LibTorch error text as the one line a user needs: the first line that says what happened, without the C++
// stack trace LibTorch appends (exposed for tests).
std::string first_line_of_libtorch_error(const std::string& what);

}  // namespace descentlab::models
