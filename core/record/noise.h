#pragma once
// The noise vocabulary: every input perturbation a robustness sweep and the layer probe apply, in one table
// (core/eval/robustness.h says what each one draws). The engine, the CLI and the window take the words, and which
// models each applies to, from here instead of keeping lists of their own. Plain data: no LibTorch, no Qt
// (widgets/ may include this header).

#include <string>
#include <string_view>
#include <vector>

namespace descentlab::record {

namespace noise {
inline constexpr const char* kGaussian = "gaussian";  // text: e + γσ·N(0, 1) on the token embeddings
inline constexpr const char* kUniform = "uniform";    // text: e + γσ·U(-√3, √3) on the token embeddings
inline constexpr const char* kDiscrete = "discrete";  // text: tokens replaced with probability min(1, γ/4)
inline constexpr const char* kVideo = "video";        // video: x + (σ_train·γ)·N(0, 1) on the input clip
}  // namespace noise

struct NoiseInfo {
  const char* name;  // a C string, not a string_view: GCC 12 misreads copies of constexpr views (-Warray-bounds)
  bool video;  // applies to video models; otherwise to text models
};

// In the order menus and help texts list them; the first of each model's kinds is its default.
inline constexpr NoiseInfo kNoiseVocabulary[] = {
    {noise::kGaussian, false},
    {noise::kUniform, false},
    {noise::kDiscrete, false},
    {noise::kVideo, true},
};

// The kinds a text (video = false) or video model takes, in table order.
inline std::vector<std::string> noise_kinds(bool video) {
  std::vector<std::string> kinds;
  for (const auto& info : kNoiseVocabulary) {
    if (info.video == video) kinds.emplace_back(info.name);
  }
  return kinds;
}

// Every kind, text's and video's.
inline std::vector<std::string> all_noise_kinds() {
  std::vector<std::string> kinds;
  for (const auto& info : kNoiseVocabulary) kinds.emplace_back(info.name);
  return kinds;
}

inline bool noise_applies(std::string_view name, bool video) {
  for (const auto& info : kNoiseVocabulary) {
    if (name == info.name) return info.video == video;
  }
  return false;
}

// "gaussian, uniform, discrete" (text) or "video", for messages.
inline std::string noise_list(bool video) {
  std::string list;
  for (const auto& info : kNoiseVocabulary) {
    if (info.video != video) continue;
    if (!list.empty()) list += ", ";
    list += info.name;
  }
  return list;
}

inline std::string default_noise(bool video) {
  for (const auto& info : kNoiseVocabulary) {
    if (info.video == video) return info.name;
  }
  return std::string();
}

}  // namespace descentlab::record
