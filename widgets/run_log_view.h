#pragma once
// The Log dock: the focus run's log (start, device, steps, checkpoints, pauses, stops, sweeps, errors), with only the
// lines new since the last refresh appended.

#include <QPlainTextEdit>
#include <QString>

#include <cstdint>

namespace descentlab::widgets {

class LabModel;

class RunLogView : public QPlainTextEdit {
  Q_OBJECT

 public:
  RunLogView(const LabModel& model, QWidget* parent);
  // Shows the focus run's log: all of it when the focus moved, else what is new.
  void refresh();

 private:
  const LabModel& model_;
  QString loggedRun_;
  int64_t revision_ = -1;
};

}  // namespace descentlab::widgets
