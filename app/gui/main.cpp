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
#include <QTimer>

#include <iostream>
#include <string>

#include "widgets/geometry_playground.h"
#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/views.h"

namespace {

using descentlab::gui::LabBackend;
using descentlab::gui::LabController;
using descentlab::widgets::MainWindow;

descentlab::widgets::EnvironmentSummary summarize_environment() {
  const auto info = descentlab::runtime_info();
  descentlab::widgets::EnvironmentSummary summary;
  summary.version = QString::fromStdString(info.descentlab_version);
  summary.torch_version = QString::fromStdString(info.torch_version);
  summary.blas = QString::fromStdString(info.blas);
  summary.threads = info.threads;
  summary.device =
      info.cuda_available ? QStringLiteral("CUDA (%1 device(s))").arg(info.cuda_devices) : QStringLiteral("CPU");
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
    summary.datasets << QStringLiteral("%1: %2").arg(
        QString::fromStdString(report.name),
        report.present
            ? splits
            : QStringLiteral("not fetched (%1)").arg(QString::fromStdString(descentlab::data::fetch_command())));
  }
  return summary;
}

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

int run_report(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab-report"));  // never touches the app's settings
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
    return 2;
  }
  if (parser.value(band) != QStringLiteral("minmax") && parser.value(band) != QStringLiteral("std")) {
    std::cerr << "descentlab report: error: --band \"" << parser.value(band).toStdString()
              << "\": expected minmax or std\n";
    return 2;
  }
  // A folder stands for every run file below it, and asks for groups.
  bool grouped = parser.isSet(groupBy);
  QStringList files;
  for (const auto& argument : runs) {
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
  runs = files;
  // Sizes in pixels, strictly: "0", "-5", "abc" or "1e3" are refused naming the option (toInt read them as 0).
  int sizes[2] = {0, 0};
  const QCommandLineOption* size_options[2] = {&width, &height};
  for (int i = 0; i < 2; ++i) {
    bool ok = false;
    const QString text = parser.value(*size_options[i]);
    sizes[i] = text.toInt(&ok);
    if (!ok || sizes[i] < 16 || sizes[i] > 16384) {
      std::cerr << "descentlab report: error: --" << size_options[i]->names().first().toStdString() << " \""
                << text.toStdString() << "\": expected a whole number of pixels from 16 to 16384\n";
      return 2;
    }
  }
  const LabBackend backend;
  MainWindow window(summarize_environment(), backend);
  LabController controller(window, backend, QDir::tempPath());
  const int opened = runs.isEmpty() ? 0 : controller.open(runs);
  if (runs.isEmpty() || opened != runs.size()) {
    std::cerr << "descentlab report: error: "
              << (runs.isEmpty()
                      ? std::string("no run file below ") + parser.positionalArguments().value(1).toStdString()
                      : window.lastMessage().toStdString())
              << "\n";
    return 1;
  }
  if (grouped) {
    QStringList keys;
    const QString wanted = parser.value(groupBy);
    if (wanted != QStringLiteral("auto")) {
      for (const auto& key : wanted.split(QLatin1Char(','), Qt::SkipEmptyParts)) keys << key.trimmed();
    }
    window.model()->setBandKind(parser.value(band) == QStringLiteral("std")
                                    ? descentlab::record::BandKind::StandardDeviation
                                    : descentlab::record::BandKind::MinMax);
    window.setGrouping(true, keys);
    for (const auto& group : window.model()->groups()) {
      std::cout << "group: " << group.label.toStdString() << "\n";
    }
  }
  window.show();
  QApplication::processEvents();
  const QString directory = parser.value(out);
  QDir().mkpath(directory);
  int written = 0;
  for (auto* view : window.views()) {
    view->refresh(true);
    const QString path = QDir(directory).filePath(view->fileStem() + QStringLiteral(".png"));
    if (!view->exportImage(path, sizes[0], sizes[1])) {
      std::cerr << "descentlab report: error: cannot write " << path.toStdString() << "\n";
      return 1;
    }
    std::cout << path.toStdString() << (view->hasData() ? "" : "  (no data for this view in these runs)") << "\n";
    ++written;
  }
  const QString dashboard = QDir(directory).filePath(QStringLiteral("dashboard.png"));
  window.grab().save(dashboard);
  std::cout << dashboard.toStdString() << "\n";
  return written > 0 ? 0 : 1;
}

// Where the window writes new runs unless --runs-dir says (core/util/user_folders.h); "runs" here when the
// user's data folder cannot be told (no HOME), which the runs folder's own check then reports.
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

}  // namespace

int main(int argc, char** argv) {
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
  // --help and --version print and quit: they need no display (a terminal, ssh, man page generation).
  if (asks_only_for_text(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication application(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab"));
  QApplication::setApplicationVersion(QString::fromLatin1(descentlab::build_info::kVersion));
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
  try {
    const LabBackend backend;
    const descentlab::gui::PlaygroundBackendImpl playgroundBackend;  // outlives the window and its playground
    descentlab::gui::ProbeBackend probeBackend;                      // the layer probe's worker, outlives the window
    MainWindow window(summarize_environment(), backend);
    window.setProbeBackend(&probeBackend);
    LabController controller(window, backend, QDir(parser.value(runsDir)).absolutePath());
    window.experimentPanel()->setPreset(parser.value(preset), parser.value(size));
    // The playground needs OpenGL 3.3: not on Qt's offscreen or minimal platforms.
    const QString platform = QGuiApplication::platformName();
    if (platform != QStringLiteral("offscreen") && platform != QStringLiteral("minimal")) {
      window.addPlayground(new descentlab::widgets::GeometryPlayground(playgroundBackend));
    }
    window.show();
    // Run files open into the lab; a folder opens as a study in the Study dock.
    QStringList files;
    for (const QString& argument : parser.positionalArguments()) {
      if (QFileInfo(argument).isDir()) {
        controller.studies().open(argument);
      } else {
        files << argument;
      }
    }
    if (!files.isEmpty()) controller.open(files);
    for (const auto& name : parser.values(start)) {
      window.experimentPanel()->setPreset(name, parser.value(size));
      controller.start({name, parser.value(size), QStringLiteral("auto"), window.experimentPanel()->fields(), {}});
    }
    if (parser.isSet(tour)) controller.startTour(parser.value(tour));
    // A plain start offers the runs the last session had open (a crash included: the list is kept as runs open).
    if (parser.positionalArguments().isEmpty() && !parser.isSet(start) && !parser.isSet(tour) && !parser.isSet(shots)) {
      window.offerLastSession();
    }
    if (parser.isSet(shots)) {
      // Mid-run: once the first run is 60 % done (after the first evaluation of a 2-epoch quick run); the end: once
      // every run has finished, then quit.
      const QString directory = parser.value(shots);
      auto* poll = new QTimer(&window);
      bool midTaken = false;
      QObject::connect(poll, &QTimer::timeout, &window, [&, poll] {
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
    return application.exec();
  } catch (const descentlab::Error& error) {
    std::cerr << "descentlab: error: " << error.what() << "\n";
    QMessageBox::critical(nullptr, QStringLiteral("DescentLab"), QString::fromStdString(error.what()));
    return 1;
  }
}
