// `descentlab report`: the lab's views of run files rendered to PNG without a window (app/gui/app_parts.h).

#include <qcustomplot.h>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include <iostream>
#include <optional>
#include <string>

#include "app/gui/app_parts.h"
#include "app/gui/lab_backend.h"
#include "app/gui/lab_controller.h"
#include "core/study/study.h"
#include "widgets/lab_model.h"
#include "widgets/main_window.h"
#include "widgets/views.h"

namespace descentlab::gui {
namespace {

using widgets::MainWindow;

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

}  // namespace

int run_report(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab-report"));  // never touches the app's settings
  const std::optional<ReportOptions> options = parse_report_options(application);
  if (!options) return 2;
  const LabBackend backend;
  MainWindow window(summarize_environment(), backend);  // the datasets' lines are for a dialog a report never opens
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

}  // namespace descentlab::gui
