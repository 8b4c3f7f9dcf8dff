#include "widgets/lab_model.h"

#include <QDateTime>
#include <QFileInfo>
#include <QSet>

#include <cmath>

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

const RunData* LabModel::addRun(std::unique_ptr<RunData> run) {
  run->id = QStringLiteral("run%1").arg(nextId_++);
  if (!run->colour.isValid()) run->colour = nextColour();
  if (run->nameFromConfig) nameByConfig(*run);
  run->automaticName = run->name;
  if (!run->ownName.isEmpty()) run->name = run->ownName;
  QString base = run->name.isEmpty() ? QStringLiteral("run") : run->name;
  QSet<QString> taken;  // one pass over the runs: a study of 300 "seed0" files made this quadratic per run
  for (const auto& other : runs_) taken.insert(other->name);
  QString name = base;
  for (int suffix = 2; taken.contains(name); ++suffix) name = QStringLiteral("%1 (%2)").arg(base).arg(suffix);
  run->name = name;
  runs_.push_back(std::move(run));
  if (focusId_.isEmpty()) focusId_ = runs_.back()->id;
  ++structureRevision_;
  emit runsChanged();
  emit changed();
  return runs_.back().get();
}

QString branchSuffix(const QString& changes, int64_t step) {
  QStringList changed;
  for (const QString& change : changes.split(QStringLiteral("; "), Qt::SkipEmptyParts)) {
    const QString key = change.section(QLatin1Char(' '), 0, 0).section(QLatin1Char('.'), -1);
    changed << key + QLatin1Char(' ') + change.section(QStringLiteral(" -> "), -1);
  }
  return QStringLiteral(" › %1 @ step %2")
      .arg(changed.isEmpty() ? QStringLiteral("branch") : changed.join(QStringLiteral(", ")))
      .arg(step);
}

namespace {

QString branchSuffixOf(const RunData& run) {
  return run.branchStep < 0 ? QString() : branchSuffix(run.branchChanges, run.branchStep);
}

// "vit-horst-quick seed 0": the experiment's name and its seed, the start of a config-named run's name; a branch's
// what it changed after it.
QString experimentAndSeed(const RunData& run) {
  QString name = run.config.value(QStringLiteral("name"));
  if (name.isEmpty()) name = QFileInfo(run.path).completeBaseName();
  const QString seed = run.config.value(QStringLiteral("train.seed"));
  return (seed.isEmpty() ? name : name + QStringLiteral(" seed ") + seed) + branchSuffixOf(run);
}

// Keys that name a run's own files or its seeds: they tell every run apart and say nothing of what it is.
bool describesTheRun(const QString& key) {
  static const QStringList local = {QStringLiteral("name"), QStringLiteral("train.seed"),
                                    QStringLiteral("data.split_seed")};
  return !local.contains(key) && !key.endsWith(QStringLiteral(".sha256")) && !key.endsWith(QStringLiteral(".path")) &&
         !key.endsWith(QStringLiteral("_path")) && !key.endsWith(QStringLiteral(".out"));
}

}  // namespace

