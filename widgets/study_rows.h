#pragma once
// A study's runs as plain Qt rows, and what the app gives widgets to group, filter and pair them (core/study through
// app/gui/study_backend): the Study dock and the lab's grouped views both use it. Plain Qt; no LibTorch.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

namespace descentlab::widgets {

// One run of the study as the table shows it: read without its series (its header and each series' last value).
struct StudyRunRow {
  QString path;
  QString name;
  QString error;                  // why it could not be read ("" when it was)
  QMap<QString, QString> config;  // flat keys ("train.lr") to values
  QMap<QString, double> finals;   // each scalar series' last value
  qint64 lastStep = 0;
  QString label;  // the name a person gave the run ("" for none), its tags and its note
  QStringList tags;
  QString note;
  // A branch (issue 55): its parent's run file, the step and what it changed ("constraints.alpha 0.4 -> 0.1");
  // -1: not a branch. The table lists it under its parent, indented, named by what it changed.
  QString branchParent;
  qint64 branchStep = -1;
  QString branchChanges;
};

struct StudyGroupRow {
  QString label;  // "vit-horst-quick, alpha 5.0 (3 seeds)"
  QMap<QString, QString> values;
  QVector<int> members;  // indices into the runs
  int count = 0;         // members with the metric
  double mean = 0.0, standardDeviation = 0.0, min = 0.0, max = 0.0;
};

struct StudyPairRow {
  QString seed;
  double a = 0.0, b = 0.0, difference = 0.0;  // a and b: the mean over the runs of this seed in each group
  bool aWins = false;
  int aRuns = 1, bRuns = 1;  // runs of this seed in A and B (re-runs and copies are averaged, the seed counted once)
};

struct StudyPairing {
  QString metric;
  bool lowerIsBetter = false;
  QVector<StudyPairRow> rows;
  double mean = 0.0, standardDeviation = 0.0;
  int wins = 0;
  QString duplicates;  // "" or which seeds have several runs ("seed 0: A 20 runs, B 20 runs; ... (averaged, ...)")
};

// What the app gives the browser: core/study's grouping, filter and pairing over the rows.
class StudyBackend {
 public:
  virtual ~StudyBackend() = default;
  // Every config key whose value differs between the runs (the table's columns).
  virtual QStringList varyingKeys(const QVector<StudyRunRow>& runs) const = 0;
  // Every config key whose value differs, but the seeds.
  virtual QStringList defaultGroupKeys(const QVector<StudyRunRow>& runs) const = 0;
  // Which runs the filter text keeps; `*error` names the term it cannot read (then every run is kept), or the keys no
  // run has with the nearest ones they do (then the runs matched, none where such a key must match, are kept).
  virtual QVector<bool> filter(const QVector<StudyRunRow>& runs, const QString& text, QString* error) const = 0;
  // The kept runs grouped by `keys`, each group's `metric` over its members.
  virtual QVector<StudyGroupRow> group(const QVector<StudyRunRow>& runs, const QVector<bool>& kept,
                                       const QStringList& keys, const QString& metric) const = 0;
  virtual StudyPairing pair(const QVector<StudyRunRow>& runs, const StudyGroupRow& a, const StudyGroupRow& b,
                            const QString& metric) const = 0;
};

}  // namespace descentlab::widgets
