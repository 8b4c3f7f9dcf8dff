#include "widgets/geometry_playground.h"

#include <imgui.h>
#include <QFileDialog>
#include <QGuiApplication>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace descentlab::widgets {
namespace {

// One colour per optimizer, in the order of the backend's methods.
const ImU32 kMethodColours[] = {IM_COL32(90, 90, 90, 255),  IM_COL32(230, 159, 0, 255), IM_COL32(86, 180, 233, 255),
                                IM_COL32(0, 114, 178, 255), IM_COL32(0, 158, 115, 255), IM_COL32(204, 121, 167, 255),
                                IM_COL32(213, 94, 0, 255)};

ImU32 methodColour(size_t method) {
  return kMethodColours[method % (sizeof kMethodColours / sizeof kMethodColours[0])];
}

ImVec4 toVec4(ImU32 colour) {
  return ImGui::ColorConvertU32ToFloat4(colour);
}

const ImU32 kTextColour = IM_COL32(25, 25, 25, 255);
const ImU32 kMutedColour = IM_COL32(90, 90, 90, 255);
// The balls in greys, so they never read as an optimizer's colour.
const ImU32 kBallL2 = IM_COL32(110, 110, 110, 220), kBallL1 = IM_COL32(40, 40, 40, 230),
            kBallLinf = IM_COL32(160, 160, 160, 230);

// The view needs this many font heights of width beside the settings, else settings and toys become tabs.
constexpr float kMinViewEms = 24.0f;

ImVec2 offset(ImVec2 point, float dx, float dy) {
  return ImVec2(point.x + dx, point.y + dy);
}

float textWidth(const std::string& text) {
  return ImGui::CalcTextSize(text.c_str()).x;
}

// "(x, y)", or "diverged" when either coordinate has.
std::string formatPoint(double x, double y) {
  if (isDiverged(x) || isDiverged(y)) return "diverged";
  return "(" + formatPlaygroundNumber(x) + ", " + formatPlaygroundNumber(y) + ")";
}

bool anyDiverged(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double value) { return isDiverged(value); });
}

// `text` wrapped to the available width at spaces only, as one item (ImGui's own wrapping also breaks after '.' and
// ',', which splits numbers such as "(1.25, 0.00)"). A word wider than the line stays whole and is clipped.
void textWrappedAtSpaces(const std::string& text) {
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  ImGui::BeginGroup();
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
      ImGui::TextUnformatted(line.c_str());
      line = word;
    } else {
      line = longer;
    }
    at = end + 1;
  }
  if (!line.empty()) ImGui::TextUnformatted(line.c_str());
  ImGui::EndGroup();
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

}  // namespace

bool isDiverged(double value) {
  return !std::isfinite(value) || std::abs(value) > kDivergedAbove;
}

