// The layer probe view: its controls (runs A and B, checkpoint, sample, noise, γ, seed, frame), the runs and
// noises offered, the requests to the backend and the answers kept (only each side's newest). What it shows of the
// answers is drawn in layer_probe_drawing.cpp.
#include "widgets/layer_probe_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "core/record/checkpoint.h"
#include "core/record/metrics.h"
#include "widgets/elided_label.h"
#include "widgets/flow_layout.h"
#include "widgets/frame_grid.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

namespace {

constexpr int kGammaSteps = 200;  // the slider's ticks over γ in [0, 2]

}  // namespace

LayerProbeView::LayerProbeView(LabModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setObjectName(QStringLiteral("layer-probe"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(buildControls());
  buildOutputs(layout);
  connectControls();
  gammaLabel_->setText(QStringLiteral("%1").arg(gamma(), 0, 'f', 2));
  refresh();
}

// The controls' row: runs A and B, checkpoint, sample, noise, γ, seed and frame, each with its label.
QWidget* LayerProbeView::buildControls() {
  auto* toolRow = new QWidget(this);
  auto* tools = new FlowLayout(toolRow, 8, 3);
  const auto labelled = [&](const QString& text, QWidget* widget, const QString& tip) {
    auto* box = new QWidget(this);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(3);
    auto* label = new QLabel(text, box);
    row->addWidget(label);
    row->addWidget(widget);
    box->setToolTip(tip);
    tools->addWidget(box);
  };
  runA_ = new QComboBox(this);
  runB_ = new QComboBox(this);
  for (auto* choice : {runA_, runB_}) {
    choice->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    choice->setMinimumContentsLength(12);
  }
  labelled(QStringLiteral("A"), runA_, QStringLiteral("The first run (default: the newest ERM run)"));
  labelled(QStringLiteral("B"), runB_, QStringLiteral("The second run (default: the newest constrained run)"));
  checkpoint_ = new QComboBox(this);
  checkpoint_->addItems(
      {QLatin1String(record::checkpoint_label::kLatest), QLatin1String(record::checkpoint_label::kBest)});
  labelled(QStringLiteral("checkpoint"), checkpoint_,
           QStringLiteral("latest: the run file's newest state (a live run rewrites it every epoch); best: the best "
                          "test metric's"));
  sample_ = new QSpinBox(this);
  sample_->setRange(0, 999999);
  random_ = new QPushButton(QStringLiteral("random"), this);
  random_->setToolTip(QStringLiteral("A random test sample"));
  labelled(QStringLiteral("sample"), sample_, QStringLiteral("The test sample (its index in the test set)"));
  tools->addWidget(random_);
  noise_ = new QComboBox(this);
  labelled(QStringLiteral("noise"), noise_,
           QStringLiteral("The robustness sweeps' noise: on the token embeddings (gaussian, uniform) or the tokens "
                          "(discrete) of a review; on the pixels of a clip (video)"));
  gamma_ = new QSlider(Qt::Horizontal, this);
  gamma_->setRange(0, kGammaSteps);
  gamma_->setValue(kGammaSteps / 4);
  gamma_->setMinimumWidth(110);
  gammaLabel_ = new QLabel(this);
  gammaLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("2.00")) + 4);
  auto* gammaBox = new QWidget(this);  // the slider and its value on one line, never wrapped apart
  auto* gammaRow = new QHBoxLayout(gammaBox);
  gammaRow->setContentsMargins(0, 0, 0, 0);
  gammaRow->setSpacing(3);
  gammaRow->addWidget(gamma_);
  gammaRow->addWidget(gammaLabel_);
  labelled(QStringLiteral("γ"), gammaBox,
           QStringLiteral("Noise strength γ, 0..2 (0: the clean sample; video: 1 is the training noise)"));
  seed_ = new QSpinBox(this);
  seed_->setRange(0, 99);
  labelled(QStringLiteral("seed"), seed_,
           QStringLiteral("The sweep's noise seed (0, 1, 2, ...): the same draw as a sweep's"));
  frame_ = new QSlider(Qt::Horizontal, this);
  frame_->setRange(0, 0);
  frame_->setMinimumWidth(70);
  frameLabel_ = new QLabel(QStringLiteral("frame"), this);
  auto* frameBox = new QWidget(this);
  auto* frameRow = new QHBoxLayout(frameBox);
  frameRow->setContentsMargins(0, 0, 0, 0);
  frameRow->addWidget(frameLabel_);
  frameRow->addWidget(frame_);
  frameBox->setToolTip(QStringLiteral("Which frame of the clip the grid shows"));
  tools->addWidget(frameBox);

  return toolRow;
}

