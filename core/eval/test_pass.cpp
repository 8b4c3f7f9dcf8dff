#include "core/eval/test_pass.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace descentlab::eval {
namespace {

// Puts the module back in the mode it had, also when a batch throws (a cancelled sweep, a device error).
class ModeRestorer {
 public:
  explicit ModeRestorer(torch::nn::Module& module) : module_(module), was_training_(module.is_training()) {
    module_.eval();
  }
  ~ModeRestorer() { module_.train(was_training_); }
  ModeRestorer(const ModeRestorer&) = delete;
  ModeRestorer& operator=(const ModeRestorer&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

}  // namespace

void test_pass(torch::nn::Module& module, int64_t first, int64_t end, int64_t batch_size,
               const std::function<void(int64_t start, int64_t count)>& each) {
  if (batch_size <= 0) throw std::invalid_argument("test_pass: batch size " + std::to_string(batch_size));
  torch::NoGradGuard no_grad;
  const ModeRestorer mode(module);
  for (int64_t start = first; start < end; start += batch_size) each(start, std::min(batch_size, end - start));
}

}  // namespace descentlab::eval
