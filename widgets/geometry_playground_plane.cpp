// The geometry playground's 2-D toy (one equation a·θ = b): the plane with the balls, the solution line and each
// optimizer's path from the draggable start point, its legend, and the end points' list.
#include "widgets/geometry_playground.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "widgets/playground_drawing.h"

namespace descentlab::widgets {
namespace {

const ImU32 kMutedColour = IM_COL32(90, 90, 90, 255);
// The balls in greys, so they never read as an optimizer's colour.
const ImU32 kBallL2 = IM_COL32(110, 110, 110, 220), kBallL1 = IM_COL32(40, 40, 40, 230),
            kBallLinf = IM_COL32(160, 160, 160, 230);

// "(x, y)", or "diverged" when either coordinate has.
std::string formatPoint(double x, double y) {
  if (isDiverged(x) || isDiverged(y)) return "diverged";
  return "(" + formatPlaygroundNumber(x) + ", " + formatPlaygroundNumber(y) + ")";
}

// A legend's shape: 0 circle, 1 diamond, 2 square, in the box at `at` of side `size`.
void drawShape(ImDrawList* draw, int shape, ImVec2 at, float size, ImU32 colour) {
  const ImVec2 centre = offset(at, size * 0.5f, size * 0.5f);
  const float r = size * 0.5f - 1.0f;
  if (shape == 0) draw->AddCircle(centre, r, colour, 16, 1.5f);
  if (shape == 1) {
    const ImVec2 diamond[] = {offset(centre, r, 0), offset(centre, 0, -r), offset(centre, -r, 0), offset(centre, 0, r)};
    draw->AddPolyline(diamond, 4, colour, ImDrawFlags_Closed, 1.5f);
  }
  if (shape == 2)
    draw->AddRect(offset(centre, -r * 0.8f, -r * 0.8f), offset(centre, r * 0.8f, r * 0.8f), colour, 0, 0, 1.5f);
}

// An entry of the 2-D toy's header: a ball's shape and name, or text alone.
struct HeaderEntry {
  int shape;  // -1: text only
  ImU32 colour;
  std::string text;
  ImVec2 at;
};

// Places the header's entries left to right from `origin`, wrapped to `available`; returns the header's height.
float wrapHeader(std::vector<HeaderEntry>& header, ImVec2 origin, float available, const ImGuiStyle& style, float em,
                 float icon, float line) {
  float x = 0, y = 0;
  for (auto& entry : header) {
    const float width = (entry.shape >= 0 ? icon + style.ItemInnerSpacing.x : 0) + textWidth(entry.text);
    if (x > 0 && x + width > available) {
      x = 0;
      y += line;
    }
    entry.at = offset(origin, x, y);
    x += width + (entry.shape == -1 && entry.text == "balls:" ? style.ItemInnerSpacing.x : em);
  }
  return y + line;
}

}  // namespace

QPointF GeometryPlayground::planeToWidget(double x, double y) const {
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  const float cx = canvasX_ + canvasW_ * 0.5f, cy = canvasY_ + canvasH_ * 0.5f;
  return {cx + static_cast<float>(x - 0.5) * pixels, cy - static_cast<float>(y - 0.5) * pixels};
}

// Far-away points (a diverged path) are pinned where float arithmetic stays exact enough to draw a line off-canvas.
ImVec2 GeometryPlayground::planeToScreen(double px, double py) const {
  const double limit = 1e3 * viewScale_;
  const QPointF point = planeToWidget(std::clamp(px, -limit, limit), std::clamp(py, -limit, limit));
  return ImVec2(static_cast<float>(point.x()), static_cast<float>(point.y()));
}

// The plane's contents: grid and axes, the line a·θ = b, the three balls that touch it, the optimizers' paths.
void GeometryPlayground::drawPlaneScene(ImDrawList* draw) {
  const auto toScreen = [this](double px, double py) { return planeToScreen(px, py); };
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  // Grid and axes.
  const double step = viewScale_ > 5 ? 1.0 : (viewScale_ > 1 ? 0.5 : 0.1);
  for (double g = -std::ceil(2 * viewScale_ / step) * step; g <= 2 * viewScale_ + 1; g += step) {
    draw->AddLine(toScreen(g, -100), toScreen(g, 100), IM_COL32(235, 235, 235, 255));
    draw->AddLine(toScreen(-100, g), toScreen(100, g), IM_COL32(235, 235, 235, 255));
  }
  draw->AddLine(toScreen(0, -100), toScreen(0, 100), IM_COL32(150, 150, 150, 255), 1.5f);
  draw->AddLine(toScreen(-100, 0), toScreen(100, 0), IM_COL32(150, 150, 150, 255), 1.5f);
  // The solutions a·θ = b.
  const double far = 200.0;
  const double dx = -a_[1], dy = a_[0];
  const double px = a_[0] * b_ / (a_[0] * a_[0] + a_[1] * a_[1]), py = a_[1] * b_ / (a_[0] * a_[0] + a_[1] * a_[1]);
  draw->AddLine(toScreen(px - far * dx, py - far * dy), toScreen(px + far * dx, py + far * dy),
                IM_COL32(20, 20, 20, 255), 2.5f);
  // The L2, L1 and L∞ balls that just touch the line.
  const double r2 = std::abs(b_) / std::hypot(a_[0], a_[1]);
  const double r1 = std::abs(b_) / std::max(std::abs(a_[0]), std::abs(a_[1]));
  const double rinf = std::abs(b_) / (std::abs(a_[0]) + std::abs(a_[1]));
  draw->AddCircle(toScreen(0, 0), static_cast<float>(r2 * pixels), kBallL2, 96, 1.5f);
  const ImVec2 diamond[] = {toScreen(r1, 0), toScreen(0, r1), toScreen(-r1, 0), toScreen(0, -r1)};
  draw->AddPolyline(diamond, 4, kBallL1, ImDrawFlags_Closed, 2.0f);
  draw->AddRect(toScreen(-rinf, rinf), toScreen(rinf, -rinf), kBallLinf, 0, 0, 1.5f);
  // Trajectories and end points; a path stops at its first non-finite point.
  for (size_t m = 0; m < paths_.size(); ++m) {
    if (!shown_[m] || paths_[m].empty()) continue;
    std::vector<ImVec2> points;
    points.reserve(paths_[m].size());
    for (const auto& p : paths_[m]) {
      if (!std::isfinite(p[0]) || !std::isfinite(p[1])) break;
      points.push_back(toScreen(p[0], p[1]));
    }
    if (points.empty()) continue;
    draw->AddPolyline(points.data(), static_cast<int>(points.size()), methodColour(m), ImDrawFlags_None, 2.0f);
    draw->AddCircleFilled(points.back(), 5.0f, methodColour(m));
    draw->AddCircle(points.back(), 5.5f, IM_COL32(255, 255, 255, 255), 12, 1.0f);
  }
}

// The start point, labelled on the first side where the label stays inside the canvas and off the readout.
void GeometryPlayground::drawStartPoint(ImDrawList* draw, ImVec2 canvasMin, ImVec2 canvasMax, ImVec2 readoutMin,
                                        ImVec2 readoutMax) {
  const ImVec2 startAt = planeToScreen(start_[0], start_[1]);
  draw->AddCircleFilled(startAt, 6.0f, IM_COL32(0, 0, 0, 255));
  const ImVec2 label = ImGui::CalcTextSize("start");
  const ImVec2 candidates[] = {
      offset(startAt, 8, -8 - label.y * 0.5f), offset(startAt, -8 - label.x, -8 - label.y * 0.5f),
      offset(startAt, 8, 8 - label.y * 0.5f), offset(startAt, -8 - label.x, 8 - label.y * 0.5f)};
  for (const ImVec2& at : candidates) {
    const bool inside = at.x >= canvasMin.x + 1 && at.y >= canvasMin.y + 1 && at.x + label.x <= canvasMax.x - 1 &&
                        at.y + label.y <= canvasMax.y - 1;
    const bool onReadout =
        at.x < readoutMax.x && at.x + label.x > readoutMin.x && at.y < readoutMax.y && at.y + label.y > readoutMin.y;
    if (inside && !onReadout) {
      // On white, so the paths it crosses do not run through the letters.
      draw->AddRectFilled(offset(at, -2, 0), offset(at, label.x + 2, label.y), IM_COL32(255, 255, 255, 200), 2.0f);
      drawText(at, kTextColour, "start");
      break;
    }
  }
}

// The canvas: dragging in it moves the start point and the wheel zooms; the plane's contents, clipped to it, with
// the pointer's coordinates and the start point.
void GeometryPlayground::drawPlaneCanvas(ImDrawList* draw, ImVec2 canvasMin, ImVec2 canvasMax) {
  ImGui::SetCursorScreenPos(canvasMin);
  ImGui::InvisibleButton("plane", ImVec2(canvasW_, canvasH_));
  const bool hovered = ImGui::IsItemHovered();
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  auto toPlane = [&](ImVec2 p) {
    const float cx = canvasX_ + canvasW_ * 0.5f, cy = canvasY_ + canvasH_ * 0.5f;
    return std::array<double, 2>{0.5 + (p.x - cx) / pixels, 0.5 - (p.y - cy) / pixels};
  };
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(0)) start_ = toPlane(ImGui::GetIO().MousePos);
  if (hovered && ImGui::GetIO().MouseWheel != 0) {
    viewScale_ = std::clamp(viewScale_ * std::pow(0.85, ImGui::GetIO().MouseWheel), 0.2, 50.0);
  }
  simulateIfChanged();

