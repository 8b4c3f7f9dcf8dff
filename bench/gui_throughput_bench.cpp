// The desktop lab's cost (issue 6's benchmark), in one process:
//   throughput  steps/s of a run trained through the GUI (every view showing and redrawing on the coalescing
//               timer) against the same run trained headless (a TrainingSession with its run file, no GUI);
//               runs alternate headless, GUI, headless, GUI, ... so that drifts of the machine hit both alike.
//   latency     the GUI thread's event latency while a run trains: a probe thread posts a queued call every 5 ms
//               and the delay until the GUI thread runs it is recorded (p50, p99, max).
// Run it under Xvfb to include real painting: xvfb-run -a build/bench/descentlab_bench_gui_throughput
// Usage: descentlab_bench_gui_throughput [--preset NAME] [--size quick|full|large] [--rounds R] [--set key=value ...]

#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "core/config/experiment_config.h"
#include "core/runtime.h"
#include "core/session/training_session.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/views.h"

namespace {

using namespace descentlab;

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())));
  return values[index];
}

double headlessRun(const config::ExperimentConfig& config, const QString& path) {
  session::SessionOptions options;
  options.run_path = path.toStdString();
  options.overwrite = true;
  session::TrainingSession session(config, options);
  return session.run().steps_per_second;
}

// The same, on a worker thread as the GUI runs it (separates the thread's cost from the GUI's).
double headlessWorkerRun(const config::ExperimentConfig& config, const QString& path) {
  session::SessionOptions options;
  options.run_path = path.toStdString();
  options.overwrite = true;
  session::TrainingSession session(config, options);
  double stepsPerSecond = 0.0;
  session.start(
      [&](const session::TrainingResult& result, const std::string&) { stepsPerSecond = result.steps_per_second; });
  session.join();
  return stepsPerSecond;
}

struct GuiFigures {
  double stepsPerSecond = 0.0;
  std::vector<double> latencies;
  int drains = 0;
};

