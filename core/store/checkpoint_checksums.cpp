#include "core/store/checkpoint_checksums.h"

#include "core/util/sha256.h"

namespace descentlab::store::format {

std::string section_checksum(const std::map<std::string, record::TensorBlob>& tensors) {
  Sha256 sum;
  for (const auto& [name, blob] : tensors) {
    sum.add(name);
    sum.add(blob.dtype);
    sum.add_int(static_cast<int64_t>(blob.shape.size()));
    for (int64_t dim : blob.shape) sum.add_int(dim);
    sum.add_int(static_cast<int64_t>(blob.bytes.size()));
    sum.add(blob.bytes.data(), blob.bytes.size());
  }
  return sum.hex();
}

std::string checkpoint_checksum(int64_t step, int64_t epoch, const std::string& created, const std::string& extra,
                                const std::map<std::string, std::string>& section_sums) {
  Sha256 sum;
  sum.add_int(step);
  sum.add_int(epoch);
  sum.add(created);
  sum.add(extra);
  for (const auto& [name, section_sum] : section_sums) {
    sum.add(name);
    sum.add(section_sum);
  }
  return sum.hex();
}
}  // namespace descentlab::store::format
