#include "widgets/lab_views.h"

#include <QMainWindow>
#include <QScrollArea>

#include "widgets/dock_layout.h"
#include "widgets/experiment_panel.h"
#include "widgets/run_log_view.h"
#include "widgets/runs_table.h"
#include "widgets/study_browser.h"
#include "widgets/views.h"

namespace descentlab::widgets {

QVector<PlotView*> LabViews::plots() const {
  return {loss, metric, layerLoss, lambda, weights, robustness, frontier};
}

void makeDockedViews(LabViews& views, LabModel* model, ExperimentPanel* experiment, QMainWindow* window,
                     DockLayout& docks) {
  docks.add(DockLayout::Experiment, QStringLiteral("Experiment"), experiment);
  views.runs = new RunsTable(*model, window);
  docks.add(DockLayout::Runs, QStringLiteral("Runs"), views.runs);
  views.log = new RunLogView(*model, window);
  docks.add(DockLayout::Log, QStringLiteral("Log"), views.log);
  views.metric = new TrainingCurvesView(model, QStringLiteral("Test metric"), QStringLiteral("@test"), window);
  views.layerLoss = new LayerLossView(model, window);
  views.lambda = new LambdaView(model, window);
  views.weights = new WeightGeometryView(model, window);
  views.robustness = new RobustnessView(model, window);
  views.frontier = new FrontierView(model, window);
  docks.add(DockLayout::Metric, QStringLiteral("Test metric"), views.metric);
  docks.add(DockLayout::LayerLoss, QStringLiteral("Per-layer loss"), views.layerLoss);
  // Short titles: three tabs share a dock's width in a laptop-size window.
  docks.add(DockLayout::Lambda, QStringLiteral("Multipliers λ"), views.lambda, QStringLiteral("lagrange-multipliers"));
  docks.add(DockLayout::Weights, QStringLiteral("Weight geometry"), views.weights);
  docks.add(DockLayout::Robustness, QStringLiteral("Robustness"), views.robustness);
  docks.add(DockLayout::Frontier, QStringLiteral("Sparsity frontier"), views.frontier);
  views.probe = new LayerProbeView(model, window);
  docks.add(DockLayout::Probe, QStringLiteral("Layer probe"), views.probe);
  views.study = new StudyBrowser(window);
  // In a scroll area: the browser needs about 190 px of height, and the Runs and Log docks it shares a tab group
  // with may get less (a tour at 1024x700 shrinks the group to the runs table's header and 3 rows).
  auto* studyScroll = new QScrollArea(window);
  studyScroll->setWidget(views.study);
  studyScroll->setWidgetResizable(true);
  studyScroll->setFrameShape(QFrame::NoFrame);
  docks.add(DockLayout::Study, QStringLiteral("Study"), studyScroll);
}

}  // namespace descentlab::widgets
