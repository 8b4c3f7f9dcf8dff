#include "app/gui/watched_files.h"

#include "app/gui/run_conversion.h"
#include "core/store/run_lock.h"

#include <QFile>

#include <exception>
#include <utility>
#include <vector>

#include "widgets/lab_model.h"

namespace descentlab::gui {

WatchedFiles::WatchedFiles(widgets::MainWindow& window, QObject* parent)
    : QObject(parent), window_(window), model_(*window.model()) {
  follow_.setInterval(kFollowMs);
  connect(&follow_, &QTimer::timeout, this, &WatchedFiles::follow);
}

WatchedFiles::~WatchedFiles() {
  follow_.stop();
  if (reader_.joinable()) reader_.join();
}

QString WatchedFiles::writerOf(const QString& path) {
  return QString::fromStdString(store::RunFileLock::current_writer(QFile::encodeName(path).toStdString()));
}

void WatchedFiles::watch(const QString& runId, std::shared_ptr<store::RunFollower> follower) {
  watched_[runId] = WatchedFile{std::move(follower)};
  if (!follow_.isActive()) follow_.start();
}

void WatchedFiles::forget(const QString& runId) {
  watched_.erase(runId);
  if (watched_.empty()) follow_.stop();
}

void WatchedFiles::follow() {
  if (reading_) return;
  struct Due {
    QString runId, path;
    std::shared_ptr<store::RunFollower> follower;
  };
  std::vector<Due> due;
  for (const auto& [id, file] : watched_) {
    const auto* run = model_.run(id);
    if (run) due.push_back({id, run->path, file.follower});
  }
  if (due.empty()) return;
  reading_ = true;
  if (reader_.joinable()) reader_.join();  // the previous pass posted its end: it has returned
  reader_ = std::thread([this, due] {
    for (const Due& file : due) {
      const QString writer = writerOf(file.path);    // first: a file read after its writer let go is final
      if (writer.isEmpty()) file.follower->reset();  // the final version, read whole
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
        posted_.post([this, file, appended] { onAppended(file.runId, appended); });
      } else if (reread || !error.isEmpty()) {
        posted_.post([this, file, reread, writer, error] { onReread(file.runId, reread, writer, error); });
      }
    }
    posted_.post([this] { reading_ = false; });
  });
}

void WatchedFiles::onAppended(const QString& runId, const std::shared_ptr<store::RunBatch>& appended) {
  auto found = watched_.find(runId);
  if (found == watched_.end()) return;  // closed meanwhile
  found->second.errorLogged = false;
  model_.changeRun(runId, [&appended](widgets::RunData& run) { apply_logged(run, *appended); });
  if (appended->annotation) {
    widgets::RunData named;
    set_annotation(named, *appended->annotation);
    takeAnnotation(runId, named);
  }
}

void WatchedFiles::takeAnnotation(const QString& runId, const widgets::RunData& named) {
  const auto* run = model_.run(runId);
  if (run && (run->ownName != named.ownName || run->tags != named.tags || run->note != named.note)) {
    model_.setAnnotation(runId, named.ownName, named.tags, named.note);
  }
}

void WatchedFiles::onReread(const QString& runId, const std::shared_ptr<widgets::RunData>& reread,
                            const QString& writer, const QString& error) {
  auto found = watched_.find(runId);
  const auto* run = model_.run(runId);
  if (found == watched_.end() || !run) return;  // closed meanwhile
  if (!error.isEmpty()) {
    if (writer.isEmpty()) {  // nobody will commit a better version: what was read before stays on view
      forget(runId);
      model_.changeRun(runId, [&error](widgets::RunData& failed) {
        failed.state = widgets::RunState::Failed;
        failed.error = error;
      });
      window_.showError(
          QStringLiteral("%1: its writer has let go and the file cannot be read: %2").arg(run->name, error), runId);
    } else if (!found->second.errorLogged) {
      found->second.errorLogged = true;
      model_.logToRun(runId, QStringLiteral("cannot read it again yet (%1): trying at the next commit").arg(error));
    }
    return;
  }
  found->second.errorLogged = false;
  takeAnnotation(runId, *reread);
  if (!writer.isEmpty()) {
    model_.changeRun(runId, [&reread](widgets::RunData& followed) { followed.replaceRecord(std::move(*reread)); });
    return;
  }
  forget(runId);
  model_.changeRun(runId, [&reread](widgets::RunData& ended) {
    const widgets::RunState fileState = reread->state;
    ended.replaceRecord(std::move(*reread));
    ended.state = fileState;
    const QString ending = fileState == widgets::RunState::Finished ? QStringLiteral("finished")
                           : ended.hasLatestCheckpoint
                               ? QStringLiteral("stopped with a \"latest\" checkpoint: Resume continues it here")
                               : QStringLiteral("stopped before its first checkpoint");
    ended.appendLog(QStringLiteral("%1 its writer has let go at step %2 of %3: %4")
                        .arg(widgets::LabModel::timestamp())
                        .arg(ended.currentStep)
                        .arg(ended.totalSteps)
                        .arg(ending));
  });
}

}  // namespace descentlab::gui
