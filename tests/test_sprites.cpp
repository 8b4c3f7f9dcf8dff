#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/data/sprites.h"
#include "core/util/error.h"

namespace descentlab::data {
namespace {

SpriteVideoOptions small_options(uint64_t seed) {
  SpriteVideoOptions options;
  options.frames = 24;
  options.height = 20;
  options.width = 28;
  options.sprites = 3;
  options.min_size = 4;
  options.max_size = 7;
  options.max_speed = 2.5;
  options.background = 0.1;
  options.seed = seed;
  return options;
}

TEST(Sprites, SameSeedAndClipGiveTheSameVideo) {
  const auto first = generate_sprite_video(small_options(7), 3);
  const auto second = generate_sprite_video(small_options(7), 3);
  EXPECT_EQ(first.pixels, second.pixels);
  EXPECT_NE(first.pixels, generate_sprite_video(small_options(8), 3).pixels);
  EXPECT_NE(first.pixels, generate_sprite_video(small_options(7), 4).pixels);
}

TEST(Sprites, BatchesAreRandomAccess) {
  const auto options = small_options(11);
  const auto batch = generate_sprite_videos(options, 5, 3);
  const auto clip_six = generate_sprite_video(options, 6);
  const size_t clip_size = clip_six.pixels.size();
  ASSERT_EQ(batch.size(), 3 * clip_size);
  EXPECT_TRUE(std::equal(clip_six.pixels.begin(), clip_six.pixels.end(), batch.begin() + static_cast<long>(clip_size)));
}

TEST(Sprites, PixelsStayInTheUnitRangeAndShowSpritesOnTheBackground) {
  const auto options = small_options(1);
  for (uint64_t clip = 0; clip < 5; ++clip) {
    const auto video = generate_sprite_video(options, clip);
    ASSERT_EQ(video.pixels.size(), static_cast<size_t>(24 * 20 * 28));
    const auto [low, high] = std::minmax_element(video.pixels.begin(), video.pixels.end());
    EXPECT_FLOAT_EQ(*low, 0.1f);  // background is visible
    EXPECT_GE(*high, 0.5f);       // sprites are brighter than min_intensity
    EXPECT_LE(*high, 1.0f);
  }
}

TEST(Sprites, SpritesStayInsideTheFrameAndBounce) {
  const auto options = small_options(3);
  int bounces = 0;
  for (uint64_t clip = 0; clip < 10; ++clip) {
    const auto frames = simulate_sprites(options, clip);
    ASSERT_EQ(frames.size(), 24u);
    for (size_t t = 0; t < frames.size(); ++t) {
      for (size_t s = 0; s < frames[t].size(); ++s) {
        const auto& sprite = frames[t][s];
        const double half_height = sprite.size / 2;
        EXPECT_GE(sprite.y - half_height, -1e-9);
        EXPECT_LE(sprite.y + half_height, 20 + 1e-9);
        const double half_width = sprite.shape == SpriteShape::Digit ? 0.3 * sprite.size : sprite.size / 2;
        EXPECT_GE(sprite.x - half_width, -1e-9);
        EXPECT_LE(sprite.x + half_width, 28 + 1e-9);
        // Speed is constant; only the direction flips at a wall.
        if (t > 0) {
          const auto& before = frames[t - 1][s];
          EXPECT_NEAR(std::hypot(sprite.vx, sprite.vy), std::hypot(before.vx, before.vy), 1e-12);
          if (sprite.vx * before.vx < 0 || sprite.vy * before.vy < 0) ++bounces;
        }
      }
    }
  }
  EXPECT_GT(bounces, 5);  // 30 sprites over 24 frames at up to 2.5 px/frame in a 20x28 frame must hit walls
}

TEST(Sprites, RenderedFrameMatchesTheSimulatedSquare) {
  SpriteVideoOptions options;
  options.frames = 3;
  options.height = options.width = 16;
  options.sprites = 1;
  options.shapes = {SpriteShape::Square};
  options.min_size = options.max_size = 4;
  options.seed = 5;
  const auto states = simulate_sprites(options, 0);
  const auto video = generate_sprite_video(options, 0);
  for (int64_t t = 0; t < 3; ++t) {
    const auto& sprite = states[static_cast<size_t>(t)][0];
    int lit = 0;
    for (int64_t y = 0; y < 16; ++y) {
      for (int64_t x = 0; x < 16; ++x) {
        const bool inside = std::abs(x + 0.5 - sprite.x) <= 2 && std::abs(y + 0.5 - sprite.y) <= 2;
        EXPECT_FLOAT_EQ(video.at(t, y, x), inside ? static_cast<float>(sprite.intensity) : 0.0f);
        lit += inside;
      }
    }
    EXPECT_GE(lit, 9);  // a 4x4 square covers at least 3x3 pixel centres
    EXPECT_LE(lit, 25);
  }
}

TEST(Sprites, InvalidOptionsNameTheKey) {
  auto options = small_options(0);
  options.max_size = 30;
  try {
    generate_sprite_video(options, 0);
    FAIL() << "expected Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("max_size"), std::string::npos) << error.what();
  }
  options = small_options(0);
  options.frames = 0;
  EXPECT_THROW(options.validate(), Error);
}

}  // namespace
}  // namespace descentlab::data
