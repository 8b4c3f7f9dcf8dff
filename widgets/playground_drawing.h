#pragma once
// What the geometry playground's files (geometry_playground*.cpp) share to draw with Dear ImGui: the optimizers'
// colours, the text's colour, small helpers on ImGui's points and text, and text wrapped at spaces. Private to the
// playground.

#include <imgui.h>

#include <cstddef>
#include <string>

namespace descentlab::widgets {

// One colour per optimizer, in the order of the backend's methods.
inline constexpr ImU32 kMethodColours[] = {
    IM_COL32(90, 90, 90, 255),  IM_COL32(230, 159, 0, 255),   IM_COL32(86, 180, 233, 255), IM_COL32(0, 114, 178, 255),
    IM_COL32(0, 158, 115, 255), IM_COL32(204, 121, 167, 255), IM_COL32(213, 94, 0, 255)};

inline ImU32 methodColour(size_t method) {
  return kMethodColours[method % (sizeof kMethodColours / sizeof kMethodColours[0])];
}

inline ImVec4 toVec4(ImU32 colour) {
  return ImGui::ColorConvertU32ToFloat4(colour);
}

inline constexpr ImU32 kTextColour = IM_COL32(25, 25, 25, 255);

inline ImVec2 offset(ImVec2 point, float dx, float dy) {
  return ImVec2(point.x + dx, point.y + dy);
}

inline float textWidth(const std::string& text) {
  return ImGui::CalcTextSize(text.c_str()).x;
}

// `text` wrapped to the available width at spaces only, as one item (ImGui's own wrapping also breaks after '.' and
// ',', which splits numbers such as "(1.25, 0.00)"). A word wider than the line stays whole and is clipped.

void textWrappedAtSpaces(const std::string& text);

}  // namespace descentlab::widgets
