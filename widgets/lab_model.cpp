#include "widgets/lab_model.h"

#include <QSet>

namespace descentlab::widgets {

const QVector<QColor>& runPalette() {
  static const QVector<QColor> palette = {QColor(0, 114, 178),   QColor(213, 94, 0),   QColor(0, 158, 115),
                                          QColor(204, 121, 167), QColor(230, 159, 0),  QColor(86, 180, 233),
                                          QColor(120, 94, 240),  QColor(140, 86, 75),  QColor(127, 127, 127),
                                          QColor(188, 189, 34),  QColor(23, 190, 207), QColor(0, 0, 0)};
  return palette;
}

LabModel::LabModel(QObject* parent) : QObject(parent) {}

QColor LabModel::nextColour() const {
  // The first palette colour no live run uses; colours of removed runs come back into use.
  for (const auto& colour : runPalette()) {
    bool used = false;
    for (const auto& run : runs_) used = used || run->colour == colour;
    if (!used) return colour;
  }
  return runPalette().at(static_cast<int>(runs_.size()) % runPalette().size());
}

RunData* LabModel::addRun(std::unique_ptr<RunData> run) {
  run->id = QStringLiteral("run%1").arg(nextId_++);
  if (!run->colour.isValid()) run->colour = nextColour();
  QString base = run->name.isEmpty() ? QStringLiteral("run") : run->name;
  QString name = base;
  for (int suffix = 2;; ++suffix) {
    bool taken = false;
    for (const auto& other : runs_) taken = taken || other->name == name;
    if (!taken) break;
    name = QStringLiteral("%1 (%2)").arg(base).arg(suffix);
  }
  run->name = name;
  runs_.push_back(std::move(run));
  if (focusId_.isEmpty()) focusId_ = runs_.back()->id;
  ++structureRevision_;
  emit runsChanged();
  emit changed();
  return runs_.back().get();
}

void LabModel::removeRun(const QString& runId) {
  const QString id = runId;  // a copy: the caller's string may be the removed run's own id
  for (auto it = runs_.begin(); it != runs_.end(); ++it) {
    if ((*it)->id == id) {
      runs_.erase(it);
      if (focusId_ == id) focusId_ = runs_.empty() ? QString() : runs_.front()->id;
      ++structureRevision_;
      emit runsChanged();
      emit changed();
      return;
    }
  }
}

RunData* LabModel::run(const QString& id) const {
  for (const auto& run : runs_) {
    if (run->id == id) return run.get();
  }
  return nullptr;
}

RunData* LabModel::runByPath(const QString& path) const {
  for (const auto& run : runs_) {
    if (run->path == path) return run.get();
  }
  return nullptr;
}

QVector<RunData*> LabModel::runs() const {
  QVector<RunData*> all;
  for (const auto& run : runs_) all.push_back(run.get());
  return all;
}

RunData* LabModel::focusRun() const {
  if (auto* focus = run(focusId_)) return focus;
  return runs_.empty() ? nullptr : runs_.front().get();
}

void LabModel::setFocusRun(const QString& id) {
  if (id == focusId_ || !run(id)) return;
  focusId_ = id;
  ++structureRevision_;
  emit runsChanged();
  emit changed();
}

QStringList LabModel::differingKeys() const {
  QStringList keys;
  if (runs_.size() < 2) return keys;
  QSet<QString> all;
  for (const auto& run : runs_) {
    for (auto it = run->config.cbegin(); it != run->config.cend(); ++it) all.insert(it.key());
  }
  QStringList sorted(all.begin(), all.end());
  sorted.sort();
  for (const auto& key : sorted) {
    if (key == QStringLiteral("name")) continue;  // the run's name is its first column already
    const QString first = runs_.front()->config.value(key, QStringLiteral("(unset)"));
    for (const auto& run : runs_) {
      if (run->config.value(key, QStringLiteral("(unset)")) != first) {
        keys.push_back(key);
        break;
      }
    }
  }
  return keys;
}

int64_t LabModel::revision() const {
  int64_t total = structureRevision_ * 1000003;
  for (const auto& run : runs_) total += run->revision();
  return total;
}

}  // namespace descentlab::widgets
