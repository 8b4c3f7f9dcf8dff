// The training curves' drawing of a branch (issue 55): from its parent's point at the branch step, marked there.
#include <qcustomplot.h>

#include <QMenu>

#include <cmath>

#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"
#include "widgets/training_curves_view.h"

namespace descentlab::widgets {

void TrainingCurvesView::drawBranchJoin(const DrawnCurve& child, const QVector<DrawnCurve>& all) {
  // A branch (issue 55) is drawn from its parent's point at the branch step, marked there with a diamond: the family
  // reads as one tree, the parent's prefix drawn once (the child holds only its own rows). On the step axes only,
  // and only while the parent is open and shown.
  const RunData& run = *child.run;
  if (run.branchStep < 0 || !run.visible || child.x.isEmpty() || xAxis() == XAxis::Epoch ||
      xAxis() == XAxis::WallTime || xAxis() == XAxis::RelativeTime) {
    return;
  }
  const RunData* parent = model()->runByPath(run.branchParent);
  if (!parent || !parent->visible) return;
  for (const DrawnCurve& candidate : all) {
    if (candidate.run != parent) continue;
    int at = -1;
    for (int i = 0; i < candidate.steps.size() && candidate.steps[i] <= static_cast<double>(run.branchStep); ++i)
      at = i;
    if (at < 0 || !std::isfinite(candidate.smoothed[at])) return;
    const double x = candidate.x[at], y = candidate.smoothed[at];
    auto* join = plot()->addGraph();
    join->setData({x, child.x.front()}, {y, child.smoothed.front()});
    join->setPen(QPen(run.colour, 2));
    join->removeFromLegend();
    bindToRun(plot(), join, run);
    auto* marker = plot()->addGraph();
    marker->setData({x}, {y});
    marker->setLineStyle(QCPGraph::lsNone);
    marker->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, run.colour, Qt::white, 10));
    marker->removeFromLegend();
    marker->setName(QStringLiteral("%1 branches from %2 at step %3").arg(run.name, parent->name).arg(run.branchStep));
    bindToRun(plot(), marker, run);
    return;
  }
}

bool TrainingCurvesView::branchTargetAt(const QPoint& pos, QString* runId, qint64* step) const {
  if (model()->grouped() || (xAxis() != XAxis::Step && xAxis() != XAxis::LogStep)) return false;
  auto* nearest = plot()->plottableAt(pos, false);
  if (!nearest) return false;
  const RunData* run = model()->run(nearest->property("runId").toString());
  if (!run || run->path.isEmpty()) return false;
  const double x = plot()->xAxis->pixelToCoord(pos.x());
  if (!std::isfinite(x) || x < 0) return false;
  *runId = run->id;
  *step = static_cast<qint64>(std::floor(x));
  return true;
}

void TrainingCurvesView::offerBranchAt(const QPoint& pos) {
  QString runId;
  qint64 step = 0;
  if (!branchTargetAt(pos, &runId, &step)) return;
  QMenu menu(this);
  const RunData* run = model()->run(runId);
  menu.addAction(QStringLiteral("Branch %1 from here (step %2)…").arg(run->name).arg(step), this,
                 [this, runId, step] { emit branchFromHereRequested(runId, step); });
  menu.exec(plot()->mapToGlobal(pos));
}

}  // namespace descentlab::widgets
