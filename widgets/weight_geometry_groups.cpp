// The weight-geometry view with its runs grouped (issue 35): each group's distribution of kept |w| as the mean over
// its members with a band.
#include <qcustomplot.h>

#include <algorithm>

#include "widgets/plot_helpers.h"
#include "widgets/weight_geometry_view.h"

namespace descentlab::widgets {

QVector<GroupBand> WeightGeometryView::groupBands() const {
  QVector<GroupBand> bands;
  for (const auto& group : model()->groups()) {
    QVector<ScalarTrack> tracks;
    double newest = -1;
    for (auto* run : group.members) {
      const auto curve =
          std::find_if(curves_.begin(), curves_.end(), [&](const Curve& c) { return c.runId == run->id; });
      if (curve == curves_.end() || curve->x.isEmpty()) continue;
      ScalarTrack track;
      track.steps = curve->x;  // |w|: the band matches members' points by |w|
      track.values = curve->y;
      tracks.push_back(track);
      newest = std::max(newest, static_cast<double>(curve->step));
    }
    if (tracks.isEmpty()) continue;
    QVector<const ScalarTrack*> members;
    for (const auto& track : tracks) members.push_back(&track);
    GroupBand band = scalarBand(members, model()->bandKind());
    band.group = &group;
    band.series = drawnGroup_;
    band.atStep = newest;
    band.shortened = false;  // x is |w|, not steps: members cover different |w| ranges by nature
    bands.push_back(band);
  }
  return bands;
}

void WeightGeometryView::drawGroupBands() {
  for (const auto& band : groupBands()) {
    auto* mean = addBand(plot(), plot()->xAxis, plot()->yAxis, band.steps, band.mean, band.low, band.high,
                         band.group->colour, band.group->label);
    bindToGroup(mean, *band.group);
    mean->setScatterStyle(QCPScatterStyle());  // the bins are many; marks would hide the band
    if (mode_ == Mode::Histogram) mean->setLineStyle(QCPGraph::lsStepCenter);
  }
  cornerNote(plot(), plot()->axisRect(0), 0.01, 0.02, Qt::AlignTop | Qt::AlignLeft,
             QStringLiteral("groups: mean, %1 band").arg(bandKindName(model()->bandKind())));
  if (curves_.isEmpty()) placeholder(plot(), plot()->axisRect(0), QStringLiteral("No weight histograms yet"));
}

}  // namespace descentlab::widgets
