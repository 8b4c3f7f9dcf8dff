#pragma once
// The one pass over the test set that every evaluation makes (an engine's epoch evaluation, the sparse trainer's
// compression and frontier evaluations, each cell of a robustness sweep): without gradients and in eval mode, over
// the test samples [first, end) in batches of at most `batch_size`, calling `each(start, count)` for every batch.
// The module's training mode is as it was afterwards, whatever `each` throws.

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>

namespace descentlab::eval {

void test_pass(torch::nn::Module& module, int64_t first, int64_t end, int64_t batch_size,
               const std::function<void(int64_t start, int64_t count)>& each);

}  // namespace descentlab::eval
