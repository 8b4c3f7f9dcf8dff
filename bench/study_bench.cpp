// A study's cost in the window (issue 35), in one process, on the app's own path (MainWindow + LabController,
// offscreen unless a display is set):
//   table      time from opening the folder to the whole runs table (header and last values of every run file, on
//              the loader's thread), the event loop's gaps meanwhile (a 10 ms timer: p50, p99, max), and the peak
//              resident memory after it;
//   groups     "Draw groups": every run's series read into the lab, then every view redrawn grouped (each group its
//              mean with a band), against the same views redrawn with every run drawn on its own (the baseline, same
//              process, same runs); the peak memory after it.
// Usage: descentlab_bench_study DIR [--group-by KEYS] [--redraws N]
// Real-shaped files: bash scripts/study.sh runs/study, copied N times into one folder (docs/benchmarks.md).

#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "core/runtime.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/plot_view.h"
#include "widgets/study_browser.h"

namespace {

using namespace descentlab;

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())))];
}

// The peak resident set so far, in MB (VmHWM).
double peakMegabytes() {
  QFile status(QStringLiteral("/proc/self/status"));
  if (!status.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : status.readAll().split('\n')) {
    if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
  }
  return -1;
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (!done()) {
    if (clock.elapsed() > timeoutMs) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 5);
  }
  return true;
}

// Every view redrawn `times` times; ms per full redraw (all views).
double redrawAll(widgets::MainWindow& window, int times) {
  QElapsedTimer clock;
  clock.start();
  for (int i = 0; i < times; ++i) {
    for (auto* view : window.views()) view->refresh(true);
  }
  return static_cast<double>(clock.nsecsElapsed()) / 1e6 / times;
}

}  // namespace

int main(int argc, char** argv) {
  configure_process(threads_from_environment(1));
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("DescentLab-bench"));
  QString folder;
  QStringList groupKeys;
  int redraws = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--group-by" && i + 1 < argc) {
      for (const auto& key : QString::fromLocal8Bit(argv[++i]).split(QLatin1Char(','), Qt::SkipEmptyParts))
        groupKeys << key.trimmed();
    } else if (argument == "--redraws" && i + 1 < argc) {
      redraws = std::max(1, std::atoi(argv[++i]));
    } else {
      folder = QString::fromLocal8Bit(argv[i]);
    }
  }
  if (folder.isEmpty()) {
    std::fprintf(stderr, "usage: descentlab_bench_study DIR [--group-by KEYS] [--redraws N]\n");
    return 2;
  }
  QTemporaryDir scratch;
  const gui::LabBackend backend;
  widgets::MainWindow window(widgets::EnvironmentSummary{}, backend);
  gui::LabController controller(window, backend, scratch.path());
  window.resize(1280, 800);
  window.show();
  QApplication::processEvents();
  const double startMb = peakMegabytes();

  // The table.
  std::vector<double> gaps;
  QElapsedTimer clock;
  qint64 last = 0;
  QTimer ticker;
  ticker.setInterval(10);
  QObject::connect(&ticker, &QTimer::timeout, [&] {
    const qint64 now = clock.nsecsElapsed();
    gaps.push_back(static_cast<double>(now - last) / 1e6);
    last = now;
  });
  clock.start();
  ticker.start();
  controller.studies().open(folder);
  if (!waitUntil([&] { return !controller.studies().loading(); }, 600000)) {
    std::fprintf(stderr, "the study did not finish reading in 10 minutes\n");
    return 1;
  }
  const double tableSeconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
  ticker.stop();
  widgets::StudyBrowser& browser = *window.studyBrowser();
  const int runs = static_cast<int>(browser.runs().size());
  const double tableMb = peakMegabytes();
  std::printf(
      "table: %d run files in %.2f s; event-loop gaps p50 %.1f ms, p99 %.1f ms, max %.1f ms; peak %.0f MB "
      "(%.0f MB before)\n",
      runs, tableSeconds, percentile(gaps, 0.5), percentile(gaps, 0.99), percentile(gaps, 1.0), tableMb, startMb);

  // Draw groups: every run into the lab (series read), then the views redrawn grouped against ungrouped.
  if (!groupKeys.isEmpty()) browser.setGroupKeys(groupKeys);
  gaps.clear();
  clock.restart();
  last = 0;
  ticker.start();
  browser.drawGroups();
  if (!waitUntil([&] { return window.model()->count() >= runs; }, 600000)) {
    std::fprintf(stderr, "only %d of %d runs opened: %s\n", window.model()->count(), runs,
                 window.lastMessage().toStdString().c_str());
    return 1;
  }
  const double openSeconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
  ticker.stop();
  const std::vector<double> openGaps = gaps;
  const double firstDrawMs = redrawAll(window, 1);
  const double groupedMs = redrawAll(window, redraws);
  window.setGrouping(false);
  const double runsMs = redrawAll(window, redraws);
  window.setGrouping(true, groupKeys);
  std::printf(
      "groups: %d groups of %d runs; opening every run's series %.2f s (event-loop gaps p99 %.1f ms, max %.1f "
      "ms); first grouped draw of every view %.0f ms; a grouped redraw %.0f ms against %.0f ms with every run "
      "drawn on its own (ratio %.2f); peak %.0f MB\n",
      static_cast<int>(window.model()->groups().size()), window.model()->count(), openSeconds,
      percentile(openGaps, 0.99), percentile(openGaps, 1.0), firstDrawMs, groupedMs, runsMs,
      runsMs > 0 ? groupedMs / runsMs : 0.0, peakMegabytes());
  return 0;
}
