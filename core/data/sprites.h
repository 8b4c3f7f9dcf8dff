#pragma once
// Deterministic moving-sprite videos for the denoising task: squares, discs and digit glyphs of random size and
// brightness move with constant velocity and bounce off the frame's walls. Clip i of a stream depends only on
// (options, seed, i), so any clip can be regenerated on its own, on any machine.

#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::data {

enum class SpriteShape : uint8_t { Square, Disc, Digit };

// Square, disc and digit.
std::vector<SpriteShape> all_sprite_shapes();

struct SpriteVideoOptions {
  int64_t frames = 16;
  int64_t height = 32;
  int64_t width = 32;
  int64_t sprites = 3;
  double min_size = 5.0;  // pixels: side of a square, diameter of a disc, height of a digit
  double max_size = 10.0;
  double max_speed = 1.5;  // pixels per frame
  double min_intensity = 0.5;
  double max_intensity = 1.0;
  double background = 0.0;
  std::vector<SpriteShape> shapes = all_sprite_shapes();
  uint64_t seed = 0;

  // Throws descentlab::Error naming the first invalid option.
  void validate() const;
};

struct SpriteState {
  SpriteShape shape = SpriteShape::Square;
  int digit = 0;
  double size = 0.0;
  double intensity = 0.0;
  double x = 0.0, y = 0.0;  // centre, in pixels (0..width, 0..height)
  double vx = 0.0, vy = 0.0;
};

// The sprites of clip `clip_index`, frame by frame: [frames][sprites].
std::vector<std::vector<SpriteState>> simulate_sprites(const SpriteVideoOptions& options, uint64_t clip_index);

struct Video {
  int64_t frames = 0, height = 0, width = 0;
  std::vector<float> pixels;  // frames * height * width, values in [0, 1]

  float at(int64_t t, int64_t y, int64_t x) const { return pixels[static_cast<size_t>((t * height + y) * width + x)]; }
};

Video generate_sprite_video(const SpriteVideoOptions& options, uint64_t clip_index);

// `count` consecutive clips starting at `first_clip`, packed [count][frames][height][width].
std::vector<float> generate_sprite_videos(const SpriteVideoOptions& options, uint64_t first_clip, int64_t count);

}  // namespace descentlab::data
