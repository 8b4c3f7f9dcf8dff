#include "core/dist/process_group.h"

#ifdef DESCENTLAB_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cerrno>
#include <cstdlib>

namespace descentlab::dist {
namespace {

#ifdef DESCENTLAB_WITH_GLOO
using GlooGroup = c10d::ProcessGroupGloo;
#else
// A build without Gloo's headers (CMake warned): a Group is never made (its constructor says why), so these only
// have to compile.
struct GlooGroup : c10::intrusive_ptr_target {
  template <typename... Arguments>
  c10::intrusive_ptr<c10d::Work> allreduce(Arguments&&...) {
    throw DistributedError("this build has no Gloo");
  }
  template <typename... Arguments>
  c10::intrusive_ptr<c10d::Work> broadcast(Arguments&&...) {
    throw DistributedError("this build has no Gloo");
  }
};
#endif

std::string without_backtrace(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) return torch_error->what_without_backtrace();
  return error.what();
}

// A whole number from an environment variable, or a DistributedError naming it.
int env_number(const char* name, const char* text, int low, int high) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high) {
    throw DistributedError(std::string("environment variable ") + name + "=\"" + text +
                           "\" must be a whole number in " + std::to_string(low) + ".." + std::to_string(high));
  }
  return static_cast<int>(value);
}

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return c10d::ReduceOp::SUM;
    case ReduceOp::min: return c10d::ReduceOp::MIN;
    case ReduceOp::max: return c10d::ReduceOp::MAX;
  }
  return c10d::ReduceOp::SUM;
}

// LibTorch 2.x's TCPStore asks for its libuv backend by default (TCPStoreOptions::useLibUV), but Debian 13's LibTorch
// 2.6 is built without it ("use_libuv was requested but PyTorch was build without libuv support"): the classic
// backend works in every version. LibTorch 1.13 has no such option; the overload below is chosen where it exists.
template <typename Options>
auto use_classic_store(Options& options, int) -> decltype(options.useLibUV = false, void()) {
  options.useLibUV = false;
}
template <typename Options>
void use_classic_store(Options&, long) {}

}  // namespace

std::optional<LaunchEnvironment> launch_environment(const std::function<const char*(const char*)>& lookup) {
  const auto get = [&](const char* name) -> const char* {
    const char* value = lookup ? lookup(name) : std::getenv(name);
    return value && *value ? value : nullptr;
  };
  // PyTorch's names first; then those of MPI launchers, which set only their own: Open MPI's mpirun
  // (OMPI_COMM_WORLD_*) and MPICH / Intel MPI / Slurm's srun --mpi=pmi2 (PMI_*).
  const char* size_name = "WORLD_SIZE";
  const char* rank_name = "RANK";
  const char* local_name = "LOCAL_RANK";
  if (!get("WORLD_SIZE") && get("OMPI_COMM_WORLD_SIZE")) {
    size_name = "OMPI_COMM_WORLD_SIZE";
    rank_name = "OMPI_COMM_WORLD_RANK";
    local_name = "OMPI_COMM_WORLD_LOCAL_RANK";
  } else if (!get("WORLD_SIZE") && get("PMI_SIZE")) {
    size_name = "PMI_SIZE";
    rank_name = "PMI_RANK";
    local_name = "MPI_LOCALRANKID";
  }
  const char* world = get(size_name);
  if (!world) return std::nullopt;
  LaunchEnvironment launch;
  launch.world_size = env_number(size_name, world, 1, 1 << 16);
  const char* rank = get(rank_name);
  if (!rank) {
    throw DistributedError(std::string("environment variable ") + rank_name + " is not set, but " + size_name + "=" +
                           world + " is: a launcher sets both (" + rank_name + " from 0 to " + size_name + "-1)");
  }
  launch.rank = env_number(rank_name, rank, 0, launch.world_size - 1);
  const char* local = get(local_name);
  launch.local_rank = local ? env_number(local_name, local, 0, launch.world_size - 1) : launch.rank;
  const char* address = get("MASTER_ADDR");
  launch.master_addr = address ? address : "127.0.0.1";
  const char* port = get("MASTER_PORT");
  if (!port) {
    if (launch.world_size > 1) {
      throw DistributedError("environment variable MASTER_PORT is not set: with " + std::string(size_name) + "=" +
                             world + " every rank needs the port of rank 0's rendezvous (MASTER_ADDR:MASTER_PORT)");
    }
  } else {
    launch.master_port = env_number("MASTER_PORT", port, 1, 65535);
  }
  return launch;
}

