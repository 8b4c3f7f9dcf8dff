#pragma once
// The optimizer-geometry playground (SCIENCE.md §3): Dear ImGui in a QOpenGLWidget, with two toys re-simulated
// whenever a slider moves. The simulations come from a PlaygroundBackend (the app implements it with
// core/geometry, the double-precision versions of core/optim's rules), so this widget holds no optimizer math.
//
// Redraws are driven by events only: a mouse, wheel or key event (or a slider's change) schedules a few frames on an
// 8 ms timer; with nothing happening, or while the panel is hidden, no frame is drawn and no timer runs.
//
// The layout follows the widget's size (docked at 300x220 up to a full screen): wide, the settings sit beside the
// toy's view; narrow, settings and toys are tabs. Numbers show 4 significant digits or "diverged"; lists and tables
// scroll rather than clip, and no text is drawn over another (each frame records where its text went, for tests).

#include <QElapsedTimer>
#include <QOpenGLWidget>
#include <QString>
#include <QTimer>

#include <array>
#include <string>
#include <vector>

#include "widgets/imgui_qt_bridge.h"

struct ImVec2;
struct ImDrawList;

namespace descentlab::widgets {

// Above this magnitude a playground number reads "diverged". The toys' answers are of order one (the sparse truth's
// entries, points of the 2-D line within the ±100 plane the view can show); a run that leaves 1e6 has blown up (a
// learning rate beyond the stability limit grows geometrically and passes 1e6 within a few dozen steps), and its
// digits mean nothing.
inline constexpr double kDivergedAbove = 1e6;
// True for a value that is not finite or whose magnitude exceeds kDivergedAbove.
bool isDiverged(double value);
// A playground number: "%.4g" (4 significant digits, exponent when very small), or "diverged" (see isDiverged).
std::string formatPlaygroundNumber(double value);

// Where the last frame drew text, in widget pixels, for tests: nothing overlaps, nothing is cut off.
struct PlaygroundFrameRecord {
  struct Text {
    std::string text;
    float left = 0, top = 0, right = 0, bottom = 0;  // the visible part
    bool cut = false;                                // partly hidden by a clip that no scroll bar can move
  };
  // One table cell: the text's width beside its column's.
  struct Cell {
    std::string table, text;
    int column = 0;
    float textWidth = 0, columnWidth = 0;
  };
  std::vector<Text> texts;
  std::vector<Cell> cells;
  bool wide = false;  // settings beside the view (else tabs)
};

// The toys' settings. Each optimizer has its own learning rate (its units differ: gradient and mirror descent step
// by η times the gradient, sign descent and the Adam family by about η per coordinate); `lr` multiplies them all.
// The widget starts from its backend's defaultSettings(); the values below are the app backend's defaults too
// (core/geometry's toy_defaults(), measured: results/tours/implicit-bias.md), and a test checks that they agree.
struct PlaygroundSettings {
  double lr = 1.0;            // a factor on every optimizer's own rate
  std::vector<double> rates;  // each optimizer's own learning rate, in the backend's order (empty: its defaults)
  int steps = 1000;
  double alpha = 1000.0;  // HAM / HORST
  double beta = 20.0;
  double weight_decay = 0.0;
  double init_scale = 1e-4;  // every start coordinate (both toys) and the hyperbolic potential's scale
  bool operator==(const PlaygroundSettings& other) const;
};

struct SparseOutcome {
  std::vector<double> coefficients;
  double l1 = 0, l2 = 0, linf = 0, error = 0;  // error: ‖θ − truth‖₂
  int support_found = 0;                       // indices where |θ| > 0.1·max|θ|
  int support_correct = 0;                     // of those, in the truth's support
  double loss = 0;
};

class PlaygroundBackend {
 public:
  virtual ~PlaygroundBackend() = default;
  virtual std::vector<std::string> methods() const = 0;
  // The settings the widget starts from (its rates, one per method).
  virtual PlaygroundSettings defaultSettings() const { return {}; }
  // The 2-D toy, one equation a·θ = b: the path of `method` from `start`.
  virtual std::vector<std::array<double, 2>> path2d(int method, const PlaygroundSettings& settings,
                                                    std::array<double, 2> a, double b,
                                                    std::array<double, 2> start) const = 0;
  // The sparse-recovery toy (fixed problem): its truth, and each method's end point.
  virtual std::vector<double> sparseTruth() const = 0;
  virtual SparseOutcome sparseRun(int method, const PlaygroundSettings& settings) const = 0;
  // What each toy shows, and what to watch at the defaults (a sentence or two each).
  virtual QString sparseDescription() const = 0;
  virtual QString planeDescription() const { return {}; }
};

class GeometryPlayground : public QOpenGLWidget {
  Q_OBJECT

 public:
  GeometryPlayground(const PlaygroundBackend& backend, QWidget* parent = nullptr);
  ~GeometryPlayground() override;

