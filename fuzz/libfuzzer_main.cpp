// libFuzzer's entry for one target, chosen at compile time (fuzz/CMakeLists.txt sets DESCENTLAB_FUZZ_ENTRY).
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return descentlab::fuzz::DESCENTLAB_FUZZ_ENTRY(data, size);
}
