// descentlab: the desktop lab. LibTorch headers (through core) come before any Qt header: Qt's `slots` macro
// breaks them otherwise. Only app/ may include both.

#include "core/data/catalog.h"
#include "core/runtime.h"
#include "core/util/error.h"

#include <QApplication>
#include <QLocale>
#include <QMessageBox>

#include <iostream>

#include "widgets/main_window.h"

namespace {

descentlab::widgets::EnvironmentSummary summarize_environment() {
  const auto info = descentlab::runtime_info();
  descentlab::widgets::EnvironmentSummary summary;
  summary.version = QString::fromStdString(info.descentlab_version);
  summary.torch_version = QString::fromStdString(info.torch_version);
  summary.blas = QString::fromStdString(info.blas);
  summary.threads = info.threads;
  summary.device =
      info.cuda_available ? QStringLiteral("CUDA (%1 device(s))").arg(info.cuda_devices) : QStringLiteral("CPU");
  const std::string root = descentlab::data::default_data_root();
  for (const auto& report : descentlab::data::inspect_datasets(root, /*verify_checksums=*/false)) {
    QString splits;
    for (const auto& split : report.splits) {
      if (!splits.isEmpty()) splits += QStringLiteral(", ");
      splits += QStringLiteral("%1 %2 %3")
                    .arg(QString::fromStdString(split.split),
                         QLocale(QLocale::English).toString(static_cast<qlonglong>(split.count)),
                         QString::fromStdString(split.unit));
    }
    summary.datasets << QStringLiteral("%1: %2").arg(
        QString::fromStdString(report.name),
        report.present ? splits : QStringLiteral("not fetched (bash datasets/fetch.sh)"));
  }
  return summary;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication application(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DescentLab"));
  QApplication::setOrganizationName(QStringLiteral("DescentLab"));
  try {
    descentlab::configure_threads(descentlab::threads_from_environment(1));
    descentlab::widgets::MainWindow window(summarize_environment());
    window.show();
    return application.exec();
  } catch (const descentlab::Error& error) {
    std::cerr << "descentlab: error: " << error.what() << "\n";
    QMessageBox::critical(nullptr, QStringLiteral("DescentLab"), QString::fromStdString(error.what()));
    return 1;
  }
}
