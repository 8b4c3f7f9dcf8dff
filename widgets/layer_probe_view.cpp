#include "widgets/layer_probe_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/elided_label.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

// The video page: rows A and B, columns the noisy input, layers 0..L and the clean target, each a grey frame with
// its caption (the loss) under it.
class FrameGrid : public QWidget {
 public:
  struct Row {
    QString name;
    QColor colour;
    QVector<QImage> images;
    QStringList captions;
    QString message;  // instead of images (an error, "probing...")
  };
  explicit FrameGrid(QWidget* parent) : QWidget(parent) { setMinimumSize(200, 90); }
  void setColumns(const QStringList& titles) { titles_ = titles; }
  void setRows(const QVector<Row>& rows) {
    rows_ = rows;
    update();
  }
  const QVector<Row>& rows() const { return rows_; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (rows_.isEmpty() || titles_.isEmpty()) return;
    const QFontMetrics metrics(font());
    const int line = metrics.height();
    const int nameWidth = std::min(width() / 5, metrics.horizontalAdvance(QStringLiteral("constrained-quick")) + 8);
    const int columns = static_cast<int>(titles_.size());
    const int rowCount = static_cast<int>(rows_.size());
    const int gap = 4;
    const int cellWidth = std::max(8, (width() - nameWidth - gap * columns) / columns);
    const int cellHeight = std::max(8, (height() - line - rowCount * (line + gap)) / rowCount);
    const int side = std::min(cellWidth, cellHeight);
    painter.setPen(palette().text().color());
    for (int c = 0; c < columns; ++c) {
      const QRect title(nameWidth + c * (cellWidth + gap), 0, cellWidth, line);
      painter.drawText(title, Qt::AlignCenter, metrics.elidedText(titles_[c], Qt::ElideRight, cellWidth));
    }
    for (int r = 0; r < rowCount; ++r) {
      const Row& row = rows_[r];
      const int top = line + r * (side + line + gap);
      painter.setPen(row.colour.isValid() ? row.colour.darker(130) : palette().text().color());
      QFont bold = font();
      bold.setBold(true);
      painter.setFont(bold);
      painter.drawText(QRect(0, top, nameWidth - 4, side), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap,
                       row.name);
      painter.setFont(font());
      painter.setPen(palette().text().color());
      if (!row.message.isEmpty()) {
        painter.drawText(QRect(nameWidth, top, width() - nameWidth, side), Qt::AlignVCenter | Qt::TextWordWrap,
                         row.message);
        continue;
      }
      for (int c = 0; c < columns && c < row.images.size(); ++c) {
        const int left = nameWidth + c * (cellWidth + gap) + (cellWidth - side) / 2;
        const QRect target(left, top, side, side);
        painter.drawImage(target, row.images[c]);
        painter.drawRect(target.adjusted(0, 0, -1, -1));
        if (c < row.captions.size()) {
          const QRect caption(nameWidth + c * (cellWidth + gap), top + side, cellWidth, line);
          painter.drawText(caption, Qt::AlignCenter, metrics.elidedText(row.captions[c], Qt::ElideRight, cellWidth));
        }
      }
    }
  }

 private:
  QStringList titles_;
  QVector<Row> rows_;
};

namespace {

constexpr int kGammaSteps = 200;  // the slider's ticks over γ in [0, 2]

// One frame of a clip as a grey image: values clamped to [0, 1] (the sprites' range; noise goes beyond).
QImage greyFrame(const QVector<double>& clip, int offset, int height, int width) {
  QImage image(width, height, QImage::Format_Grayscale8);
  for (int y = 0; y < height; ++y) {
    uchar* line = image.scanLine(y);
    for (int x = 0; x < width; ++x) {
      const double value = clip.value(offset + y * width + x, 0.0);
      line[x] = static_cast<uchar>(std::lround(255.0 * std::clamp(value, 0.0, 1.0)));
    }
  }
  return image;
}

QString className(int label) {
  return label == 0 ? QStringLiteral("negative") : label == 1 ? QStringLiteral("positive") : QString::number(label);
}

}  // namespace

