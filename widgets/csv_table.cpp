#include "widgets/csv_table.h"

#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) {
    return text;
  }
  QString quoted = text;
  quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
  return QStringLiteral("\"%1\"").arg(quoted);
}

CsvTable::CsvTable(const QStringList& columns) : columns_(static_cast<int>(columns.size())) {
  add(columns);
  rows_ = 0;
}

void CsvTable::add(const QStringList& fields) {
  Q_ASSERT(fields.size() == columns_);
  for (int i = 0; i < fields.size(); ++i) {
    if (i > 0) text_ += QLatin1Char(',');
    text_ += csvField(fields[i]);
  }
  text_ += QLatin1Char('\n');
  ++rows_;
}

QStringList CsvTable::bandColumns(const QStringList& middle) {
  return QStringList{QStringLiteral("group"), QStringLiteral("runs")} + middle +
         QStringList{QStringLiteral("mean"), QStringLiteral("low"), QStringLiteral("high")};
}

void CsvTable::addBand(const GroupBand& band, const QStringList& labels,
                       const std::function<QStringList(int row, int column)>& position) {
  if (band.group == nullptr) return;
  for (int row = 0; row < band.steps.size(); ++row) {
    for (int column = 0; column < band.width; ++column) {
      const int at = row * band.width + column;
      if (at >= band.mean.size()) return;
      add(QStringList{band.group->label, QString::number(band.members)} + labels + position(row, column) +
          QStringList{roundTripNumber(band.mean[at]), roundTripNumber(band.low[at]), roundTripNumber(band.high[at])});
    }
  }
}

}  // namespace descentlab::widgets
