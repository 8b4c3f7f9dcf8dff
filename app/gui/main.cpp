// descentlab: the desktop lab, and `descentlab report` (the same views rendered to PNG without a window).
//
//   descentlab [RUN.h5 ...] [--preset NAME] [--size quick|full|large] [--start PRESET ...] [--tour NAME] [--shots DIR]
//   descentlab report RUN.h5|DIR [...] --out DIR [--group-by KEYS] [--band minmax|std]
//
// LibTorch never reaches this file: core headers used here are torch-free, so Qt's macros are safe.

#include "app/gui/app_parts.h"
#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "app/gui/playground_backend.h"
#include "app/gui/probe_backend.h"
#include "core/data/catalog.h"
#include "core/generated/build_info.h"
#include "core/runtime.h"
#include "core/study/study.h"
#include "core/util/error.h"
#include "core/util/user_folders.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QPointer>
#include <QTimer>

#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "widgets/geometry_playground.h"
#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/session_memory.h"
#include "widgets/views.h"

namespace {

// DESCENTLAB_STARTUP_TIMES=1: each start-up phase on stderr as "descentlab-startup PHASE NANOSECONDS" (the Unix
// epoch's clock, so that bench/startup.sh can measure from before it launched the process).
void startup_mark(const char* phase) {
  static const bool wanted = !qEnvironmentVariableIsEmpty("DESCENTLAB_STARTUP_TIMES");
  if (!wanted) return;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::cerr << "descentlab-startup " << phase << " "
            << (static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec) << std::endl;
}

// The first paint of any widget: the window has appeared.
class FirstPaint : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Paint && watched->isWidgetType()) {
      startup_mark("first-paint");
      QCoreApplication::instance()->removeEventFilter(this);
    }
    return false;
  }
};

using descentlab::gui::dataset_lines;
using descentlab::gui::LabBackend;
using descentlab::gui::LabController;
using descentlab::gui::summarize_environment;
using descentlab::widgets::MainWindow;

// Reads the datasets' lines on a worker thread once the window shows, and hands them to the window; joined when it
// goes out of scope (before the window does).
class DatasetLinesReader {
 public:
  explicit DatasetLinesReader(MainWindow& window) {
    QPointer<MainWindow> target(&window);
    worker_ = std::thread([target] {
      QStringList lines;
      try {
        lines = dataset_lines();
      } catch (const std::exception& error) {
        lines << QStringLiteral("could not read the data folder: %1").arg(QString::fromUtf8(error.what()));
      }
      QMetaObject::invokeMethod(
          QCoreApplication::instance(),
          [target, lines] {
            if (target) target->setDatasetLines(lines);
          },
          Qt::QueuedConnection);
    });
  }
  ~DatasetLinesReader() { worker_.join(); }
  DatasetLinesReader(const DatasetLinesReader&) = delete;
  DatasetLinesReader& operator=(const DatasetLinesReader&) = delete;

 private:
  std::thread worker_;
};

// Brings the dock holding `widget` to the front of its tab group.
void raise_dock_of(QWidget* widget) {
  for (QWidget* parent = widget->parentWidget(); parent; parent = parent->parentWidget()) {
    if (auto* dock = qobject_cast<QDockWidget*>(parent)) {
      dock->raise();
      return;
    }
  }
}

// Saves the whole window and each view, as the user sees them, into `directory` with `prefix`.
void take_shots(MainWindow& window, const QString& directory, const QString& prefix) {
  QDir().mkpath(directory);
  window.refreshViews();
  QApplication::processEvents();
  window.grab().save(QDir(directory).filePath(prefix + QStringLiteral("-window.png")));
  // The tabs in front now, brought back after each view was raised for its picture: the mid-run shots left the
  // playground in front of a tour's frontier at the end.
  QList<QDockWidget*> inFront;
  for (auto* dock : window.findChildren<QDockWidget*>()) {
    if (dock->isVisible() && !dock->visibleRegion().isEmpty()) inFront << dock;
  }
  for (auto* view : window.views()) {
    raise_dock_of(view);  // a view tabbed behind another comes to the front for its picture
    QApplication::processEvents();
    view->refresh(true);
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    view->grab().save(QDir(directory).filePath(prefix + QLatin1Char('-') + view->fileStem() + QStringLiteral(".png")));
  }
  // The playground, when docked (it needs OpenGL), raised in its tab and read from its framebuffer.
  if (auto* playground = window.findChild<descentlab::widgets::GeometryPlayground*>()) {
    raise_dock_of(playground);
    playground->requestFrames();
    QElapsedTimer wait;
    wait.start();
    while (wait.elapsed() < 400) QApplication::processEvents(QEventLoop::AllEvents, 20);
    playground->exportPng(QDir(directory).filePath(prefix + QStringLiteral("-geometry-playground.png")));
    window.grab().save(QDir(directory).filePath(prefix + QStringLiteral("-window-playground.png")));
  }
  for (auto* dock : inFront) dock->raise();
  QApplication::processEvents();
  std::cerr << "descentlab: screenshots " << prefix.toStdString() << " in " << directory.toStdString() << "\n";
}

