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
  return entry;
}

std::vector<study::RunEntry> to_entries(const QVector<widgets::StudyRunRow>& rows) {
  std::vector<study::RunEntry> entries;
  entries.reserve(static_cast<size_t>(rows.size()));
  for (const auto& row : rows) entries.push_back(to_entry(row));
  return entries;
}

QStringList to_qt(const std::vector<std::string>& items) {
  QStringList list;
  for (const auto& item : items) list << QString::fromStdString(item);
  return list;
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
  return row;
}

QStringList StudyBackendImpl::varyingKeys(const QVector<widgets::StudyRunRow>& runs) const {
  return to_qt(study::varying_keys(to_entries(runs)));
}

QStringList StudyBackendImpl::defaultGroupKeys(const QVector<widgets::StudyRunRow>& runs) const {
  return to_qt(study::default_group_keys(to_entries(runs)));
}

QVector<bool> StudyBackendImpl::filter(const QVector<widgets::StudyRunRow>& runs, const QString& text,
                                       QString* error) const {
  QVector<bool> kept(runs.size(), true);
  try {
    const study::RunFilter filter(text.toStdString());
    if (filter.empty()) return kept;
    for (int i = 0; i < runs.size(); ++i) kept[i] = filter.matches(to_entry(runs[i]));
  } catch (const std::exception& failure) {
    if (error) *error = QString::fromStdString(failure.what());
  }
  return kept;
}

QVector<widgets::StudyGroupRow> StudyBackendImpl::group(const QVector<widgets::StudyRunRow>& runs,
                                                        const QVector<bool>& kept, const QStringList& keys,
                                                        const QString& metric) const {
  // Runs the filter hides are in no group: they stay hidden in every view.
  std::vector<study::RunEntry> entries = to_entries(runs);
  for (int i = 0; i < runs.size(); ++i) {
    if (i < kept.size() && !kept[i]) entries[static_cast<size_t>(i)].error = "hidden by the filter";
  }
  std::vector<std::string> wanted;
  for (const auto& key : keys) wanted.push_back(key.toStdString());
  QVector<widgets::StudyGroupRow> rows;
  const std::string metric_name = metric.toStdString();
  for (const auto& group : study::group_runs(entries, wanted)) {
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
  const auto comparison = study::pair_groups(to_entries(runs), to_group(a), to_group(b), metric.toStdString());
  widgets::StudyPairing pairing;
  pairing.metric = metric;
  pairing.lowerIsBetter = comparison.better == record::Direction::Lower;
  for (const auto& pair : comparison.pairs) {
    pairing.rows.push_back({QString::fromStdString(pair.seed), pair.a, pair.b, pair.difference, pair.a_wins});
  }
  pairing.mean = comparison.mean;
  pairing.standardDeviation = comparison.standard_deviation;
  pairing.wins = comparison.wins;
  return pairing;
}

}  // namespace descentlab::gui
