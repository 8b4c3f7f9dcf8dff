// The per-layer loss view with its runs grouped (issue 35): each group of seeds as its mean with a band at each
// layer, at the last evaluation every member reached.
#include <qcustomplot.h>
#include <QCheckBox>

#include "core/record/metrics.h"
#include "widgets/layer_loss_view.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

QVector<GroupBand> LayerLossView::groupBands() const {
  const QString series = QLatin1String(record::metric::kTestLayerLoss);
  const bool change = changeMode();
  // One task on the axis: the focus run's, else the first layerwise run's.
  QString metric;
  if (auto* focus = model()->focusRun(); focus && focus->vectors.contains(series)) metric = focus->metric;
  QVector<GroupBand> bands;
  for (const auto& group : model()->groups()) {
    QVector<VectorTrack> tracks;
    for (auto* run : group.members) {
      const auto it = run->vectors.constFind(series);
      if (it == run->vectors.cend() || it->rows.isEmpty()) continue;
      if (metric.isEmpty()) metric = run->metric;
      if (run->metric != metric) continue;
      VectorTrack track = *it;
      if (change) {  // f_l - f_(l-1) for l = 1..L
        for (auto& row : track.rows) {
          QVector<double> differences;
          for (int layer = 1; layer < row.size(); ++layer) differences.push_back(row[layer] - row[layer - 1]);
          row = differences;
        }
        track.width = std::max(0, track.width - 1);
      }
      tracks.push_back(track);
    }
    if (tracks.isEmpty()) continue;
    QVector<const VectorTrack*> members;
    for (const auto& track : tracks) members.push_back(&track);
    const GroupBand overSteps = vectorBand(members, model()->bandKind());
    if (overSteps.steps.isEmpty()) continue;
    // The newest row all members reached, across layers.
    GroupBand band = overSteps;
    band.group = &group;
    band.series = series;
    band.atStep = overSteps.steps.back();
    const int width = overSteps.width;
    const int last = static_cast<int>(overSteps.steps.size()) - 1;
    band.steps.clear();
    for (int layer = 0; layer < width; ++layer) band.steps.push_back(change ? layer + 1 : layer);
    band.mean = overSteps.mean.mid(last * width, width);
    band.low = overSteps.low.mid(last * width, width);
    band.high = overSteps.high.mid(last * width, width);
    band.width = 1;
    bands.push_back(band);
  }
  return bands;
}

void LayerLossView::drawGroups(bool change, bool logY) {
  QStringList notes;
  QStringList shortened;
  for (const auto& band : groupBands()) {
    auto positive = [logY](QVector<double> values) {
      for (auto& value : values) value = logY && value <= 0 ? qQNaN() : value;
      return values;
    };
    bindToGroup(addBand(plot(), plot()->xAxis, plot()->yAxis, band.steps, positive(band.mean), positive(band.low),
                        positive(band.high), band.group->colour,
                        QStringLiteral("%1, step %2").arg(band.group->label).arg(band.atStep, 0, 'f', 0)),
                *band.group);
    if (band.shortened) shortened << band.group->label;
  }
  notes << QStringLiteral("groups: mean, %1 band").arg(bandKindName(model()->bandKind()));
  if (!shortened.isEmpty()) notes << QStringLiteral("at the last step all members reached");
  if (change) notes << QStringLiteral("above 0: breaks");
  const QFontMetrics metrics(plot()->xAxis->labelFont());
  QString title = QStringLiteral("layer ℓ   (%1)").arg(notes.join(QStringLiteral("; ")));
  if (metrics.horizontalAdvance(title) + 16 > plot()->xAxis->axisRect()->width()) title = QStringLiteral("layer ℓ");
  plot()->xAxis->setLabel(title);
  if (change) {
    auto* zero = new QCPItemStraightLine(plot());
    zero->setClipAxisRect(plot()->axisRect(0));
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(QColor(120, 120, 120), 1.2, Qt::DashLine));
  }
  if (lowerRowShown() && bars_->rect().height() >= 60) {
    placeholder(plot(), bars_, QStringLiteral("descending shares are drawn per run (View > Groups off)"));
  }
}

}  // namespace descentlab::widgets
