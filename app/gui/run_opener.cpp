#include "app/gui/run_opener.h"

#include "app/gui/run_conversion.h"
#include "core/store/run_lock.h"
#include "core/store/run_writer.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include "widgets/lab_model.h"
#include "widgets/session_memory.h"

namespace descentlab::gui {
namespace {

// The step of a run's newest metric row (0 when it has none).
int64_t last_metric_step(const widgets::RunData& run) {
  double step = 0;
  for (const auto& track : run.scalars) {
    if (!track.steps.isEmpty()) step = std::max(step, track.steps.back());
  }
  return static_cast<int64_t>(step);
}

}  // namespace

RunOpener::RunOpener(widgets::MainWindow& window, WatchedFiles& watched, QObject* parent)
    : QObject(parent), window_(window), model_(*window.model()), watched_(watched) {}

RunOpener::~RunOpener() {
  stopOpening_->store(true);
  if (opener_.joinable()) opener_.join();
  if (openingRuns_ > 0) model_.setRunsToCome(0);
}

QString RunOpener::describeInterruption(const QString& path, const widgets::RunData& run) {
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

RunOpener::OpenedFile RunOpener::read(const QString& path) {
  OpenedFile opened;
  opened.path = path;
  opened.absolute = QFileInfo(path).absoluteFilePath();
  try {
    // Whether someone writes it, before reading: a writer that lets go meanwhile is caught at the next look, and
    // the follower reads whatever was committed after this read.
    opened.writer = WatchedFiles::writerOf(opened.absolute);
    opened.follower = std::make_shared<store::RunFollower>(QFile::encodeName(opened.absolute).toStdString());
    opened.run = load_run_file(*opened.follower->poll().whole);
  } catch (const std::exception& error) {
    opened.error = QString::fromUtf8(error.what());
  }
  return opened;
}

bool RunOpener::adopt(OpenedFile opened) {
  if (!opened.error.isEmpty()) {
    window_.showError(QStringLiteral("cannot open %1: %2").arg(opened.path, opened.error));
    return false;
  }
  if (auto* existing = model_.runByPath(opened.absolute)) {  // opened meanwhile
    model_.setFocusRun(existing->id);
    return false;
  }
  auto& run = opened.run;
  if (!opened.writer.isEmpty()) {
    run->state = widgets::RunState::Watching;
    run->appendLog(QStringLiteral("%1 %2 is being written by %3: watching it, read again at each commit")
                       .arg(widgets::LabModel::timestamp(), opened.absolute, opened.writer));
  }
  const widgets::RunData* added = model_.addRun(std::move(run));
  if (!opened.writer.isEmpty()) watched_.watch(added->id, std::move(opened.follower));
  // Said by the name the run has in the lab, and tied to the run: the bar goes once the run resumes.
  const QString interruption = opened.writer.isEmpty() ? describeInterruption(opened.absolute, *added) : QString();
  if (!interruption.isEmpty()) {
    model_.logToRun(added->id, interruption);
    window_.showInfo(interruption, added->id);
  }
  if (!added->branchParentProblem.isEmpty()) {  // issue 55: a branch's parent moved or changed
    const QString said = QStringLiteral("%1: %2").arg(added->name, added->branchParentProblem);
    model_.logToRun(added->id, said);
    window_.showInfo(said, added->id);
  }
  return true;
}

int RunOpener::open(const QStringList& paths) {
  QStringList opened;
  for (const auto& path : paths) {
    if (auto* existing = model_.runByPath(QFileInfo(path).absoluteFilePath())) {
      model_.setFocusRun(existing->id);
      continue;
    }
    if (adopt(read(path))) opened << path;
  }
  window_.session()->addRecentFiles(opened);
  return static_cast<int>(opened.size());
}

void RunOpener::openInBackground(const QStringList& paths) {
  QStringList wanted;
  for (int i = 0; i < paths.size(); ++i) {
    if (model_.runByPath(QFileInfo(paths[i]).absoluteFilePath())) continue;
    wanted << paths[i];
  }
  if (wanted.isEmpty()) return;
  if (opener_.joinable()) opener_.join();  // the files of an earlier call: read by now or soon
  openingRuns_ += static_cast<int>(wanted.size());
  model_.setRunsToCome(openingRuns_);
  const QString opening = QStringLiteral("Opening %1 run files…").arg(wanted.size());
  window_.showInfo(opening);
  opener_ = std::thread([this, wanted, opening, stop = stopOpening_] {
    // Handed over in batches (16 files or 100 ms): each batch costs the window one refresh of its runs table.
    auto batch = std::make_shared<std::vector<OpenedFile>>();
    auto sent = std::chrono::steady_clock::now();
    const auto send = [&] {
      if (batch->empty()) return;
      posted_.post([this, opening, files = std::move(batch)] {
        QStringList adopted;  // File > Open recent written once per batch (a settings write and a menu each)
        for (auto& file : *files) {
          const QString path = file.absolute;
          if (adopt(std::move(file))) adopted << path;
        }
        window_.session()->addRecentFiles(adopted);
        openingRuns_ -= static_cast<int>(files->size());
        model_.setRunsToCome(openingRuns_);  // at 0 the views draw every run read
        // Said over "Opening…" only: a run's notice shown meanwhile (an interrupted run's) stays.
        if (openingRuns_ == 0 && window_.lastMessage() == opening) {
          window_.showInfo(QStringLiteral("Opened the run files"));
        }
      });
      batch = std::make_shared<std::vector<OpenedFile>>();
      sent = std::chrono::steady_clock::now();
    };
    for (int i = 0; i < wanted.size(); ++i) {
      if (stop->load()) return;
      batch->push_back(read(wanted[i]));
      if (batch->size() >= 16 || std::chrono::steady_clock::now() - sent > std::chrono::milliseconds(100)) send();
    }
    send();
  });
}

bool RunOpener::save(const QString& runId, const QString& path) {
  const auto* run = model_.run(runId);
  if (!run) return false;
  if (QFileInfo(path).absoluteFilePath() == run->path) return true;  // it is written as it goes
  // The latest committed version packed into one file (the run file with its log's records folded in), written
  // beside the target and renamed, so a failed save never leaves half a file under the chosen name.
  try {
    // The save dialog asked before replacing a file; pack still refuses a run's own log, lock or checkpoint data.
    store::PackOptions options;
    options.overwrite = true;
    const store::PackResult packed =
        store::pack_run(QFile::encodeName(run->path).toStdString(), QFile::encodeName(path).toStdString(), options);
    if (!packed.warning.empty()) window_.showInfo(QString::fromStdString(packed.warning));
  } catch (const std::exception& error) {
    window_.showError(QStringLiteral("cannot save %1 as %2: %3").arg(run->name, path, QString::fromUtf8(error.what())),
                      runId);
    return false;
  }
  model_.logToRun(runId, QStringLiteral("saved a copy as %1").arg(path));
  window_.session()->addRecentFile(path);
  return true;
}

}  // namespace descentlab::gui
