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

}  // namespace

bool PlaygroundSettings::operator==(const PlaygroundSettings& other) const {
  return lr == other.lr && steps == other.steps && alpha == other.alpha && beta == other.beta &&
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
  setMinimumSize(300, 220);  // docked in a laptop-size window; the panels adapt (issue 15 point 5)
  shown_.assign(backend_.methods().size(), true);
  frameTimer_.setSingleShot(true);
  frameTimer_.setInterval(8);  // up to ~120 frames/s while something changes (see requestFrames)
  connect(&frameTimer_, &QTimer::timeout, this, [this] { update(); });
  clock_.start();
}

GeometryPlayground::~GeometryPlayground() {
  if (imgui_.ready()) {
    makeCurrent();
    imgui_.shutdown();
    doneCurrent();
  }
}

void GeometryPlayground::setToy(Toy toy) {
  toy_ = toy;
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
  imgui_.init(13.0f, static_cast<float>(devicePixelRatioF()));
  ImGui::StyleColorsLight();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0;
  style.FrameRounding = 3;
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

void GeometryPlayground::buildFrame() {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
  ImGui::Begin("playground", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoBackground);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(244, 244, 244, 255));
  ImGui::BeginChild("controls", ImVec2(250, 0), true);
  drawControls();
  ImGui::EndChild();
  ImGui::PopStyleColor();
  ImGui::SameLine();
  ImGui::BeginChild("view", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  simulateIfChanged();
  if (toy_ == Toy::plane) {
    drawPlane();
  } else {
    drawSparse();
  }
  ImGui::EndChild();
  ImGui::End();
}

void GeometryPlayground::drawControls() {
  int toy = toy_ == Toy::plane ? 0 : 1;
  ImGui::TextUnformatted("Toy");
  if (ImGui::RadioButton("2-D: one equation", &toy, 0)) toy_ = Toy::plane;
  if (ImGui::RadioButton("sparse recovery", &toy, 1)) toy_ = Toy::sparse;
  ImGui::Separator();
  ImGui::PushItemWidth(-FLT_MIN);
  ImGui::TextUnformatted("learning rate");
  ImGui::SliderFloat("##lr", &settings_.lr, 1e-4f, 1.0f, "%.4f", ImGuiSliderFlags_Logarithmic);
  ImGui::TextUnformatted("steps");
  ImGui::SliderInt("##steps", &settings_.steps, 1, 5000, "%d", ImGuiSliderFlags_Logarithmic);
  ImGui::TextUnformatted("alpha (HAM, HORST)");
  ImGui::SliderFloat("##alpha", &settings_.alpha, 0.0f, 500.0f, "%.1f", ImGuiSliderFlags_Logarithmic);
  ImGui::TextUnformatted("beta (HAM, HORST)");
  ImGui::SliderFloat("##beta", &settings_.beta, 0.0f, 0.1f, "%.4f");
  ImGui::TextUnformatted("weight decay");
  ImGui::SliderFloat("##wd", &settings_.weight_decay, 0.0f, 1.0f, "%.3f");
  ImGui::TextUnformatted("initial scale");
  ImGui::SliderFloat("##scale", &settings_.init_scale, 1e-6f, 1.0f, "%.6f", ImGuiSliderFlags_Logarithmic);
  ImGui::PopItemWidth();
  ImGui::Separator();
  ImGui::TextUnformatted("Optimizers");
  const auto names = backend_.methods();
  for (size_t m = 0; m < names.size(); ++m) {
    ImGui::PushID(static_cast<int>(m));
    bool shown = shown_[m];
    ImGui::ColorButton("##c", toVec4(methodColour(m)), ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine();
    if (ImGui::Checkbox(names[m].c_str(), &shown)) shown_[m] = shown;
    ImGui::PopID();
  }
  ImGui::Separator();
  if (toy_ == Toy::plane) {
    ImGui::TextWrapped("Drag in the plane to move the start point. Wheel: zoom.");
  } else {
    ImGui::TextWrapped("%s", backend_.sparseDescription().toUtf8().constData());
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
}

QPointF GeometryPlayground::planeToWidget(double x, double y) const {
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  const float cx = canvasX_ + canvasW_ * 0.5f, cy = canvasY_ + canvasH_ * 0.5f;
  return {cx + static_cast<float>(x - 0.5) * pixels, cy - static_cast<float>(y - 0.5) * pixels};
}

void GeometryPlayground::drawPlane() {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::GetContentRegionAvail();
  canvasX_ = origin.x;
  canvasY_ = origin.y;
  canvasW_ = std::max(size.x, 50.0f);
  canvasH_ = std::max(size.y - 60.0f, 50.0f);
  ImGui::InvisibleButton("plane", ImVec2(canvasW_, canvasH_));
  const bool hovered = ImGui::IsItemHovered();
  const float pixels = std::min(canvasW_, canvasH_) / static_cast<float>(2.0 * viewScale_);
  auto toScreen = [&](double x, double y) {
    const QPointF point = planeToWidget(x, y);
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

  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->PushClipRect(origin, ImVec2(origin.x + canvasW_, origin.y + canvasH_), true);
  draw->AddRect(origin, ImVec2(origin.x + canvasW_, origin.y + canvasH_), IM_COL32(220, 220, 220, 255));
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
  // The balls in greys, so they never read as an optimizer's colour.
  const ImU32 ballL2 = IM_COL32(110, 110, 110, 200), ballL1 = IM_COL32(40, 40, 40, 220),
              ballLinf = IM_COL32(170, 170, 170, 220);
  draw->AddCircle(toScreen(0, 0), static_cast<float>(r2 * pixels), ballL2, 96, 1.5f);
  const ImVec2 diamond[] = {toScreen(r1, 0), toScreen(0, r1), toScreen(-r1, 0), toScreen(0, -r1)};
  draw->AddPolyline(diamond, 4, ballL1, ImDrawFlags_Closed, 2.0f);
  draw->AddRect(toScreen(-rinf, rinf), toScreen(rinf, -rinf), ballLinf, 0, 0, 1.5f);
  // Trajectories and end points.
  const auto names = backend_.methods();
  for (size_t m = 0; m < paths_.size(); ++m) {
    if (!shown_[m] || paths_[m].empty()) continue;
    std::vector<ImVec2> points;
    points.reserve(paths_[m].size());
    for (const auto& p : paths_[m]) points.push_back(toScreen(p[0], p[1]));
    draw->AddPolyline(points.data(), static_cast<int>(points.size()), methodColour(m), ImDrawFlags_None, 2.0f);
    draw->AddCircleFilled(points.back(), 5.0f, methodColour(m));
    draw->AddCircle(points.back(), 5.5f, IM_COL32(255, 255, 255, 255), 12, 1.0f);
  }
  draw->AddCircleFilled(toScreen(start_[0], start_[1]), 6.0f, IM_COL32(0, 0, 0, 255));
  draw->AddText(ImVec2(toScreen(start_[0], start_[1]).x + 8, toScreen(start_[0], start_[1]).y - 8),
                IM_COL32(0, 0, 0, 255), "start");
  // Legend of the balls.
  const ImVec2 legend(origin.x + 8, origin.y + 6);
  draw->AddText(legend, ballL2, "circle: L2 ball");
  draw->AddText(ImVec2(legend.x, legend.y + 16), ballL1, "diamond: L1 ball");
  draw->AddText(ImVec2(legend.x, legend.y + 32), ballLinf, "square: Linf ball");
  char line[96];
  std::snprintf(line, sizeof line, "%.2f x + %.2f y = %.2f", a_[0], a_[1], b_);
  draw->AddText(ImVec2(legend.x, legend.y + 52), IM_COL32(20, 20, 20, 255), line);
  draw->PopClipRect();
  // End points in numbers.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + canvasH_ + 4));
  int column = 0;
  for (size_t m = 0; m < paths_.size(); ++m) {
    if (!shown_[m] || paths_[m].empty()) continue;
    const int perRow = std::max(1, static_cast<int>(canvasW_ / 270.0f));  // as many as fit the panel's width
    if (column++ % perRow != 0) ImGui::SameLine(0, 14);
    const auto& end = paths_[m].back();
    ImGui::TextColored(toVec4(methodColour(m)), "%s (%.2f, %.2f)", names[m].c_str(), end[0], end[1]);
  }
  if (hovered) {
    const auto p = toPlane(ImGui::GetIO().MousePos);
    ImGui::SetCursorScreenPos(ImVec2(origin.x + canvasW_ - 130, origin.y + 6));
    ImGui::Text("(%.3f, %.3f)", p[0], p[1]);
  }
}

void GeometryPlayground::drawSparse() {
  const auto names = backend_.methods();
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const float tableHeight = 30.0f + 22.0f * static_cast<float>(names.size());
  const int columns = 2;
  int shownCount = 0;
  for (size_t m = 0; m < names.size(); ++m) shownCount += shown_[m] ? 1 : 0;
  const int rows = std::max(1, (shownCount + columns - 1) / columns);
  const float chartW = (available.x - 10) / columns;
  const float chartH = std::max(60.0f, (available.y - tableHeight - 10) / static_cast<float>(rows));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  double largest = 0;
  for (double t : truth_) largest = std::max(largest, std::abs(t));
  for (const auto& outcome : sparse_) {
    for (double c : outcome.coefficients) largest = std::max(largest, std::min(std::abs(c), 3.0 * largest + 1e-9));
  }
  largest = std::max(largest, 1e-9);
  int slot = 0;
  for (size_t m = 0; m < names.size(); ++m) {
    if (!shown_[m] || m >= sparse_.size()) continue;
    const float x0 = origin.x + static_cast<float>(slot % columns) * (chartW + 10);
    const float y0 = origin.y + static_cast<float>(slot / columns) * chartH;
    ++slot;
    const float w = chartW, h = chartH - 6;
    draw->AddRect(ImVec2(x0, y0), ImVec2(x0 + w, y0 + h), IM_COL32(200, 200, 200, 255));
    const float mid = y0 + h * 0.5f + 6;
    const float scale = (h * 0.5f - 12) / static_cast<float>(largest);
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
      if (i < coefficients.size()) {
        const double value = std::clamp(coefficients[i], -1.5 * largest, 1.5 * largest);
        draw->AddLine(ImVec2(x, mid), ImVec2(x, mid - static_cast<float>(value) * scale), methodColour(m),
                      std::max(1.5f, bar * 0.5f));
      }
    }
    draw->AddText(ImVec2(x0 + 4, y0 + 2), methodColour(m), names[m].c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + static_cast<float>(rows) * chartH + 4));
  if (ImGui::BeginTable("norms", 8,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* header : {"optimizer", "L1", "L2", "Linf", "support found", "of which true", "error", "loss"}) {
      ImGui::TableSetupColumn(header);
    }
    ImGui::TableHeadersRow();
    double l1 = 0, l2 = 0, linf = 0;
    int nonzeros = 0;
    for (double t : truth_) {
      l1 += std::abs(t);
      l2 += t * t;
      linf = std::max(linf, std::abs(t));
      nonzeros += t != 0.0 ? 1 : 0;
    }
    SparseOutcome truth;
    truth.l1 = l1;
    truth.l2 = std::sqrt(l2);
    truth.linf = linf;
    truth.support_found = truth.support_correct = nonzeros;
    tableRow("truth", IM_COL32(0, 0, 0, 255), truth);
    for (size_t m = 0; m < names.size() && m < sparse_.size(); ++m) {
      if (shown_[m]) tableRow(names[m].c_str(), methodColour(m), sparse_[m]);
    }
    ImGui::EndTable();
  }
}

// One row of the sparse toy's table: the name in its colour, then the norms, support and errors.
void GeometryPlayground::tableRow(const char* name, unsigned colour, const SparseOutcome& outcome) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextColored(toVec4(colour), "%s", name);
  ImGui::TableNextColumn();
  ImGui::Text("%.3f", outcome.l1);
  ImGui::TableNextColumn();
  ImGui::Text("%.3f", outcome.l2);
  ImGui::TableNextColumn();
  ImGui::Text("%.3f", outcome.linf);
  ImGui::TableNextColumn();
  ImGui::Text("%d", outcome.support_found);
  ImGui::TableNextColumn();
  ImGui::Text("%d", outcome.support_correct);
  ImGui::TableNextColumn();
  ImGui::Text("%.3g", outcome.error);
  ImGui::TableNextColumn();
  ImGui::Text("%.2g", outcome.loss);
}

bool GeometryPlayground::exportPng(const QString& path) {
  const QImage image = grabFramebuffer();
  return !image.isNull() && image.save(path);
}

}  // namespace descentlab::widgets