  draw->PushClipRect(canvasMin, canvasMax, true);
  draw->AddRect(canvasMin, canvasMax, IM_COL32(220, 220, 220, 255));
  drawPlaneScene(draw);
  // The pointer's coordinates in the canvas's bottom-right corner, on white; the legend is above the canvas.
  ImVec2 readoutMin(canvasMax.x, canvasMax.y), readoutMax = readoutMin;
  if (hovered) {
    const auto p = toPlane(ImGui::GetIO().MousePos);
    const std::string readout = formatPoint(p[0], p[1]);
    const ImVec2 size = ImGui::CalcTextSize(readout.c_str());
    readoutMin = ImVec2(canvasMax.x - size.x - 8, canvasMax.y - size.y - 6);
    readoutMax = ImVec2(canvasMax.x - 2, canvasMax.y - 2);
    draw->AddRectFilled(readoutMin, readoutMax, IM_COL32(255, 255, 255, 230));
    drawText(offset(readoutMin, 3, 2), kTextColour, readout);
  }
  drawStartPoint(draw, canvasMin, canvasMax, readoutMin, readoutMax);
  draw->PopClipRect();
}

// The 2-D toy: a header (the balls' legend and the line's equation, wrapped to the width), the plane, and the end
// points in a scrolling list beside or below the plane, whichever leaves the plane the larger square.
void GeometryPlayground::drawPlane() {
  drawCaption();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float em = ImGui::GetFontSize();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float icon = std::round(em * 0.8f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 available = ImGui::GetContentRegionAvail();
  ImDrawList* draw = ImGui::GetWindowDrawList();

  // The header's entries, left to right, wrapped.
  std::vector<HeaderEntry> header = {{-1, kMutedColour, "balls:", {}},
                                     {0, kBallL2, "L2", {}},
                                     {1, kBallL1, "L1", {}},
                                     {2, kBallLinf, "Linf", {}},
                                     {-1,
                                      kTextColour,
                                      "line: " + formatPlaygroundNumber(a_[0]) + " x + " +
                                          formatPlaygroundNumber(a_[1]) + " y = " + formatPlaygroundNumber(b_),
                                      {}}};
  const float headerHeight = wrapHeader(header, origin, available.x, style, em, icon, line);
  const float regionW = available.x, regionH = std::max(0.0f, available.y - headerHeight);

  // The end-point list's size, and where it goes.
  const auto names = backend_.methods();
  size_t listed = 0;
  float listText = 0;
  for (size_t m = 0; m < paths_.size() && m < names.size(); ++m) {
    if (!shown_[m] || paths_[m].empty()) continue;
    ++listed;
    listText = std::max(listText, textWidth(names[m] + ": " + formatPoint(paths_[m].back()[0], paths_[m].back()[1])));
  }
  const float listW = icon + style.ItemSpacing.x + listText + 2 * style.WindowPadding.x + style.ScrollbarSize + 2;
  const float listNeededH = static_cast<float>(listed) * line - style.ItemSpacing.y + 2 * style.WindowPadding.y + 2;
  const float besideW = regionW - listW - style.ItemSpacing.x;
  const float belowListH = std::min(listNeededH, std::max(2.5f * line + 2 * style.WindowPadding.y, regionH * 0.35f));
  const float belowCanvasH = regionH - belowListH - style.ItemSpacing.y;
  const bool beside = listed > 0 && std::min(besideW, regionH) > std::min(regionW, belowCanvasH);
  canvasX_ = origin.x;
  canvasY_ = origin.y + headerHeight;
  canvasW_ = std::max(4 * em, listed == 0 || !beside ? regionW : besideW);
  canvasH_ = std::max(4 * em, listed == 0 || beside ? regionH : belowCanvasH);

  const ImVec2 canvasMin(canvasX_, canvasY_), canvasMax(canvasX_ + canvasW_, canvasY_ + canvasH_);
  drawPlaneCanvas(draw, canvasMin, canvasMax);

  // The header, drawn now that the canvas is placed.
  for (const auto& entry : header) {
    float textX = entry.at.x;
    if (entry.shape >= 0) {
      drawShape(draw, entry.shape, offset(entry.at, 0, (em - icon) * 0.5f), icon, entry.colour);
      textX += icon + style.ItemInnerSpacing.x;
    }
    drawText(ImVec2(textX, entry.at.y), entry.shape >= 0 ? kTextColour : entry.colour, entry.text);
  }
  if (listed == 0) return;
  ImGui::SetCursorScreenPos(beside ? ImVec2(canvasMax.x + style.ItemSpacing.x, canvasMin.y)
                                   : ImVec2(canvasMin.x, canvasMax.y + style.ItemSpacing.y));
  ImGui::BeginChild("end points", ImVec2(beside ? listW : regionW, beside ? regionH : belowListH), true,
                    ImGuiWindowFlags_HorizontalScrollbar);
  drawEndPoints();
  ImGui::EndChild();
}

// Each shown optimizer's end point, behind its colour.
void GeometryPlayground::drawEndPoints() {
  const auto names = backend_.methods();
  const float swatch = std::round(ImGui::GetFontSize() * 0.8f);
  for (size_t m = 0; m < paths_.size() && m < names.size(); ++m) {
    if (!shown_[m] || paths_[m].empty()) continue;
    ImGui::PushID(static_cast<int>(m));
    ImGui::ColorButton("##c", toVec4(methodColour(m)), ImGuiColorEditFlags_NoTooltip, ImVec2(swatch, swatch));
    ImGui::PopID();
    ImGui::SameLine();
    const std::string text = names[m] + ": " + formatPoint(paths_[m].back()[0], paths_[m].back()[1]);
    ImGui::TextUnformatted(text.c_str());
    recordItem(text);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("where %s ends after the set steps", names[m].c_str());
  }
}

}  // namespace descentlab::widgets
