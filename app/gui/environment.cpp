// The environment the app describes (app/gui/app_parts.h): the build, the device and the datasets.

#include <QLocale>

#include "app/gui/app_parts.h"
#include "core/data/catalog.h"
#include "core/runtime.h"

namespace descentlab::gui {

widgets::EnvironmentSummary summarize_environment() {
  const auto info = descentlab::runtime_info();
  widgets::EnvironmentSummary summary;
  summary.version = QString::fromStdString(info.descentlab_version);
  summary.torch_version = QString::fromStdString(info.torch_version);
  summary.blas = QString::fromStdString(info.blas);
  summary.threads = info.threads;
  summary.device =
      info.cuda_available ? QStringLiteral("CUDA (%1 device(s))").arg(info.cuda_devices) : QStringLiteral("CPU");
  return summary;
}

QStringList dataset_lines() {
  QStringList lines;
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
    lines << QStringLiteral("%1: %2").arg(
        QString::fromStdString(report.name),
        report.present
            ? splits
            : QStringLiteral("not fetched (%1)").arg(QString::fromStdString(descentlab::data::fetch_command())));
  }
  return lines;
}

}  // namespace descentlab::gui