std::string formatPlaygroundNumber(double value) {
  if (isDiverged(value)) return "diverged";
  if (value == 0.0) return "0";  // never "-0"
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

bool PlaygroundSettings::operator==(const PlaygroundSettings& other) const {
  return lr == other.lr && rates == other.rates && steps == other.steps && alpha == other.alpha && beta == other.beta &&
         weight_decay == other.weight_decay && init_scale == other.init_scale;
}

GeometryPlayground::GeometryPlayground(const PlaygroundBackend& backend, QWidget* parent)
    : QOpenGLWidget(parent), backend_(backend) {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  setFormat(format);
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(300, 210);  // docked under two other tab groups in a 1024x700 window; the panels adapt
  shown_.assign(backend_.methods().size(), true);
  settings_ = backend_.defaultSettings();
  start_ = {settings_.init_scale, settings_.init_scale};
  frameTimer_.setSingleShot(true);
  frameTimer_.setInterval(8);  // up to ~120 frames/s while something changes (see requestFrames)
  connect(&frameTimer_, &QTimer::timeout, this, [this] { update(); });
  clock_.start();
}

GeometryPlayground::~GeometryPlayground() {
  if (imgui_.ready() && imgui_.renderer() == ImGuiQtBridge::Renderer::openGL) {
    makeCurrent();
    imgui_.shutdown();
    doneCurrent();
  }
  imgui_.shutdown();  // a layout-only context: no OpenGL involved
}

void GeometryPlayground::setToy(Toy toy) {
  toy_ = toy;
  selectToyTab_ = true;
  requestFrames();
}

void GeometryPlayground::setStart(double x, double y) {
  start_ = {x, y};
  requestFrames();
}

void GeometryPlayground::requestFrames(int count) {
  if (!isVisible()) return;  // hidden: nothing is drawn, no timer runs
  pendingFrames_ = std::max(pendingFrames_, count);
  // At most one frame per 8 ms, but no wait at all when the last frame is older than that.
  if (!frameTimer_.isActive()) {
    const qint64 sinceLastFrame = clock_.elapsed() - lastFrameMs_;
    frameTimer_.start(static_cast<int>(std::clamp<qint64>(8 - sinceLastFrame, 0, 8)));
  }
}

void GeometryPlayground::showEvent(QShowEvent* event) {
  QOpenGLWidget::showEvent(event);
  requestFrames();
}

void GeometryPlayground::hideEvent(QHideEvent* event) {
  frameTimer_.stop();
  pendingFrames_ = 0;
  QOpenGLWidget::hideEvent(event);
}

void GeometryPlayground::initializeGL() {
  imgui_.shutdown();  // a layout-only context (layOutFramesWithoutOpenGL) gives way to the renderer
  imgui_.init(font(), static_cast<float>(devicePixelRatioF()));
  applyStyle();
  selectToyTab_ = true;
}

void GeometryPlayground::applyStyle() {
  ImGui::StyleColorsLight();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0;
  style.ChildRounding = 0;
  style.FrameRounding = 3;
  style.WindowPadding = ImVec2(6, 6);
}

void GeometryPlayground::layOutFramesWithoutOpenGL(int count) {
  if (!imgui_.ready()) {
    imgui_.init(font(), static_cast<float>(devicePixelRatioF()), ImGuiQtBridge::Renderer::none);
    applyStyle();
  }
  if (imgui_.renderer() != ImGuiQtBridge::Renderer::none) return;  // paintGL draws them
  for (int i = 0; i < count; ++i) {
    imgui_.newFrame(width(), height(), static_cast<float>(devicePixelRatioF()), 1.0f / 60.0f);
    buildFrame();
    imgui_.render();
    ++frames_;
  }
}

void GeometryPlayground::resizeGL(int, int) {
  requestFrames();
}

void GeometryPlayground::mouseMoveEvent(QMouseEvent* event) {
  if (imgui_.mouseMove(*event)) requestFrames();
}

void GeometryPlayground::mousePressEvent(QMouseEvent* event) {
  if (imgui_.mouseButton(*event, true)) requestFrames();
}
void GeometryPlayground::mouseReleaseEvent(QMouseEvent* event) {
  if (imgui_.mouseButton(*event, false)) requestFrames();
}

void GeometryPlayground::wheelEvent(QWheelEvent* event) {
  if (imgui_.wheel(*event)) requestFrames();
}

void GeometryPlayground::keyPressEvent(QKeyEvent* event) {
  if (imgui_.key(*event, true)) requestFrames();
}
void GeometryPlayground::keyReleaseEvent(QKeyEvent* event) {
  if (imgui_.key(*event, false)) requestFrames();
}

void GeometryPlayground::paintGL() {
  if (!imgui_.ready()) return;
  QElapsedTimer paintClock;
  paintClock.start();
  const float ratio = static_cast<float>(devicePixelRatioF());
  const double now = static_cast<double>(clock_.nsecsElapsed()) / 1e9;
  imgui_.newFrame(width(), height(), ratio, static_cast<float>(std::max(1e-4, now - lastPaintSeconds_)));
  lastPaintSeconds_ = now;
  buildFrame();
  auto* functions = context()->functions();
  functions->glViewport(0, 0, static_cast<int>(width() * ratio), static_cast<int>(height() * ratio));
  // White from the clear (a memset), not from filled rectangles: software OpenGL pays per covered pixel, and a
  // full-window background plus the canvas fill made every frame two passes over the whole window.
  functions->glClearColor(1.0f, 1.0f, 1.0f, 1.0f);
  functions->glClear(GL_COLOR_BUFFER_BIT);
  imgui_.render();
  ++frames_;
  paintNs_ += static_cast<double>(paintClock.nsecsElapsed());
  lastFrameMs_ = clock_.elapsed();
  if (--pendingFrames_ > 0 && isVisible()) frameTimer_.start(8);
}

void GeometryPlayground::simulateIfChanged() {
  if (settings_ == simulatedSettings_ && start_ == simulatedStart_ && toy_ == simulatedToy_ && !paths_.empty()) return;
  simulatedSettings_ = settings_;
  simulatedStart_ = start_;
  simulatedToy_ = toy_;
  const size_t methods = backend_.methods().size();
  if (toy_ == Toy::plane) {
    paths_.assign(methods, {});
    for (size_t m = 0; m < methods; ++m) paths_[m] = backend_.path2d(static_cast<int>(m), settings_, a_, b_, start_);
  } else {
    truth_ = backend_.sparseTruth();
    sparse_.assign(methods, {});
    for (size_t m = 0; m < methods; ++m) sparse_[m] = backend_.sparseRun(static_cast<int>(m), settings_);
    paths_.assign(methods, {{}});  // marks the cache as filled
  }
  ++simulations_;
}

// Settings beside the view when both fit at a readable size, else tabs: the toys and the settings.
void GeometryPlayground::buildFrame() {
  record_ = {};
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(display);
  ImGui::Begin("playground", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse |
                   ImGuiWindowFlags_NoSavedSettings);
  const float controls = controlsWidth();
  const bool wide =
      display.x >= 2 * style.WindowPadding.x + controls + style.ItemSpacing.x + kMinViewEms * ImGui::GetFontSize();
  if (wide != lastWide_) selectToyTab_ = true;  // the other layout's tab bar is a new one: show the current toy
  lastWide_ = wide;
  record_.wide = wide;
  if (wide) {
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(244, 244, 244, 255));
    ImGui::BeginChild("controls", ImVec2(controls, 0), true);
    drawControls();
    ImGui::EndChild();
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::BeginChild("view", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    drawToyTabs(false);
    ImGui::EndChild();
  } else {
    drawToyTabs(true);
  }
  ImGui::End();
}

// Wide enough for the settings' widest line (an optimizer's check box behind its colour), and a scroll bar.
float GeometryPlayground::controlsWidth() const {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float em = ImGui::GetFontSize();
  float widest = textWidth("alpha (HAM, HORST)");
  for (const auto& name : backend_.methods()) {
    widest = std::max(widest, std::round(em * 0.8f) + style.ItemSpacing.x + ImGui::GetFrameHeight() +
                                  style.ItemInnerSpacing.x + textWidth(name));
  }
  return std::ceil(std::max(14.0f * em, widest + 2 * style.WindowPadding.x + style.ScrollbarSize + 2));
}

// The toys as tabs (and, when narrow, the settings as a third). A toy chosen by setToy or kept across a layout change
// is selected through ImGuiTabItemFlags_SetSelected, which takes effect on the next frame: until then the tab still
// open shows nothing rather than a toy whose simulation is not the cached one.
void GeometryPlayground::drawToyTabs(bool withSettings) {
  if (!ImGui::BeginTabBar("toys", ImGuiTabBarFlags_FittingPolicyScroll)) return;
  struct Tab {
    Toy toy;
    const char* wideLabel;
    const char* narrowLabel;
  };
  const Tab tabs[] = {{Toy::plane, "2-D: one equation", "2-D"}, {Toy::sparse, "Sparse recovery", "Sparse"}};
  for (const auto& tab : tabs) {
    const char* label = withSettings ? tab.narrowLabel : tab.wideLabel;
    const bool select = selectToyTab_ && tab.toy == toy_;
    const bool open = ImGui::BeginTabItem(label, nullptr, select ? ImGuiTabItemFlags_SetSelected : 0);
    recordItem(label);
    if (!open) continue;
    if (!selectToyTab_ || tab.toy == toy_) {
      selectToyTab_ = false;
      toy_ = tab.toy;
      simulateIfChanged();
      if (toy_ == Toy::plane) {
        drawPlane();
      } else {
        drawSparse();
      }
    }
    ImGui::EndTabItem();
  }
  if (withSettings) {
    const bool open = ImGui::BeginTabItem("Settings");
    recordItem("Settings");
    if (open) {
      ImGui::BeginChild("controls", ImVec2(0, 0), false);
      drawControls();
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
  }
  ImGui::EndTabBar();
}

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

// Tall enough for a few wrapped lines above the toy and still a toy worth looking at.
bool GeometryPlayground::captionInView() const {
  return ImGui::GetIO().DisplaySize.y >= 30.0f * ImGui::GetFontSize();
}

void GeometryPlayground::drawCaption() {
  if (!captionInView()) return;
  const std::string caption =
      (toy_ == Toy::plane ? backend_.planeDescription() : backend_.sparseDescription()).toStdString();
  if (caption.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, toVec4(kTextColour));
  textWrappedAtSpaces(caption);
  ImGui::PopStyleColor();
  recordItem(caption);
}

QPointF GeometryPlayground::planeToWidget(double x, double y) const {
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  const float cx = canvasX_ + canvasW_ * 0.5f, cy = canvasY_ + canvasH_ * 0.5f;
  return {cx + static_cast<float>(x - 0.5) * pixels, cy - static_cast<float>(y - 0.5) * pixels};
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
  struct Entry {
    int shape;  // -1: text only
    ImU32 colour;
    std::string text;
    ImVec2 at;
  };
  std::vector<Entry> header = {{-1, kMutedColour, "balls:", {}},
                               {0, kBallL2, "L2", {}},
                               {1, kBallL1, "L1", {}},
                               {2, kBallLinf, "Linf", {}},
                               {-1,
                                kTextColour,
                                "line: " + formatPlaygroundNumber(a_[0]) + " x + " + formatPlaygroundNumber(a_[1]) +
                                    " y = " + formatPlaygroundNumber(b_),
                                {}}};
  float x = 0, y = 0;
  for (auto& entry : header) {
    const float width = (entry.shape >= 0 ? icon + style.ItemInnerSpacing.x : 0) + textWidth(entry.text);
    if (x > 0 && x + width > available.x) {
      x = 0;
      y += line;
    }
    entry.at = offset(origin, x, y);
    x += width + (entry.shape == -1 && entry.text == "balls:" ? style.ItemInnerSpacing.x : em);
  }
  const float headerHeight = y + line;
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
  ImGui::SetCursorScreenPos(canvasMin);
  ImGui::InvisibleButton("plane", ImVec2(canvasW_, canvasH_));
  const bool hovered = ImGui::IsItemHovered();
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  // Far-away points (a diverged path) are pinned where float arithmetic stays exact enough to draw a line off-canvas.
  auto toScreen = [&](double px, double py) {
    const double limit = 1e3 * viewScale_;
    const QPointF point = planeToWidget(std::clamp(px, -limit, limit), std::clamp(py, -limit, limit));
    return ImVec2(static_cast<float>(point.x()), static_cast<float>(point.y()));
  };
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
  // The start point, labelled on the first side where the label stays inside the canvas and off the readout.
  const ImVec2 startAt = toScreen(start_[0], start_[1]);
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
  draw->PopClipRect();

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

// The sparse toy: one bar chart per shown optimizer (its end point over the grey truth), as many side by side as
// their titles allow, then the norms table; the whole scrolls when it does not fit.
void GeometryPlayground::drawSparse() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float em = ImGui::GetFontSize();
  ImGui::BeginChild("sparse", ImVec2(0, 0), false);
  drawCaption();
  const auto names = backend_.methods();
  std::vector<size_t> shown;
  for (size_t m = 0; m < names.size() && m < sparse_.size(); ++m) {
    if (shown_[m]) shown.push_back(m);
  }
  auto titleOf = [&](size_t m) { return anyDiverged(sparse_[m].coefficients) ? names[m] + " (diverged)" : names[m]; };
  const float swatch = std::round(em * 0.8f);
  float widestTitle = 0;
  for (const size_t m : shown)
    widestTitle = std::max(widestTitle, swatch + style.ItemInnerSpacing.x + textWidth(titleOf(m)));
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const float gap = std::round(em * 0.6f);
  const float chartMinW = std::max(9 * em, widestTitle + em);
  const int columns = std::clamp(static_cast<int>((available.x + gap) / (chartMinW + gap)), 1, 4);
  const int rows = (static_cast<int>(shown.size()) + columns - 1) / columns;
  const auto tableRows = sparseTableRows();
  const float tableRowH = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const bool tableScrolls = sparseTableWidth(tableRows) > available.x;  // then a scroll bar below the rows
  const float tableH =
      static_cast<float>(tableRows.size() + 1) * tableRowH + (tableScrolls ? style.ScrollbarSize : 0) + 4;
  const float titleH = ImGui::GetTextLineHeightWithSpacing();
  const float chartW = (available.x - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns);
  const float fitH =
      rows > 0 ? (available.y - tableH - style.ItemSpacing.y) / static_cast<float>(rows) - titleH - gap : 0.0f;
  const float boxH = std::clamp(fitH, 4 * em, 14 * em);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(available.x, static_cast<float>(rows) * (titleH + boxH + gap)));

  double largest = 0;
  for (double t : truth_) largest = std::max(largest, std::abs(t));
  for (const auto& outcome : sparse_) {
    for (double c : outcome.coefficients) {
      if (std::isfinite(c)) largest = std::max(largest, std::min(std::abs(c), 3.0 * largest + 1e-9));
    }
  }
  largest = std::max(largest, 1e-9);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (size_t slot = 0; slot < shown.size(); ++slot) {
    const size_t m = shown[slot];
    const float x0 = origin.x + static_cast<float>(static_cast<int>(slot) % columns) * (chartW + gap);
    const float y0 = origin.y + static_cast<float>(static_cast<int>(slot) / columns) * (titleH + boxH + gap);
    // The title above its chart, never over the bars or the next chart.
    draw->PushClipRect(ImVec2(x0, y0), ImVec2(x0 + chartW, y0 + titleH), true);
    draw->AddRectFilled(ImVec2(x0, y0 + (em - swatch) * 0.5f), ImVec2(x0 + swatch, y0 + (em + swatch) * 0.5f),
                        methodColour(m));
    drawText(ImVec2(x0 + swatch + style.ItemInnerSpacing.x, y0), kTextColour, titleOf(m));
    draw->PopClipRect();
    const float top = y0 + titleH, w = chartW, h = boxH;
    draw->AddRect(ImVec2(x0, top), ImVec2(x0 + w, top + h), IM_COL32(200, 200, 200, 255));
    const float mid = top + h * 0.5f;
    const float scale = (h * 0.5f - 4) / static_cast<float>(largest);
    draw->AddLine(ImVec2(x0, mid), ImVec2(x0 + w, mid), IM_COL32(160, 160, 160, 255));
    const auto& coefficients = sparse_[m].coefficients;
    const float bar = w / static_cast<float>(std::max<size_t>(1, truth_.size()));
    for (size_t i = 0; i < truth_.size(); ++i) {
      const float x = x0 + (static_cast<float>(i) + 0.5f) * bar;
      if (truth_[i] != 0.0) {  // the truth: a grey bar behind
        draw->AddRectFilled(ImVec2(x - bar * 0.45f, mid),
                            ImVec2(x + bar * 0.45f, mid - static_cast<float>(truth_[i]) * scale),
                            IM_COL32(190, 190, 190, 255));
      }
      if (i < coefficients.size() && std::isfinite(coefficients[i])) {
        const double value = std::clamp(coefficients[i], -1.05 * largest, 1.05 * largest);
        draw->AddLine(ImVec2(x, mid), ImVec2(x, mid - static_cast<float>(value) * scale), methodColour(m),
                      std::max(1.5f, bar * 0.5f));
      }
    }
  }
  // The table's rows below the child's view are scrolled away by the child, not cut by the table.
  ancestorScrollsY_ = ImGui::GetScrollMaxY() > 0;
  sparseTable(tableH, tableRows);
  ancestorScrollsY_ = false;
  ImGui::EndChild();
}

// The norms, support and errors of each end point beside the truth's. Columns fit their widest cell and the table
// scrolls sideways (the optimizer column stays) rather than squeeze them.
// The table's text: the truth's row, then each shown optimizer's.
std::vector<GeometryPlayground::TableRow> GeometryPlayground::sparseTableRows() const {
  auto rowOf = [](const std::string& name, unsigned colour, const SparseOutcome& outcome, bool diverged) {
    TableRow row;
    row.colour = colour;
    row.cells = {name,
                 formatPlaygroundNumber(outcome.l1),
                 formatPlaygroundNumber(outcome.l2),
                 formatPlaygroundNumber(outcome.linf),
                 diverged ? "-" : std::to_string(outcome.support_found),
                 diverged ? "-" : std::to_string(outcome.support_correct),
                 formatPlaygroundNumber(outcome.error),
                 formatPlaygroundNumber(outcome.loss)};
    return row;
  };
  SparseOutcome truth;
  int nonzeros = 0;
  for (double t : truth_) {
    truth.l1 += std::abs(t);
    truth.l2 += t * t;
    truth.linf = std::max(truth.linf, std::abs(t));
    nonzeros += t != 0.0 ? 1 : 0;
  }
  truth.l2 = std::sqrt(truth.l2);
  truth.support_found = truth.support_correct = nonzeros;
  std::vector<TableRow> rows = {rowOf("truth", IM_COL32(190, 190, 190, 255), truth, false)};  // the charts' grey
  const auto names = backend_.methods();
  for (size_t m = 0; m < names.size() && m < sparse_.size(); ++m) {
    if (shown_[m]) rows.push_back(rowOf(names[m], methodColour(m), sparse_[m], anyDiverged(sparse_[m].coefficients)));
  }
  return rows;
}

// The width the table takes with every column fitted to its widest cell (a little over, never under).
float GeometryPlayground::sparseTableWidth(const std::vector<TableRow>& rows) const {
  const ImGuiStyle& style = ImGui::GetStyle();
  float total = 1;
  for (size_t column = 0; column < kTableHeaders.size(); ++column) {
    float widest = textWidth(kTableHeaders[column]);
    for (const auto& row : rows) {
      const float swatch = column == 0 ? std::round(ImGui::GetFontSize() * 0.8f) + style.ItemInnerSpacing.x : 0;
      widest = std::max(widest, swatch + textWidth(row.cells[column]));
    }
    total += widest + 2 * style.CellPadding.x + 4;
  }
  return total;
}

// The norms, support and errors of each end point beside the truth's. Columns fit their widest cell and the table
// scrolls sideways (the optimizer column stays) rather than squeeze them.
void GeometryPlayground::sparseTable(float height, const std::vector<TableRow>& rows) {
  static const char* const kTips[] = {"the optimizer (its colour in the charts)",
                                      "L1 norm of the end point: small for sparse answers",
                                      "L2 norm of the end point: gradient descent's implicit bias minimises it",
                                      "largest magnitude of the end point",
                                      "support found: entries with |x_i| > 0.1 max |x|",
                                      "of the support found, entries the truth has too",
                                      "L2 distance from the truth",
                                      "the least-squares loss at the end point"};
  const int columns = static_cast<int>(kTableHeaders.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("norms", columns, flags, ImVec2(0, height))) return;
  currentTable_ = "norms";
  ImGui::TableSetupScrollFreeze(1, 0);
  for (const char* header : kTableHeaders) ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int column = 0; column < columns; ++column) {
    ImGui::TableSetColumnIndex(column);
    const char* header = kTableHeaders[static_cast<size_t>(column)];
    const float room = ImGui::GetContentRegionAvail().x;
    const ImVec2 label = ImGui::GetCursorScreenPos();  // where TableHeader draws its label
    ImGui::TableHeader(header);
    const ImVec2 size = ImGui::CalcTextSize(header);
    record_.cells.push_back({currentTable_, header, column, size.x, room});
    recordText(header, label, offset(label, size.x, size.y));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kTips[column]);
  }
  for (const auto& row : rows) {
    ImGui::TableNextRow();
    currentColumn_ = 0;
    ImGui::PushID(row.cells[0].c_str());
    tableCell(row.cells[0], row.colour, false);
    ImGui::PopID();
    for (size_t column = 1; column < row.cells.size(); ++column) tableCell(row.cells[column], 0, true);
  }
  ImGui::EndTable();
}

