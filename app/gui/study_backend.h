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
};

}  // namespace descentlab::gui