void LabModel::nameByConfig(RunData& run) {
  const QString base = experimentAndSeed(run);
  QVector<RunData*> alike{&run};
  for (const auto& other : runs_) {
    if (other->nameFromConfig && experimentAndSeed(*other) == base) alike << other.get();
  }
  run.name = base;
  if (alike.size() == 1) return;
  // The keys whose values differ among them, in key order; each run is named by its values of the first three.
  const QString unset = QStringLiteral("(unset)");
  QStringList keys;
  QSet<QString> all;
  for (const RunData* one : alike) {
    for (auto it = one->config.cbegin(); it != one->config.cend(); ++it) all.insert(it.key());
  }
  for (const QString& key : all) {
    if (!describesTheRun(key)) continue;
    const QString first = alike.front()->config.value(key, unset);
    for (const RunData* one : alike) {
      if (one->config.value(key, unset) != first) {
        keys << key;
        break;
      }
    }
  }
  keys.sort();
  // A key by its last part ("alpha"; "optimizer" for "optimizer.name") unless two differing keys share it.
  QMap<QString, int> lastParts;
  const auto lastPart = [](const QString& key) {
    const QString last = key.section(QLatin1Char('.'), -1);
    return last == QStringLiteral("name") && key.contains(QLatin1Char('.')) ? key.section(QLatin1Char('.'), -2, -2)
                                                                            : last;
  };
  for (const QString& key : keys) ++lastParts[lastPart(key)];
  for (RunData* one : alike) {
    QStringList words;
    for (const QString& key : keys.mid(0, 3)) {
      words << (lastParts[lastPart(key)] == 1 ? lastPart(key) : key) + QLatin1Char(' ') + one->config.value(key, unset);
    }
    // A run a person named keeps that name; its automatic one is what comes back when the name is cleared.
    QString& automatic = one->ownName.isEmpty() ? one->name : one->automaticName;
    if (!words.isEmpty()) automatic = base + QStringLiteral(", ") + words.join(QStringLiteral(", "));
  }
  // The others stay unique among the open runs (the new run is made unique by addRun): runs alike in every key keep
  // their " (2)".
  if (keys.isEmpty()) return;
  QSet<QString> taken;
  for (const auto& other : runs_) {
    if (!alike.contains(other.get())) taken.insert(other->name);
  }
  for (RunData* one : alike) {
    if (one == &run || !one->ownName.isEmpty()) continue;
    const QString wanted = one->name;
    for (int suffix = 2; taken.contains(one->name); ++suffix)
      one->name = QStringLiteral("%1 (%2)").arg(wanted).arg(suffix);
    taken.insert(one->name);
  }
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

RunData* LabModel::find(const QString& id) const {
  for (const auto& run : runs_) {
    if (run->id == id) return run.get();
  }
  return nullptr;
}

const RunData* LabModel::runByPath(const QString& path) const {
  for (const auto& run : runs_) {
    if (run->path == path) return run.get();
  }
  return nullptr;
}

QVector<const RunData*> LabModel::runs() const {
  QVector<const RunData*> all;
  for (const auto& run : runs_) all.push_back(run.get());
  return all;
}

const RunData* LabModel::focusRun() const {
  if (auto* focus = run(focusId_)) return focus;
  return runs_.empty() ? nullptr : runs_.front().get();
}

QString LabModel::focusRunId() const {
  const RunData* focus = focusRun();
  return focus ? focus->id : QString();
}

bool LabModel::changeRun(const QString& id, const std::function<void(RunData&)>& change) {
  RunData* changed = find(id);
  if (!changed) return false;
  const QMap<QString, QString> config = changed->config;  // shared, not copied
  change(*changed);
  if (changed->config != config) differingFor_.clear();
  changed->touch();
  emit this->changed();
  return true;
}

bool LabModel::setAnnotation(const QString& id, const QString& ownName, const QStringList& tags, const QString& note) {
  RunData* named = find(id);
  if (!named) return false;
  if (named->ownName.isEmpty()) named->automaticName = named->name;
  named->ownName = ownName;
  named->tags = tags;
  named->note = note;
  const QString base = ownName.isEmpty() ? named->automaticName : ownName;
  QSet<QString> taken;
  for (const auto& other : runs_) {
    if (other.get() != named) taken.insert(other->name);
  }
  named->name = base;
  for (int suffix = 2; taken.contains(named->name); ++suffix)
    named->name = QStringLiteral("%1 (%2)").arg(base).arg(suffix);
  named->touch();
  ++structureRevision_;
  emit runsChanged();
  emit changed();
  return true;
}

void LabModel::setRunVisible(const QString& id, bool visible) {
  const RunData* shown = run(id);
  if (!shown || shown->visible == visible) return;
  changeRun(id, [visible](RunData& run) { run.visible = visible; });
}

QString LabModel::timestamp() {
  return QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
}

bool LabModel::logToRun(const QString& id, const QString& text) {
  return changeRun(id, [&text](RunData& run) { run.appendLog(QStringLiteral("%1 %2").arg(timestamp(), text)); });
}

void LabModel::setRunsToCome(int count) {
  if (count == runsToCome_) return;
  runsToCome_ = count;
  ++structureRevision_;
  emit changed();
}

void LabModel::setFocusRun(const QString& id) {
  if (id == focusId_ || !run(id)) return;
  focusId_ = id;
  ++structureRevision_;
  emit runsChanged();
  emit changed();
}

QStringList LabModel::differingKeys() const {
  if (runs_.size() < 2) return {};
  // The cache holds for the runs it was made over if they are still the first ones, in the same order.
  bool prefix = !differingFor_.isEmpty() && differingFor_.size() <= static_cast<qsizetype>(runs_.size());
  for (qsizetype i = 0; prefix && i < differingFor_.size(); ++i) prefix = runs_[i]->id == differingFor_[i];
  if (!prefix) {
    differingFor_ = {runs_.front()->id};
    differing_.clear();
  }
  // A key differs when some run's value (or "(unset)") is not the first run's.
  const auto& first = runs_.front()->config;
  const QString unset = QStringLiteral("(unset)");
  for (auto i = static_cast<size_t>(differingFor_.size()); i < runs_.size(); ++i) {
    const auto& config = runs_[i]->config;
    for (auto it = config.cbegin(); it != config.cend(); ++it) {
      if (!differing_.contains(it.key()) && first.value(it.key(), unset) != it.value()) differing_.insert(it.key());
    }
    for (auto it = first.cbegin(); it != first.cend(); ++it) {
      if (!config.contains(it.key()) && it.value() != unset) differing_.insert(it.key());
    }
    differingFor_ << runs_[i]->id;
  }
  QStringList keys(differing_.begin(), differing_.end());
  keys.removeAll(QStringLiteral("name"));  // the run's name is its first column already
  keys.sort();
  return keys;
}

void LabModel::setGrouping(bool on, const QStringList& keys) {
  if (on == grouped_ && keys == groupKeys_) return;
  grouped_ = on;
  groupKeys_ = keys;
  groupsMadeFor_.clear();
  markChanged();
}

void LabModel::setBandKind(record::BandKind kind) {
  if (kind == bandKind_) return;
  bandKind_ = kind;
  markChanged();
}

const QVector<RunGroup>& LabModel::groups() const {
  if (!grouped()) {
    groups_.clear();
    groupsMadeFor_.clear();
    return groups_;
  }
  QString key = groupKeys_.join(QLatin1Char(','));
  for (const auto& run : runs_) {
    key += QLatin1Char('|') + run->id + (run->visible ? QLatin1Char('+') : QLatin1Char('-'));
  }
  if (key == groupsMadeFor_) return groups_;
  groupsMadeFor_ = key;
  groups_.clear();
  const QVector<StudyRunRow> rows = studyRows();
  const QStringList keys = groupKeys_.isEmpty() ? groupBackend_->defaultGroupKeys(rows) : groupKeys_;
  const auto made = groupBackend_->group(rows, QVector<bool>(rows.size(), true), keys, QString());
  for (int g = 0; g < made.size(); ++g) {
    RunGroup group;
    group.label = made[g].label;
    group.colour = runPalette().at(g % runPalette().size());
    for (int member : made[g].members) {
      const RunData* run = runs_.at(member).get();
      (run->visible ? group.members : group.hiddenMembers).push_back(run);
    }
    // "(3 seeds)" -> "(2 of 3 seeds)": what the band is made of.
    const int open = static_cast<int>(group.label.lastIndexOf(QStringLiteral(" (")));
    if (!group.hiddenMembers.isEmpty() && !group.members.isEmpty() && open >= 0) {
      group.label.insert(open + 2, QStringLiteral("%1 of ").arg(group.members.size()));
    }
    groups_.push_back(group);
  }
  return groups_;
}

QVector<StudyRunRow> LabModel::studyRows() const {
  QVector<StudyRunRow> rows;
  rows.reserve(static_cast<qsizetype>(runs_.size()));
  for (const auto& run : runs_) {
    StudyRunRow row;
    row.path = run->path;
    row.name = run->name;
    row.config = run->config;
    row.label = run->ownName;
    row.tags = run->tags;
    row.note = run->note;
    for (auto it = run->scalars.cbegin(); it != run->scalars.cend(); ++it) {
      if (!it->values.isEmpty()) row.finals[it.key()] = it->values.back();
    }
    rows.push_back(row);
  }
  return rows;
}

bool LabModel::toggleGroup(const QString& label) {
  for (const auto& group : groups()) {
    if (group.label != label) continue;
    const bool show = group.hidden();
    for (const auto* member : group.members + group.hiddenMembers) {
      RunData* run = find(member->id);
      run->visible = show;
      run->touch();
    }
    markChanged();
    return true;
  }
  return false;
}

const RunGroup* LabModel::groupOf(const RunData* run) const {
  for (const auto& group : groups()) {
    if (group.members.contains(run)) return &group;
  }
  return nullptr;
}

namespace {

QVector<double> toQVector(const std::vector<double>& values) {
  return QVector<double>(values.begin(), values.end());
}

GroupBand toGroupBand(const record::BandRows& rows) {
  GroupBand band;
  band.width = static_cast<int>(rows.width);
  band.steps = toQVector(rows.steps);
  band.mean = toQVector(rows.mean);
  band.low = toQVector(rows.low);
  band.high = toQVector(rows.high);
  band.members = static_cast<int>(rows.members);
  band.shortened = rows.shortened;
  band.shortestStep = rows.shortest_step;
  band.longestStep = rows.longest_step;
  return band;
}

}  // namespace

GroupBand scalarBand(const QVector<const ScalarTrack*>& members, record::BandKind kind) {
  const auto rows = record::band_over(
      static_cast<size_t>(members.size()), 1, [&](size_t m) { return static_cast<size_t>(members[m]->steps.size()); },
      [&](size_t m, size_t r) { return members[m]->steps[r]; },
      [&](size_t m, size_t r, size_t) { return members[m]->values[r]; }, kind);
  return toGroupBand(rows);
}

GroupBand vectorBand(const QVector<const VectorTrack*>& members, record::BandKind kind) {
  QVector<const VectorTrack*> same;
  for (const auto* track : members) {
    if (track->rows.isEmpty()) continue;
    if (same.isEmpty() || track->width == same.front()->width) same.push_back(track);
  }
  const size_t width = same.isEmpty() ? 1 : static_cast<size_t>(std::max(same.front()->width, 1));
  const auto rows = record::band_over(
      static_cast<size_t>(same.size()), width, [&](size_t m) { return static_cast<size_t>(same[m]->steps.size()); },
      [&](size_t m, size_t r) { return same[m]->steps[r]; },
      [&](size_t m, size_t r, size_t c) {
        const auto& row = same[m]->rows[r];
        return c < static_cast<size_t>(row.size()) ? row[c] : qQNaN();
      },
      kind);
  return toGroupBand(rows);
}

QString bandNote(const GroupBand& band) {
  if (!band.shortened) return {};
  return QStringLiteral("band over the steps all %1 runs reached (to %2; the longest ran to %3)")
      .arg(band.members)
      .arg(std::llround(band.steps.isEmpty() ? band.shortestStep : band.steps.back()))
      .arg(std::llround(band.longestStep));
}

QString bandKindName(record::BandKind kind) {
  return kind == record::BandKind::MinMax ? QStringLiteral("min–max") : QStringLiteral("±1 s.d.");
}

int64_t LabModel::revision() const {
  int64_t total = structureRevision_ * 1000003;
  for (const auto& run : runs_) total += run->revision();
  return total;
}

}  // namespace descentlab::widgets
