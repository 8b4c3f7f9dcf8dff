#include "widgets/run_log_view.h"

#include "widgets/lab_model.h"

namespace descentlab::widgets {

RunLogView::RunLogView(const LabModel& model, QWidget* parent) : QPlainTextEdit(parent), model_(model) {
  setObjectName(QStringLiteral("log"));
  setReadOnly(true);
  setMaximumBlockCount(5000);
}

void RunLogView::refresh() {
  const RunData* run = model_.focusRun();
  const QString id = run ? run->id : QString();
  const int64_t revision = run ? run->revision() : -1;
  if (id == loggedRun_ && revision == revision_) return;
  if (id != loggedRun_) {
    clear();
    if (run) appendPlainText(run->log.join(QLatin1Char('\n')));
  } else if (run) {
    // Only what is new since the last refresh.
    const int shown = property("lines").toInt();
    for (int i = shown; i < run->log.size(); ++i) appendPlainText(run->log[i]);
  }
  setProperty("lines", run ? static_cast<int>(run->log.size()) : 0);
  loggedRun_ = id;
  revision_ = revision;
}

}  // namespace descentlab::widgets
