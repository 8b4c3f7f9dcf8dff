#pragma once
// One CSV export for every view (issue 35). A view says what it draws as a table: its columns, then one row per
// point drawn. This writes it: one header, fields quoted where needed, and every group's band in the same shape in
// every view (the group's label and member count, the view's own fields, then mean, low and high). PlotView writes
// the table to a file (beside, then renamed) from Export; views only list what they draw.

#include <QString>
#include <QStringList>

#include <functional>

namespace descentlab::widgets {

struct GroupBand;

class CsvTable {
 public:
  explicit CsvTable(const QStringList& columns);

  // A row of fields in the columns' order (numbers already written as the view wants them read).
  void add(const QStringList& fields);
  // One row per cell of a group's band: group, runs, `labels`, `position(row, column)`, mean, low, high. The
  // table's columns must be "group", "runs", one per label, one per position field, "mean", "low", "high".
  void addBand(const GroupBand& band, const QStringList& labels,
               const std::function<QStringList(int row, int column)>& position);
  // "group,runs,<middle...>,mean,low,high": the columns of a table of bands.
  static QStringList bandColumns(const QStringList& middle);

  int rows() const { return rows_; }
  const QString& text() const { return text_; }

 private:
  int columns_ = 0;
  int rows_ = 0;
  QString text_;
};

// Quotes a CSV field when needed.
QString csvField(const QString& text);

}  // namespace descentlab::widgets
