// The geometry playground's settings: the learning-rate factor, steps, alpha, beta, weight decay and initial scale,
// each optimizer's check box and own learning rate behind its colour, and Export PNG.
#include "widgets/geometry_playground.h"

#include <imgui.h>
#include <QFileDialog>

#include <cmath>
#include <cstdio>

#include "widgets/playground_drawing.h"

namespace descentlab::widgets {

// A slider under its label, recorded with the value it shows.
void GeometryPlayground::slider(const char* label, const char* id, double* value, double min, double max,
                                const char* format, int flags) {
  if (label[0] != '\0') {
    ImGui::TextUnformatted(label);
    recordItem(label);
  }
  if (ImGui::SliderScalar(id, ImGuiDataType_Double, value, &min, &max, format, flags)) requestFrames();
  char shown[64];
  std::snprintf(shown, sizeof shown, format, *value);
  recordItem(shown);
  const float room = ImGui::GetItemRectSize().x - 2 * ImGui::GetStyle().FramePadding.x;
  if (textWidth(shown) > room) record_.texts.back().cut = true;
}

void GeometryPlayground::drawControls() {
  const auto names = backend_.methods();
  if (settings_.rates.size() != names.size()) {  // a backend with fewer defaults: 0.01 for the rest
    const auto defaults = backend_.defaultSettings().rates;
    settings_.rates.resize(names.size(), 0.01);
    for (size_t m = 0; m < names.size() && m < defaults.size(); ++m) settings_.rates[m] = defaults[m];
  }
  if (!captionInView()) {  // what to watch, first: the panel is too short to show it above the toy
    const std::string caption =
        (toy_ == Toy::plane ? backend_.planeDescription() : backend_.sparseDescription()).toStdString();
    if (!caption.empty()) {
      textWrappedAtSpaces(caption);
      recordItem(caption);
      ImGui::Separator();
    }
  }
  ImGui::PushItemWidth(-FLT_MIN);
  slider("learning rates, all x", "##lr", &settings_.lr, 0.01, 100.0, "%.3f", ImGuiSliderFlags_Logarithmic);
  ImGui::TextUnformatted("steps");
  recordItem("steps");
  if (ImGui::SliderInt("##steps", &settings_.steps, 1, 5000, "%d", ImGuiSliderFlags_Logarithmic)) requestFrames();
  recordItem(std::to_string(settings_.steps));
  slider("alpha (HAM, HORST)", "##alpha", &settings_.alpha, 0.0, 5000.0, "%.1f", ImGuiSliderFlags_Logarithmic);
  slider("beta (HAM, HORST)", "##beta", &settings_.beta, 0.0, 100.0, "%.3f", ImGuiSliderFlags_Logarithmic);
  slider("weight decay", "##wd", &settings_.weight_decay, 0.0, 1.0, "%.3f", 0);
  // %.6f, not %g: a logarithmic slider's smallest step follows the format's decimals (1e-6 here).
  slider("initial scale", "##scale", &settings_.init_scale, 1e-6, 1.0, "%.6f", ImGuiSliderFlags_Logarithmic);
  ImGui::PopItemWidth();
  ImGui::Separator();
  ImGui::TextUnformatted("Optimizers, learning rates");
  recordItem("Optimizers, learning rates");
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Each optimizer's own learning rate (times the factor above): gradient and mirror descent\n"
        "step by the rate times the gradient, sign descent and the Adam family by about the rate\n"
        "per coordinate, so their rates differ.");
  }
  const float swatch = std::round(ImGui::GetFontSize() * 0.8f);
  const float indent = swatch + ImGui::GetStyle().ItemSpacing.x;
  for (size_t m = 0; m < names.size(); ++m) {
    ImGui::PushID(static_cast<int>(m));
    bool shown = shown_[m];
    ImGui::ColorButton("##c", toVec4(methodColour(m)), ImGuiColorEditFlags_NoTooltip, ImVec2(swatch, swatch));
    ImGui::SameLine();
    if (ImGui::Checkbox(names[m].c_str(), &shown)) shown_[m] = shown;
    recordItem(names[m]);
    ImGui::Indent(indent);
    ImGui::PushItemWidth(-FLT_MIN);
    slider("", "##rate", &settings_.rates[m], 1e-5, 2.0, "lr %.5f", ImGuiSliderFlags_Logarithmic);
    ImGui::PopItemWidth();
    ImGui::Unindent(indent);
    ImGui::PopID();
  }
  ImGui::Separator();
  if (toy_ == Toy::plane) {
    const char* drag = "Drag in the plane to move the start point. Wheel: zoom.";
    ImGui::TextWrapped("%s", drag);
    recordItem(drag);
  }

  if (ImGui::Button("Export PNG...")) {
    // Saved after this frame, from the framebuffer, by the Qt side.
    QMetaObject::invokeMethod(
        this,
        [this] {
          const QString path = QFileDialog::getSaveFileName(
              this, QStringLiteral("Export the playground"),
              QStringLiteral("playground-%1.png")
                  .arg(toy_ == Toy::plane ? QStringLiteral("2d") : QStringLiteral("sparse")),
              QStringLiteral("PNG image (*.png)"));
          if (!path.isEmpty()) exportPng(path);
        },
        Qt::QueuedConnection);
  }
  recordItem("Export PNG...");
}

}  // namespace descentlab::widgets
