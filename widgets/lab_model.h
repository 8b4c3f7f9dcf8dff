#pragma once
// The runs the lab shows, side by side. Each run keeps one colour for the life of the app, in every view. Views
// read the model when the main window's coalescing timer says something changed; nothing here draws.

#include <QObject>
#include <QSet>
#include <QStringList>
#include <QVector>

#include <functional>
#include <memory>

#include "core/record/band.h"
#include "widgets/run_data.h"
#include "widgets/study_rows.h"

namespace descentlab::widgets {

// Runs that differ only by their seeds, drawn in the views as their mean with a band (issue 35).
struct RunGroup {
  QString label;  // "vit-horst-quick, alpha 5.0 (3 seeds)"
  QColor colour;
  QVector<const RunData*> members;        // visible runs only: a hidden run is in no group
  QVector<const RunData*> hiddenMembers;  // its runs hidden from the plots (a legend click hides a whole group)
  // Every member hidden: the views list it in their legends, struck out, and draw nothing of it.
  bool hidden() const { return members.isEmpty(); }
};

// One group's series as a view draws it: its mean and band over the steps every member reached.
struct GroupBand {
  const RunGroup* group = nullptr;
  QString series;
  QVector<double> steps, mean, low, high;  // rows x width, row-major
  int width = 1;
  int members = 0;  // members that have the series
  bool shortened = false;
  double shortestStep = 0, longestStep = 0;
  double atStep = -1;
  QVector<double> columns;  // what each column stands for, where it is not a layer (a frontier's sparsity levels)  // a
                            // band across layers (x = layer): the step its rows are from, the last all members reached
};
// The band over members' scalar tracks (a member without rows is skipped).
GroupBand scalarBand(const QVector<const ScalarTrack*>& members, record::BandKind kind);
// The band over members' vector tracks (per-layer rows); members of another width are skipped.
GroupBand vectorBand(const QVector<const VectorTrack*>& members, record::BandKind kind);
// "band over the steps all 4 runs reached (to 300; the longest ran to 400)"; empty when no member ran longer.
QString bandNote(const GroupBand& band);
// "min–max" or "±1 s.d."
QString bandKindName(record::BandKind kind);

// " › alpha 0.1, epochs 4 @ step 200": what a branch changed ("constraints.alpha 0.4 -> 0.1; ..."), each key by its
// last part with its new value, and where; the end of a branch's name.
QString branchSuffix(const QString& changes, int64_t step);

class LabModel : public QObject {
  Q_OBJECT

 public:
  explicit LabModel(QObject* parent = nullptr);

  // Adds a run, giving it a unique id, a unique name and the next free colour. The runs the model hands out are
  // views to read: every change goes through changeRun (or setRunVisible), which announces it.
  const RunData* addRun(std::unique_ptr<RunData> run);
  void removeRun(const QString& id);
  const RunData* run(const QString& id) const { return find(id); }
  const RunData* runAt(int index) const { return runs_.at(index).get(); }
  const RunData* runByPath(const QString& path) const;
  int count() const { return static_cast<int>(runs_.size()); }
  QVector<const RunData*> runs() const;

  // The run the single-run views (per-layer evaluations, λ, heat map) show; the first run when none is chosen.
  const RunData* focusRun() const;
  QString focusRunId() const;  // "" while no run is open
  void setFocusRun(const QString& id);

  // Config keys whose values differ between the runs (all keys' first differing ones first), without run-local
  // keys such as the seed's output path.
  QStringList differingKeys() const;

  // Groups (issue 35): when on, the multi-run views draw each group of visible runs as its mean with a band, and the
  // single-run views the focus run's group. Groups are made by the app's StudyBackend (core/study's grouping) by
  // `keys`, or when empty by every differing key but the seeds.
  void setGroupBackend(const StudyBackend* backend) { groupBackend_ = backend; }
  const StudyBackend* groupBackend() const { return groupBackend_; }
  // Every run as a study row (path, name, config, each scalar's last value), in the model's order: what the
  // StudyBackend groups and filters.
  QVector<StudyRunRow> studyRows() const;
  void setGrouping(bool on, const QStringList& keys = {});
  bool grouped() const { return grouped_ && groupBackend_ != nullptr; }
  QStringList groupKeys() const { return groupKeys_; }
  void setBandKind(record::BandKind kind);
  record::BandKind bandKind() const { return bandKind_; }
  // The groups (empty unless grouped()), recomputed when runs or their visibility change. They are made from every
  // run, hidden or not, so that hiding runs changes neither the groups nor their colours; a group's label counts its
  // visible members ("alpha 5 (2 of 3 seeds)" while one is hidden).
  const QVector<RunGroup>& groups() const;
  // Hides every member of the group labelled `label`, or shows them all again when all are hidden (a legend click).
  // False when no group has that label.
  bool toggleGroup(const QString& label);
  // The group holding `run`; nullptr when not grouped or the run is hidden.
  const RunGroup* groupOf(const RunData* run) const;

  // Sums every run's revision and the set of runs: views compare it to skip redraws.
  int64_t revision() const;

  // Every change the app makes to a run goes through here: `change` edits it, then the run counts as changed and the
  // window redraws (views, runs table, log, run controls) once, on its next turn of the event loop, however many
  // changes came before. False, with nothing done, when the run is gone (closed meanwhile).
  bool changeRun(const QString& id, const std::function<void(RunData&)>& change);
  // Hides a run from every multi-run view, or shows it again (the runs table's menu, Ctrl+H, a legend click).
  void setRunVisible(const QString& id, bool visible);
  // What a person said of the run (its own name, tags and note, as stored in its run file): the name replaces the
  // automatic one in every view while it is set (made unique among the open runs); an empty name brings the automatic
  // one back. False when the run is gone.
  bool setAnnotation(const QString& id, const QString& ownName, const QStringList& tags, const QString& note);
  // A line in the run's log, stamped with the time of day ("14:02:11 paused after the current batch").
  bool logToRun(const QString& id, const QString& text);
  static QString timestamp();

  // Runs that are being read into the lab (a study's Draw groups): while any is still to come, the views wait and
  // draw once they are all in (a band over 2 of 3 members is not the group's), and only the runs table follows.
  void setRunsToCome(int count);
  int runsToCome() const { return runsToCome_; }

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
  RunData* find(const QString& id) const;
  // Names the runs named by their config (RunData::nameFromConfig) that share `run`'s experiment and seed: each
  // gets the keys in which they differ, at most three, so that no two read the same for a reason hidden in a key.
  void nameByConfig(RunData& run);
  std::vector<std::unique_ptr<RunData>> runs_;
  QString focusId_;
  int64_t nextId_ = 1;
  int64_t structureRevision_ = 0;
  int runsToCome_ = 0;
  // differingKeys() over the runs listed, extended run by run as runs are added (a table redraw with 300 runs open
  // recomputed it over every run and key: 10 ms); dropped when a run is removed or its config changes.
  mutable QStringList differingFor_;
  mutable QSet<QString> differing_;
  const StudyBackend* groupBackend_ = nullptr;
  bool grouped_ = false;
  QStringList groupKeys_;
  record::BandKind bandKind_ = record::BandKind::MinMax;
  mutable QVector<RunGroup> groups_;
  mutable QString groupsMadeFor_;  // the runs, visibility and configs the groups were made from
};

// The lab's palette: distinguishable on a projector and for colour-blind viewers (Okabe-Ito, then Tableau).
const QVector<QColor>& runPalette();

}  // namespace descentlab::widgets
