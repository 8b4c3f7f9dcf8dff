#pragma once

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"

class QCheckBox;
class QComboBox;

namespace descentlab::widgets {

// ★ The live sparsity frontier (issue 17) of every ViT or GPT run: above, the task's metric after one-shot
// layerwise magnitude pruning of a copy of the weights against the sparsity pruned to, one curve per evaluation
// (the newest bold, older ones fading); below, the metric at one chosen sparsity against the training step. The
// trainer evaluates it every sparsity.frontier_interval steps on a fixed small batch (series frontier_*).
class FrontierView : public PlotView {
  Q_OBJECT

 public:
  explicit FrontierView(LabModel* model, QWidget* parent = nullptr);
  CsvTable table() const override;
  // The sparsity the lower plot follows (one of the runs' frontier sparsities), as if the user chose it; false when
  // there is none such. Until a choice, it follows the level where the shown runs' newest frontiers differ most
  // (relative to their mean; the highest level for one run).
  bool setChosenSparsity(double sparsity);
  double chosenSparsity() const;
  // Grouped (LabModel::grouped()): per group, the band of its members' frontiers over the steps all reached, one
  // column per sparsity level (`columns`); the upper plot draws the last row, the lower one the chosen level's column.
  QVector<GroupBand> groupBands() const;

 protected:
  void rebuild() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  void drawGroups(double chosenSparsity);
  // One run, not grouped: its frontiers of `series` in the upper plot (earlier evaluations fading behind the newest)
  // and, when the lower plot is shown, its metric at the `chosen` sparsity over the steps.
  void drawRunFrontier(const RunData& run, const QString& series, double chosen);
  QCPAxisRect* overTime_ = nullptr;
  QComboBox* sparsity_ = nullptr;
  QCheckBox* history_ = nullptr;
  QString metric_;               // "accuracy" or "perplexity": the runs drawn share it
  bool sparsityChosen_ = false;  // by the user: the level no longer follows where the runs differ most
};

}  // namespace descentlab::widgets
