// The IDX reader (core/data/idx: MNIST and Fashion-MNIST files, plain or gzip). The first byte picks the reader
// (header only, whole array, or an image set whose labels file is the rest of the input after a split point); the
// rest is the file.

#include <string>

#include "core/data/idx.h"
#include "core/util/error.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

int idx(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 3;
  ++data;
  --size;
  static const std::string path = scratch_path("data.idx");
  static const std::string labels_path = scratch_path("labels.idx");
  try {
    if (mode == 0) {
      write_file(path, data, size);
      const auto header = data::read_idx_header(path);
      if (header.element_count() < 0) finding("a header with a negative element count was accepted");
    } else if (mode == 1) {
      write_file(path, data, size);
      const auto array = data::read_idx(path);
      const auto expected = static_cast<size_t>(array.header.element_count()) * data::idx_type_size(array.header.type);
      if (array.bytes.size() != expected) finding("read_idx returned a different byte count than its header");
    } else {
      // Two bytes (little-endian) say where the images file ends and the labels file begins.
      if (size < 2) return 0;
      const size_t split = std::min<size_t>(size - 2, data[0] | (data[1] << 8));
      write_file(path, data + 2, split);
      write_file(labels_path, data + 2 + split, size - 2 - split);
      const auto set = data::read_image_set(path, labels_path);
      if (set.pixels.size() != static_cast<size_t>(set.count * set.rows * set.cols) ||
          set.labels.size() != static_cast<size_t>(set.count)) {
        finding("read_image_set returned sizes that disagree with its counts");
      }
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace descentlab::fuzz
