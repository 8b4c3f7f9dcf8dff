#include "app/gui/study_backend.h"

namespace descentlab::gui {
namespace {

study::RunEntry to_entry(const widgets::StudyRunRow& row) {
  study::RunEntry entry;
  entry.path = row.path.toStdString();
  entry.name = row.name.toStdString();
  entry.error = row.error.toStdString();
  for (auto it = row.config.begin(); it != row.config.end(); ++it) {
    entry.config[it.key().toStdString()] = it.value().toStdString();
  }
  for (auto it = row.finals.begin(); it != row.finals.end(); ++it) {
    entry.finals[it.key().toStdString()] = {row.lastStep, it.value()};
  }
  entry.last_step = row.lastStep;
  entry.label = row.label.toStdString();
  for (const auto& tag : row.tags) entry.tags.push_back(tag.toStdString());
  entry.note = row.note.toStdString();
  return entry;
}

QStringList to_qt(const std::vector<std::string>& items) {
  QStringList list;
  for (const auto& item : items) list << QString::fromStdString(item);
  return list;
}

std::vector<std::string> wanted_keys(const QStringList& keys) {
  std::vector<std::string> wanted;
  for (const auto& key : keys) wanted.push_back(key.toStdString());
  return wanted;
}

study::Group to_group(const widgets::StudyGroupRow& row) {
  study::Group group;
  group.label = row.label.toStdString();
  for (int member : row.members) group.members.push_back(static_cast<size_t>(member));
  return group;
}

}  // namespace

widgets::StudyRunRow to_study_row(const study::RunEntry& entry) {
  widgets::StudyRunRow row;
  row.path = QString::fromStdString(entry.path);
  row.name = QString::fromStdString(entry.name);
  row.error = QString::fromStdString(entry.error);
  for (const auto& [key, value] : entry.config) row.config[QString::fromStdString(key)] = QString::fromStdString(value);
  for (const auto& [key, value] : entry.finals) row.finals[QString::fromStdString(key)] = value.value;
  row.lastStep = entry.last_step;
  row.label = QString::fromStdString(entry.label);
  row.tags = to_qt(entry.tags);
  row.note = QString::fromStdString(entry.note);
  row.branchParent = QString::fromStdString(entry.branch_parent);
  row.branchStep = entry.branch_step;
  row.branchChanges = QString::fromStdString(entry.branch_changes);
  return row;
}

std::vector<study::RunEntry>& StudyBackendImpl::entries(const QVector<widgets::StudyRunRow>& rows) const {
  // Kept while every row seen before is still where it was (same path, same error); else made anew.
  bool prefix = paths_.size() <= rows.size();
  for (int i = 0; prefix && i < paths_.size(); ++i) {
    prefix = rows[i].path == paths_[i] && rows[i].error.toStdString() == entries_[static_cast<size_t>(i)].error;
  }
  if (!prefix) {
    entries_.clear();
    paths_.clear();
  }
  for (int i = static_cast<int>(paths_.size()); i < rows.size(); ++i) {
    entries_.push_back(to_entry(rows[i]));
    paths_ << rows[i].path;
  }
  return entries_;
}

QStringList StudyBackendImpl::varyingKeys(const QVector<widgets::StudyRunRow>& runs) const {
  return to_qt(study::varying_keys(entries(runs)));
}

QStringList StudyBackendImpl::defaultGroupKeys(const QVector<widgets::StudyRunRow>& runs) const {
  return to_qt(study::default_group_keys(entries(runs)));
}

QVector<bool> StudyBackendImpl::filter(const QVector<widgets::StudyRunRow>& runs, const QString& text,
                                       QString* error) const {
  QVector<bool> kept(runs.size(), true);
  try {
    const study::RunFilter filter(text.toStdString());
    if (filter.empty()) return kept;
    // The rows as given: the cache entries() keeps for grouping is by path, and a live run's final values move
    // (the Runs table filters the lab's open runs as they train).
    std::vector<study::RunEntry> all;
    all.reserve(static_cast<size_t>(runs.size()));
    for (const auto& row : runs) all.push_back(to_entry(row));
    for (int i = 0; i < runs.size(); ++i) kept[i] = filter.matches(all[static_cast<size_t>(i)]);
    // A key no run has matches nothing: say so, with the keys the runs do have nearest to it.
    const std::string unknown = filter.unknown_keys_text(all);
    if (!unknown.empty() && error) *error = QString::fromStdString(unknown);
  } catch (const std::exception& failure) {
    if (error) *error = QString::fromStdString(failure.what());
  }
  return kept;
}

QVector<widgets::StudyGroupRow> StudyBackendImpl::group(const QVector<widgets::StudyRunRow>& runs,
                                                        const QVector<bool>& kept, const QStringList& keys,
                                                        const QString& metric) const {
  // Runs the filter hides are in no group: they stay hidden in every view (marked as unreadable for the grouping,
  // then given their own error back).
  std::vector<study::RunEntry>& entries = this->entries(runs);
  std::vector<std::string> errors(entries.size());
  for (int i = 0; i < runs.size(); ++i) {
    if (i < kept.size() && !kept[i]) std::swap(errors[static_cast<size_t>(i)], entries[static_cast<size_t>(i)].error);
    if (i < kept.size() && !kept[i]) entries[static_cast<size_t>(i)].error = "hidden by the filter";
  }
  const std::vector<study::Group> groups = study::group_runs(entries, wanted_keys(keys));
  for (int i = 0; i < runs.size(); ++i) {
    if (i < kept.size() && !kept[i]) entries[static_cast<size_t>(i)].error = std::move(errors[static_cast<size_t>(i)]);
  }
  QVector<widgets::StudyGroupRow> rows;
  const std::string metric_name = metric.toStdString();
  for (const auto& group : groups) {
    widgets::StudyGroupRow row;
    row.label = QString::fromStdString(group.label);
    for (const auto& [key, value] : group.values)
      row.values[QString::fromStdString(key)] = QString::fromStdString(value);
    std::vector<double> values;
    for (size_t member : group.members) {
      row.members.push_back(static_cast<int>(member));
      const auto found = entries[member].finals.find(metric_name);
      if (found != entries[member].finals.end()) values.push_back(found->second.value);
    }
    const auto stats = study::statistics_of(values);
    row.count = static_cast<int>(stats.count);
    row.mean = stats.mean;
    row.standardDeviation = stats.standard_deviation;
    row.min = stats.min;
    row.max = stats.max;
    rows.push_back(row);
  }
  return rows;
}

widgets::StudyPairing StudyBackendImpl::pair(const QVector<widgets::StudyRunRow>& runs, const widgets::StudyGroupRow& a,
                                             const widgets::StudyGroupRow& b, const QString& metric) const {
  const auto comparison = study::pair_groups(entries(runs), to_group(a), to_group(b), metric.toStdString());
  widgets::StudyPairing pairing;
  pairing.metric = metric;
  pairing.lowerIsBetter = comparison.better == record::Direction::Lower;
  for (const auto& pair : comparison.pairs) {
    pairing.rows.push_back(
        {QString::fromStdString(pair.seed), pair.a, pair.b, pair.difference, pair.a_wins, pair.a_runs, pair.b_runs});
  }
  pairing.mean = comparison.mean;
  pairing.standardDeviation = comparison.standard_deviation;
  pairing.wins = comparison.wins;
  pairing.duplicates = QString::fromStdString(comparison.duplicates_text());
  return pairing;
}

}  // namespace descentlab::gui
