// The geometry playground's cost (issue 7's benchmark), run under Xvfb with software OpenGL (Mesa llvmpipe):
//   dragging  frames per second while the start point is dragged (mouse moves every 4 ms for 3 s), 2-D toy;
//             and while a slider-like change re-simulates the sparse toy every frame
//   hidden    frames drawn and process CPU time over 3 s with the panel hidden, and over 3 s shown but idle
// It also writes screenshots of both toys: descentlab_bench_playground [--shots DIR]
//   xvfb-run -a -s "-screen 0 1600x1000x24" build/bench/descentlab_bench_playground --shots docs/screenshots

#include "app/gui/playground_backend.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QTimer>

#include <cmath>
#include <cstdio>
#include <ctime>

namespace {

double cpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Runs the event loop for a while, sleeping when there is nothing to do (as the app's own loop does).
void pump(int milliseconds) {
  QEventLoop loop;
  QTimer::singleShot(milliseconds, &loop, &QEventLoop::quit);
  loop.exec();
}

void sendMouse(QWidget* widget, QEvent::Type type, QPointF position) {
  QMouseEvent event(type, position, widget->mapToGlobal(position), Qt::LeftButton,
                    type == QEvent::MouseButtonRelease ? Qt::NoButton : Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

}  // namespace

int main(int argc, char** argv) {
  QApplication application(argc, argv);
  QString shots;
  int width = 1200, height = 760;
  const QStringList arguments = QApplication::arguments();
  for (int i = 1; i + 1 < arguments.size(); ++i) {
    if (arguments[i] == QStringLiteral("--shots")) shots = arguments[i + 1];
    if (arguments[i] == QStringLiteral("--size")) {
      width = arguments[i + 1].section(QLatin1Char('x'), 0, 0).toInt();
      height = arguments[i + 1].section(QLatin1Char('x'), 1, 1).toInt();
    }
  }
  descentlab::gui::PlaygroundBackendImpl backend;
  descentlab::widgets::GeometryPlayground playground(backend);
  playground.resize(width, height);
  playground.show();
  pump(500);
  const auto* gl = playground.context();
  std::printf("geometry playground %dx%d: platform %s, OpenGL %s\n", width, height,
              QApplication::platformName().toUtf8().constData(),
              gl ? reinterpret_cast<const char*>(playground.context()->functions()->glGetString(GL_RENDERER)) : "none");

  // Screenshots of both toys.
  if (!shots.isEmpty()) {
    QDir().mkpath(shots);
    // At the playground's defaults: the measured settings where each optimizer's implicit bias shows
    // (results/tours/implicit-bias.md).
    playground.settings() = descentlab::widgets::PlaygroundSettings{};
    pump(300);
    playground.exportPng(QDir(shots).filePath(QStringLiteral("playground-2d.png")));
    playground.setToy(descentlab::widgets::GeometryPlayground::Toy::sparse);
    playground.requestFrames();
    pump(1500);
    playground.exportPng(QDir(shots).filePath(QStringLiteral("playground-sparse.png")));
    playground.setToy(descentlab::widgets::GeometryPlayground::Toy::plane);
    playground.settings() = descentlab::widgets::PlaygroundSettings{};
    pump(300);
  }

  // Dragging the start point in the 2-D toy.
  const QPointF from = playground.planeToWidget(0.02, 0.02);
  sendMouse(&playground, QEvent::MouseButtonPress, from);
  int64_t frames = playground.frames();
  double paint = playground.paintMilliseconds();
  QElapsedTimer clock;
  clock.start();
  double cpu = cpuSeconds();
  while (clock.elapsed() < 3000) {
    const double t = static_cast<double>(clock.elapsed()) / 1000.0;
    sendMouse(&playground, QEvent::MouseMove, from + QPointF(120 * std::cos(3 * t) - 120, 80 * std::sin(3 * t)));
    pump(4);
  }
  const double dragSeconds = static_cast<double>(clock.elapsed()) / 1000.0;
  const double dragFps = static_cast<double>(playground.frames() - frames) / dragSeconds;
  const double dragCpu = (cpuSeconds() - cpu) / dragSeconds;
  const double dragPaint = (playground.paintMilliseconds() - paint) / static_cast<double>(playground.frames() - frames);
  sendMouse(&playground, QEvent::MouseButtonRelease, from);
  pump(300);
  std::printf("the drag moved the start point from (0.02, 0.02) to (%.2f, %.2f)\n", playground.start()[0],
              playground.start()[1]);

  // The sparse toy re-simulated every frame (as while a slider moves).
  playground.setToy(descentlab::widgets::GeometryPlayground::Toy::sparse);
  pump(300);
  frames = playground.frames();
  int64_t simulations = playground.simulations();
  clock.restart();
  while (clock.elapsed() < 3000) {
    // The "learning rates, all x" slider moving between 0.5 and 1.5 (lr is a factor on every optimizer's rate).
    playground.settings().lr = 0.5 + static_cast<double>(clock.elapsed() % 1000) / 1000.0;
    playground.requestFrames();
    pump(4);
  }
  const double sparseSeconds = static_cast<double>(clock.elapsed()) / 1000.0;
  const double sparseFps = static_cast<double>(playground.frames() - frames) / sparseSeconds;
  const double sparseSims = static_cast<double>(playground.simulations() - simulations) / sparseSeconds;
  playground.setToy(descentlab::widgets::GeometryPlayground::Toy::plane);
  pump(500);

  // Shown but idle, then hidden.
  frames = playground.frames();
  cpu = cpuSeconds();
  pump(3000);
  const int64_t idleFrames = playground.frames() - frames;
  const double idleCpu = (cpuSeconds() - cpu) / 3.0;
  playground.hide();
  pump(200);
  frames = playground.frames();
  cpu = cpuSeconds();
  pump(3000);
  const int64_t hiddenFrames = playground.frames() - frames;
  const double hiddenCpu = (cpuSeconds() - cpu) / 3.0;

  std::printf(
      "dragging the start point (2-D toy, 7 optimizers x %d steps): %.1f frames/s, %.1f ms in paintGL per "
      "frame, CPU %.0f %% of a core\n",
      descentlab::widgets::PlaygroundSettings{}.steps, dragFps, dragPaint, 100 * dragCpu);
  std::printf("sparse toy re-simulated every frame: %.1f frames/s, %.1f simulations/s\n", sparseFps, sparseSims);
  std::printf("shown, idle: %lld frames in 3 s, CPU %.2f %% of a core\n", static_cast<long long>(idleFrames),
              100 * idleCpu);
  std::printf("hidden: %lld frames in 3 s, CPU %.2f %% of a core\n", static_cast<long long>(hiddenFrames),
              100 * hiddenCpu);
  return 0;
}
