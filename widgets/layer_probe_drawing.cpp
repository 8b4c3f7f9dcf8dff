// What the layer probe view shows of its answers: the status line, then for video the grid of grey frames (input,
// each layer's prediction, clean target, with their losses) and for text the review and P(true class) per layer as
// bars for A and B.
#include "widgets/layer_probe_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QStackedWidget>

#include <algorithm>
#include <cmath>

#include "widgets/elided_label.h"
#include "widgets/frame_grid.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

namespace {

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
  // A review of IMDb, or a test sample of a user's classification (its words: none).
  const bool text_task = first->task == QLatin1String("text");
  review_->setFullText(QStringLiteral("%1 %2 of %3, label %4 (%5 noise at γ %6)%7")
                           .arg(text_task ? QStringLiteral("Review") : QStringLiteral("Test sample"))
                           .arg(first->sample)
                           .arg(first->testSize)
                           .arg(className(first->label), noise_->currentText())
                           .arg(gamma(), 0, 'f', 2)
                           .arg(text.isEmpty() ? QString() : QStringLiteral(": ") + text));
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
