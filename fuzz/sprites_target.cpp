// The sprite-video generator's options (core/data/sprites): validate() must refuse every option set the generator
// cannot draw. Options come straight from the input's bytes (any int64, any double: NaN, infinities); valid ones are
// drawn when small enough for a fuzz run (the cost grows with frames x height x width, by design), and every pixel
// must be in [0, 1].

#include <cmath>
#include <cstring>
#include <string>

#include "core/data/sprites.h"
#include "core/util/error.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

namespace {

// Takes fixed-size values from the front of the input; zeros once it runs out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T take() {
    T value{};
    const size_t n = std::min(sizeof(T), size_);
    std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

// Small integers most of the time (so valid options are common), any int64 when the selector's top bit is set.
int64_t integer(Bytes& in) {
  const auto selector = in.take<uint8_t>();
  if (selector & 0x80) return in.take<int64_t>();
  return static_cast<int64_t>(selector) - 8;
}

// A number in [0, 16] from a byte most of the time, any double when the selector's top bit is set.
double number(Bytes& in) {
  const auto selector = in.take<uint8_t>();
  if (selector & 0x80) return in.take<double>();
  return static_cast<double>(selector) / 8.0;
}

// value + offset, or value itself where the sum would overflow int64 (the harness's own arithmetic; the options
// keep an extreme value either way, which validate() must refuse).
int64_t shifted(int64_t value, int64_t offset) {
  int64_t sum = 0;
  return __builtin_add_overflow(value, offset, &sum) ? value : sum;
}

}  // namespace

int sprites(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  data::SpriteVideoOptions options;
  options.frames = integer(in);
  options.height = shifted(integer(in), 12);
  options.width = shifted(integer(in), 12);
  options.sprites = shifted(integer(in), 8);
  options.min_size = number(in);
  options.max_size = number(in);
  options.max_speed = number(in);
  options.min_intensity = number(in) / 16;
  options.max_intensity = number(in) / 16;
  options.background = number(in) / 16;
  const auto shape_bits = in.take<uint8_t>();
  options.shapes.clear();
  for (const auto shape : data::all_sprite_shapes()) {
    if (shape_bits & (1u << static_cast<unsigned>(shape))) options.shapes.push_back(shape);
  }
  options.seed = in.take<uint64_t>();
  const auto clip = in.take<uint64_t>();
  try {
    options.validate();
  } catch (const Error&) {
    return 0;
  }
  const double pixels =
      static_cast<double>(options.frames) * static_cast<double>(options.height) * static_cast<double>(options.width);
  if (pixels > 1 << 16 || options.sprites > 64) return 0;
  const auto video = data::generate_sprite_video(options, clip);
  if (video.frames != options.frames || video.height != options.height || video.width != options.width ||
      video.pixels.size() != static_cast<size_t>(pixels)) {
    finding("a video of the wrong size");
  }
  for (const float value : video.pixels) {
    if (!(value >= 0.0f && value <= 1.0f)) finding("a pixel outside [0, 1]: " + std::to_string(value));
  }
  return 0;
}

}  // namespace descentlab::fuzz
