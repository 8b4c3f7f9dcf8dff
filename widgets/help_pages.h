#pragma once
// The window's help: Help > Getting started (what each view shows, what to try first, the keyboard shortcuts) and
// Help > Environment (the build, the device, the datasets).

#include <QString>
#include <QStringList>

class QWidget;

namespace descentlab::widgets {

struct EnvironmentSummary {
  QString version;
  QString device;  // "CPU" or "CUDA (N devices)"
  int threads = 1;
  QString blas;
  QString torch_version;
  QStringList datasets;  // one line per dataset: name, present, splits
};

// Help > Getting started: what each view shows, what to try first, and the keyboard shortcuts.
QString gettingStartedHtml();
// Opens it beside `window` (F1).
void showGettingStarted(QWidget* window);
// Help > Environment and datasets: a message box over `window`.
void showEnvironment(QWidget* window, const EnvironmentSummary& summary);

}  // namespace descentlab::widgets
