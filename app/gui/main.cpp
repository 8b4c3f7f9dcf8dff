// descentlab: the desktop lab, and `descentlab report` (the same views rendered to PNG without a window).
//
//   descentlab [RUN.h5 ...] [--preset NAME] [--size quick|full|large] [--start PRESET ...] [--tour NAME] [--shots DIR]
//   descentlab report RUN.h5|DIR [...] --out DIR [--group-by KEYS] [--band minmax|std]
//
// LibTorch never reaches this file: core headers used here are torch-free, so Qt's macros are safe.

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

using descentlab::gui::LabBackend;
using descentlab::gui::LabController;
using descentlab::widgets::MainWindow;

// What the environment dialog and the status bar say of this machine, but the datasets (dataset_lines: reading them
// takes about a second, and the window shows before it).
descentlab::widgets::EnvironmentSummary summarize_environment() {
  const auto info = descentlab::runtime_info();
  descentlab::widgets::EnvironmentSummary summary;
  summary.version = QString::fromStdString(info.descentlab_version);
  summary.torch_version = QString::fromStdString(info.torch_version);
  summary.blas = QString::fromStdString(info.blas);
  summary.threads = info.threads;
  summary.device =
      info.cuda_available ? QStringLiteral("CUDA (%1 device(s))").arg(info.cuda_devices) : QStringLiteral("CPU");
  return summary;
}

// Each dataset's line for the environment dialog: its splits' sizes, or how to fetch it.
QStringList dataset_lines() {
  QStringList lines;
  const std::string root = descentlab::data::default_data_root();
  for (const auto& report : descentlab::data::inspect_datasets(root, /*verify_checksums=*/false)) {
    QString splits;
    for (const auto& split : report.splits) {
      if (!splits.isEmpty()) splits += QStringLiteral(", ");
      splits += QStringLiteral("%1 %2 %3")
                    .arg(QString::fromStdString(split.split),
                         QLocale(QLocale::English).toString(static_cast<qlonglong>(split.count)),
                         QString::fromStdString(split.unit));
    }
    lines << QStringLiteral("%1: %2").arg(
        QString::fromStdString(report.name),
        report.present
            ? splits
            : QStringLiteral("not fetched (%1)").arg(QString::fromStdString(descentlab::data::fetch_command())));
  }
  return lines;
}

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

// What `descentlab report` was asked: the run files (folders expanded), where the PNGs go and how they are drawn.
struct ReportOptions {
  QStringList runs;
  QString firstArgument;  // the first run or folder given, for "no run file below DIR"
  QString out;
  QString groupBy;  // "auto" or comma-separated config keys; used when `grouped`
  bool grouped = false;
  bool standardDeviationBand = false;
  int width = 1000;
  int height = 650;
};

// Each folder among `arguments` stands for every run file below it, and asks for groups.
QStringList run_files_of(const QStringList& arguments, bool& grouped) {
  QStringList files;
  for (const auto& argument : arguments) {
    if (!QFileInfo(argument).isDir()) {
      files << argument;
      continue;
    }
    int skipped = 0;
    for (const auto& path : descentlab::study::run_files_below(QFile::encodeName(argument).toStdString(), &skipped)) {
      files << QFile::decodeName(QByteArray::fromStdString(path));
    }
    grouped = true;
    std::cout << argument.toStdString() << ": " << files.size() << " run files"
              << (skipped > 0 ? " (" + std::to_string(skipped) + " other files skipped)" : std::string()) << "\n";
  }
  return files;
}

// A size in pixels, strictly: "0", "-5", "abc" or "1e3" are refused naming the option (toInt read them as 0).
bool read_pixels(const QCommandLineParser& parser, const QCommandLineOption& option, int& pixels) {
  bool ok = false;
  const QString text = parser.value(option);
  pixels = text.toInt(&ok);
  if (!ok || pixels < 16 || pixels > 16384) {
    std::cerr << "descentlab report: error: --" << option.names().first().toStdString() << " \"" << text.toStdString()
              << "\": expected a whole number of pixels from 16 to 16384\n";
    return false;
  }
  return true;
}

