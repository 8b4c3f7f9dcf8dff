#pragma once
// A number as a message shows it. std::to_string prints a NaN as "nan" or "-nan" depending on its sign bit, which
// differs between LibTorch builds (1.13: "nan", 2.x: "-nan" for the same overflow); a NaN has no meaningful sign,
// so it is always "nan" here.

#include <cmath>
#include <string>

namespace descentlab {

inline std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return std::to_string(value);
}

}  // namespace descentlab
