#include "app/gui/tour_branches.h"

#include "core/record/checkpoint.h"
#include "core/store/run_reader.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "widgets/lab_model.h"

namespace descentlab::gui {

TourBranches::TourBranches(widgets::MainWindow& window, LiveRuns& live, QObject* parent)
    : QObject(parent), window_(window), live_(live) {
  timer_.setInterval(kPollMs);
  connect(&timer_, &QTimer::timeout, this, &TourBranches::poll);
}

void TourBranches::add(const QString& parentName, int64_t step, config::ExperimentConfig config) {
  waiting_.push_back({parentName, step, std::move(config)});
  if (!timer_.isActive()) timer_.start();
}

void TourBranches::poll() {
  std::vector<Waiting> still;
  for (auto& waiting : waiting_) {
    if (!tryStart(waiting)) still.push_back(std::move(waiting));
  }
  waiting_ = std::move(still);
  if (waiting_.empty()) timer_.stop();
}

bool TourBranches::tryStart(const Waiting& waiting) {
  const widgets::RunData* parent = nullptr;
  for (const auto* run : window_.model()->runs()) {
    if (run->name == waiting.parentName) parent = run;
  }
  if (!parent || parent->state == widgets::RunState::Starting) return false;  // queued behind other runs, or opening
  if (parent->state == widgets::RunState::Failed) {
    window_.showError(
        QStringLiteral("%1 failed: its branch at step %2 does not start").arg(waiting.parentName).arg(waiting.step));
    return true;
  }
  int64_t latest = -1;
  try {
    for (const auto& checkpoint : store::RunReader(parent->path.toStdString()).checkpoints()) {
      if (checkpoint.step == waiting.step) {
        const QString id = live_.branch(parent->path, parent->name, waiting.step, waiting.config);
        if (!id.isEmpty()) emit started(id);
        return true;
      }
      if (checkpoint.label == record::checkpoint_label::kLatest) latest = checkpoint.step;
    }
  } catch (const std::exception&) {
    return false;  // not committed yet: the next poll reads it again
  }
  if (parent->isActive() || latest < 0) return false;
  // Ended before that step (a run shortened below it): from its latest state, with one epoch more than the parent
  // had so that the branch trains at all, said.
  config::ExperimentConfig config = waiting.config;
  config.train.epochs =
      std::max<int64_t>(config.train.epochs, parent->config.value(QStringLiteral("train.epochs")).toLongLong() + 1);
  window_.showInfo(QStringLiteral("%1 ended at step %2, before step %3: its branch starts from there, for %4 epochs")
                       .arg(parent->name)
                       .arg(latest)
                       .arg(waiting.step)
                       .arg(config.train.epochs));
  const QString id = live_.branch(parent->path, parent->name, latest, std::move(config));
  if (!id.isEmpty()) emit started(id);
  return true;
}

}  // namespace descentlab::gui