// The report's options from the command line; nothing (with the reason printed) when they are wrong.
std::optional<ReportOptions> parse_report_options(const QApplication& application) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Renders the lab's views of run files to PNG, without a window"));
  parser.addHelpOption();
  parser.addPositionalArgument(QStringLiteral("report"), QStringLiteral("the report command"));
  parser.addPositionalArgument(QStringLiteral("runs"),
                               QStringLiteral("run files (.h5), or folders: every run file below, drawn grouped"),
                               QStringLiteral("RUN.h5|DIR..."));
  QCommandLineOption out(QStringLiteral("out"), QStringLiteral("Folder for the PNG files"), QStringLiteral("DIR"));
  QCommandLineOption width(QStringLiteral("width"), QStringLiteral("Width of each view in pixels"),
                           QStringLiteral("PX"), QStringLiteral("1000"));
  QCommandLineOption height(QStringLiteral("height"), QStringLiteral("Height of each view in pixels"),
                            QStringLiteral("PX"), QStringLiteral("650"));
  QCommandLineOption groupBy(
      QStringLiteral("group-by"),
      QStringLiteral("Draw runs that differ only by their seeds as groups (mean with a band), grouped by these "
                     "comma-separated config keys; \"auto\" (the default for a folder): every differing key but "
                     "the seeds"),
      QStringLiteral("KEYS"));
  QCommandLineOption band(QStringLiteral("band"), QStringLiteral("A group's band: minmax (the default) or std"),
                          QStringLiteral("KIND"), QStringLiteral("minmax"));
  parser.addOptions({out, width, height, groupBy, band});
  parser.process(application);
  QStringList runs = parser.positionalArguments();
  runs.removeFirst();  // "report"
  if (runs.isEmpty() || !parser.isSet(out)) {
    std::cerr << "usage: descentlab report RUN.h5|DIR [...] --out DIR [--group-by KEYS] [--band minmax|std] "
                 "[--width PX] [--height PX]\n";
    return std::nullopt;
  }
  if (parser.value(band) != QStringLiteral("minmax") && parser.value(band) != QStringLiteral("std")) {
    std::cerr << "descentlab report: error: --band \"" << parser.value(band).toStdString()
              << "\": expected minmax or std\n";
    return std::nullopt;
  }
  ReportOptions options;
  options.grouped = parser.isSet(groupBy);
  options.firstArgument = runs.first();
  options.runs = run_files_of(runs, options.grouped);
  if (!read_pixels(parser, width, options.width) || !read_pixels(parser, height, options.height)) return std::nullopt;
  options.out = parser.value(out);
  options.groupBy = parser.value(groupBy);
  options.standardDeviationBand = parser.value(band) == QStringLiteral("std");
  return options;
}

// Runs that differ only by their seeds drawn as groups, by the keys asked for ("auto": every differing key).
void draw_groups(MainWindow& window, const ReportOptions& options) {
  QStringList keys;
  if (options.groupBy != QStringLiteral("auto")) {
    for (const auto& key : options.groupBy.split(QLatin1Char(','), Qt::SkipEmptyParts)) keys << key.trimmed();
  }
  window.model()->setBandKind(options.standardDeviationBand ? descentlab::record::BandKind::StandardDeviation
                                                            : descentlab::record::BandKind::MinMax);
  window.setGrouping(true, keys);
  for (const auto& group : window.model()->groups()) {
    std::cout << "group: " << group.label.toStdString() << "\n";
  }
}

// Every view as OUT/<view>.png and the whole window as OUT/dashboard.png; 0 when at least one view was written.
int write_report(MainWindow& window, const ReportOptions& options) {
  QDir().mkpath(options.out);
  int written = 0;
  for (auto* view : window.views()) {
    view->refresh(true);
    const QString path = QDir(options.out).filePath(view->fileStem() + QStringLiteral(".png"));
    if (!view->exportImage(path, options.width, options.height)) {
      std::cerr << "descentlab report: error: cannot write " << path.toStdString() << "\n";
      return 1;
    }
    std::cout << path.toStdString() << (view->hasData() ? "" : "  (no data for this view in these runs)") << "\n";
    ++written;
  }
  const QString dashboard = QDir(options.out).filePath(QStringLiteral("dashboard.png"));
  window.grab().save(dashboard);
  std::cout << dashboard.toStdString() << "\n";
  return written > 0 ? 0 : 1;
}

int run_report(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab-report"));  // never touches the app's settings
  const std::optional<ReportOptions> options = parse_report_options(application);
  if (!options) return 2;
  const LabBackend backend;
  auto summary = summarize_environment();
  summary.datasets = dataset_lines();
  MainWindow window(summary, backend);
  LabController controller(window, backend, QDir::tempPath());
  const int opened = options->runs.isEmpty() ? 0 : controller.open(options->runs);
  if (options->runs.isEmpty() || opened != options->runs.size()) {
    std::cerr << "descentlab report: error: "
              << (options->runs.isEmpty() ? std::string("no run file below ") + options->firstArgument.toStdString()
                                          : window.lastMessage().toStdString())
              << "\n";
    return 1;
  }
  if (options->grouped) draw_groups(window, *options);
  window.show();
  QApplication::processEvents();
  return write_report(window, *options);
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
void open_what_was_asked(MainWindow& window, LabController& controller, const WindowOptions& options) {
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
    if (qEnvironmentVariableIsEmpty("DESCENTLAB_STARTUP_BLOCKING")) {
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
                     if (controller.activeRuns() == 0) {
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
    open_what_was_asked(window, controller, options);
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
      return run_report(argc, argv);
    } catch (const std::exception& error) {
      std::cerr << "descentlab report: error: " << error.what() << "\n";
      return 1;
    }
  }
  return run_window(argc, argv);
}
