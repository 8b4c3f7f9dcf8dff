#pragma once
// A number as a message shows it. std::to_string prints a NaN as "nan" or "-nan" depending on its sign bit, which
// differs between LibTorch builds (1.13: "nan", 2.x: "-nan" for the same overflow); a NaN has no meaningful sign,
// so it is always "nan" here.

#include <cmath>
#include <cstdio>
#include <string>

namespace descentlab {

inline std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return std::to_string(value);
}

// The shortest form a person reads: "0.3", "1e-05", "250" (printf's %g, six significant digits), not "0.300000".
inline std::string short_number_text(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace descentlab
