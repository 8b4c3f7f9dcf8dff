#pragma once
// The optimizer's state map is keyed by a string of the parameter's TensorImpl address in LibTorch 1.13 and by the
// address itself in later versions; state_key picks the right key for either, so code compiles against both.

#include <torch/optim/optimizer.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace descentlab::optim {

template <typename StateMap>
typename StateMap::key_type state_key(const StateMap&, const torch::Tensor& parameter) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    // LibTorch 1.13 writes the key as `c10::guts::to_string(impl)`, an ostringstream of the pointer; that helper
    // is gone in 2.x, so the same text is made here.
    std::ostringstream key;
    key << parameter.unsafeGetTensorImpl();
    return key.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace descentlab::optim