std::pair<int64_t, int64_t> part_of(int64_t total, int64_t rank, int64_t ranks) {
  return {total * rank / ranks, total * (rank + 1) / ranks};
}

std::string word(Backend backend) {
  return backend == Backend::nccl ? "nccl" : "gloo";
}

bool nccl_available() {
#ifdef USE_C10D_NCCL
  return true;
#else
  return false;
#endif
}

Backend choose_backend(const std::string& requested, bool cuda_device) {
  (void)cuda_device;  // NCCL would be the choice for CUDA devices once linked; Gloo reduces CUDA tensors meanwhile
  if (requested == "gloo" || requested == "auto") return Backend::gloo;
  if (requested == "nccl") {
    throw DistributedError(nccl_available()
                               ? "backend \"nccl\": this build of DescentLab does not link ProcessGroupNCCL yet; use "
                                 "--backend gloo, which also reduces CUDA tensors (through the host)"
                               : "backend \"nccl\" was asked for, but this LibTorch has no NCCL (Debian's LibTorch is "
                                 "CPU-only); use --backend gloo, which also reduces CUDA tensors (through the host)");
  }
  throw DistributedError("unknown backend \"" + requested + "\" (known: auto, gloo, nccl)");
}

struct Group::Impl {
  LaunchEnvironment launch;
  Backend backend = Backend::gloo;
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<GlooGroup> group;
  int64_t gathers = 0;  // numbers all_gather_text's store keys
  double waited = 0.0;

  std::string where() const {
    return "rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.world_size);
  }

  // Waits for `work`; any failure becomes a DistributedError naming the collective.
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) {
    const auto started = std::chrono::steady_clock::now();
    try {
      if (!work->wait(timeout)) throw std::runtime_error("no answer within the timeout");
    } catch (const std::exception& error) {
      throw DistributedError(where() + ": " + what + " failed (" + without_backtrace(error) +
                             "). Another rank has probably stopped (its own output says why) or is unreachable; "
                             "every collective waits at most " +
                             std::to_string(timeout.count() / 1000) + " s (--timeout)");
    }
    waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
};

Group::Group(const LaunchEnvironment& launch, Backend backend, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->launch = launch;
  impl_->backend = backend;
  impl_->timeout = timeout;
  if (backend != Backend::gloo) choose_backend(word(backend), true);  // the clear error for NCCL
  const std::string endpoint = launch.master_addr + ":" + std::to_string(launch.master_port);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(launch.master_port);
    options.isServer = launch.rank == 0;
    options.numWorkers = static_cast<std::size_t>(launch.world_size);
    options.waitWorkers = true;
    options.timeout = timeout;
    use_classic_store(options, 0);
    impl_->store = c10::make_intrusive<c10d::TCPStore>(launch.master_addr, options);
  } catch (const std::exception& error) {
    throw DistributedError(impl_->where() + ": the rendezvous at " + endpoint + " (MASTER_ADDR:MASTER_PORT) failed (" +
                           without_backtrace(error) + "). " +
                           (launch.rank == 0 ? "Is the port free, and did every rank start within the timeout?"
                                             : "Is rank 0 running, and can this machine reach that address?"));
  }
#ifndef DESCENTLAB_WITH_GLOO
  throw DistributedError(
      "this build of DescentLab has no Gloo (CMake found no Gloo headers; Debian: apt install "
      "libgloo-dev, then build again): it trains in one process only");
#else
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // Where the ranks connect to one another: the interface GLOO_SOCKET_IFNAME names (as in PyTorch), the loopback
    // when every rank is on this machine, otherwise the address this machine's hostname resolves to.
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    if (interface && *interface) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
    } else if (is_loopback(launch.master_addr)) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    options->threads = 2;
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, launch.rank, launch.world_size, options);
  } catch (const std::exception& error) {
    throw DistributedError(impl_->where() + ": connecting the ranks (Gloo, rendezvous at " + endpoint +
                           ", MASTER_ADDR:MASTER_PORT) failed (" + without_backtrace(error) + "): did all " +
                           std::to_string(launch.world_size) + " ranks start within the timeout (--timeout " +
                           std::to_string(timeout.count() / 1000) +
                           " s) and reach that address? GLOO_SOCKET_IFNAME names the network interface to use");
  }
#endif
}

Group::~Group() = default;

int Group::rank() const {
  return impl_->launch.rank;
}

int Group::size() const {
  return impl_->launch.world_size;
}

