#include "core/models/script_model.h"

#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include <regex>
#include <sstream>

#include "core/util/error.h"

namespace descentlab::models {
namespace {

const std::string kLibTorch = std::string("LibTorch ") + TORCH_VERSION;

// Why torch::jit::load refused `path`, in the user's words.
std::string load_failure(const std::string& what) {
  std::smatch found;
  static const std::regex newer_file(R"(with version (\d+), but the maximum supported version for reading is (\d+))");
  if (std::regex_search(what, found, newer_file)) {
    return "was saved by a newer PyTorch than this " + kLibTorch + " reads (its file format version " + found[1].str() +
           ", at most " + found[2].str() +
           " here): save it with the PyTorch of this system's python3-torch, or run a newer DescentLab";
  }
  static const std::regex unknown_op(R"(Unknown (builtin op|type name)[^\n]*)");
  if (std::regex_search(what, found, unknown_op)) {
    return "uses what this " + kLibTorch + " does not know (" + found[0].str() +
           "): it was probably saved by a newer PyTorch; save it with the PyTorch of this system's python3-torch";
  }
  if (what.find("constants.pkl") != std::string::npos || what.find("central directory") != std::string::npos ||
      what.find("PytorchStreamReader") != std::string::npos || what.find("archive") != std::string::npos) {
    return "is not a TorchScript module (torch.jit.script(model).save(\"m.pt\") writes one; torch.save of a model "
           "or of its state_dict does not): " +
           first_line_of_libtorch_error(what);
  }
  return "cannot be loaded by " + kLibTorch + ": " + first_line_of_libtorch_error(what);
}

uint64_t little_endian(const unsigned char* bytes, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

// The file format version a PyTorch archive records ("<name>/version"), from its zip central directory (PyTorch
// writes zip64 records and data descriptors, so the local headers do not hold the sizes); nullopt when it cannot be
// found.
std::optional<uint64_t> archive_version(std::istream& in, uint64_t file_size) {
  const uint64_t tail_size = std::min<uint64_t>(file_size, 65557);
  std::vector<unsigned char> tail(tail_size);
  in.seekg(static_cast<std::streamoff>(file_size - tail_size));
  if (!in.read(reinterpret_cast<char*>(tail.data()), static_cast<std::streamsize>(tail_size))) return std::nullopt;
  int64_t end = static_cast<int64_t>(tail_size) - 22;
  while (end >= 0 && little_endian(&tail[static_cast<size_t>(end)], 4) != 0x06054b50) --end;
  if (end < 0) return std::nullopt;
  const unsigned char* directory_end = &tail[static_cast<size_t>(end)];
  uint64_t at = little_endian(directory_end + 16, 4);
  uint64_t entries = little_endian(directory_end + 10, 2);
  if (end >= 20 && little_endian(directory_end - 20, 4) == 0x07064b50) {  // zip64: its own end record
    unsigned char record[56];
    in.seekg(static_cast<std::streamoff>(little_endian(directory_end - 20 + 8, 8)));
    if (!in.read(reinterpret_cast<char*>(record), sizeof record) || little_endian(record, 4) != 0x06064b50) {
      return std::nullopt;
    }
    at = little_endian(record + 48, 8);
    entries = little_endian(record + 32, 8);
  }
  for (uint64_t entry = 0; entry < entries && entry < 1000000; ++entry) {
    unsigned char header[46];
    in.seekg(static_cast<std::streamoff>(at));
    if (!in.read(reinterpret_cast<char*>(header), sizeof header) || little_endian(header, 4) != 0x02014b50) break;
    std::string name(little_endian(header + 28, 2), '\0');
    if (!in.read(name.data(), static_cast<std::streamsize>(name.size()))) break;
    at += 46 + name.size() + little_endian(header + 30, 2) + little_endian(header + 32, 2);
    const auto slash = name.find('/');
    const uint64_t size = little_endian(header + 20, 4), local = little_endian(header + 42, 4);
    if (slash == std::string::npos || name.substr(slash) != "/version" || size > 32 || local == 0xffffffffu) continue;
    unsigned char local_header[30];
    in.seekg(static_cast<std::streamoff>(local));
    if (!in.read(reinterpret_cast<char*>(local_header), sizeof local_header)) break;
    std::string text(size, '\0');
    in.seekg(static_cast<std::streamoff>(local + 30 + little_endian(local_header + 26, 2) +
                                         little_endian(local_header + 28, 2)));
    if (!in.read(text.data(), static_cast<std::streamsize>(size))) break;
    try {
      return std::stoull(text);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// A stream over bytes in memory, seekable, so that torch::jit::load reads a module without a copy of its bytes.
class BytesBuffer : public std::streambuf {
 public:
  explicit BytesBuffer(const std::string& bytes) {
    char* begin = const_cast<char*>(bytes.data());
    setg(begin, begin, begin + bytes.size());
  }

 protected:
  pos_type seekoff(off_type offset, std::ios_base::seekdir from, std::ios_base::openmode which) override {
    if (!(which & std::ios_base::in)) return pos_type(off_type(-1));
    char* base = from == std::ios_base::beg ? eback() : from == std::ios_base::cur ? gptr() : egptr();
    if (offset < eback() - base || offset > egptr() - base) return pos_type(off_type(-1));
    setg(eback(), base + offset, egptr());
    return pos_type(gptr() - eback());
  }
  pos_type seekpos(pos_type position, std::ios_base::openmode which) override {
    return seekoff(off_type(position), std::ios_base::beg, which);
  }
};

// What torch::jit::load would refuse with less to say (and, in LibTorch 1.13, leaking its reader's state): bytes that
// are not a zip archive, and an archive whose file format version is newer than this LibTorch reads.
void check_archive(const ModuleSource& source) {
  const std::string& bytes = *source.bytes;
  if (bytes.compare(0, 4, std::string("PK\x03\x04", 4)) != 0) {
    throw DataError(source.path,
                    "is not a TorchScript module: not a PyTorch archive at all (torch.jit.script(model).save(\"m.pt\") "
                    "writes one)");
  }
  BytesBuffer buffer(bytes);
  std::istream in(&buffer);
  const auto version = archive_version(in, bytes.size());
  if (version && *version > caffe2::serialize::kMaxSupportedFileFormatVersion) {
    throw DataError(source.path, "was saved by a newer PyTorch than this " + kLibTorch +
                                     " reads (its file format version " + std::to_string(*version) + ", at most " +
                                     std::to_string(caffe2::serialize::kMaxSupportedFileFormatVersion) +
                                     " here): save it with the PyTorch of this system's python3-torch, or run a newer "
                                     "DescentLab");
  }
}

// What a module's error means when it is about what the lab gives it: a dtype it does not take, or a device (CUDA)
// this machine does not have. "" otherwise.
std::string hint_for(const std::string& error, const torch::Tensor& x) {
  const auto has = [&](const char* text) { return error.find(text) != std::string::npos; };
  if (has("'CUDA' backend") || has("not compiled with CUDA") || has("no CUDA GPUs") || has("NVIDIA driver") ||
      has("initialize CUDA")) {
    return " (the module asks for CUDA, which this machine or its LibTorch does not have: take the .cuda() or "
           "device=\"cuda\" out of its code, or train it with --device cuda on a machine with a GPU)";
  }
  if (has("scalar type") || has("same dtype") || has("should be the same") || has("scalar types")) {
    return std::string(" (a dtype the module does not take: the lab gives it x as ") +
           (x.scalar_type() == torch::kLong ? "int64 (integer inputs)" : "float32 (float inputs)") +
           ", whatever the data file stores; save the module's weights as float32 (model.float()) and store token "
           "inputs as integers; docs/your-model.md)";
  }
  return "";
}

}  // namespace

std::string first_line_of_libtorch_error(const std::string& what) {
  std::istringstream lines(what);
  std::string line, first, last;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    last = line;
    if (first.empty() && line.rfind("Exception raised from", 0) != 0) first = line;
  }
  // The TorchScript interpreter's traceback ends with the exception the module raised ("builtins.ValueError: ..."
  // for a raise in the module's code, "RuntimeError: ..." for an operation that failed).
  if (what.find("The following operation failed in the TorchScript interpreter") != std::string::npos) {
    const std::string builtins = "builtins.";
    return last.rfind(builtins, 0) == 0 ? last.substr(builtins.size()) : last;
  }
  return first.empty() ? what : first;
}

ModuleSource read_module_file(const std::string& path) {
  std::error_code status;
  if (!std::filesystem::is_regular_file(path, status)) throw DataError(path, "no such file");
  std::ifstream in(path, std::ios::binary);
  auto bytes = std::make_shared<std::string>();
  bytes->resize(static_cast<size_t>(std::filesystem::file_size(path, status)));
  if (status || !in.read(bytes->data(), static_cast<std::streamsize>(bytes->size()))) {
    throw DataError(path, "cannot be read" + (status ? ": " + status.message() : std::string()));
  }
  return {path, std::move(bytes)};
}

ScriptModelImpl::ScriptModelImpl(const std::string& path, torch::Device device)
    : ScriptModelImpl(read_module_file(path), device) {}

ScriptModelImpl::ScriptModelImpl(const ModuleSource& source, torch::Device device) : path_(source.path) {
  check_archive(source);
  try {
    BytesBuffer buffer(*source.bytes);
    std::istream in(&buffer);
    module_ = torch::jit::load(in, device);
  } catch (const c10::Error& error) {
    throw DataError(path_, load_failure(error.what()));
  } catch (const std::exception& error) {
    throw DataError(path_, load_failure(error.what()));
  }
  has_layer_outputs_ = module_.find_method("layer_outputs").has_value();
  if (!module_.find_method("forward")) throw DataError(path_, "has no forward method (docs/your-model.md)");
  for (const auto& parameter : module_.named_parameters(/*recurse=*/true)) {
    adopt(parameter.name, parameter.value, /*is_parameter=*/true);
  }
  for (const auto& buffer : module_.named_buffers(/*recurse=*/true)) {
    adopt(buffer.name, buffer.value, /*is_parameter=*/false);
  }
}

void ScriptModelImpl::adopt(const std::string& name, const torch::Tensor& tensor, bool is_parameter) {
  torch::nn::Module* owner = this;
  std::string rest = name;
  for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
    const std::string part = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    const auto children = owner->named_children();
    const auto existing = children.find(part);
    owner = existing ? existing->get() : owner->register_module(part, std::make_shared<torch::nn::Module>(part)).get();
  }
  if (is_parameter) {
    owner->register_parameter(rest, tensor, tensor.requires_grad());
  } else {
    owner->register_buffer(rest, tensor);
  }
}

torch::jit::IValue ScriptModelImpl::call(const std::string& method, const torch::Tensor& x) {
  // The module's ops run one by one, as the built-in models' do, not through the graph executor's optimised plan:
  // with it, LibTorch 2.6 never finished the first training step of a module whose first call was the contract's
  // evaluation under no_grad (Debian 13, the ViT of examples/export_builtin_vit.py: over 40 s at 100 % CPU, against
  // 0.04 s a step without the optimisation; LibTorch 1.13 trains either way). The setting is the calling thread's
  // (thread_local in LibTorch), so it is made here, on the thread that trains or evaluates.
  const torch::jit::GraphOptimizerEnabledGuard ops_one_by_one(false);
  try {
    return module_.get_method(method)({x});
  } catch (const std::exception& error) {
    const std::string hint = hint_for(error.what(), x);
    std::string raised = first_line_of_libtorch_error(error.what());
    // LibTorch explains a missing CUDA library at length; with the hint, its first sentence says enough.
    if (!hint.empty() && raised.size() > 160 && raised.find(". ") != std::string::npos) {
      raised = raised.substr(0, raised.find(". "));
    }
    throw DataError(path_, method + "(x) with x " + std::string(x.scalar_type() == torch::kLong ? "int64" : "float") +
                               " " + c10::str(x.sizes()) + " raised: " + raised + hint);
  }
}

torch::Tensor ScriptModelImpl::forward(const torch::Tensor& x) {
  const torch::jit::IValue result = call("forward", x);
  if (!result.isTensor()) {
    throw DataError(path_, "forward(x) returned " + result.tagKind() + "; a Tensor is expected (docs/your-model.md)");
  }
  return result.toTensor();
}

std::vector<torch::Tensor> ScriptModelImpl::layer_outputs(const torch::Tensor& x) {
  if (!has_layer_outputs_) {
    throw DataError(path_,
                    "has no layer_outputs(x) method, which layerwise descent needs (the prediction read out after "
                    "each layer 0..L; docs/your-model.md)");
  }
  const torch::jit::IValue result = call("layer_outputs", x);
  std::vector<torch::Tensor> outputs;
  if (result.isTensorList()) {
    const c10::List<torch::Tensor> list = result.toTensorList();
    for (size_t i = 0; i < list.size(); ++i) outputs.push_back(list.get(i));
  } else if (result.isList()) {
    for (const auto& item : result.toListRef()) {
      if (!item.isTensor()) break;
      outputs.push_back(item.toTensor());
    }
    if (outputs.size() != result.toListRef().size()) outputs.clear();
  }
  if (outputs.empty()) {
    throw DataError(path_, "layer_outputs(x) returned " + result.tagKind() +
                               "; a non-empty List[Tensor] is expected (docs/your-model.md)");
  }
  return outputs;
}

void ScriptModelImpl::train(bool on) {
  torch::nn::Module::train(on);
  module_.train(on);
}

int64_t ScriptModelImpl::parameter_count() const {
  int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

}  // namespace descentlab::models