// One cell of the current table row, numbers aligned right, recorded with its column's width; a name follows a
// swatch of its colour (dark text reads better than pale colours on the striped rows).
void GeometryPlayground::tableCell(const std::string& text, unsigned colour, bool alignRight) {
  ImGui::TableNextColumn();
  float room = ImGui::GetContentRegionAvail().x;
  if (colour != 0) {
    const float swatch = std::round(ImGui::GetFontSize() * 0.8f);
    ImGui::ColorButton("##c", toVec4(colour), ImGuiColorEditFlags_NoTooltip, ImVec2(swatch, swatch));
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    room -= swatch + ImGui::GetStyle().ItemInnerSpacing.x;
  }
  const float width = textWidth(text);
  if (alignRight && room > width) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + room - width);
  ImGui::TextUnformatted(text.c_str());
  record_.cells.push_back({currentTable_, text, currentColumn_++, width, room});
  recordItem(text);
}

void GeometryPlayground::recordItem(const std::string& text) {
  recordText(text, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

void GeometryPlayground::recordText(const std::string& text, ImVec2 min, ImVec2 max) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 clipMin = draw->GetClipRectMin(), clipMax = draw->GetClipRectMax();
  PlaygroundFrameRecord::Text entry;
  entry.text = text;
  entry.left = std::max(min.x, clipMin.x);
  entry.top = std::max(min.y, clipMin.y);
  entry.right = std::min(max.x, clipMax.x);
  entry.bottom = std::min(max.y, clipMax.y);
  const float slack = 0.5f;
  const bool clippedX = min.x < clipMin.x - slack || max.x > clipMax.x + slack;
  const bool clippedY = min.y < clipMin.y - slack || max.y > clipMax.y + slack;
  // Clipped where a scroll bar brings it into view is scrolled, not cut.
  entry.cut =
      (clippedX && ImGui::GetScrollMaxX() <= 0) || (clippedY && ImGui::GetScrollMaxY() <= 0 && !ancestorScrollsY_);
  if (entry.right <= entry.left || entry.bottom <= entry.top) {
    if (!entry.cut) return;  // scrolled out of view
    entry.right = entry.left;
    entry.bottom = entry.top;
  }
  record_.texts.push_back(entry);
}

void GeometryPlayground::drawText(ImVec2 position, unsigned colour, const std::string& text) {
  ImGui::GetWindowDrawList()->AddText(position, colour, text.c_str());
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  recordText(text, position, offset(position, size.x, size.y));
}

bool GeometryPlayground::exportPng(const QString& path) {
  const QImage image = grabFramebuffer();
  return !image.isNull() && image.save(path);
}

}  // namespace descentlab::widgets
