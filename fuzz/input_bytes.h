#pragma once
// A fuzz input read from the front, for a target that takes it as a small program (study_folder): bytes,
// little-endian numbers and slices; zeros once it runs out, so that every input is a whole program.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace descentlab::fuzz {

class InputBytes {
 public:
  InputBytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return size_ == 0; }
  size_t left() const { return size_; }
  uint8_t byte() {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
  // Any double, NaN and infinities included.
  double f64() {
    auto raw = take(8);
    raw.resize(8, 0);
    double value = 0;
    std::memcpy(&value, raw.data(), 8);
    return value;
  }
  std::vector<uint8_t> take(size_t n) {
    n = std::min(n, size_);
    std::vector<uint8_t> out(data_, data_ + n);
    data_ += n;
    size_ -= n;
    return out;
  }
  std::string text(size_t n) {
    const auto raw = take(n);
    return std::string(raw.begin(), raw.end());
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

// A position in [0, size) (0 for an empty range) from 16 bits of input, spread over the whole range.
inline size_t scaled(uint16_t at, size_t size) {
  return size == 0 ? 0 : static_cast<size_t>((static_cast<uint64_t>(at) * size) >> 16);
}

}  // namespace descentlab::fuzz
