#pragma once
// The tiny moving-sprite video task the engine tests train (24 clips of 4 frames of 8x8, a 3-block model of width 16):
// task, data and model; each test adds its own "train" and "constraints" (and may change the model's dropout).

#include <nlohmann/json.hpp>

namespace descentlab::testing {

inline nlohmann::json tiny_video_document() {
  return {{"task", "video"},
          {"data",
           {{"train_clips", 24},
            {"test_clips", 8},
            {"frames", 4},
            {"height", 8},
            {"width", 8},
            {"sprites", 2},
            {"patch", {2, 4, 4}}}},
          {"model", {{"layers", 3}, {"width", 16}, {"heads", 2}, {"ff_width", 32}, {"dropout", 0.1}}}};
}

}  // namespace descentlab::testing
