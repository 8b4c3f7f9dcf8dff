#include "core/tasks/device_transfer.h"

#include <torch/torch.h>

namespace descentlab::tasks {

torch::Tensor to_device_async(const torch::Tensor& host, const torch::Device& device) {
  if (device.is_cpu()) return host;
  // Page-locked memory from LibTorch's caching host allocator, which keeps the block until the copy has run.
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

torch::Tensor indices_on(const std::vector<int64_t>& indices, const torch::Device& device) {
  return to_device_async(torch::tensor(indices, torch::kInt64), device);
}

}  // namespace descentlab::tasks
