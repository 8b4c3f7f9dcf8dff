// The geometry playground's widget: construction, Qt's events handed to ImGui, the frame schedule and paintGL, the
// cached simulations, the frame's layout (settings beside the toys or as a tab), the toys' caption, and the record
// of where each frame drew its text. The settings are in geometry_playground_settings.cpp, the toys in
// geometry_playground_plane.cpp (2-D) and geometry_playground_sparse.cpp (sparse recovery).
#include "widgets/geometry_playground.h"

#include <imgui.h>
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

#include "widgets/playground_drawing.h"

namespace descentlab::widgets {
namespace {

// The view needs this many font heights of width beside the settings, else settings and toys become tabs.
constexpr float kMinViewEms = 24.0f;

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