QString default_runs_folder() {
  try {
    return QString::fromStdString(descentlab::runs_folder(descentlab::process_folder_context()));
  } catch (const std::exception&) {
    return QStringLiteral("runs");
  }
}

bool asks_only_for_text(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "-h" || argument == "--help" || argument == "--help-all" || argument == "-v" ||
        argument == "--version") {
      return true;
    }
  }
  return false;
}

// What the window was asked on its command line.
struct WindowOptions {
  QStringList arguments;  // run files and study folders
  QString preset;
  QString size;
  QStringList starts;
  QString tour;
  bool tourAsked = false;
  QString runsFolder;
  QString shotsFolder;
  bool shotsAsked = false;
};

WindowOptions parse_window_options(const QApplication& application) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("DescentLab: layerwise descent and HORST, watched live.\n"
                     "descentlab report --out DIR RUN.h5|DIR... renders its views to PNG without a window."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("runs"),
                               QStringLiteral("Run files to open (.h5), or folders to open as a study (every run "
                                              "file below them in the Study dock)"),
                               QStringLiteral("[RUN.h5|DIR...]"));
  QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("The experiment shown ready in the panel"),
                            QStringLiteral("NAME"), QStringLiteral("video-constrained"));
  QCommandLineOption size(QStringLiteral("size"),
                          QStringLiteral("quick, full or large (about 25 M parameters, for a GPU)"),
                          QStringLiteral("SIZE"), QStringLiteral("quick"));
  QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start this preset at once (repeatable)"),
                           QStringLiteral("PRESET"));
  QCommandLineOption tour(QStringLiteral("tour"),
                          QStringLiteral("Start a tour at once: its runs side by side, its caption and views (Help > "
                                         "Tours lists them)"),
                          QStringLiteral("NAME"));
  QCommandLineOption runsDir(QStringLiteral("runs-dir"),
                             QStringLiteral("Where new runs are written (default: runs/ here from a build tree, "
                                            "installed ~/.local/share/descentlab/runs)"),
                             QStringLiteral("DIR"), default_runs_folder());
  QCommandLineOption shots(QStringLiteral("shots"),
                           QStringLiteral("Save screenshots of every view mid-run and at the end into DIR, then quit "
                                          "(with --start)"),
                           QStringLiteral("DIR"));
  parser.addOptions({preset, size, start, tour, runsDir, shots});
  parser.process(application);
  WindowOptions options;
  options.arguments = parser.positionalArguments();
  options.preset = parser.value(preset);
  options.size = parser.value(size);
  options.starts = parser.values(start);
  options.tour = parser.value(tour);
  options.tourAsked = parser.isSet(tour);
  options.runsFolder = parser.value(runsDir);
  options.shotsFolder = parser.value(shots);
  options.shotsAsked = parser.isSet(shots);
  return options;
}

// Opens what the command line names: run files into the lab, folders as studies in the Study dock; starts the
// presets and the tour asked for; a plain start offers the runs the last session had open (a crash included: the
// list is kept as runs open).
void open_what_was_asked(MainWindow& window, LabController& controller, const WindowOptions& options, bool blocking) {
  QStringList files;
  for (const QString& argument : options.arguments) {
    if (QFileInfo(argument).isDir()) {
      controller.studies().open(argument);
    } else {
      files << argument;
    }
  }
  // Read on a worker thread, the runs joining the views in batches: the window answers from its first paint on.
  if (!files.isEmpty()) {
    if (!blocking) {
      controller.openInBackground(files);
    } else {
      controller.open(files);
    }
  }
  for (const auto& name : options.starts) {
    window.experimentPanel()->setPreset(name, options.size);
    controller.start({name, options.size, QStringLiteral("auto"), window.experimentPanel()->fields(), {}});
  }
  if (options.tourAsked) controller.startTour(options.tour);
  if (options.arguments.isEmpty() && options.starts.isEmpty() && !options.tourAsked && !options.shotsAsked) {
    window.session()->offerLastSession();
  }
}

