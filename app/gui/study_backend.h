#pragma once
// The Study dock's engine side (issue 35): core/study's grouping, filter and pairing over the browser's rows, and
// the conversion of a run file's entry into a row. Torch-free.

#include "core/study/study.h"
#include "widgets/study_browser.h"

namespace descentlab::gui {

widgets::StudyRunRow to_study_row(const study::RunEntry& entry);

class StudyBackendImpl : public widgets::StudyBackend {
 public:
  QStringList varyingKeys(const QVector<widgets::StudyRunRow>& runs) const override;
  QStringList defaultGroupKeys(const QVector<widgets::StudyRunRow>& runs) const override;
  QVector<bool> filter(const QVector<widgets::StudyRunRow>& runs, const QString& text, QString* error) const override;
  QVector<widgets::StudyGroupRow> group(const QVector<widgets::StudyRunRow>& runs, const QVector<bool>& kept,
                                        const QStringList& keys, const QString& metric) const override;
  widgets::StudyPairing pair(const QVector<widgets::StudyRunRow>& runs, const widgets::StudyGroupRow& a,
                             const widgets::StudyGroupRow& b, const QString& metric) const override;

 private:
  // The rows as core/study's entries. While a study is read its rows only grow, and the browser asks for the
  // columns, the filter and the groups at every batch: the entries of rows seen before are kept (by path, in
  // order), so each batch converts only its own rows (300 real runs' configs converted at every batch held the
  // event loop for 60-100 ms a batch).
  std::vector<study::RunEntry>& entries(const QVector<widgets::StudyRunRow>& rows) const;
  mutable std::vector<study::RunEntry> entries_;
  mutable QStringList paths_;
};

}  // namespace descentlab::gui
