#pragma once
// The layer probe (issue 17): one test sample's prediction layer by layer for two layerwise runs side by side (A and
// B, e.g. ERM and constrained), under noise of strength γ. Text: P(true class) per layer as bars for A and B, with
// the 0.5 line, and the review's first words. Video: a grid of grey frames, rows A and B, columns the noisy input,
// the prediction of layers 0..L and the clean target, each with its loss under it.
//
// The view asks a LayerProbeBackend (the app evaluates on a worker thread) and shows an answer when it arrives;
// only the newest request of each side is shown, so dragging γ never shows a stale picture.

#include <QImage>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <cstdint>
#include <functional>

#include "core/record/checkpoint.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QVBoxLayout;

namespace descentlab::widgets {

class ElidedLabel;
class FrameGrid;
class LabModel;
class RunData;

struct ProbeQuery {
  quint64 id = 0;  // the view numbers its requests; the outcome echoes it
  int side = 0;    // 0: A, 1: B
  QString path;    // the run file
  QString checkpoint = QLatin1String(record::checkpoint_label::kLatest);
  int sample = 0;
  QString noise;  // gaussian | uniform | discrete (text), video (video)
  double gamma = 0.0;
  int seed = 0;
};

// One sample at every layer (core/record/layer_probe.h's LayerProbe in Qt types), or why not.
struct ProbeOutcome {
  quint64 id = 0;
  int side = 0;
  QString error;  // non-empty: nothing else is set
  QString task;   // "text" | "video"
  int sample = 0;
  int testSize = 0;
  int layers = 0;  // L: readouts of layers 0..L
  qint64 step = 0;
  QString checkpoint;
  QVector<double> loss;  // L + 1
  // text
  int label = -1;
  int classes = 0;
  QVector<double> probabilities;  // (L + 1) x classes
  QStringList words;              // what the model read
  // video
  int frames = 0, height = 0, width = 0;
  QVector<double> input, target;  // frames x height x width
  QVector<double> predictions;    // (L + 1) x frames x height x width
  double seconds = 0.0;           // the evaluation's wall time
  double probabilityOfLabel(int layer) const { return probabilities.value(layer * classes + label, 0.0); }
};

// What the view needs from the app. probe() returns at once; `done` is called later on the GUI thread. A backend may
// drop a request that a newer one of the same side replaces before it starts (then `done` is not called for it).
class LayerProbeBackend {
 public:
  virtual ~LayerProbeBackend() = default;
  virtual void probe(const ProbeQuery& query, std::function<void(const ProbeOutcome&)> done) = 0;
};

class LayerProbeView : public QWidget {
  Q_OBJECT

 public:
  explicit LayerProbeView(LabModel* model, QWidget* parent = nullptr);

  void setBackend(LayerProbeBackend* backend);
  // Re-reads the runs (new, closed, a live run's new evaluation) and probes again what changed.
  void refresh();

  // For tests and tours: the controls and what is shown.
  QComboBox* runChoice(int side) const { return side == 0 ? runA_ : runB_; }
  QSlider* gammaSlider() const { return gamma_; }
  QSpinBox* sampleBox() const { return sample_; }
  QComboBox* noiseChoice() const { return noise_; }
  QComboBox* checkpointChoice() const { return checkpoint_; }
  QCustomPlot* plot() const { return plot_; }
  double gamma() const;
  const ProbeOutcome& shown(int side) const { return shown_[side]; }
  QString placeholder() const;  // the text shown instead of a result, "" when results show
  int requestsSent() const { return static_cast<int>(nextId_ - 1); }

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  QWidget* buildControls();
  void buildOutputs(QVBoxLayout* layout);
  void connectControls();
  void updateRunChoices();
  void updateNoiseChoices();
  void requestAll();
  void request(int side);
  void receive(const ProbeOutcome& outcome);
  void redraw();
  void drawText();
  const RunData* runOf(int side) const;
  QString taskOf(const RunData* run) const;
  qint64 evaluationStep(const RunData* run) const;

  LabModel* model_ = nullptr;
  LayerProbeBackend* backend_ = nullptr;
  QComboBox* runA_ = nullptr;
  QComboBox* runB_ = nullptr;
  QComboBox* checkpoint_ = nullptr;
  QSpinBox* sample_ = nullptr;
  QPushButton* random_ = nullptr;
  QComboBox* noise_ = nullptr;
  QSlider* gamma_ = nullptr;
  QLabel* gammaLabel_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QSlider* frame_ = nullptr;
  QLabel* frameLabel_ = nullptr;
  ElidedLabel* status_ = nullptr;
  ElidedLabel* review_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  FrameGrid* grid_ = nullptr;
  QTimer refreshSoon_;
  QTimer poll_;  // while shown: a live run's new evaluation (a new "latest" checkpoint) probes again

  quint64 nextId_ = 1;
  quint64 wanted_[2] = {0, 0};  // the newest request of each side: only its outcome is shown
  ProbeOutcome shown_[2];
  QString runPath_[2];
  qint64 probedEvaluation_[2] = {-1, -1};  // the run's newest evaluation step when it was last probed
  bool updatingChoices_ = false;
  bool chosen_[2] = {false, false};  // the user picked A (B) in its list: it stays when runs come and go
};

}  // namespace descentlab::widgets
