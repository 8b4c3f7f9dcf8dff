#include "core/data/sprites.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"
#include "core/util/random.h"

namespace descentlab::data {
namespace {

constexpr double kPi = 3.14159265358979323846;

// 3x5 bitmaps of the digits 0-9, one string of 15 cells per digit, row-major.
// clang-format off
constexpr const char* kDigitGlyphs[10] = {
    "###" "#.#" "#.#" "#.#" "###",  // 0
    ".#." "##." ".#." ".#." "###",  // 1
    "###" "..#" "###" "#.." "###",  // 2
    "###" "..#" "###" "..#" "###",  // 3
    "#.#" "#.#" "###" "..#" "..#",  // 4
    "###" "#.." "###" "..#" "###",  // 5
    "###" "#.." "###" "#.#" "###",  // 6
    "###" "..#" "..#" "..#" "..#",  // 7
    "###" "#.#" "###" "#.#" "###",  // 8
    "###" "#.#" "###" "..#" "###",  // 9
};
// clang-format on

double half_width(const SpriteState& sprite) {
  return sprite.shape == SpriteShape::Digit ? 0.3 * sprite.size : 0.5 * sprite.size;
}

// Moves one coordinate by its velocity and reflects it off the walls [extent, limit - extent].
void move_and_bounce(double& position, double& velocity, double extent, double limit) {
  position += velocity;
  const double low = extent;
  const double high = limit - extent;
  for (int bounce = 0; bounce < 4 && (position < low || position > high); ++bounce) {
    if (position < low) position = 2 * low - position;
    if (position > high) position = 2 * high - position;
    velocity = -velocity;
  }
  position = std::clamp(position, low, high);
}

bool covers(const SpriteState& sprite, double px, double py) {
  const double dx = px - sprite.x;
  const double dy = py - sprite.y;
  const double r = 0.5 * sprite.size;
  switch (sprite.shape) {
    case SpriteShape::Square: return std::abs(dx) <= r && std::abs(dy) <= r;
    case SpriteShape::Disc: return dx * dx + dy * dy <= r * r;
    case SpriteShape::Digit: {
      const double w = 2 * half_width(sprite);
      const double h = sprite.size;
      const double u = (dx + 0.5 * w) / w;
      const double v = (dy + 0.5 * h) / h;
      if (u < 0 || u >= 1 || v < 0 || v >= 1) return false;
      const int column = static_cast<int>(u * 3);
      const int row = static_cast<int>(v * 5);
      return kDigitGlyphs[sprite.digit][row * 3 + column] == '#';
    }
  }
  return false;
}

void render_frame(const SpriteVideoOptions& options, const std::vector<SpriteState>& sprites, float* frame) {
  for (int64_t y = 0; y < options.height; ++y) {
    for (int64_t x = 0; x < options.width; ++x) {
      double value = options.background;
      for (const auto& sprite : sprites) {
        if (covers(sprite, static_cast<double>(x) + 0.5, static_cast<double>(y) + 0.5)) {
          value = std::max(value, sprite.intensity);
        }
      }
      frame[y * options.width + x] = static_cast<float>(value);
    }
  }
}

}  // namespace

std::vector<SpriteShape> all_sprite_shapes() {
  return {SpriteShape::Square, SpriteShape::Disc, SpriteShape::Digit};
}

void SpriteVideoOptions::validate() const {
  auto fail = [](const std::string& key, const std::string& why) {
    throw Error("sprite video option '" + key + "': " + why);
  };
  if (frames < 1) fail("frames", "must be >= 1, got " + std::to_string(frames));
  if (height < 4 || width < 4) fail("height/width", "must be >= 4 pixels");
  if (sprites < 0) fail("sprites", "must be >= 0");
  if (!(min_size > 0 && min_size <= max_size)) fail("min_size", "must satisfy 0 < min_size <= max_size");
  if (max_size >= static_cast<double>(std::min(height, width))) {
    fail("max_size", "must be smaller than the frame (" + std::to_string(std::min(height, width)) + " pixels)");
  }
  if (!(max_speed >= 0)) fail("max_speed", "must be >= 0");
  if (!(0 <= min_intensity && min_intensity <= max_intensity && max_intensity <= 1)) {
    fail("min_intensity/max_intensity", "must satisfy 0 <= min <= max <= 1");
  }
  if (!(background >= 0 && background <= 1)) fail("background", "must be in [0, 1]");
  if (shapes.empty() && sprites > 0) fail("shapes", "must name at least one shape");
}

std::vector<std::vector<SpriteState>> simulate_sprites(const SpriteVideoOptions& options, uint64_t clip_index) {
  options.validate();
  SplitMix64 rng(derive_seed(options.seed, clip_index));
  std::vector<SpriteState> sprites(static_cast<size_t>(options.sprites));
  for (auto& sprite : sprites) {
    sprite.shape = options.shapes[rng.below(options.shapes.size())];
    sprite.digit = static_cast<int>(rng.below(10));
    sprite.size = rng.uniform(options.min_size, options.max_size);
    sprite.intensity = rng.uniform(options.min_intensity, options.max_intensity);
    const double half_x = half_width(sprite);
    const double half_y = 0.5 * sprite.size;
    sprite.x = rng.uniform(half_x, static_cast<double>(options.width) - half_x);
    sprite.y = rng.uniform(half_y, static_cast<double>(options.height) - half_y);
    const double speed = rng.uniform(0.3, 1.0) * options.max_speed;
    const double angle = rng.uniform(0.0, 2 * kPi);
    sprite.vx = speed * std::cos(angle);
    sprite.vy = speed * std::sin(angle);
  }
  std::vector<std::vector<SpriteState>> frames;
  frames.reserve(static_cast<size_t>(options.frames));
  for (int64_t t = 0; t < options.frames; ++t) {
    if (t > 0) {
      for (auto& sprite : sprites) {
        move_and_bounce(sprite.x, sprite.vx, half_width(sprite), static_cast<double>(options.width));
        move_and_bounce(sprite.y, sprite.vy, 0.5 * sprite.size, static_cast<double>(options.height));
      }
    }
    frames.push_back(sprites);
  }
  return frames;
}

Video generate_sprite_video(const SpriteVideoOptions& options, uint64_t clip_index) {
  const auto states = simulate_sprites(options, clip_index);
  Video video{options.frames, options.height, options.width, {}};
  video.pixels.resize(static_cast<size_t>(options.frames * options.height * options.width));
  for (int64_t t = 0; t < options.frames; ++t) {
    render_frame(options, states[static_cast<size_t>(t)], video.pixels.data() + t * options.height * options.width);
  }
  return video;
}

std::vector<float> generate_sprite_videos(const SpriteVideoOptions& options, uint64_t first_clip, int64_t count) {
  std::vector<float> packed;
  packed.reserve(static_cast<size_t>(count * options.frames * options.height * options.width));
  for (int64_t i = 0; i < count; ++i) {
    const Video video = generate_sprite_video(options, first_clip + static_cast<uint64_t>(i));
    packed.insert(packed.end(), video.pixels.begin(), video.pixels.end());
  }
  return packed;
}

}  // namespace descentlab::data
