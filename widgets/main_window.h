#pragma once
// The DescentLab main window. Until the live views land (GUI issue) it shows what the lab runs on and which
// datasets are ready, in the central area and the status bar.

#include <QMainWindow>
#include <QString>
#include <QStringList>

class QLabel;

namespace descentlab::widgets {

struct EnvironmentSummary {
  QString version;
  QString device;  // "CPU" or "CUDA (N devices)"
  int threads = 1;
  QString blas;
  QString torch_version;
  QStringList datasets;  // one line per dataset: name, present, splits
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const EnvironmentSummary& summary, QWidget* parent = nullptr);

 private:
  QLabel* overview_ = nullptr;
};

}  // namespace descentlab::widgets