// The status and review lines, and the pages of the outputs: the bars plot (text) and the frame grid (video).
void LayerProbeView::buildOutputs(QVBoxLayout* layout) {
  // One line each, elided (the whole text in the tooltip), so the plot keeps its room in a short dock.
  status_ = new ElidedLabel(this);
  status_->setObjectName(QStringLiteral("probe-status"));
  layout->addWidget(status_);
  review_ = new ElidedLabel(this);
  review_->setObjectName(QStringLiteral("probe-review"));
  QFont bold = review_->font();
  bold.setBold(true);
  review_->setFont(bold);
  layout->addWidget(review_);

  pages_ = new QStackedWidget(this);
  plot_ = new QCustomPlot(pages_);
  plot_->setMinimumSize(220, 140);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot_->xAxis->setLabel(QStringLiteral("layer ℓ"));
  plot_->yAxis->setLabel(QStringLiteral("P(true class)"));
  grid_ = new FrameGrid(pages_);
  pages_->addWidget(plot_);
  pages_->addWidget(grid_);
  layout->addWidget(pages_, 1);
}

// Every control asks again (the newest request only is evaluated); the run lists follow the model.
void LayerProbeView::connectControls() {
  poll_.setInterval(1000);
  connect(&poll_, &QTimer::timeout, this, &LayerProbeView::refresh);
  // Once for the runs added together (Draw groups adds 300 in batches of 16): its run lists are rebuilt from every run.
  refreshSoon_.setSingleShot(true);
  refreshSoon_.setInterval(0);
  connect(&refreshSoon_, &QTimer::timeout, this, &LayerProbeView::refresh);
  connect(model_, &LabModel::runsChanged, &refreshSoon_, qOverload<>(&QTimer::start));
  const auto again = [this] {
    if (!updatingChoices_) requestAll();
  };
  connect(runA_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, again] {
    updateNoiseChoices();
    again();
  });
  connect(runB_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, again] {
    updateNoiseChoices();
    again();
  });
  connect(runA_, qOverload<int>(&QComboBox::activated), this, [this] { chosen_[0] = true; });
  connect(runB_, qOverload<int>(&QComboBox::activated), this, [this] { chosen_[1] = true; });
  connect(checkpoint_, qOverload<int>(&QComboBox::currentIndexChanged), this, again);
  connect(sample_, qOverload<int>(&QSpinBox::valueChanged), this, again);
  connect(noise_, qOverload<int>(&QComboBox::currentIndexChanged), this, again);
  connect(seed_, qOverload<int>(&QSpinBox::valueChanged), this, again);
  connect(gamma_, &QSlider::valueChanged, this, [this, again] {
    gammaLabel_->setText(QStringLiteral("%1").arg(gamma(), 0, 'f', 2));
    again();
  });
  connect(frame_, &QSlider::valueChanged, this, &LayerProbeView::redraw);
  connect(random_, &QPushButton::clicked, this, [this] {
    int size = 0;
    for (const auto& outcome : shown_) {
      if (outcome.error.isEmpty() && outcome.testSize > 0)
        size = size ? std::min(size, outcome.testSize) : outcome.testSize;
    }
    sample_->setValue(static_cast<int>(QRandomGenerator::global()->bounded(std::max(1, size))));
  });
}

