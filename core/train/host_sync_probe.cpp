#include "core/session/host_sync_probe.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <atomic>
#include <cstring>

#include "core/util/error.h"

namespace descentlab::session {
namespace {

std::atomic<bool> probe_alive{false};
std::atomic<int64_t> scalar_reads{0}, device_to_host{0}, blocking_host_to_device{0}, device_nonzero{0};

bool on_accelerator(const c10::IValue& value) {
  return value.isTensor() && !value.toTensor().device().is_cpu();
}
bool on_host(const c10::IValue& value) {
  return value.isTensor() && value.toTensor().device().is_cpu();
}

std::unique_ptr<at::ObserverContext> observe(const at::RecordFunction& call) {
  const char* name = call.name();
  if (std::strcmp(name, "aten::_local_scalar_dense") == 0) {
    scalar_reads.fetch_add(1, std::memory_order_relaxed);
  } else if (std::strcmp(name, "aten::copy_") == 0) {
    // copy_(self, src, non_blocking)
    const auto inputs = call.inputs();
    if (inputs.size() >= 2) {
      if (on_host(inputs[0]) && on_accelerator(inputs[1])) {
        device_to_host.fetch_add(1, std::memory_order_relaxed);
      } else if (on_accelerator(inputs[0]) && on_host(inputs[1])) {
        const bool non_blocking = inputs.size() >= 3 && inputs[2].isBool() && inputs[2].toBool();
        if (!non_blocking) blocking_host_to_device.fetch_add(1, std::memory_order_relaxed);
      }
    }
  } else if (std::strcmp(name, "aten::nonzero") == 0) {
    const auto inputs = call.inputs();
    if (!inputs.empty() && on_accelerator(inputs[0])) device_nonzero.fetch_add(1, std::memory_order_relaxed);
  }
  return nullptr;
}

}  // namespace

HostSyncProbe::HostSyncProbe() {
  if (probe_alive.exchange(true)) throw Error("a HostSyncProbe is already counting in this process");
  reset();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&observe).needsInputs(true));
}

HostSyncProbe::~HostSyncProbe() {
  at::removeCallback(handle_);
  probe_alive.store(false);
}

HostSyncCounts HostSyncProbe::counts() const {
  HostSyncCounts counts;
  counts.scalar_reads = scalar_reads.load();
  counts.device_to_host_copies = device_to_host.load();
  counts.blocking_host_to_device_copies = blocking_host_to_device.load();
  counts.device_nonzero = device_nonzero.load();
  return counts;
}

void HostSyncProbe::reset() {
  scalar_reads.store(0);
  device_to_host.store(0);
  blocking_host_to_device.store(0);
  device_nonzero.store(0);
}

}  // namespace descentlab::session
