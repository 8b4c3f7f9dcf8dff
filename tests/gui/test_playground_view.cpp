// Tests of one view, fed with hand-made runs (see test_views_main.cpp): the geometry playground, readable docked
// (300x210, 420x320) and floating (900x600). Every frame records where its text went; the checks read that record.
//
// Qt's offscreen platform has no OpenGL, so the frames are laid out by ImGui without a renderer
// (layOutFramesWithoutOpenGL: the same frame paintGL draws). Where OpenGL 3.3 is available (the xcb platform under
// Xvfb), the drawn frames are checked too.
#include "app/gui/playground_backend.h"

#include <gtest/gtest.h>

#include "gui_test_support.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFontMetrics>
#include <QImage>
#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "widgets/geometry_playground.h"

namespace descentlab {
namespace {

using widgets::GeometryPlayground;
using widgets::PlaygroundFrameRecord;

const QSize kDockedMinimum(300, 210), kDockedLaptop(420, 320), kFloating(900, 600);

using testing::waitUntil;

bool openGL33Available() {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  QOffscreenSurface surface;
  surface.setFormat(format);
  surface.create();
  QOpenGLContext context;
  context.setFormat(format);
  if (!surface.isValid() || !context.create() || !context.makeCurrent(&surface)) return false;
  const bool enough = context.format().version() >= qMakePair(3, 3);
  context.doneCurrent();
  return enough;
}

std::string describe(const PlaygroundFrameRecord::Text& text) {
  return "\"" + text.text + "\" at (" + std::to_string(text.left) + ", " + std::to_string(text.top) + ")-(" +
         std::to_string(text.right) + ", " + std::to_string(text.bottom) + ")";
}

// What a reader would call unreadable: text cut off, text over text, text outside the widget, a table column
// narrower than one of its cells.
std::vector<std::string> readabilityProblems(const PlaygroundFrameRecord& frame, QSize size) {
  std::vector<std::string> problems;
  if (frame.texts.empty()) problems.push_back("no text recorded");
  const float slack = 0.5f;
  for (size_t i = 0; i < frame.texts.size(); ++i) {
    const auto& a = frame.texts[i];
    if (a.cut) problems.push_back("cut off: " + describe(a));
    if (a.left < -slack || a.top < -slack || a.right > size.width() + slack || a.bottom > size.height() + slack) {
      problems.push_back("outside the widget: " + describe(a));
    }
    for (size_t j = i + 1; j < frame.texts.size(); ++j) {
      const auto& b = frame.texts[j];
      const float overlapX = std::min(a.right, b.right) - std::max(a.left, b.left);
      const float overlapY = std::min(a.bottom, b.bottom) - std::max(a.top, b.top);
      if (overlapX > slack && overlapY > slack) problems.push_back("overlap: " + describe(a) + " and " + describe(b));
    }
  }
  for (const auto& cell : frame.cells) {
    if (cell.textWidth > cell.columnWidth + slack) {
      problems.push_back(cell.table + " column " + std::to_string(cell.column) + " is " +
                         std::to_string(cell.columnWidth) + " px, its cell \"" + cell.text + "\" needs " +
                         std::to_string(cell.textWidth));
    }
  }
  return problems;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& problem : problems) text += "\n  " + problem;
  return text;
}

bool hasText(const PlaygroundFrameRecord& frame, const std::string& text) {
  for (const auto& entry : frame.texts) {
    if (entry.text == text) return true;
  }
  return false;
}

const PlaygroundFrameRecord::Text* findText(const PlaygroundFrameRecord& frame, const std::string& text) {
  for (const auto& entry : frame.texts) {
    if (entry.text == text) return &entry;
  }
  return nullptr;
}

void hover(GeometryPlayground& playground, QPointF at) {
  QMouseEvent move(QEvent::MouseMove, at, playground.mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(&playground, &move);
  playground.layOutFramesWithoutOpenGL(2);
}

// Sends a left click at `at` through Qt's events: the pointer moves there first, then press and release come before
// any frame (as a quick tap or a scripted click does); the click must still register.
void click(GeometryPlayground& playground, QPointF at) {
  hover(playground, at);
  QMouseEvent press(QEvent::MouseButtonPress, at, playground.mapToGlobal(at), Qt::LeftButton, Qt::LeftButton,
                    Qt::NoModifier);
  QApplication::sendEvent(&playground, &press);
  QMouseEvent release(QEvent::MouseButtonRelease, at, playground.mapToGlobal(at), Qt::LeftButton, Qt::NoButton,
                      Qt::NoModifier);
  QApplication::sendEvent(&playground, &release);
  playground.layOutFramesWithoutOpenGL(3);
}

// One notch of the wheel, down, with the pointer at `at`.
void wheelDown(GeometryPlayground& playground, QPointF at) {
  QWheelEvent wheel(at, playground.mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(&playground, &wheel);
  playground.layOutFramesWithoutOpenGL(2);
}

const PlaygroundFrameRecord::Text* textStartingWith(const PlaygroundFrameRecord& frame, const std::string& start) {
  for (const auto& entry : frame.texts) {
    if (entry.text.rfind(start, 0) == 0) return &entry;
  }
  return nullptr;
}

// A backend whose second optimizer blows up: infinities, NaN and 1e300 where numbers would be.
class DivergingBackend : public widgets::PlaygroundBackend {
 public:
  std::vector<std::string> methods() const override { return {"steady", "blown up"}; }
  std::vector<std::array<double, 2>> path2d(int method, const widgets::PlaygroundSettings&, std::array<double, 2>,
                                            double, std::array<double, 2> start) const override {
    if (method == 0) return {start, {0.3, 0.9}, {0.61234567, 1.2345678}};
    return {start, {-40.0, 90.0}, {1e300, std::numeric_limits<double>::quiet_NaN()}};
  }
  std::vector<double> sparseTruth() const override { return {0, 1.5, 0, 0, -2, 0, 0, 0, 0.5, 0}; }
  widgets::SparseOutcome sparseRun(int method, const widgets::PlaygroundSettings&) const override {
    widgets::SparseOutcome outcome;
    if (method == 0) {
      outcome.coefficients = {0, 1.49, 0, 0, -1.98, 0, 0, 0, 0.51, 0};
      outcome.l1 = 3.98;
      outcome.l2 = 2.5321;
      outcome.linf = 1.98;
      outcome.error = 0.0245;
      outcome.loss = 1.234567e-9;
      outcome.support_found = outcome.support_correct = 3;
    } else {
      const double inf = std::numeric_limits<double>::infinity();
      outcome.coefficients = {inf, 1e300, -inf, 0, 2, 0, 0, 0, 0, std::numeric_limits<double>::quiet_NaN()};
      outcome.l1 = inf;
      outcome.l2 = inf;
      outcome.linf = 123456789012345678901234567890.0;
      outcome.error = std::numeric_limits<double>::quiet_NaN();
      outcome.loss = 1e200;
      outcome.support_found = 2;
    }
    return outcome;
  }
  QString sparseDescription() const override { return QStringLiteral("a hand-made problem"); }
};

TEST(PlaygroundView, NumbersShowFourSignificantDigitsOrDiverged) {
  using widgets::formatPlaygroundNumber;
  EXPECT_EQ(formatPlaygroundNumber(0.123456), "0.1235");
  EXPECT_EQ(formatPlaygroundNumber(1234.5678), "1235");
  EXPECT_EQ(formatPlaygroundNumber(12345.678), "1.235e+04");
  EXPECT_EQ(formatPlaygroundNumber(-2.5), "-2.5");
  EXPECT_EQ(formatPlaygroundNumber(1.234567e-9), "1.235e-09");
  EXPECT_EQ(formatPlaygroundNumber(0.0), "0");
  EXPECT_EQ(formatPlaygroundNumber(-0.0), "0");
  // The threshold itself still has digits; beyond it, and anything not finite, is "diverged".
  EXPECT_EQ(formatPlaygroundNumber(widgets::kDivergedAbove), "1e+06");
  EXPECT_EQ(formatPlaygroundNumber(-widgets::kDivergedAbove), "-1e+06");
  EXPECT_EQ(formatPlaygroundNumber(1.000001e6), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(-3e7), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(123456789012345678901234567890.0), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(1e300), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(std::numeric_limits<double>::quiet_NaN()), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(std::numeric_limits<double>::infinity()), "diverged");
  EXPECT_EQ(formatPlaygroundNumber(-std::numeric_limits<double>::infinity()), "diverged");
  EXPECT_TRUE(widgets::isDiverged(std::nan("")));
  EXPECT_FALSE(widgets::isDiverged(-999999.0));
  // Never longer than a number with 4 digits and an exponent.
  for (double value : {-1.23456789e-300, 9.87654321e5, -0.000123456789, 3.0}) {
    EXPECT_LE(formatPlaygroundNumber(value).size(), 11u) << value;
  }
}

TEST(PlaygroundView, UsesTheApplicationsFont) {
  const gui::PlaygroundBackendImpl backend;
  GeometryPlayground playground(backend);
  playground.resize(kFloating);
  playground.layOutFramesWithoutOpenGL(1);
  // Debian's default sans font (DejaVu Sans) has TrueType outlines: ImGui draws with it, not its built-in font.
  EXPECT_TRUE(playground.usesWidgetFont()) << QApplication::font().family().toStdString();
  // The font's size follows the app's: a label's height matches Qt's line height for the same font within 25 %.
  const auto* label = findText(playground.lastFrame(), "learning rates, all x");
  ASSERT_NE(label, nullptr);
  const float height = label->bottom - label->top;
  const int qtHeight = QFontMetrics(QApplication::font()).height();
  EXPECT_NEAR(height, qtHeight, 0.25 * qtHeight);
}

// Both toys at the docked and floating sizes: nothing cut, nothing over anything, table columns as wide as their
// widest cell; narrow is tabbed, wide is side by side; the settings tab, and the pointer's readout, too.
TEST(PlaygroundView, ReadableDockedAndFloating) {
  const gui::PlaygroundBackendImpl backend;
  for (const QSize size : {kDockedMinimum, kDockedLaptop, kFloating}) {
    for (const auto toy : {GeometryPlayground::Toy::plane, GeometryPlayground::Toy::sparse}) {
      SCOPED_TRACE(std::to_string(size.width()) + "x" + std::to_string(size.height()) +
                   (toy == GeometryPlayground::Toy::plane ? " 2-D" : " sparse"));
      GeometryPlayground playground(backend);
      playground.resize(size);
      playground.setToy(toy);
      playground.layOutFramesWithoutOpenGL(4);  // ImGui fits table columns over its first frames
      const auto& frame = playground.lastFrame();
      EXPECT_EQ(frame.wide, size == kFloating);
      const auto problems = readabilityProblems(frame, size);
      EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << joined(problems);
      if (toy == GeometryPlayground::Toy::plane) {
        EXPECT_TRUE(hasText(frame, "L2") && hasText(frame, "L1") && hasText(frame, "Linf"));
        // Every optimizer's end point is in the list (scrolled into view or not, it is there to scroll to).
        int endPoints = 0;
        for (const auto& text : frame.texts) endPoints += text.text.find(": (") != std::string::npos ? 1 : 0;
        EXPECT_GE(endPoints, 2);
        // The pointer's readout, over the plane's centre, overlaps nothing.
        const QPointF centre = playground.planeToWidget(0.5, 0.5);
        hover(playground, centre);
        const auto& hovered = playground.lastFrame();
        bool readout = false;
        for (const auto& text : hovered.texts) readout |= !text.text.empty() && text.text.front() == '(';
        EXPECT_TRUE(readout) << "no coordinate readout while hovering the plane";
        const auto hoverProblems = readabilityProblems(hovered, size);
        EXPECT_TRUE(hoverProblems.empty()) << hoverProblems.size() << " problems:" << joined(hoverProblems);
      } else {
        // Narrow, the table is below the charts: the wheel over the charts scrolls down to it.
        const auto* title = textStartingWith(frame, "gradient descent");
        ASSERT_NE(title, nullptr);
        const QPointF overCharts(title->left + 2, title->top + 2);
        for (int notch = 0; notch < 40 && playground.lastFrame().cells.size() < 8u * 9; ++notch) {
          wheelDown(playground, overCharts);
        }
        playground.layOutFramesWithoutOpenGL(3);  // the table, new in view, fits its columns over a few frames
        const auto& table = playground.lastFrame();
        EXPECT_EQ(table.cells.size(), 8u * 9);  // the header, the truth, 7 optimizers
        const auto tableProblems = readabilityProblems(table, size);
        EXPECT_TRUE(tableProblems.empty()) << tableProblems.size() << " problems:" << joined(tableProblems);
      }
      if (!frame.wide) {
        const auto* settings = findText(frame, "Settings");
        ASSERT_NE(settings, nullptr) << "narrow: the settings are a tab";
        click(playground, QPointF((settings->left + settings->right) / 2, (settings->top + settings->bottom) / 2));
        const auto& shown = playground.lastFrame();
        EXPECT_TRUE(hasText(shown, "learning rates, all x")) << "the settings tab did not open";
        const auto settingsProblems = readabilityProblems(shown, size);
        EXPECT_TRUE(settingsProblems.empty()) << settingsProblems.size() << " problems:" << joined(settingsProblems);
      }
    }
  }
}

// The playground opens at the measured defaults (results/tours/implicit-bias.md): each optimizer's own learning rate
// is on screen beside its name, and each toy says what to watch, above the toy when the panel is tall enough, else
// first in the settings.
TEST(PlaygroundView, OpensAtTheMeasuredDefaultsShowingEachRateAndWhatToWatch) {
  const gui::PlaygroundBackendImpl backend;
  const auto defaults = backend.defaultSettings();
  ASSERT_EQ(defaults.rates.size(), backend.methods().size());
  // The widget header's defaults are the backend's (all but the rates, which only the backend knows).
  auto header = widgets::PlaygroundSettings{};
  header.rates = defaults.rates;
  EXPECT_TRUE(header == defaults) << "PlaygroundSettings' defaults differ from core/geometry's toy_defaults()";
  for (const auto toy : {GeometryPlayground::Toy::plane, GeometryPlayground::Toy::sparse}) {
    const std::string caption =
        (toy == GeometryPlayground::Toy::plane ? backend.planeDescription() : backend.sparseDescription())
            .toStdString();
    ASSERT_FALSE(caption.empty());
    GeometryPlayground playground(backend);
    EXPECT_TRUE(playground.settings() == defaults);
    EXPECT_EQ(playground.start()[0], defaults.init_scale);
    playground.resize(kFloating);
    playground.setToy(toy);
    playground.layOutFramesWithoutOpenGL(4);
    const auto& frame = playground.lastFrame();
    for (const double rate : defaults.rates) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "lr %.5f", rate);
      EXPECT_TRUE(hasText(frame, shown)) << shown;
    }
    const auto* above = findText(frame, caption);
    ASSERT_NE(above, nullptr) << "no caption over the toy at 900x600";
    const auto* firstRate = textStartingWith(frame, "lr ");
    ASSERT_NE(firstRate, nullptr);
    EXPECT_GT(above->left, firstRate->right) << "the caption is beside the settings, over the toy";
    // Docked small, the caption is in the settings tab.
    playground.resize(kDockedMinimum);
    playground.layOutFramesWithoutOpenGL(4);
    EXPECT_FALSE(hasText(playground.lastFrame(), caption));
    const auto* settings = findText(playground.lastFrame(), "Settings");
    ASSERT_NE(settings, nullptr);
    click(playground, QPointF((settings->left + settings->right) / 2, (settings->top + settings->bottom) / 2));
    EXPECT_TRUE(hasText(playground.lastFrame(), caption)) << "the caption is not in the settings tab";
  }
  EXPECT_NE(backend.planeDescription().indexOf(QStringLiteral("(1.10, 0.41)")), -1);
  EXPECT_NE(backend.planeDescription().indexOf(QStringLiteral("(1.25, 0.00)")), -1);
  EXPECT_NE(backend.planeDescription().indexOf(QStringLiteral("(0.91, 0.91)")), -1);
}

TEST(PlaygroundView, DivergedRunsReadDivergedNotSixtyDigits) {
  const DivergingBackend backend;
  for (const QSize size : {kDockedMinimum, kFloating}) {
    SCOPED_TRACE(std::to_string(size.width()) + "x" + std::to_string(size.height()));
    GeometryPlayground playground(backend);
    playground.resize(size);
    playground.layOutFramesWithoutOpenGL(4);
    EXPECT_TRUE(hasText(playground.lastFrame(), "blown up: diverged"));
    EXPECT_TRUE(hasText(playground.lastFrame(), "steady: (0.6123, 1.235)"));
    auto problems = readabilityProblems(playground.lastFrame(), size);
    EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << joined(problems);
    playground.setToy(GeometryPlayground::Toy::sparse);
    playground.layOutFramesWithoutOpenGL(4);
    const auto& frame = playground.lastFrame();
    int diverged = 0;
    for (const auto& cell : frame.cells) {
      diverged += cell.text == "diverged" ? 1 : 0;
      EXPECT_LE(cell.text.size(), 11u) << cell.text;
    }
    EXPECT_EQ(diverged, 5);  // L1, L2, Linf, error, loss of the blown-up run
    EXPECT_TRUE(
        std::any_of(frame.cells.begin(), frame.cells.end(), [](const auto& cell) { return cell.text == "1.235e-09"; }));
    problems = readabilityProblems(frame, size);
    EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << joined(problems);
  }
}

// With OpenGL (the xcb platform under Xvfb) the frames paintGL draws hold the same checks, and they are not blank.
// DESCENTLAB_PLAYGROUND_SHOTS=DIR saves each as playground-WxH-TOY.png.
TEST(PlaygroundView, DrawnFramesAreReadableWhereOpenGLExists) {
  if (!openGL33Available()) {
    GTEST_SKIP() << "no OpenGL 3.3 on the " << QGuiApplication::platformName().toStdString()
                 << " platform: the layout-only tests above cover the frames";
  }
  const gui::PlaygroundBackendImpl backend;
  const QString shots = qEnvironmentVariable("DESCENTLAB_PLAYGROUND_SHOTS");
  for (const QSize size : {kDockedMinimum, kDockedLaptop, kFloating}) {
    for (const auto toy : {GeometryPlayground::Toy::plane, GeometryPlayground::Toy::sparse}) {
      const QString name =
          QStringLiteral("playground-%1x%2-%3.png")
              .arg(size.width())
              .arg(size.height())
              .arg(toy == GeometryPlayground::Toy::plane ? QStringLiteral("2d") : QStringLiteral("sparse"));
      SCOPED_TRACE(name.toStdString());
      GeometryPlayground playground(backend);
      playground.resize(size);
      playground.setToy(toy);
      playground.show();
      ASSERT_TRUE(waitUntil([&] { return playground.frames() >= 3; }, 10000)) << "no frames drawn";
      playground.requestFrames(3);
      const int64_t before = playground.frames();
      ASSERT_TRUE(waitUntil([&] { return playground.frames() >= before + 3; }, 10000));
      const auto problems = readabilityProblems(playground.lastFrame(), size);
      EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << joined(problems);
      const QImage image = playground.grabFramebuffer();
      int ink = 0;
      for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) ink += qGray(image.pixel(x, y)) < 128 ? 1 : 0;
      }
      EXPECT_GT(ink, 50) << "the drawn frame looks blank";
      if (!shots.isEmpty()) image.save(QDir(shots).filePath(name));
    }
  }
}

}  // namespace
}  // namespace descentlab
