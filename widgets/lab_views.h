#pragma once
// The window's views and panels, made and each docked in the View menu's order (a dock's object name keys the saved
// layout): the experiment panel, the runs table, the log, the test metric, per-layer loss, λ, weight geometry,
// robustness, sparsity frontier, layer probe and the study browser. The training loss is the central view.

#include <QVector>

class QMainWindow;

namespace descentlab::widgets {

class DockLayout;
class ExperimentPanel;
class FrontierView;
class LabModel;
class LambdaView;
class LayerLossView;
class LayerProbeView;
class PlotView;
class RobustnessView;
class RunLogView;
class RunsTable;
class StudyBrowser;
class TrainingCurvesView;
class WeightGeometryView;

struct LabViews {
  TrainingCurvesView* loss = nullptr;  // the central one, not docked
  RunsTable* runs = nullptr;
  RunLogView* log = nullptr;
  TrainingCurvesView* metric = nullptr;
  LayerLossView* layerLoss = nullptr;
  LambdaView* lambda = nullptr;
  WeightGeometryView* weights = nullptr;
  RobustnessView* robustness = nullptr;
  FrontierView* frontier = nullptr;
  LayerProbeView* probe = nullptr;
  StudyBrowser* study = nullptr;

  // The views a redraw and Export all go through.
  QVector<PlotView*> plots() const;
};

// Makes the docked views of `window` on `model` into `views`, and docks them, with `experiment`, in `docks`.
void makeDockedViews(LabViews& views, LabModel* model, ExperimentPanel* experiment, QMainWindow* window,
                     DockLayout& docks);

}  // namespace descentlab::widgets