  enum class Toy { plane, sparse };
  void setToy(Toy toy);
  Toy toy() const { return toy_; }
  PlaygroundSettings& settings() { return settings_; }
  void setStart(double x, double y);
  std::array<double, 2> start() const { return start_; }
  // Frames drawn since construction, and simulations run (both for the benchmark and tests).
  int64_t frames() const { return frames_; }
  int64_t simulations() const { return simulations_; }
  // Milliseconds spent in paintGL (ImGui frame, simulation, OpenGL draw calls), summed, and how many frames.
  double paintMilliseconds() const { return paintNs_ / 1e6; }
  // Maps a point of the 2-D toy's plane to widget coordinates (for scripted drags).
  QPointF planeToWidget(double x, double y) const;
  bool exportPng(const QString& path);
  void requestFrames(int count = 3);
  // What the last frame drew (see PlaygroundFrameRecord).
  const PlaygroundFrameRecord& lastFrame() const { return record_; }
  // Lays out `count` frames at the widget's size without OpenGL (ImGui with no renderer): for tests on platforms
  // that have none. The frames are the ones paintGL would draw; an OpenGL context, once there, takes over.
  void layOutFramesWithoutOpenGL(int count);
  // True when ImGui draws with the widget's font (false: ImGui's built-in font, see ImGuiQtBridge).
  bool usesWidgetFont() const { return imgui_.usesWidgetFont(); }

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void keyReleaseEvent(QKeyEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  void buildFrame();
  void applyStyle();
  float controlsWidth() const;
  void drawToyTabs(bool withSettings);
  void drawControls();
  void slider(const char* label, const char* id, double* value, double min, double max, const char* format, int flags);
  // The current toy's description above it when the panel is tall enough, else at the top of the settings.
  bool captionInView() const;
  void drawCaption();
  void drawPlane();
  ImVec2 planeToScreen(double px, double py) const;
  void drawPlaneScene(ImDrawList* draw);
  void drawStartPoint(ImDrawList* draw, ImVec2 canvasMin, ImVec2 canvasMax, ImVec2 readoutMin, ImVec2 readoutMax);
  // The canvas at `canvasMin`..`canvasMax`: the start point's drag, the wheel's zoom, and all drawn in it.
  void drawPlaneCanvas(ImDrawList* draw, ImVec2 canvasMin, ImVec2 canvasMax);
  void drawEndPoints();
  void drawSparse();
  struct TableRow {
    std::array<std::string, 8> cells;  // kTableHeaders' columns
    unsigned colour = 0;
  };
  static constexpr std::array<const char*, 8> kTableHeaders = {"optimizer", "L1",      "L2",    "Linf",
                                                               "support",   "correct", "error", "loss"};
  std::vector<TableRow> sparseTableRows() const;
  float sparseTableWidth(const std::vector<TableRow>& rows) const;
  void sparseTable(float height, const std::vector<TableRow>& rows);
  // One cell of the table row; `colour` (0: none) draws a swatch before the text.
  void tableCell(const std::string& text, unsigned colour, bool alignRight);
  void simulateIfChanged();
  // Records the text just submitted as an ImGui item (its item rectangle), clipped as the current window clips.
  void recordItem(const std::string& text);
  // Records text drawn at `min`..`max` through the window's draw list, with its current clip rectangle.
  void recordText(const std::string& text, ImVec2 min, ImVec2 max);
  // Draws `text` at `position` through the window's draw list, and records it.
  void drawText(ImVec2 position, unsigned colour, const std::string& text);

  const PlaygroundBackend& backend_;
  ImGuiQtBridge imgui_;
  QTimer frameTimer_;
  QElapsedTimer clock_;
  int pendingFrames_ = 0;
  int64_t frames_ = 0;
  int64_t simulations_ = 0;
  double paintNs_ = 0;
  qint64 lastFrameMs_ = -1000;
  double lastPaintSeconds_ = 0.0;  // for ImGui's DeltaTime
  Toy toy_ = Toy::plane;
  bool selectToyTab_ = true;  // the toy's tab is to be selected (setToy, or a new tab bar after a layout change)
  bool lastWide_ = false;
  PlaygroundFrameRecord record_;
  std::string currentTable_;  // the table whose cells tableCell records
  int currentColumn_ = 0;
  bool ancestorScrollsY_ = false;  // an enclosing child scrolls vertically (see recordText)

  PlaygroundSettings settings_;
  std::vector<bool> shown_;
  std::array<double, 2> a_ = {0.8, 0.3};
  double b_ = 1.0;
  std::array<double, 2> start_ = {1e-4, 1e-4};  // a small init: where the implicit biases show (the initial scale)
  double viewScale_ = 2.2;                      // half the visible width in plane units

  // Cached simulations, recomputed when the settings or the start change.
  PlaygroundSettings simulatedSettings_;
  std::array<double, 2> simulatedStart_ = {1e300, 1e300};
  Toy simulatedToy_ = Toy::sparse;
  std::vector<std::vector<std::array<double, 2>>> paths_;
  std::vector<SparseOutcome> sparse_;
  std::vector<double> truth_;

  // The plane's canvas in widget coordinates (set while drawing).
  float canvasX_ = 0, canvasY_ = 0, canvasW_ = 1, canvasH_ = 1;
};

}  // namespace descentlab::widgets
