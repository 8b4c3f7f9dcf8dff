#pragma once
// Run > Branch… (and Branch… beside Pause; "Branch from here" on a curve): a new run that continues a run's exact
// state (weights, optimizer state, λ, data order, random generators) at one step, with the settings a person changes
// (issue 55). The form holds every setting of the run: those that may change mid-run editable, the others shown but
// fixed, each saying why. The engine checks the form as it is typed (ExperimentBackend::checkBranch): what changes,
// how the child takes it up, or the error naming the key. The run branched stays as it is. Plain Qt.

#include <QDialog>
#include <QList>
#include <QMap>
#include <QString>

#include <cstdint>

#include "widgets/experiment_panel.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace descentlab::widgets {

class RunData;

// Where a branch starts and with what: `step` a kept checkpoint's step, or kBranchNow for a live run's state as it
// is when Start is pressed (it keeps it then).
struct BranchChoice {
  static constexpr int64_t kBranchNow = -2;
  int64_t step = kBranchNow;
  QList<ConfigField> fields;  // the settings that may change, with the form's values
  QString changes;            // what they change ("constraints.alpha 0.4 -> 0.1"), "" for nothing
};

class BranchDialog : public QDialog {
  Q_OBJECT
 public:
  // `live`: the run trains here (running or paused), so "its state now" is offered first. `nearStep` >= 0 (a curve's
  // "Branch from here"): the nearest kept checkpoint at or before it is chosen, and the dialog says which step.
  BranchDialog(const RunData& run, const BranchSource& source, const ExperimentBackend& backend, bool live,
               int64_t nearStep, QWidget* parent);

  BranchChoice choice() const;
  // Sets a field as if typed (tests); false for an unknown or fixed key.
  bool setFieldText(const QString& key, const QString& text);
  // What the dialog says under the form: the changes and notes, or the error.
  QString verdictText() const;
  bool startEnabled() const;

 private:
  void check();

  const ExperimentBackend& backend_;
  QString runPath_;
  BranchSource source_;
  QComboBox* from_ = nullptr;
  QLabel* fromNote_ = nullptr;
  QMap<QString, QWidget*> editors_;  // the changeable settings' editors
  QLabel* verdict_ = nullptr;
  QPushButton* start_ = nullptr;
  BranchCheck last_;
};

}  // namespace descentlab::widgets
