#include "app/gui/lab_controller.h"

#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

#include <nlohmann/json.hpp>

#include <exception>
#include <utility>
#include <vector>

#include "app/gui/run_conversion.h"
#include "core/store/annotate_run.h"
#include "core/util/user_folders.h"
#include "widgets/lab_model.h"
#include "widgets/views.h"

namespace descentlab::gui {

LabController::LabController(widgets::MainWindow& window, const LabBackend& backend, QString runsDirectory,
                             QObject* parent)
    : QObject(parent),
      window_(window),
      backend_(backend),
      live_(window, std::move(runsDirectory)),
      tourBranches_(window, live_),
      watched_(window),
      opener_(window, watched_),
      sweeps_(window),
      studies_(window) {
  connect(&live_, &LiveRuns::finished, this, &LabController::runFinished);
  connect(&window_, &widgets::MainWindow::startRequested, this,
          [this](const widgets::ExperimentRequest& request) { start(request); });
  connect(&window_, &widgets::MainWindow::pauseRequested, this, &LabController::pause);
  connect(&window_, &widgets::MainWindow::resumeRequested, this, &LabController::resume);
  connect(&window_, &widgets::MainWindow::stopRequested, this, &LabController::stop);
  connect(&window_, &widgets::MainWindow::openRequested, this, [this](const QStringList& paths) { open(paths); });
  connect(&window_, &widgets::MainWindow::openInBackgroundRequested, this, &LabController::openInBackground);
  connect(&window_, &widgets::MainWindow::saveRequested, this, &LabController::save);
  connect(&window_, &widgets::MainWindow::closeRunRequested, this, &LabController::close);
  connect(&window_, &widgets::MainWindow::annotationChosen, this,
          [this](const QString& runId, const widgets::RunAnnotationEdit& edit) { annotate(runId, edit); });
  connect(&window_, &widgets::MainWindow::sweepRequested, this, &LabController::sweep);
  connect(&window_, &widgets::MainWindow::branchChosen, this,
          [this](const QString& runId, const widgets::BranchChoice& choice) { branch(runId, choice); });
  connect(&window_, &widgets::MainWindow::cancelSweepRequested, this, &LabController::cancelSweep);
  // The experiment panel offers to fetch a dataset its experiment needs; the fetcher says how it goes.
  widgets::ExperimentPanel* panel = window_.experimentPanel();
  connect(panel, &widgets::ExperimentPanel::fetchDatasetRequested, &fetcher_, &DatasetFetcher::fetch);
  connect(&fetcher_, &DatasetFetcher::progress, panel,
          [panel](const QString& text) { panel->setFetchStatus(text, true); });
  connect(&fetcher_, &DatasetFetcher::finished, panel, [panel](const QString& dataset, const QString& error) {
    panel->setFetchStatus(error.isEmpty() ? QString() : QStringLiteral("could not fetch %1: %2").arg(dataset, error),
                          false);
  });
  connect(&window_, &widgets::MainWindow::tourRequested, this,
          [this](const QString& name) { startTour(name, menuTourAdjustment_); });
  // Help > Tours lists the built-in tours (a broken one is a build's bug: the unit tests load them all).
  QVector<widgets::TourInfo> tours;
  try {
    for (const auto& tour : config::tours()) {
      widgets::TourInfo info;
      info.name = QString::fromStdString(tour.name);
      info.title = QString::fromStdString(tour.title);
      info.watch = QString::fromStdString(tour.watch);
      info.caption = QString::fromStdString(tour.caption);
      for (const auto& view : tour.views) info.views << QString::fromStdString(view);
      info.runs = static_cast<int>(tour.runs.size());
      info.seeds = QVector<int>(tour.seeds.begin(), tour.seeds.end());
      tours.push_back(info);
    }
  } catch (const std::exception& error) {
    window_.showError(QString::fromUtf8(error.what()));
  }
  window_.tours()->setTours(tours);
}

QString LabController::start(const widgets::ExperimentRequest& request) {
  config::ExperimentConfig config;
  try {
    config = config::ExperimentConfig::from_json(backend_.document(request.preset, request.size, request.fields),
                                                 "experiment panel");
  } catch (const std::exception& error) {
    window_.showError(QString::fromUtf8(error.what()));
    return {};
  }
  if (!request.device.isEmpty()) {
    config.train.device = config::require_choice<config::Device>(request.device.toStdString(), "device");
  }
  if (request.seeds.size() == 1) config.train.seed = static_cast<uint64_t>(request.seeds.front());
  if (request.seeds.size() > 1) return startSeeds(config, request.seeds).value(0);
  return live_.start(std::move(config));
}

QStringList LabController::startSeeds(const config::ExperimentConfig& config, const QVector<int>& seeds) {
  // The runs differ only by train.seed, so the views' default grouping puts them in one group.
  window_.setGrouping(true, window_.model()->groupKeys());
  std::vector<LiveRuns::Waiting> runs;
  for (int seed : seeds) {
    runs.push_back({config, QStringLiteral("%1 seed%2").arg(QString::fromStdString(config.name)).arg(seed)});
    runs.back().config.train.seed = static_cast<uint64_t>(seed);
  }
  const QStringList started = live_.queue(std::move(runs));
  if (!started.isEmpty()) {
    window_.showInfo(QStringLiteral("%1 seeds of %2, drawn as a group: %3 train now, the others start as these end")
                         .arg(seeds.size())
                         .arg(QString::fromStdString(config.name))
                         .arg(started.size()));
  }
  return started;
}

QStringList LabController::startTour(const QString& name,
                                     const std::function<void(config::ExperimentConfig&)>& adjust) {
  config::Tour tour;
  std::vector<config::ExperimentConfig> configs;
  try {
    tour = config::find_tour(name.toStdString());
    for (const auto& run : tour.runs) {
      const QString folder = run.example.empty() ? QString() : exampleFiles(run.example);
      if (!run.example.empty() && folder.isEmpty()) return {};  // why is shown
      configs.push_back(config::tour_run_config(run, folder.toStdString()));
      // A branch keeps its parent's name: what it changes is its name's end ("ERM › enabled true @ step 32").
      configs.back().name = tour.name + " " + (run.branch_of.empty() ? run.label : run.branch_of);
      if (adjust) adjust(configs.back());
    }
  } catch (const std::exception& error) {
    window_.showError(QString::fromUtf8(error.what()));
    return {};
  }
  QStringList ids;
  if (window_.tours()->toursWithSeeds() && !configs.empty()) {
    // Every run once per measured seed (train.seed and data.split_seed, as scripts/tours.sh measured them), two at a
    // time, each run's seeds a group.
    window_.setGrouping(true, window_.model()->groupKeys());
    // Seed by seed: the first two to start are the tour's pair at its first seed, as without seeds.
    std::vector<LiveRuns::Waiting> runs;
    for (int seed : tour.seeds) {
      for (size_t i = 0; i < configs.size(); ++i) {
        auto config = configs[i];
        config.train.seed = static_cast<uint64_t>(seed);
        config.data.split_seed = static_cast<uint64_t>(seed);
        const QString seeded = QStringLiteral("%1 seed%2").arg(QString::fromStdString(config.name)).arg(seed);
        if (const auto& run = tour.runs[i]; !run.branch_of.empty()) {  // waits for its parent's state
          tourBranches_.add(QStringLiteral("%1 %2 seed%3")
                                .arg(QString::fromStdString(tour.name), QString::fromStdString(run.branch_of))
                                .arg(seed),
                            run.branch_step, std::move(config));
          continue;
        }
        runs.push_back({std::move(config), seeded});
      }
    }
    ids = live_.queue(std::move(runs));
    window_.showInfo(QStringLiteral("%1 runs x %2 seeds, two at a time; each run's seeds are drawn as a group")
                         .arg(configs.size())
                         .arg(tour.seeds.size()));
  } else {
    for (size_t i = 0; i < configs.size(); ++i) {
      if (const auto& run = tour.runs[i]; !run.branch_of.empty()) {  // waits for its parent's state
        tourBranches_.add(QString::fromStdString(tour.name + " " + run.branch_of), run.branch_step,
                          std::move(configs[i]));
        continue;
      }
      const QString id = live_.start(std::move(configs[i]));
      if (id.isEmpty()) return ids;  // its error is shown; the runs already started go on
      ids << id;
    }
  }
  widgets::TourInfo info;
  info.name = QString::fromStdString(tour.name);
  info.title = QString::fromStdString(tour.title);
  info.watch = QString::fromStdString(tour.watch);
  info.caption = QString::fromStdString(tour.caption);
  info.curves = QString::fromStdString(tour.curves);
  info.layerLoss = QString::fromStdString(tour.layer_loss);
  for (const auto& view : tour.views) info.views << QString::fromStdString(view);
  if (!ids.isEmpty()) window_.model()->setFocusRun(ids.back());
  window_.tours()->showTour(info);
  // A tour without runs (the playground's implicit-bias) leaves the panel as it is: it has no run to show there.
  // A branch is not a preset's run: the panel shows the last run that is.
  for (auto run = tour.runs.rbegin(); run != tour.runs.rend(); ++run) {
    if (run->branch_of.empty()) {
      showInExperimentPanel(*run);
      break;
    }
  }
  return ids;
}

QString LabController::exampleFiles(const std::string& example) {
  const config::TourExample* files = config::find_tour_example(example);
  const FolderContext context = process_folder_context();
  const QString folder = QString::fromStdString(example_files_folder(context, example));
  if (!files) return {};
  if (QFileInfo::exists(folder + "/" + files->module) && QFileInfo::exists(folder + "/" + files->data)) return folder;
  const QString script = QString::fromStdString(example_scripts_folder(context)) + "/" + files->script;
  if (!QFileInfo::exists(script)) {
    window_.showError(QStringLiteral("the example script %1 is not there (set DESCENTLAB_EXAMPLES to the folder of "
                                     "DescentLab's examples/)")
                          .arg(script));
    return {};
  }
  window_.showInfo(QStringLiteral("Writing the example's module and data into %1 (python3 %2, once)…")
                       .arg(folder, QFileInfo(script).fileName()));
  QProcess python;
  python.setProcessChannelMode(QProcess::MergedChannels);
  QEventLoop waiting;
  connect(&python, &QProcess::finished, &waiting, &QEventLoop::quit);
  connect(&python, &QProcess::errorOccurred, &waiting, &QEventLoop::quit);
  python.start(QStringLiteral("/usr/bin/python3"), QStringList{script, QStringLiteral("--out-dir"), folder} +
                                                       QString::fromLatin1(files->arguments).split(QLatin1Char(' ')));
  if (python.state() != QProcess::NotRunning) waiting.exec();
  const QString said = QString::fromUtf8(python.readAll()).trimmed();
  if (python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    window_.showError(QStringLiteral("%1 could not write the example: %2")
                          .arg(QFileInfo(script).fileName(), said.isEmpty() ? python.errorString() : said));
    return {};
  }
  window_.showInfo(QStringLiteral("Wrote %1 and %2 into %3 (%4); the tour trains them")
                       .arg(QString::fromLatin1(files->module), QString::fromLatin1(files->data), folder,
                            QFileInfo(script).fileName()));
  return folder;
}

void LabController::showInExperimentPanel(const config::TourRun& run) {
  // The panel showed its own preset (video-constrained, α 0.05) beside a tour's text runs (α 0.02): it now shows the
  // run the views follow, so what a user reads there is what trains, and Start trains a variant of it.
  widgets::ExperimentPanel* panel = window_.experimentPanel();
  const QString folder = run.example.empty()
                             ? QString()
                             : QString::fromStdString(example_files_folder(process_folder_context(), run.example));
  if (!run.example.empty()) {  // a user's model: the example's files in the panel's file fields
    const config::TourExample* files = config::find_tour_example(run.example);
    panel->setPreset(backend_.userModelPresets().value(0));
    panel->setFieldText(QStringLiteral("model.file"), folder + "/" + files->module);
    panel->setFieldText(QStringLiteral("data.file"), folder + "/" + files->data);
  } else {
    panel->setPreset(QString::fromStdString(run.preset), QString::fromStdString(run.size));
  }
  for (const std::string& assignment : run.overrides) {
    const size_t equals = assignment.find('=');
    if (equals == std::string::npos) continue;
    const nlohmann::json value = nlohmann::json::parse(assignment.substr(equals + 1), nullptr, false);
    const std::string text = value.is_string() ? value.get<std::string>() : assignment.substr(equals + 1);
    if (!panel->setFieldText(QString::fromStdString(assignment.substr(0, equals)), QString::fromStdString(text))) {
      window_.showError(
          QStringLiteral("the experiment panel has no field %1 of the tour's run %2")
              .arg(QString::fromStdString(assignment.substr(0, equals)), QString::fromStdString(run.label)));
    }
  }
  // Then every field as the run has it: a value the tour's overrides imply (alpha_final follows alpha when absent)
  // showed the preset's instead (alpha final 0.05 beside runs that use 0.02).
  try {
    const auto effective = flatten_config(config::tour_run_config(run, folder.toStdString()).to_json());
    for (auto it = effective.cbegin(); it != effective.cend(); ++it) {
      if (it.key() == QStringLiteral("name") || it.key() == QStringLiteral("model.file") ||
          it.key() == QStringLiteral("data.file")) {
        continue;
      }
      panel->setFieldText(it.key(), it.value());  // false: a key the form does not offer
    }
  } catch (const std::exception&) {
    // the tour's config was made once already when its runs started; nothing more to show
  }
}

void LabController::resume(const QString& runId) {
  const auto* run = window_.model()->run(runId);
  if (!run) return;
  if (watched_.contains(runId)) {
    window_.showInfo(QStringLiteral("%1 is being written by another process: it can be resumed here once that run "
                                    "has stopped (the window sees it and says so in the run's log).")
                         .arg(run->name));
  } else if (live_.contains(runId)) {
    live_.resume(runId);
  } else {
    live_.resumeFromFile(runId);
  }
}

void LabController::close(const QString& runId) {
  if (live_.contains(runId)) {
    window_.showInfo(QStringLiteral("Stop the run before closing it (its run file keeps everything)."));
    return;
  }
  watched_.forget(runId);
  window_.model()->removeRun(runId);
}

void LabController::branch(const QString& runId, const widgets::BranchChoice& choice,
                           std::function<void(const QString& childId)> started) {
  const widgets::RunData* run = window_.model()->run(runId);
  if (!started) started = [](const QString&) {};
  if (!run) return started({});
  config::ExperimentConfig config;
  try {
    config = backend_.branchConfig(run->path, choice.fields);
  } catch (const std::exception& error) {
    window_.showError(QStringLiteral("Cannot branch %1: %2").arg(run->name, QString::fromUtf8(error.what())), runId);
    return started({});
  }
  const QString parentPath = run->path, parentName = run->name;
  if (choice.step != widgets::BranchChoice::kBranchNow) {
    return started(live_.branch(parentPath, parentName, choice.step, std::move(config)));
  }
  // A live run: its state as it is now, kept between batches, then the branch from that step.
  live_.keepState(runId, [this, parentPath, parentName, config, started](int64_t step) {
    started(step < 0 ? QString() : live_.branch(parentPath, parentName, step, config));
  });
}

QString LabController::annotate(const QString& runId, const widgets::RunAnnotationEdit& edit) {
  const widgets::RunData* run = window_.model()->run(runId);
  if (!run || run->path.isEmpty()) return {};
  const QString name = run->name;
  try {
    const std::string path = QFile::encodeName(run->path).toStdString();
    store::RunAnnotation wanted;
    wanted.name = edit.name.toStdString();
    for (const auto& tag : edit.tags) wanted.tags.push_back(tag.toStdString());
    wanted.note = edit.note.toStdString();
    const store::RunAnnotation stored = store::checked_annotation(wanted, path);
    if (!live_.annotate(runId, stored)) store::annotate_run(path, stored);
    widgets::RunData shown;
    set_annotation(shown, stored);
    window_.model()->setAnnotation(runId, shown.ownName, shown.tags, shown.note);
    window_.studyBrowser()->setRunAnnotation(window_.model()->run(runId)->path, shown.ownName, shown.tags, shown.note);
    window_.model()->logToRun(runId, shown.ownName.isEmpty() ? QStringLiteral("named by its configuration again")
                                                             : QStringLiteral("named \"%1\"").arg(shown.ownName));
    return {};
  } catch (const std::exception& error) {
    const QString message =
        QStringLiteral("%1 keeps its name, tags and note: %2").arg(name, QString::fromUtf8(error.what()));
    window_.showError(message, runId);
    return message;
  }
}

}  // namespace descentlab::gui
