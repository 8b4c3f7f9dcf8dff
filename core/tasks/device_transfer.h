#pragma once
// Moving a batch's host data to the training device without making the host wait (no host sync per step:
// core/train/device_step.h, ../shared/ARCHITECTURE.md).

#include <torch/types.h>

#include <vector>

namespace descentlab::tasks {

// A host tensor on `device` for the step that follows: as it is on the CPU; on a GPU copied from page-locked
// memory without blocking the host (a plain copy from pageable memory waits for the device to drain first).
torch::Tensor to_device_async(const torch::Tensor& host, const torch::Device& device);

// Sample indices as an int64 tensor on `device` (see to_device_async).
torch::Tensor indices_on(const std::vector<int64_t>& indices, const torch::Device& device);

}  // namespace descentlab::tasks