LayerProbeView::LayerProbeView(LabModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setObjectName(QStringLiteral("layer-probe"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* toolRow = new QWidget(this);
  auto* tools = new FlowLayout(toolRow, 8, 3);
  layout->addWidget(toolRow);
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
  checkpoint_->addItems({QStringLiteral("latest"), QStringLiteral("best")});
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

  poll_.setInterval(1000);
  connect(&poll_, &QTimer::timeout, this, &LayerProbeView::refresh);
  connect(model_, &LabModel::runsChanged, this, &LayerProbeView::refresh);
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
  gammaLabel_->setText(QStringLiteral("%1").arg(gamma(), 0, 'f', 2));
  refresh();
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
  const auto it = run->vectors.constFind(QStringLiteral("test_layer_loss"));
  return it == run->vectors.cend() || it->steps.isEmpty() ? -1 : static_cast<qint64>(it->steps.back());
}

RunData* LayerProbeView::runOf(int side) const {
  const QComboBox* choice = side == 0 ? runA_ : runB_;
  const QString id = choice->currentData().toString();
  return id.isEmpty() ? nullptr : model_->run(id);
}

void LayerProbeView::updateRunChoices() {
  QVector<RunData*> layerwise;
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
  // Defaults: the newest ERM run as A and the newest constrained one as B; else the two newest runs.
  QString a, b;
  for (auto* run : layerwise) (run->constrained ? b : a) = run->id;
  if (a.isEmpty() || b.isEmpty()) {
    a = layerwise.size() >= 2 ? layerwise[layerwise.size() - 2]->id
                              : (layerwise.isEmpty() ? QString() : layerwise.back()->id);
    b = layerwise.isEmpty() ? QString() : layerwise.back()->id;
  }
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
  const QStringList noises =
      video ? QStringList{QStringLiteral("video")}
            : QStringList{QStringLiteral("gaussian"), QStringLiteral("uniform"), QStringLiteral("discrete")};
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
  RunData* run = runOf(side);
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
    return QStringLiteral(
        "Open or start a layerwise-descent run (text or video) to probe one test sample layer by "
        "layer.");
  }
  for (int side = 0; side < 2; ++side) {
    if (shown_[side].error.isEmpty() && !shown_[side].loss.isEmpty()) return QString();
  }
  const QString why = shown_[0].error.isEmpty() ? shown_[1].error : shown_[0].error;
  return why.isEmpty() ? QStringLiteral("probing…") : why;
}

void LayerProbeView::redraw() {
  const QString message = placeholder();
  const ProbeOutcome* first = nullptr;
  for (const auto& each : shown_) {
    if (!first && each.error.isEmpty() && !each.loss.isEmpty()) first = &each;
  }
  QStringList status;
  for (int side = 0; side < 2; ++side) {
    const RunData* run = runOf(side);
    const ProbeOutcome& outcome = shown_[side];
    const QString name = QStringLiteral("%1 %2").arg(side == 0 ? QStringLiteral("A") : QStringLiteral("B"),
                                                     run ? run->name : QStringLiteral("—"));
    if (!outcome.error.isEmpty()) {
      status << QStringLiteral("%1: %2").arg(name, outcome.error);
    } else if (outcome.loss.isEmpty() || outcome.id != wanted_[side]) {
      status << QStringLiteral("%1: probing…").arg(name);
    } else {
      status << QStringLiteral("%1: %2 step %3, %4 ms")
                    .arg(name, outcome.checkpoint)
                    .arg(outcome.step)
                    .arg(outcome.seconds * 1000.0, 0, 'f', 0);
    }
  }
  status_->setFullText(message.isEmpty() || first ? status.join(QStringLiteral(" · ")) : message);
  if (!first) {
    review_->setFullText(QString());
    plot_->clearPlottables();
    plot_->clearItems();
    plot_->replot();
    grid_->setRows({});
    pages_->hide();  // no empty axes under the placeholder
    return;
  }
  pages_->show();
  if (first->task == QLatin1String("video")) {
    pages_->setCurrentWidget(grid_);
    review_->setFullText(QStringLiteral("Test clip %1 of %2, %3 noise at γ %4: the noisy input, what the readout makes "
                                        "of each layer ℓ, and the clean target (MSE under each)")
                             .arg(first->sample)
                             .arg(first->testSize)
                             .arg(noise_->currentText())
                             .arg(gamma(), 0, 'f', 2));
    frame_->setMaximum(std::max(0, first->frames - 1));
    frameLabel_->setText(QStringLiteral("frame %1").arg(frame_->value()));
    QStringList titles{QStringLiteral("input")};
    for (int l = 0; l <= first->layers; ++l) titles << QStringLiteral("ℓ = %1").arg(l);
    titles << QStringLiteral("clean");
    grid_->setColumns(titles);
    QVector<FrameGrid::Row> rows;
    for (int side = 0; side < 2; ++side) {
      const RunData* run = runOf(side);
      const ProbeOutcome& outcome = shown_[side];
      FrameGrid::Row row;
      row.name = run ? run->name : QStringLiteral("—");
      row.colour = run ? run->colour : QColor();
      if (!outcome.error.isEmpty() || outcome.loss.isEmpty()) {
        row.message = outcome.error.isEmpty() ? QStringLiteral("probing…") : outcome.error;
        rows.push_back(row);
        continue;
      }
      const int pixels = outcome.height * outcome.width;
      const int frame = std::min(frame_->value(), outcome.frames - 1) * pixels;
      const int clip = outcome.frames * pixels;
      double inputError = 0.0;
      for (int p = 0; p < clip; ++p) {
        inputError += std::pow(outcome.input.value(p) - outcome.target.value(p), 2);
      }
      row.images << greyFrame(outcome.input, frame, outcome.height, outcome.width);
      row.captions << QStringLiteral("%1").arg(inputError / std::max(1, clip), 0, 'g', 3);
      for (int l = 0; l <= outcome.layers; ++l) {
        row.images << greyFrame(outcome.predictions, l * clip + frame, outcome.height, outcome.width);
        row.captions << QStringLiteral("%1").arg(outcome.loss.value(l), 0, 'g', 3);
      }
      row.images << greyFrame(outcome.target, frame, outcome.height, outcome.width);
      row.captions << QString();
      rows.push_back(row);
    }
    grid_->setRows(rows);
    return;
  }
  pages_->setCurrentWidget(plot_);
  drawText();
}

void LayerProbeView::drawText() {
  const ProbeOutcome* first = shown_[0].error.isEmpty() && !shown_[0].loss.isEmpty() ? &shown_[0] : &shown_[1];
  QStringList words = first->words.mid(0, 40);
  QString text = words.join(QLatin1Char(' '));
  if (first->words.size() > 40) text += QStringLiteral(" …");
  review_->setFullText(QStringLiteral("Review %1 of %2, label %3 (%4 noise at γ %5): %6")
                           .arg(first->sample)
                           .arg(first->testSize)
                           .arg(className(first->label), noise_->currentText())
                           .arg(gamma(), 0, 'f', 2)
                           .arg(text));
  plot_->clearPlottables();
  plot_->clearItems();
  auto* group = new QCPBarsGroup(plot_);
  int layers = 0;
  for (int side = 0; side < 2; ++side) {
    const ProbeOutcome& outcome = shown_[side];
    const RunData* run = runOf(side);
    if (!outcome.error.isEmpty() || outcome.loss.isEmpty() || !run) continue;
    layers = std::max(layers, outcome.layers);
    QVector<double> x, y;
    for (int l = 0; l <= outcome.layers; ++l) {
      x << l;
      y << outcome.probabilityOfLabel(l);
    }
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(QStringLiteral("%1 %2").arg(side == 0 ? QStringLiteral("A") : QStringLiteral("B"), run->name));
    bars->setWidth(0.38);
    bars->setPen(QPen(run->colour.darker(130)));
    bars->setBrush(run->colour);
    bars->setData(x, y, true);
    bars->setBarsGroup(group);
  }
  auto* half = new QCPItemStraightLine(plot_);
  half->point1->setCoords(0, 0.5);
  half->point2->setCoords(1, 0.5);
  half->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  plot_->xAxis->setRange(-0.6, layers + 0.6);
  plot_->yAxis->setRange(0, 1.05);
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(1.0);
  plot_->xAxis->setTicker(ticker);
  plot_->replot();
}

}  // namespace descentlab::widgets
