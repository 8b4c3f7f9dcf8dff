#pragma once
// Pieces of a training step that keep the device busy: nothing here reads a value back to the host, so a CUDA
// step is queued without waiting for the one before it (the batches' transfer: core/tasks/device_transfer.h) (metrics
// accumulate on the device and are read at metric intervals; ../shared/ARCHITECTURE.md). HostSyncProbe
// (host_sync_probe.h) checks that the loops keep to it.

#include <torch/types.h>

#include <vector>

namespace descentlab::train {

// Scales the gradients so that their global 2-norm is at most max_norm: the arithmetic of
// torch::nn::utils::clip_grad_norm_ (norm of the per-tensor norms, coefficient max_norm / (norm + 1e-6) clamped
// at 1), without the host read of the norm that LibTorch's version ends with (one sync per step on a GPU).
void clip_gradient_norm(const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace descentlab::train
