#include "app/gui/lab_controller.h"

#include "core/config/tours.h"

#include "app/gui/run_conversion.h"
#include "core/config/experiment_config.h"
#include "core/config/tours.h"
#include "core/store/run_lock.h"
#include "core/store/run_log.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <nlohmann/json.hpp>

#include "widgets/lab_model.h"
#include "widgets/views.h"

namespace descentlab::gui {
namespace {

qint64 now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

QString timestamp() {
  return QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
}

QString current_writer(const QString& path) {
  return QString::fromStdString(store::RunFileLock::current_writer(QFile::encodeName(path).toStdString()));
}

// The step of a run's newest metric row (0 when it has none).
int64_t last_metric_step(const widgets::RunData& run) {
  double step = 0;
  for (const auto& track : run.scalars) {
    if (!track.steps.isEmpty()) step = std::max(step, track.steps.back());
  }
  return static_cast<int64_t>(step);
}

}  // namespace

QString LabController::describeInterruption(const QString& path, const widgets::RunData& run) {
  // A writer that ends cleanly removes its lock file; one left with no live holder was killed, crashed or lost its
  // machine. The file holds every commit it made; what it trained after its last checkpoint is trained again.
  const std::string lockPath = store::RunFileLock::lock_path_for(QFile::encodeName(path).toStdString());
  if (!QFileInfo::exists(QFile::decodeName(lockPath.c_str()))) return {};
  if (run.state == widgets::RunState::Finished) return {};
  const QString holder = QString::fromStdString(store::RunFileLock::describe_holder(lockPath)).trimmed();
  const QString who = holder.isEmpty() ? QStringLiteral("its writer") : QStringLiteral("its writer, %1,").arg(holder);
  const int64_t metricStep = last_metric_step(run);
  if (run.latestCheckpointStep < 0) {
    return QStringLiteral(
               "%1 was interrupted: %2 ended without closing it, before its first checkpoint. Its "
               "metrics up to step %3 are kept; its model is lost, so it cannot be resumed: start it "
               "again.")
        .arg(run.name, who)
        .arg(metricStep);
  }
  const int64_t lost = std::max<int64_t>(0, metricStep - run.latestCheckpointStep);
  return QStringLiteral(
             "%1 was interrupted: %2 ended without closing it. Its \"latest\" checkpoint is at step %3 "
             "and its metrics reach step %4: Resume continues from step %3, so %5 step%6 of training "
             "%7 lost and will be trained again.")
      .arg(run.name, who)
      .arg(run.latestCheckpointStep)
      .arg(metricStep)
      .arg(lost)
      .arg(lost == 1 ? "" : "s")
      .arg(lost == 1 ? QStringLiteral("is") : QStringLiteral("are"));
}

LabController::LabController(widgets::MainWindow& window, const LabBackend& backend, QString runsDirectory,
                             QObject* parent)
    : QObject(parent), window_(window), backend_(backend), runsDirectory_(std::move(runsDirectory)) {
  coalesce_.setSingleShot(true);
  coalesce_.setTimerType(Qt::PreciseTimer);
  connect(&coalesce_, &QTimer::timeout, this, &LabController::drain);
  follow_.setInterval(kFollowMs);
  connect(&follow_, &QTimer::timeout, this, &LabController::follow);
  connect(&window_, &widgets::MainWindow::startRequested, this,
          [this](const widgets::ExperimentRequest& request) { start(request); });
  connect(&window_, &widgets::MainWindow::pauseRequested, this, &LabController::pause);
  connect(&window_, &widgets::MainWindow::resumeRequested, this, &LabController::resume);
  connect(&window_, &widgets::MainWindow::stopRequested, this, &LabController::stop);
  connect(&window_, &widgets::MainWindow::openRequested, this, [this](const QStringList& paths) { open(paths); });
  connect(&window_, &widgets::MainWindow::openInBackgroundRequested, this, &LabController::openInBackground);
  connect(&window_, &widgets::MainWindow::saveRequested, this, &LabController::save);
  connect(&window_, &widgets::MainWindow::closeRunRequested, this, &LabController::close);
  connect(&window_, &widgets::MainWindow::sweepRequested, this, &LabController::sweep);
  connect(&window_, &widgets::MainWindow::cancelSweepRequested, this, &LabController::cancelSweep);
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
  window_.setTours(tours);
}

LabController::~LabController() {
  follow_.stop();
  stopOpening_->store(true);
  if (opener_.joinable()) opener_.join();  // within one run file's read; what it posted is dropped with us
  if (reader_.joinable()) reader_.join();  // one pass over the watched files; what it posts is dropped with us
  for (auto& [id, live] : live_) live.session->stop();
  for (auto& [id, live] : live_) live.session->join();
  if (sweep_) {
    sweep_->cancel();  // honoured after the current cell
    sweep_->join();
  }
}

int LabController::activeRuns() const {
  return static_cast<int>(live_.size());
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
  return startConfig(std::move(config));
}

QStringList LabController::startSeeds(const config::ExperimentConfig& config, const QVector<int>& seeds) {
  // The runs differ only by train.seed, so the views' default grouping puts them in one group.
  window_.setGrouping(true, window_.model()->groupKeys());
  for (int seed : seeds) {
    WaitingSeed waiting{config, QStringLiteral("%1 seed%2").arg(QString::fromStdString(config.name)).arg(seed)};
    waiting.config.train.seed = static_cast<uint64_t>(seed);
    waitingSeeds_.push_back(std::move(waiting));
  }
  const QStringList started = startWaitingSeeds();
  if (!started.isEmpty()) {
    window_.showInfo(QStringLiteral("%1 seeds of %2, drawn as a group: %3 train now, the others start as these end")
                         .arg(seeds.size())
                         .arg(QString::fromStdString(config.name))
                         .arg(started.size()));
  }
  return started;
}

QStringList LabController::startWaitingSeeds() {
  QStringList started;
  while (!waitingSeeds_.empty() && activeRuns() < kSeedsAtOnce) {
    WaitingSeed next = std::move(waitingSeeds_.front());
    waitingSeeds_.pop_front();
    const QString id = startConfig(std::move(next.config), next.name);
    if (id.isEmpty()) {  // its error is shown; the seeds after it would fail the same way
      waitingSeeds_.clear();
      break;
    }
    started << id;
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
      configs.push_back(config::load_experiment(run.preset, run.size, "", run.overrides));
      configs.back().name = tour.name + " " + run.label;
      if (adjust) adjust(configs.back());
    }
  } catch (const std::exception& error) {
    window_.showError(QString::fromUtf8(error.what()));
    return {};
  }
  QStringList ids;
  if (window_.toursWithSeeds() && !configs.empty()) {
    // Every run once per measured seed (train.seed and data.split_seed, as scripts/tours.sh measured them), two at a
    // time, each run's seeds a group.
    window_.setGrouping(true, window_.model()->groupKeys());
    // Seed by seed: the first two to start are the tour's pair at its first seed, as without seeds.
    for (int seed : tour.seeds) {
      for (const auto& config : configs) {
        WaitingSeed waiting{config, QStringLiteral("%1 seed%2").arg(QString::fromStdString(config.name)).arg(seed)};
        waiting.config.train.seed = static_cast<uint64_t>(seed);
        waiting.config.data.split_seed = static_cast<uint64_t>(seed);
        waitingSeeds_.push_back(std::move(waiting));
      }
    }
    ids = startWaitingSeeds();
    window_.showInfo(QStringLiteral("%1 runs x %2 seeds, two at a time; each run's seeds are drawn as a group")
                         .arg(configs.size())
                         .arg(tour.seeds.size()));
  } else {
    for (auto& config : configs) {
      const QString id = startConfig(std::move(config));
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
  window_.showTour(info);
  // A tour without runs (the playground's implicit-bias) leaves the panel as it is: it has no run to show there.
  if (!tour.runs.empty()) showInExperimentPanel(tour.runs.back());
  return ids;
}

void LabController::showInExperimentPanel(const config::TourRun& run) {
  // The panel showed its own preset (video-constrained, α 0.05) beside a tour's text runs (α 0.02): it now shows the
  // run the views follow, so what a user reads there is what trains, and Start trains a variant of it.
  widgets::ExperimentPanel* panel = window_.experimentPanel();
  panel->setPreset(QString::fromStdString(run.preset), QString::fromStdString(run.size));
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
}

QString LabController::startConfig(config::ExperimentConfig config, const QString& runName) {
  if (!QDir().mkpath(runsDirectory_)) {
    window_.showError(QStringLiteral("cannot create the runs folder %1").arg(runsDirectory_));
    return {};
  }
  // A name is a file name here: a tour's "descent-breaks ERM" becomes descent-breaks-ERM-<time>.h5.
  QString fileName = runName.isEmpty() ? QString::fromStdString(config.name) : runName;
  fileName.replace(QLatin1Char(' '), QLatin1Char('-')).replace(QLatin1Char('/'), QLatin1Char('-'));
  const QString stem =
      QStringLiteral("%1-%2").arg(fileName, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  QString path = QDir(runsDirectory_).filePath(stem + QStringLiteral(".h5"));
  for (int suffix = 2; QFileInfo::exists(path); ++suffix) {
    path = QDir(runsDirectory_).filePath(QStringLiteral("%1-%2.h5").arg(stem).arg(suffix));
  }
  auto run = std::make_unique<widgets::RunData>();
  run->name = runName.isEmpty() ? QString::fromStdString(config.name) : runName;
  run->path = QFileInfo(path).absoluteFilePath();
  describe_config(*run, config);
  run->state = widgets::RunState::Starting;
  run->appendLog(QStringLiteral("%1 starting %2 into %3").arg(timestamp(), run->name, run->path));
  widgets::RunData* added = window_.model()->addRun(std::move(run));
  window_.model()->setFocusRun(added->id);  // the run just started is the one the controls and views follow
  window_.addRecentFile(added->path);       // File > Open recent finds it after a quit, as any opened file
  train::SessionOptions options;
  options.run_path = path.toStdString();
  launch(added->id, std::make_unique<train::TrainingSession>(std::move(config), options));
  window_.addRecentFile(path);
  return added->id;
}

void LabController::launch(const QString& runId, std::unique_ptr<train::TrainingSession> session) {
  LiveRun live;
  // Called on the training thread, at most once per drained batch: one queued call, nothing else.
  live.buffer = std::make_unique<train::StagingBuffer>([this] {
    const qint64 woken = now_ns();
    postToGui([this, woken] { scheduleDrain(woken); });
  });
  session->add_sink(live.buffer.get());
  session->on_start([this, runId](const train::SessionStart& start) {
    postToGui([this, runId, start] { onStarted(runId, start); });
  });
  // Rows held in memory while the disk refuses them, and when they land: in the run's log and the message bar.
  session->on_notice([this, runId](const std::string& message) {
    postToGui([this, runId, message] {
      const QString text = QString::fromStdString(message);
      if (auto* run = window_.model()->run(runId)) run->appendLog(QStringLiteral("%1 %2").arg(timestamp(), text));
      window_.showInfo(text);
    });
  });
  auto* raw = session.get();
  live.session = std::move(session);
  live_[runId] = std::move(live);
  raw->start([this, runId](const train::TrainingResult& result, const std::string& error) {
    postToGui([this, runId, result, error] { onFinished(runId, result, QString::fromStdString(error)); });
  });
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::postToGui(std::function<void()> task) {
  posted_.post(std::move(task));
}

void LabController::scheduleDrain(qint64 wokenAtNs) {
  if (firstWakeNs_ < 0) firstWakeNs_ = wokenAtNs;
  if (!coalesce_.isActive()) coalesce_.start(kCoalesceMs);
}

void LabController::drain() {
  for (auto& [id, live] : live_) {
    train::MetricBatch batch = live.buffer->take();
    if (batch.empty()) continue;
    if (auto* run = window_.model()->run(id)) apply_batch(*run, batch);
  }
  if (firstWakeNs_ >= 0) {
    drainDelays_.push_back(static_cast<double>(now_ns() - firstWakeNs_) / 1e6);
    firstWakeNs_ = -1;
  }
  ++drains_;
  window_.refreshViews();
}

void LabController::onStarted(const QString& runId, const train::SessionStart& start) {
  auto* run = window_.model()->run(runId);
  if (!run) return;
  run->totalSteps = start.total_steps;
  run->firstStep = start.first_step;
  run->currentStep = start.first_step;
  run->description = QString::fromStdString(start.description);
  run->device = QString::fromStdString(start.device);
  run->metric = QString::fromStdString(start.metric);
  if (start.first_step > 0) run->truncateAfter(start.first_step);
  if (run->state == widgets::RunState::Starting) run->state = widgets::RunState::Running;
  window_.clearErrorOf(runId);  // an earlier failure of this run (a held lock, say) no longer applies
  run->appendLog(
      QStringLiteral("%1 %2 on %3, %4 steps%5")
          .arg(timestamp(), run->description, run->device)
          .arg(start.total_steps)
          .arg(start.first_step > 0 ? QStringLiteral(" (resumed at step %1)").arg(start.first_step) : QString()));
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::onFinished(const QString& runId, const train::TrainingResult& result, const QString& error) {
  auto found = live_.find(runId);
  if (found != live_.end()) {
    // The last events, then the thread (it has returned from its work; join is immediate).
    if (auto* run = window_.model()->run(runId)) apply_batch(*run, found->second.buffer->take());
    found->second.session->join();
    live_.erase(found);
  }
  auto* run = window_.model()->run(runId);
  if (run) {
    if (!error.isEmpty()) {
      run->state = widgets::RunState::Failed;
      run->error = error;
      // Resume can continue from the last epoch's checkpoint, if the run got that far (a full disk, once freed).
      try {
        run->hasLatestCheckpoint = store::RunReader(run->path.toStdString()).has_checkpoint("latest");
      } catch (const std::exception&) {
        run->hasLatestCheckpoint = false;
      }
      window_.showError(
          QStringLiteral("%1: %2 (everything committed so far stays in %3)").arg(run->name, error, run->path), runId);
    } else {
      run->state = result.stopped ? widgets::RunState::Stopped : widgets::RunState::Finished;
      run->hasLatestCheckpoint = result.stopped;  // a stop always writes "latest" (Trainer::run)
      run->finalStepsPerSecond = result.steps_per_second;
      if (!result.stopped) run->currentStep = run->totalSteps = result.steps;
      // A stop before the first evaluation has no test numbers: it says so instead of printing a 0.
      const QString test = result.evaluated ? QStringLiteral("test %1 %2, loss %3")
                                                  .arg(QString::fromStdString(result.metric))
                                                  .arg(result.test_metric, 0, 'g', 5)
                                                  .arg(result.test_loss, 0, 'g', 5)
                                            : QStringLiteral("not evaluated yet");
      run->appendLog(QStringLiteral("%1 %2 at step %3 after %4 s of training (%5 steps/s); %6")
                         .arg(timestamp(), result.stopped ? QStringLiteral("stopped") : QStringLiteral("finished"))
                         .arg(result.steps)
                         .arg(result.seconds, 0, 'f', 1)
                         .arg(result.steps_per_second, 0, 'f', 1)
                         .arg(test));
      if (result.stopped) run->appendLog(QStringLiteral("its state is kept as \"latest\": Resume continues it"));
    }
    run->touch();
  }
  window_.updateRunControls();
  window_.refreshViews();
  startWaitingSeeds();  // a core is free
  emit runFinished(runId);
}

void LabController::signalLive(const QString& runId, void (train::TrainingSession::*action)(), widgets::RunState state,
                               const QString& logText) {
  auto found = live_.find(runId);
  auto* run = window_.model()->run(runId);
  if (found == live_.end() || !run) return;
  (found->second.session.get()->*action)();
  run->state = state;
  run->restartSpeed();
  run->appendLog(QStringLiteral("%1 %2").arg(timestamp(), logText));
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::pause(const QString& runId) {
  signalLive(runId, &train::TrainingSession::pause, widgets::RunState::Paused,
             QStringLiteral("paused (after the current batch)"));
}

void LabController::resume(const QString& runId) {
  auto* run = window_.model()->run(runId);
  if (!run) return;
  if (watched_.count(runId)) {
    window_.showInfo(QStringLiteral("%1 is being written by another process: it can be resumed here once that run "
                                    "has stopped (the window sees it and says so in the run's log).")
                         .arg(run->name));
    return;
  }
  auto found = live_.find(runId);
  if (found != live_.end()) {
    found->second.session->resume();
    run->state = widgets::RunState::Running;
    run->restartSpeed();  // the speed counts running time only
    run->appendLog(QStringLiteral("%1 resumed").arg(timestamp()));
  } else {
    // A stopped or saved run continues from its run file's "latest" checkpoint.
    try {
      auto session = train::TrainingSession::resume(run->path.toStdString());
      run->state = widgets::RunState::Starting;
      run->restartSpeed();
      run->error.clear();
      run->appendLog(QStringLiteral("%1 resuming from %2").arg(timestamp(), run->path));
      launch(runId, std::move(session));
    } catch (const std::exception& error) {
      window_.showError(QString::fromUtf8(error.what()), runId);
    }
  }
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::stop(const QString& runId) {
  signalLive(runId, &train::TrainingSession::stop, widgets::RunState::Stopping,
             QStringLiteral("stopping after the current batch"));
}

LabController::OpenedFile LabController::readRunFile(const QString& path) {
  OpenedFile opened;
  opened.path = path;
  opened.absolute = QFileInfo(path).absoluteFilePath();
  try {
    // Whether someone writes it, before reading: a writer that lets go meanwhile is caught at the next look, and
    // the follower reads whatever was committed after this read.
    opened.writer = current_writer(opened.absolute);
    opened.follower = std::make_shared<store::RunFollower>(QFile::encodeName(opened.absolute).toStdString());
    opened.run = load_run_file(*opened.follower->poll().whole);
  } catch (const std::exception& error) {
    opened.error = QString::fromUtf8(error.what());
  }
  return opened;
}

bool LabController::adopt(OpenedFile opened) {
  if (!opened.error.isEmpty()) {
    window_.showError(QStringLiteral("cannot open %1: %2").arg(opened.path, opened.error));
    return false;
  }
  if (auto* existing = window_.model()->runByPath(opened.absolute)) {  // opened meanwhile
    window_.model()->setFocusRun(existing->id);
    return false;
  }
  auto& run = opened.run;
  const QString interruption = opened.writer.isEmpty() ? describeInterruption(opened.absolute, *run) : QString();
  if (!interruption.isEmpty()) {
    run->appendLog(QStringLiteral("%1 %2").arg(timestamp(), interruption));
    window_.showInfo(interruption);
  }
  if (!opened.writer.isEmpty()) {
    run->state = widgets::RunState::Watching;
    run->appendLog(QStringLiteral("%1 %2 is being written by %3: watching it, read again at each commit")
                       .arg(timestamp(), opened.absolute, opened.writer));
  }
  widgets::RunData* added = window_.model()->addRun(std::move(run));
  if (!opened.writer.isEmpty()) {
    watched_[added->id] = WatchedFile{std::move(opened.follower)};
    if (!follow_.isActive()) follow_.start();
  }
  window_.addRecentFile(opened.absolute);
  return true;
}

int LabController::open(const QStringList& paths) {
  int opened = 0;
  for (const auto& path : paths) {
    if (auto* existing = window_.model()->runByPath(QFileInfo(path).absoluteFilePath())) {
      window_.model()->setFocusRun(existing->id);
      continue;
    }
    opened += adopt(readRunFile(path)) ? 1 : 0;
  }
  window_.refreshViews();
  return opened;
}

void LabController::openInBackground(const QStringList& paths, const QStringList& names) {
  QStringList wanted, wantedNames;
  for (int i = 0; i < paths.size(); ++i) {
    if (window_.model()->runByPath(QFileInfo(paths[i]).absoluteFilePath())) continue;
    wanted << paths[i];
    wantedNames << names.value(i);
  }
  if (wanted.isEmpty()) return;
  if (opener_.joinable()) opener_.join();  // the files of an earlier call: read by now or soon
  openingRuns_ += static_cast<int>(wanted.size());
  window_.showInfo(QStringLiteral("Opening %1 run files…").arg(wanted.size()));
  opener_ = std::thread([this, wanted, wantedNames, stop = stopOpening_] {
    // Handed over in batches (16 files or 100 ms): each batch costs the window one refresh, not one per run.
    auto batch = std::make_shared<std::vector<OpenedFile>>();
    auto sent = std::chrono::steady_clock::now();
    const auto send = [&] {
      if (batch->empty()) return;
      postToGui([this, files = std::move(batch)] {
        for (auto& file : *files) adopt(std::move(file));
        openingRuns_ -= static_cast<int>(files->size());
        if (openingRuns_ == 0) window_.showInfo(QStringLiteral("Opened the run files"));
        // The views follow on the window's own refresh (each run added asks for one): drawing here too drew twice.
      });
      batch = std::make_shared<std::vector<OpenedFile>>();
      sent = std::chrono::steady_clock::now();
    };
    for (int i = 0; i < wanted.size(); ++i) {
      if (stop->load()) return;
      batch->push_back(readRunFile(wanted[i]));
      if (batch->back().run && !wantedNames[i].isEmpty()) batch->back().run->name = wantedNames[i];
      if (batch->size() >= 16 || std::chrono::steady_clock::now() - sent > std::chrono::milliseconds(100)) send();
    }
    send();
  });
}

bool LabController::save(const QString& runId, const QString& path) {
  auto* run = window_.model()->run(runId);
  if (!run) return false;
  if (QFileInfo(path).absoluteFilePath() == run->path) return true;  // it is written as it goes
  // The latest committed version packed into one file (the run file with its log's records folded in), written
  // beside the target and renamed, so a failed save never leaves half a file under the chosen name.
  try {
    const store::PackResult packed =
        store::pack_run(QFile::encodeName(run->path).toStdString(), QFile::encodeName(path).toStdString());
    if (!packed.warning.empty()) window_.showInfo(QString::fromStdString(packed.warning));
  } catch (const std::exception& error) {
    window_.showError(QStringLiteral("cannot save %1 as %2: %3").arg(run->name, path, QString::fromUtf8(error.what())),
                      runId);
    return false;
  }
  run->appendLog(QStringLiteral("%1 saved a copy as %2").arg(timestamp(), path));
  window_.addRecentFile(path);
  return true;
}

void LabController::close(const QString& runId) {
  if (live_.count(runId)) {
    window_.showInfo(QStringLiteral("Stop the run before closing it (its run file keeps everything)."));
    return;
  }
  watched_.erase(runId);  // a pass under way finds it gone and drops what it read
  window_.model()->removeRun(runId);
  window_.refreshViews();
}

void LabController::follow() {
  if (reading_) return;
  struct Due {
    QString runId, path;
    std::shared_ptr<store::RunFollower> follower;
  };
  std::vector<Due> due;
  for (const auto& [id, file] : watched_) {
    const auto* run = window_.model()->run(id);
    if (run) due.push_back({id, run->path, file.follower});
  }
  if (due.empty()) return;
  reading_ = true;
  if (reader_.joinable()) reader_.join();  // the previous pass posted its end: it has returned
  reader_ = std::thread([this, due] {
    for (const Due& file : due) {
      const QString writer = current_writer(file.path);  // first: a file read after its writer let go is final
      if (writer.isEmpty()) file.follower->reset();      // the final version, read whole
      std::shared_ptr<widgets::RunData> reread;
      std::shared_ptr<store::RunBatch> appended;
      QString error;
      try {
        store::RunFollower::Update update = file.follower->poll();
        if (update.whole) {
          reread = load_run_file(*update.whole);
        } else if (update.records > 0) {
          appended = std::make_shared<store::RunBatch>(std::move(update.appended));
        }
      } catch (const std::exception& failure) {
        error = QString::fromUtf8(failure.what());
        file.follower->reset();  // read it whole at the next look
      }
      if (appended) {
        postToGui([this, file, appended] { onAppended(file.runId, appended); });
      } else if (reread || !error.isEmpty()) {
        postToGui([this, file, reread, writer, error] { onReread(file.runId, reread, writer, error); });
      }
    }
    postToGui([this] { reading_ = false; });
  });
}

void LabController::onAppended(const QString& runId, const std::shared_ptr<store::RunBatch>& appended) {
  auto found = watched_.find(runId);
  auto* run = window_.model()->run(runId);
  if (found == watched_.end() || !run) return;  // closed meanwhile
  found->second.errorLogged = false;
  apply_logged(*run, *appended);
  run->touch();
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::onReread(const QString& runId, const std::shared_ptr<widgets::RunData>& reread,
                             const QString& writer, const QString& error) {
  auto found = watched_.find(runId);
  auto* run = window_.model()->run(runId);
  if (found == watched_.end() || !run) return;  // closed meanwhile
  if (!error.isEmpty()) {
    if (writer.isEmpty()) {  // nobody will commit a better version: what was read before stays on view
      watched_.erase(found);
      run->state = widgets::RunState::Failed;
      run->error = error;
      window_.showError(
          QStringLiteral("%1: its writer has let go and the file cannot be read: %2").arg(run->name, error), runId);
    } else if (!found->second.errorLogged) {
      found->second.errorLogged = true;
      run->appendLog(
          QStringLiteral("%1 cannot read it again yet (%2): trying at the next commit").arg(timestamp(), error));
    }
  } else {
    found->second.errorLogged = false;
    const widgets::RunState fileState = reread->state;
    run->replaceRecord(std::move(*reread));
    if (writer.isEmpty()) {
      watched_.erase(found);
      run->state = fileState;
      const QString ending = fileState == widgets::RunState::Finished ? QStringLiteral("finished")
                             : run->hasLatestCheckpoint
                                 ? QStringLiteral("stopped with a \"latest\" checkpoint: Resume continues it here")
                                 : QStringLiteral("stopped before its first checkpoint");
      run->appendLog(QStringLiteral("%1 its writer has let go at step %2 of %3: %4")
                         .arg(timestamp())
                         .arg(run->currentStep)
                         .arg(run->totalSteps)
                         .arg(ending));
    }
  }
  if (watched_.empty()) follow_.stop();
  run->touch();
  window_.updateRunControls();
  window_.refreshViews();
}

void LabController::sweep(const QString& runId, const widgets::SweepChoice& choice) {
  auto* run = window_.model()->run(runId);
  if (!run) return;
  if (sweep_) {
    window_.showInfo(QStringLiteral("A sweep of %1 is under way: wait for it or cancel it first.")
                         .arg(window_.model()->run(sweepRunId_) ? window_.model()->run(sweepRunId_)->name
                                                                : QStringLiteral("another run")));
    return;
  }
  if (run->isActive()) {
    window_.showInfo(QStringLiteral("%1 is still training: sweep it once it has finished or stopped.").arg(run->name));
    return;
  }
  if (run->state == widgets::RunState::Watching) {
    window_.showInfo(
        QStringLiteral("%1 is being written by another process: sweep it once that run has finished or stopped.")
            .arg(run->name));
    return;
  }
  if (run->kind != widgets::RunKind::Layerwise) {
    window_.showInfo(QStringLiteral("Robustness sweeps are for layerwise-descent runs (text-* and video-*)."));
    return;
  }
  train::SweepRequest request;
  request.run_path = run->path.toStdString();
  request.noise = choice.noise.toStdString();
  request.gamma = choice.gamma.toStdString();
  request.seeds = choice.seeds;
  sweep_ = std::make_unique<train::SweepSession>(request);
  sweepRunId_ = runId;
  run->sweep = widgets::SweepActivity{};
  run->sweep.running = true;
  run->sweep.noise = choice.noise;
  run->appendLog(QStringLiteral("%1 sweeping %2 noise, γ %3, %4 seeds, from the latest checkpoint")
                     .arg(timestamp(), choice.noise, choice.gamma)
                     .arg(choice.seeds));
  // Called on the sweep's thread, once per cell: one queued call each.
  sweep_->on_progress([this, runId](const train::SweepProgress& progress) {
    postToGui([this, runId, progress] {
      auto* swept = window_.model()->run(runId);
      if (!swept || !swept->sweep.running) return;
      swept->sweep.done = static_cast<int>(progress.done);
      swept->sweep.cells = static_cast<int>(progress.cells);
      swept->sweep.gammaIndex = static_cast<int>(progress.gamma_index);
      swept->sweep.gammas = static_cast<int>(progress.gammas);
      swept->sweep.seed = static_cast<int>(progress.seed);
      swept->sweep.etaSeconds = progress.eta_seconds;
      swept->touch();
      window_.refreshViews();
    });
  });
  sweep_->start([this, runId](const record::SweepResult& result, const std::string& error, bool cancelled) {
    postToGui([this, runId, result, error, cancelled] {
      onSweepFinished(runId, result, QString::fromStdString(error), cancelled);
    });
  });
  window_.robustnessView()->setSweepRunning(true);
  window_.refreshViews();
}

void LabController::cancelSweep() {
  if (!sweep_) return;
  sweep_->cancel();
  if (auto* run = window_.model()->run(sweepRunId_)) {
    run->appendLog(QStringLiteral("%1 cancelling the sweep after its current cell").arg(timestamp()));
  }
}

void LabController::onSweepFinished(const QString& runId, const record::SweepResult& result, const QString& error,
                                    bool cancelled) {
  if (sweep_) sweep_->join();  // its thread has returned from its work: immediate
  sweep_.reset();
  sweepRunId_.clear();
  window_.robustnessView()->setSweepRunning(false);
  auto* run = window_.model()->run(runId);
  if (run) {
    run->sweep = widgets::SweepActivity{};
    if (cancelled) {
      run->appendLog(QStringLiteral("%1 sweep cancelled: the run file is as it was").arg(timestamp()));
      cancelledSweepMessage_ =
          QStringLiteral("The sweep of %1 was cancelled; its run file is unchanged.").arg(run->name);
      window_.showInfo(cancelledSweepMessage_);
    } else if (!error.isEmpty()) {
      window_.showError(QStringLiteral("the sweep of %1 failed: %2").arg(run->name, error), runId);
    } else {
      apply_sweep(*run, result);
      window_.clearMessage(cancelledSweepMessage_);  // a sweep has completed since: that notice no longer holds
      run->appendLog(QStringLiteral("%1 sweep of %2 noise stored in the run file")
                         .arg(timestamp(), QString::fromStdString(result.noise)));
    }
    run->touch();
  }
  window_.refreshViews();
}

}  // namespace descentlab::gui