// --shots: every view once the first run is 60 % done (after the first evaluation of a 2-epoch quick run), and once
// every run has finished; then quit.
void take_shots_while_training(MainWindow& window, LabController& controller, const QString& directory) {
  auto* poll = new QTimer(&window);
  QObject::connect(poll, &QTimer::timeout, &window,
                   [&window, &controller, poll, directory, midTaken = false]() mutable {
                     auto* model = window.model();
                     if (!midTaken && controller.activeRuns() > 0 && model->runAt(0)->progress() >= 0.6) {
                       midTaken = true;
                       take_shots(window, directory, QStringLiteral("mid"));
                     }
                     if (controller.activeRuns() == 0 && controller.waitingBranches() == 0) {
                       poll->stop();
                       take_shots(window, directory, QStringLiteral("end"));
                       QApplication::quit();
                     }
                   });
  poll->start(250);
}

int run_window(int argc, char** argv) {
  // --help and --version print and quit: they need no display (a terminal, ssh, man page generation).
  if (asks_only_for_text(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication application(argc, argv);
  startup_mark("application");
  FirstPaint firstPaint;
  application.installEventFilter(&firstPaint);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab"));
  QApplication::setApplicationVersion(QString::fromLatin1(descentlab::build_info::kVersion));
  const WindowOptions options = parse_window_options(application);
  try {
    const LabBackend backend;
    startup_mark("backend");
    const descentlab::gui::PlaygroundBackendImpl playgroundBackend;  // outlives the window and its playground
    descentlab::gui::ProbeBackend probeBackend;                      // the layer probe's worker, outlives the window
    // The datasets are read once the window shows. DESCENTLAB_STARTUP_BLOCKING=1 reads them here and opens the run
    // files before the first paint, as before issue 54: bench/startup.sh's baseline.
    const bool blocking = !qEnvironmentVariableIsEmpty("DESCENTLAB_STARTUP_BLOCKING");
    auto environment = summarize_environment();
    if (blocking) {
      environment.datasets = dataset_lines();
    } else {
      environment.datasets << QStringLiteral("being read…");
    }
    startup_mark("environment");
    MainWindow window(environment, backend);
    window.setProbeBackend(&probeBackend);
    LabController controller(window, backend, QDir(options.runsFolder).absolutePath());
    window.experimentPanel()->setPreset(options.preset, options.size);
    // The playground needs OpenGL 3.3: not on Qt's offscreen or minimal platforms.
    const QString platform = QGuiApplication::platformName();
    if (platform != QStringLiteral("offscreen") && platform != QStringLiteral("minimal")) {
      window.addPlayground(new descentlab::widgets::GeometryPlayground(playgroundBackend));
    }
    startup_mark("window-built");
    window.show();
    startup_mark("shown");
    std::optional<DatasetLinesReader> datasets;
    if (!blocking) datasets.emplace(window);
    open_what_was_asked(window, controller, options, blocking);
    if (options.shotsAsked) take_shots_while_training(window, controller, options.shotsFolder);
    // The first turn of the event loop with nothing before it: the window answers input from here.
    QTimer::singleShot(0, &window, [] {
      startup_mark("interactive");
      // bench/startup.sh: quit once measured.
      if (!qEnvironmentVariableIsEmpty("DESCENTLAB_QUIT_WHEN_INTERACTIVE"))
        QTimer::singleShot(200, [] { QApplication::quit(); });
    });
    return application.exec();
  } catch (const descentlab::Error& error) {
    std::cerr << "descentlab: error: " << error.what() << "\n";
    QMessageBox::critical(nullptr, QStringLiteral("DescentLab"), QString::fromStdString(error.what()));
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  startup_mark("main");
  // Before QApplication starts any thread: the allocator settings apply to arenas made from here on.
  try {
    descentlab::configure_process(descentlab::threads_from_environment(1));
  } catch (const std::exception& error) {
    std::cerr << "descentlab: error: " << error.what() << "\n";
    return 1;
  }
  if (argc > 1 && std::string(argv[1]) == "report") {
    try {
      return descentlab::gui::run_report(argc, argv);
    } catch (const std::exception& error) {
      std::cerr << "descentlab report: error: " << error.what() << "\n";
      return 1;
    }
  }
  return run_window(argc, argv);
}