void LayerProbeView::setBackend(LayerProbeBackend* backend) {
  backend_ = backend;
  requestAll();
}

double LayerProbeView::gamma() const {
  return 2.0 * gamma_->value() / kGammaSteps;
}

void LayerProbeView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  poll_.start();
  refresh();
}

void LayerProbeView::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  poll_.stop();
}

QString LayerProbeView::taskOf(const RunData* run) const {
  return run ? run->config.value(QStringLiteral("task")) : QString();
}

qint64 LayerProbeView::evaluationStep(const RunData* run) const {
  if (!run) return -1;
  const auto it = run->vectors.constFind(QLatin1String(record::metric::kTestLayerLoss));
  return it == run->vectors.cend() || it->steps.isEmpty() ? -1 : static_cast<qint64>(it->steps.back());
}

const RunData* LayerProbeView::runOf(int side) const {
  const QComboBox* choice = side == 0 ? runA_ : runB_;
  const QString id = choice->currentData().toString();
  return id.isEmpty() ? nullptr : model_->run(id);
}

void LayerProbeView::updateRunChoices() {
  QVector<const RunData*> layerwise;
  for (auto* run : model_->runs()) {
    if (run->kind == RunKind::Layerwise) layerwise.push_back(run);
  }
  QStringList ids;
  for (auto* run : layerwise) ids << run->id;
  QStringList shown;
  for (int i = 0; i < runA_->count(); ++i) shown << runA_->itemData(i).toString();
  bool changed = ids != shown;
  for (int i = 0; !changed && i < layerwise.size(); ++i) changed = runA_->itemText(i) != layerwise[i]->name;
  if (!changed) return;
  const QString oldA = runA_->currentData().toString();
  const QString oldB = runB_->currentData().toString();
  updatingChoices_ = true;
  for (auto* choice : {runA_, runB_}) {
    choice->clear();
    for (auto* run : layerwise) {
      QPixmap swatch(10, 10);
      swatch.fill(run->colour);
      choice->addItem(QIcon(swatch), run->name, run->id);
    }
  }
  // Defaults: runs of one task (a video run against a text run was the default, and then refused: issue 33). The
  // newest ERM run as A and the newest constrained one as B, of the task whose run is newest among those having
  // both; else the two newest runs of the newest task that has two; else the one run on both sides.
  QString a, b;
  QStringList tasks;  // newest first
  for (auto it = layerwise.crbegin(); it != layerwise.crend(); ++it) {
    if (!tasks.contains(taskOf(*it))) tasks << taskOf(*it);
  }
  for (const QString& task : tasks) {
    QString erm, constrained;
    for (auto* run : layerwise) {
      if (taskOf(run) == task) (run->constrained ? constrained : erm) = run->id;
    }
    if (!erm.isEmpty() && !constrained.isEmpty()) {
      a = erm;
      b = constrained;
      break;
    }
  }
  for (int i = 0; a.isEmpty() && i < tasks.size(); ++i) {
    QStringList same;
    for (auto* run : layerwise) {
      if (taskOf(run) == tasks[i]) same << run->id;
    }
    if (same.size() >= 2) {
      a = same[same.size() - 2];
      b = same.back();
    }
  }
  if (a.isEmpty() && !layerwise.isEmpty()) a = b = layerwise.back()->id;
  // A run the user chose stays chosen; the defaults follow the runs opened.
  if (chosen_[0] && ids.contains(oldA)) a = oldA;
  if (chosen_[1] && ids.contains(oldB)) b = oldB;
  runA_->setCurrentIndex(runA_->findData(a));
  runB_->setCurrentIndex(runB_->findData(b));
  updatingChoices_ = false;
  updateNoiseChoices();
  requestAll();
}