Backend Group::backend() const {
  return impl_->backend;
}

std::chrono::milliseconds Group::timeout() const {
  return impl_->timeout;
}

double Group::communication_seconds() const {
  return impl_->waited;
}

void Group::all_reduce(std::vector<torch::Tensor>& tensors, ReduceOp op, const std::string& what,
                       int64_t bucket_bytes) {
  if (tensors.empty()) return;
  // Buckets: consecutive tensors of one dtype and device, up to bucket_bytes (a larger tensor alone).
  struct Bucket {
    std::vector<size_t> members;
    torch::Tensor flat;
  };
  std::vector<Bucket> buckets;
  int64_t filled = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const torch::Tensor& t = tensors[i];
    const int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
    const bool fits = !buckets.empty() && filled + bytes <= bucket_bytes &&
                      tensors[buckets.back().members.front()].scalar_type() == t.scalar_type() &&
                      tensors[buckets.back().members.front()].device() == t.device();
    if (!fits) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().members.push_back(i);
    filled += bytes;
  }
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  c10d::AllreduceOptions options;
  options.reduceOp = to_c10d(op);
  options.timeout = impl_->timeout;
  for (auto& bucket : buckets) {
    std::vector<torch::Tensor> parts;
    for (size_t i : bucket.members) parts.push_back(tensors[i].reshape({-1}));
    bucket.flat = parts.size() == 1 ? parts.front().clone() : torch::cat(parts);
    std::vector<torch::Tensor> message{bucket.flat};
    try {
      works.push_back(impl_->group->allreduce(message, options));
    } catch (const std::exception& error) {
      throw DistributedError(impl_->where() + ": " + what + " could not start (" + without_backtrace(error) + ")");
    }
  }
  for (auto& work : works) impl_->wait(work, what);
  torch::NoGradGuard no_grad;
  for (auto& bucket : buckets) {
    int64_t offset = 0;
    for (size_t i : bucket.members) {
      const int64_t n = tensors[i].numel();
      tensors[i].copy_(bucket.flat.narrow(0, offset, n).view(tensors[i].sizes()));
      offset += n;
    }
  }
}

void Group::broadcast(std::vector<torch::Tensor>& tensors, int root, const std::string& what) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = impl_->timeout;
  torch::NoGradGuard no_grad;
  for (auto& tensor : tensors) {
    torch::Tensor contiguous = tensor.contiguous();
    std::vector<torch::Tensor> message{contiguous};
    impl_->wait(impl_->group->broadcast(message, options), what);
    if (!contiguous.is_same(tensor)) tensor.copy_(contiguous);
  }
}

std::vector<uint8_t> Group::broadcast_bytes(std::vector<uint8_t> bytes, int root, const std::string& what) {
  std::vector<torch::Tensor> size{torch::tensor({static_cast<int64_t>(bytes.size())}, torch::kInt64)};
  broadcast(size, root, what + " (its size)");
  const int64_t n = size.front().item<int64_t>();
  std::vector<torch::Tensor> payload{rank() == root ? torch::from_blob(bytes.data(), {n}, torch::kUInt8).clone()
                                                    : torch::empty({n}, torch::kUInt8)};
  broadcast(payload, root, what);
  const auto* data = payload.front().data_ptr<uint8_t>();
  return std::vector<uint8_t>(data, data + n);
}

std::vector<std::string> Group::all_gather_text(const std::string& text, const std::string& what) {
  const std::string prefix = "descentlab/gather/" + std::to_string(impl_->gathers++) + "/";
  std::vector<std::string> texts;
  try {
    impl_->store->set(prefix + std::to_string(rank()), std::vector<uint8_t>(text.begin(), text.end()));
    for (int r = 0; r < size(); ++r) {
      const std::vector<uint8_t> value = impl_->store->get(prefix + std::to_string(r));
      texts.emplace_back(value.begin(), value.end());
    }
  } catch (const std::exception& error) {
    throw DistributedError(impl_->where() + ": " + what + " failed (" + without_backtrace(error) +
                           "): another rank has probably stopped (its own output says why)");
  }
  barrier(what);  // nobody leaves before every rank has read every key
  return texts;
}

void Group::barrier(const std::string& what) {
  // A barrier as a one-element all-reduce: Gloo's barrier has no per-call timeout in LibTorch 1.13.
  std::vector<torch::Tensor> token{torch::zeros({1}, torch::kInt32)};
  all_reduce(token, ReduceOp::sum, what);
}

}  // namespace descentlab::dist