GuiFigures guiRun(const QString& preset, const QString& size, const std::vector<std::string>& overrides,
                  const QString& directory) {
  gui::LabBackend backend;
  widgets::MainWindow window(widgets::EnvironmentSummary{}, backend);
  gui::LabController controller(window, backend, directory);
  window.resize(1600, 1000);
  window.show();
  // Every view on screen: the robustness view, tabbed behind λ by default, floats beside the window.
  for (auto* dock : window.findChildren<QDockWidget*>()) {
    if (dock->widget() == window.robustnessView()) {
      dock->setFloating(true);
      dock->resize(500, 400);
      dock->show();
    }
  }
  auto* panel = window.experimentPanel();
  panel->setPreset(preset, size);
  for (const auto& assignment : overrides) {
    const auto equals = assignment.find('=');
    panel->setFieldText(QString::fromStdString(assignment.substr(0, equals)),
                        QString::fromStdString(assignment.substr(equals + 1)));
  }
  QApplication::processEvents();
  const QString id = controller.start({preset, size, QStringLiteral("cpu"), panel->fields(), {}});
  if (id.isEmpty()) {
    std::fprintf(stderr, "error: %s\n", window.lastMessage().toUtf8().constData());
    std::exit(1);
  }
  GuiFigures figures;
  std::mutex latencyMutex;
  std::atomic<bool> probing{true};
  QObject receiver;
  std::thread probe([&] {
    while (probing.load()) {
      const double posted = nowMs();
      QMetaObject::invokeMethod(
          &receiver,
          [&, posted] {
            std::lock_guard<std::mutex> lock(latencyMutex);
            figures.latencies.push_back(nowMs() - posted);
          },
          Qt::QueuedConnection);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto* run = window.model()->run(id);
  while (run->isActive()) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
  probing.store(false);
  probe.join();
  QApplication::processEvents();
  if (run->state != widgets::RunState::Finished) {
    std::fprintf(stderr, "error: the GUI run ended %s: %s\n", widgets::runStateName(run->state).toUtf8().constData(),
                 run->error.toUtf8().constData());
    std::exit(1);
  }
  figures.stepsPerSecond = run->finalStepsPerSecond;
  figures.drains = controller.drains();
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  configure_process(threads_from_environment(1));  // before any thread starts
  QApplication application(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("DescentLab-bench"));
  QString preset = QStringLiteral("video-constrained");
  QString size = QStringLiteral("quick");
  int rounds = 2;
  bool headlessOnly = false;  // --headless-only 1: only the two headless variants (main vs worker thread)
  std::vector<std::string> overrides;
  const QStringList arguments = QApplication::arguments();
  for (int i = 1; i + 1 < arguments.size(); i += 2) {
    if (arguments[i] == QStringLiteral("--preset"))
      preset = arguments[i + 1];
    else if (arguments[i] == QStringLiteral("--size"))
      size = arguments[i + 1];
    else if (arguments[i] == QStringLiteral("--rounds"))
      rounds = arguments[i + 1].toInt();
    else if (arguments[i] == QStringLiteral("--set"))
      overrides.push_back(arguments[i + 1].toStdString());
  }
  const auto config = config::load_experiment(preset.toStdString(), size.toStdString(), "", overrides);
  QTemporaryDir directory;
  std::printf("GUI throughput and latency: preset %s (%s), %d round(s), platform %s, %d torch thread(s)\n",
              preset.toUtf8().constData(), size.toUtf8().constData(), rounds,
              QApplication::platformName().toUtf8().constData(), runtime_info().threads);
  std::vector<double> headless, headlessWorker, withGui, latencies;
  int drains = 0;
  for (int round = 0; round < rounds; ++round) {
    headless.push_back(headlessRun(config, QDir(directory.path()).filePath(QStringLiteral("headless.h5"))));
    headlessWorker.push_back(
        headlessWorkerRun(config, QDir(directory.path()).filePath(QStringLiteral("headless-worker.h5"))));
    if (headlessOnly) {
      std::printf("  round %d: headless %.2f steps/s, on a worker thread %.2f steps/s\n", round + 1, headless.back(),
                  headlessWorker.back());
      continue;
    }
    const GuiFigures figures = guiRun(preset, size, overrides, directory.path());
    withGui.push_back(figures.stepsPerSecond);
    latencies.insert(latencies.end(), figures.latencies.begin(), figures.latencies.end());
    drains += figures.drains;
    std::printf(
        "  round %d: headless %.2f steps/s (worker thread %.2f), GUI %.2f steps/s (ratio %.3f), %zu latency "
        "probes, %d redraws\n",
        round + 1, headless.back(), headlessWorker.back(), withGui.back(), withGui.back() / headless.back(),
        figures.latencies.size(), figures.drains);
    std::fflush(stdout);
  }
  if (headlessOnly) return 0;
  double headlessMean = 0, workerMean = 0, guiMean = 0;
  for (double value : headless) headlessMean += value / static_cast<double>(headless.size());
  for (double value : headlessWorker) workerMean += value / static_cast<double>(headlessWorker.size());
  for (double value : withGui) guiMean += value / static_cast<double>(withGui.size());
  std::vector<double> ratios;
  for (size_t i = 0; i < withGui.size(); ++i) ratios.push_back(withGui[i] / headless[i]);
  std::printf("throughput: headless %.2f steps/s (on a worker thread %.2f), GUI %.2f steps/s\n", headlessMean,
              workerMean, guiMean);
  std::printf(
      "GUI/headless: %.3f of the means, median of the rounds' ratios %.3f (target >= 0.95); GUI/headless on "
      "a worker thread %.3f\n",
      guiMean / headlessMean, percentile(ratios, 0.5), guiMean / workerMean);
  std::printf(
      "GUI event latency while training: p50 %.2f ms, p99 %.2f ms, max %.2f ms over %zu probes "
      "(target p99 <= 50 ms)\n",
      percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1.0), latencies.size());
  return 0;
}
