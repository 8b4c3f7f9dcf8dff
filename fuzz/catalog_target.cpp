// The dataset manifest parser (core/data/catalog: datasets/SHA256SUMS, `sha256sum` output).

#include <string>

#include "core/data/catalog.h"
#include "core/util/error.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

int catalog(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& entry : data::parse_manifest(text, "fuzz")) {
      if (entry.sha256.size() != 64) finding("a manifest entry's sha256 is not 64 characters: " + entry.sha256);
      if (entry.relative_path.compare(0, entry.dataset.size(), entry.dataset) != 0) {
        finding("a manifest entry's dataset is not its path's first part: " + entry.relative_path);
      }
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace descentlab::fuzz
