// The training-curves view with its runs grouped (issue 35): each group of seeds as its mean with a band.

#include <qcustomplot.h>
#include <QSlider>
#include <QTextStream>

#include <cmath>

#include "core/record/metrics.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"
#include "widgets/training_curves_view.h"

namespace descentlab::widgets {

QVector<GroupBand> TrainingCurvesView::groupBands() const {
  QVector<GroupBand> result;
  const QString shownUnit = shownAxisUnit();
  for (const auto& group : model()->groups()) {
    QVector<const ScalarTrack*> tracks;
    QString series;
    for (auto* run : group.members) {
      const QString name = scalarFor(*run);
      const auto track = run->scalars.constFind(name);
      if (name.isEmpty() || track == run->scalars.cend()) continue;
      if (axisUnitOf(*run) != shownUnit) continue;  // another unit: not on this axis
      tracks.push_back(&*track);
      series = name;
    }
    if (tracks.isEmpty()) continue;
    GroupBand band = scalarBand(tracks, model()->bandKind());
    band.group = &group;
    band.series = series;
    result.push_back(band);
  }
  return result;
}

int TrainingCurvesView::drawGroups(QStringList& notes, bool& anySmoothable) {
  const double weight = smoothing_->value() / 100.0;
  const bool logY = logY_->isChecked();
  int drawn = 0;
  QStringList shortened;
  for (const auto& band : groupBands()) {
    const auto* info = record::find_metric(band.series.toStdString());
    const bool smoothable = info == nullptr || info->smoothable;
    anySmoothable = anySmoothable || smoothable;
    auto prepare = [&](QVector<double> values) {
      if (logY) {
        for (auto& value : values) value = value > 0 ? value : qQNaN();
      }
      return weight > 0 && smoothable ? smoothExponential(values, weight) : values;
    };
    bindToGroup(addBand(plot(), plot()->xAxis, plot()->yAxis, band.steps, prepare(band.mean), prepare(band.low),
                        prepare(band.high), band.group->colour, band.group->label),
                *band.group);
    ++drawn;
    if (band.shortened) shortened << QStringLiteral("%1: %2").arg(band.group->label, bandNote(band));
  }
  notes << QStringLiteral("groups: mean with a %1 band").arg(bandKindName(model()->bandKind()));
  if (xAxis() != XAxis::Step && xAxis() != XAxis::LogStep) notes << QStringLiteral("groups are drawn by step");
  if (!shortened.isEmpty()) {
    cornerNote(plot(), plot()->axisRect(), 0.99, 0.02, Qt::AlignRight | Qt::AlignTop,
               shortened.join(QLatin1Char('\n')));
  }
  return drawn;
}

QStringList TrainingCurvesView::groupReadout(double x) const {
  QStringList parts;
  for (const auto& band : groupBands()) {
    const int i = nearestIndex(band.steps, x);
    if (i < 0) continue;
    parts << QStringLiteral("%1 @%2: %3 [%4, %5]")
                 .arg(band.group->label)
                 .arg(std::llround(band.steps[i]))
                 .arg(shortNumber(band.mean[i]), shortNumber(band.low[i]), shortNumber(band.high[i]));
  }
  return parts;
}

QString TrainingCurvesView::groupHoverTable(double x) const {
  QString rows;
  for (const auto& band : groupBands()) {
    const int i = nearestIndex(band.steps, x);
    if (i < 0) continue;
    rows += QStringLiteral(
                "<tr><td><span style='color:%1'>■</span> %2</td><td align=right>%3</td>"
                "<td align=right>%4</td><td align=right>%5 – %6</td></tr>")
                .arg(band.group->colour.name(), band.group->label.toHtmlEscaped())
                .arg(std::llround(band.steps[i]))
                .arg(shortNumber(band.mean[i]), shortNumber(band.low[i]), shortNumber(band.high[i]));
  }
  if (rows.isEmpty()) return {};
  return QStringLiteral(
             "<b>%1</b><table cellspacing=4><tr><th align=left>group</th><th>step</th><th>mean</th>"
             "<th>%2</th></tr>%3</table>")
      .arg(plot()->yAxis->label().toHtmlEscaped(), bandKindName(model()->bandKind()), rows);
}

CsvTable TrainingCurvesView::groupTable() const {
  CsvTable table(CsvTable::bandColumns({QStringLiteral("metric"), QStringLiteral("step")}));
  for (const auto& band : groupBands()) {
    table.addBand(band, {band.series},
                  [&band](int row, int) { return QStringList{QString::number(static_cast<qint64>(band.steps[row]))}; });
  }
  return table;
}

}  // namespace descentlab::widgets
