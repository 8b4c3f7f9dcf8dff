#pragma once
// The runs the lab shows, side by side. Each run keeps one colour for the life of the app, in every view. Views
// read the model when the main window's coalescing timer says something changed; nothing here draws.

#include <QObject>
#include <QStringList>
#include <QVector>

#include <memory>

#include "widgets/run_data.h"

namespace descentlab::widgets {

class LabModel : public QObject {
  Q_OBJECT

 public:
  explicit LabModel(QObject* parent = nullptr);

  // Adds a run, giving it a unique id, a unique name and the next free colour.
  RunData* addRun(std::unique_ptr<RunData> run);
  void removeRun(const QString& id);
  RunData* run(const QString& id) const;
  RunData* runAt(int index) const { return runs_.at(index).get(); }
  RunData* runByPath(const QString& path) const;
  int count() const { return static_cast<int>(runs_.size()); }
  QVector<RunData*> runs() const;

  // The run the single-run views (per-layer evaluations, λ, heat map) show; the first run when none is chosen.
  RunData* focusRun() const;
  void setFocusRun(const QString& id);

  // Config keys whose values differ between the runs (all keys' first differing ones first), without run-local
  // keys such as the seed's output path.
  QStringList differingKeys() const;

  // Sums every run's revision and the set of runs: views compare it to skip redraws.
  int64_t revision() const;

  // Tells views something changed (they redraw on the next coalescing tick).
  void markChanged() {
    ++structureRevision_;
    emit changed();
  }

 signals:
  void changed();
  void runsChanged();  // a run was added or removed, or the focus moved

 private:
  QColor nextColour() const;
  std::vector<std::unique_ptr<RunData>> runs_;
  QString focusId_;
  int64_t nextId_ = 1;
  int64_t structureRevision_ = 0;
};

// The lab's palette: distinguishable on a projector and for colour-blind viewers (Okabe-Ito, then Tableau).
const QVector<QColor>& runPalette();

}  // namespace descentlab::widgets
