#include "core/runtime.h"

#include <malloc.h>

#include <dlfcn.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <ATen/Version.h>

#include <cstdlib>
#include <string>
#include <stdexcept>

#include "core/generated/build_info.h"
#include "core/util/error.h"

namespace descentlab {
namespace {

// OpenBLAS's own API, looked up at run time: the BLAS behind libblas.so.3 is chosen by Debian's alternatives,
// so it may be OpenBLAS (pthread or OpenMP build), BLIS or the reference BLAS.
template <typename Function>
Function find_symbol(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

int threads_from_environment(int fallback) {
  const char* value = std::getenv("DESCENTLAB_THREADS");
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 1 || parsed > 1024) {
    throw Error(std::string("DESCENTLAB_THREADS must be a positive integer, got '") + value + "'");
  }
  return static_cast<int>(parsed);
}

void configure_threads(int threads) {
  if (threads < 1) throw Error("thread count must be >= 1, got " + std::to_string(threads));
  at::set_num_threads(threads);
  if (auto set_blas_threads = find_symbol<void (*)(int)>("openblas_set_num_threads")) set_blas_threads(threads);
}

void configure_allocator() {
  // DESCENTLAB_MALLOC_DEFAULTS=1 keeps glibc's defaults: the baseline of bench/allocator_bench.sh.
  if (const char* keep = std::getenv("DESCENTLAB_MALLOC_DEFAULTS"); keep && std::string(keep) == "1") return;
  // Above 32 MiB (glibc's largest mmap threshold) blocks still come from mmap; below it they come from the heap,
  // which keeps up to 1 GiB of free memory at its top instead of trimming it after every free.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  // One arena for every thread: a training thread then gets the main heap's behaviour too. Its own arena (64 MiB
  // heaps, created and unmapped as large tensors come and go) measured 3.7-4.0 steps/s against 4.4-4.7 on the main
  // thread for the same run; with one arena both gave 4.4-4.6.
  mallopt(M_ARENA_MAX, 1);
}

void configure_process(int threads) {
  configure_allocator();
  configure_threads(threads);
}

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.descentlab_version = build_info::kVersion;
  info.torch_version = TORCH_VERSION;
  if (auto config = find_symbol<char* (*)()>("openblas_get_config")) {
    const std::string text = config();
    info.blas = text.rfind("OpenBLAS", 0) == 0 ? text : "OpenBLAS " + text;
    if (auto parallel = find_symbol<int (*)()>("openblas_get_parallel")) {
      const int mode = parallel();
      info.blas += mode == 0 ? " (sequential)" : mode == 1 ? " (pthread)" : " (OpenMP)";
    }
  } else if (find_symbol<void*>("bli_info_get_version_str")) {
    info.blas = "BLIS";
  } else {
    info.blas = "reference or unknown BLAS (install libopenblas0-pthread: the reference BLAS is ~16x slower)";
  }
  // at::show_config() is the one description both LibTorch 1.13 and 2.x give of their build: "CUDA_VERSION=12.4"
  // and "CUDNN_VERSION=9.1.0" in the build settings of a CUDA build, and "CUDA Runtime 12.4" / "CuDNN 90100" lines
  // when the CUDA library is loaded.
  const std::string config = at::show_config();
  info.cuda_runtime = config_value(config, "CUDA Runtime");
  if (info.cuda_runtime.empty()) info.cuda_runtime = config_value(config, "CUDA_VERSION=");
  info.cudnn = config_value(config, "CUDNN_VERSION=");
  if (info.cudnn.empty()) info.cudnn = config_value(config, "CuDNN");
  if (info.cuda_runtime.empty()) {
    info.torch_build = "CPU only";
  } else {
    info.torch_build = "CUDA " + info.cuda_runtime + ", " + (info.cudnn.empty() ? "no cuDNN" : "cuDNN " + info.cudnn);
  }
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.threads = at::get_num_threads();
  return info;
}

std::string config_value(const std::string& config, const std::string& label) {
  const size_t at = config.find(label);
  if (at == std::string::npos) return {};
  size_t begin = at + label.size();
  // A value ends at the end of its line, or at the comma before the next build setting ("A=1, B=2").
  size_t end = config.find_first_of(",\n", begin);
  if (end == std::string::npos) end = config.size();
  while (begin < end && (config[begin] == ' ' || config[begin] == '\t')) ++begin;
  while (end > begin && (config[end - 1] == ' ' || config[end - 1] == '\t' || config[end - 1] == '\r')) --end;
  return config.substr(begin, end - begin);
}

std::string runtime_text(const RuntimeInfo& info) {
  return "DescentLab " + info.descentlab_version + "\nLibTorch: " + info.torch_version + " (" + info.torch_build +
         ")\nCUDA runtime: " + (info.cuda_runtime.empty() ? "none" : info.cuda_runtime) +
         "\ncuDNN: " + (info.cudnn.empty() ? "none" : info.cudnn) + "\nCUDA devices: " +
         (info.cuda_available ? std::to_string(info.cuda_devices) : std::string("none available")) +
         "\nBLAS: " + info.blas + "\nthreads: " + std::to_string(info.threads);
}

}  // namespace descentlab