void LayerProbeView::updateNoiseChoices() {
  const RunData* run = runOf(0) ? runOf(0) : runOf(1);
  const bool video = taskOf(run) == QLatin1String("video");
  const QStringList noises = run && !run->noiseKinds.isEmpty() ? run->noiseKinds : noiseKinds(video);
  QStringList current;
  for (int i = 0; i < noise_->count(); ++i) current << noise_->itemText(i);
  if (current == noises) return;
  const bool was = updatingChoices_;
  updatingChoices_ = true;
  noise_->clear();
  noise_->addItems(noises);
  updatingChoices_ = was;
  frame_->parentWidget()->setVisible(video);
}

void LayerProbeView::refresh() {
  updateRunChoices();
  // A live run's newest evaluation comes with its epoch's "latest" checkpoint: probe it again.
  for (int side = 0; side < 2; ++side) {
    const RunData* run = runOf(side);
    if (!run) continue;
    const qint64 evaluated = evaluationStep(run);
    const bool stale = shown_[side].error.isEmpty() && shown_[side].id == wanted_[side] && run->isActive() &&
                       evaluated > shown_[side].step;
    if (evaluated != probedEvaluation_[side] || (stale && isVisible())) request(side);
  }
  redraw();
}

void LayerProbeView::requestAll() {
  request(0);
  request(1);
  redraw();
}

void LayerProbeView::request(int side) {
  const RunData* run = runOf(side);
  probedEvaluation_[side] = evaluationStep(run);
  const quint64 id = nextId_++;
  wanted_[side] = id;
  ProbeOutcome& shown = shown_[side];
  const auto fail = [&](const QString& why) {
    shown = ProbeOutcome();
    shown.id = id;
    shown.side = side;
    shown.error = why;
  };
  if (!run) return fail(QStringLiteral("no run chosen"));
  if (!run->hasLatestCheckpoint && probedEvaluation_[side] < 0) {
    return fail(QStringLiteral("no checkpoint yet: a run saves one at the end of each epoch"));
  }
  if (!backend_) return fail(QStringLiteral("no probe backend"));
  if (taskOf(run) != taskOf(runOf(1 - side)) && runOf(1 - side) && side == 1) {
    return fail(QStringLiteral("A and B are different tasks: choose two text runs or two video runs"));
  }
  ProbeQuery query;
  query.id = id;
  query.side = side;
  query.path = run->path;
  query.checkpoint = checkpoint_->currentText();
  query.sample = sample_->value();
  query.noise = noise_->currentText();
  query.gamma = gamma();
  query.seed = seed_->value();
  QPointer<LayerProbeView> self(this);
  backend_->probe(query, [self](const ProbeOutcome& outcome) {
    if (self) self->receive(outcome);
  });
}

void LayerProbeView::receive(const ProbeOutcome& outcome) {
  if (outcome.side < 0 || outcome.side > 1 || outcome.id != wanted_[outcome.side]) return;  // a newer one is wanted
  shown_[outcome.side] = outcome;
  int size = 0;
  for (const auto& each : shown_) {
    if (each.error.isEmpty() && each.testSize > 0) size = size ? std::min(size, each.testSize) : each.testSize;
  }
  if (size > 0 && sample_->maximum() != size - 1) {
    sample_->blockSignals(true);
    sample_->setMaximum(size - 1);
    sample_->blockSignals(false);
  }
  redraw();
}

QString LayerProbeView::placeholder() const {
  bool layerwise = false;
  for (auto* run : model_->runs()) layerwise |= run->kind == RunKind::Layerwise;
  if (!layerwise) {
    return QStringLiteral("Probing needs a layerwise run: text-*, video-* or your-model-layerwise");
  }
  for (int side = 0; side < 2; ++side) {
    if (shown_[side].error.isEmpty() && !shown_[side].loss.isEmpty()) return QString();
  }
  const QString why = shown_[0].error.isEmpty() ? shown_[1].error : shown_[0].error;
  return why.isEmpty() ? QStringLiteral("probing…") : why;
}

}  // namespace descentlab::widgets
