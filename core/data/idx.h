#pragma once
// IDX files (LeCun's MNIST format), plain or gzip-compressed: a 4-byte magic (0, 0, element type, rank),
// `rank` big-endian uint32 dimensions, then the elements, big-endian, row-major.

#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::data {

enum class IdxType : uint8_t {
  UInt8 = 0x08,
  Int8 = 0x09,
  Int16 = 0x0B,
  Int32 = 0x0C,
  Float32 = 0x0D,
  Float64 = 0x0E,
};

const char* idx_type_name(IdxType type);
size_t idx_type_size(IdxType type);

struct IdxHeader {
  IdxType type = IdxType::UInt8;
  std::vector<int64_t> dims;
  bool gzip = false;

  int64_t element_count() const;
};

struct IdxArray {
  IdxHeader header;
  std::vector<uint8_t> bytes;  // elements in host byte order

  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// Reads only the magic and dimensions (cheap even for large gzip files). Throws DataError naming the file.
IdxHeader read_idx_header(const std::string& path);

// Reads the whole array. Throws DataError on a wrong magic number, an unknown element type, a truncated file or
// bytes after the declared data.
IdxArray read_idx(const std::string& path);

// A labelled image set: N images of rows x cols unsigned bytes and N byte labels.
struct ImageSet {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major
  std::vector<uint8_t> labels;  // count
};

// Reads an images file (uint8, rank 3) and its labels file (uint8, rank 1) and checks that they agree.
ImageSet read_image_set(const std::string& images_path, const std::string& labels_path);

}  // namespace descentlab::data
