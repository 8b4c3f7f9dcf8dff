#pragma once
// Counts the operations that make the host wait for the device, while a probe is alive: scalar reads (`.item()`,
// a tensor used as a bool: aten::_local_scalar_dense), copies from an accelerator to the host, blocking copies from
// the host to an accelerator, and aten::nonzero on an accelerator (its output size is known only on the device).
// It observes every LibTorch operation on every thread through LibTorch's RecordFunction callbacks, so it sees
// what the training loop really does, not what it claims.
//
// On a CPU-only run the copies cannot happen, but scalar reads are counted on any device: a `.item()` per step on
// the CPU is one sync per step on a GPU. Used by the tests (a training loop reads the device only at metric
// intervals) and by `descentlab-cli train --count-host-syncs` (scripts/gpu-check.sh runs it on a GPU).

#include <cstdint>

namespace descentlab::session {

struct HostSyncCounts {
  int64_t scalar_reads = 0;
  int64_t device_to_host_copies = 0;
  int64_t blocking_host_to_device_copies = 0;
  int64_t device_nonzero = 0;
  int64_t total() const {
    return scalar_reads + device_to_host_copies + blocking_host_to_device_copies + device_nonzero;
  }
};

// One probe at a time in a process (the callbacks are process-wide); a second one throws descentlab::Error.
class HostSyncProbe {
 public:
  HostSyncProbe();
  ~HostSyncProbe();
  HostSyncProbe(const HostSyncProbe&) = delete;
  HostSyncProbe& operator=(const HostSyncProbe&) = delete;

  HostSyncCounts counts() const;
  void reset();

 private:
  uint64_t handle_ = 0;
};

}  // namespace descentlab::session
