#include "widgets/help_pages.h"

#include <algorithm>

#include <QDialog>
#include <QMessageBox>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace descentlab::widgets {

void showGettingStarted(QWidget* window) {
  auto* dialog = new QDialog(window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(QStringLiteral("Getting started with DescentLab"));
  auto* layout = new QVBoxLayout(dialog);
  auto* text = new QTextBrowser(dialog);
  text->setObjectName(QStringLiteral("getting-started"));
  text->setOpenExternalLinks(false);
  text->setHtml(gettingStartedHtml());
  layout->addWidget(text);
  auto* close = new QPushButton(QStringLiteral("Close"), dialog);
  QObject::connect(close, &QPushButton::clicked, dialog, &QDialog::close);
  layout->addWidget(close, 0, Qt::AlignRight);
  const QSize room = window->size() * 0.8;
  dialog->resize(std::min(720, room.width()), std::min(640, room.height()));
  dialog->show();
}

QString gettingStartedHtml() {
  return QStringLiteral(
      "<h2>Getting started</h2>"
      "<p>DescentLab trains small transformers and shows, live, what two 2026 papers are about: <b>layerwise "
      "descent</b> (each layer of an unrolled transformer should lower the loss, enforced by constraints trained "
      "primal-dual) and <b>HORST</b> (AdamW composed with a hyperbolic mirror step, for sparse training).</p>"
      "<h3>What to try first</h3><ol>"
      "<li>Press <b>Start</b> (F5): the <b>Experiment</b> panel (left) holds <i>video-constrained</i>, size "
      "<i>quick</i>, where every layer must beat the one before by a share α = 0.4. Then pick <i>video-erm</i> and "
      "Start again: the two runs train side by side (about a minute each on 2 cores). λ rises within the first "
      "epoch, and the constrained model's per-layer test loss falls faster through the early layers than ERM's, "
      "for the same final error.</li>"
      "<li>Watch <b>Per-layer loss</b>: the test loss f<sub>ℓ</sub> after each layer ℓ. Descent means the curve "
      "falls from left to right; red triangles mark layers where it rises. The run selected in <b>Runs</b> is drawn "
      "solid and bold, the others dashed: "
      "select each in turn to compare the ERM run with the constrained one.</li>"
      "<li>Open <b>Multipliers λ</b> (the Lagrange multipliers): λ<sub>ℓ</sub> grows while layer ℓ's constraint is "
      "violated and falls "
      "back to 0 once it holds. A flat 0 means the constraint never bound.</li>"
      "<li><b>Help &gt; Tours</b> starts a prepared pair for each paper's effect, with the views that show it "
      "in front: descent breaking for ERM, the cheap way out, HORST's pruned model, its masks, its weights near "
      "zero.</li>"
      "<li>For sparse training, start <i>vit-adamw</i> and <i>vit-horst</i> and open <b>Weight geometry</b>: the "
      "share of weights near zero, and the cumulative distribution on log |w|.</li>"
      "<li>When a layerwise run has finished, <b>Robustness</b> sweeps it under input noise of growing strength "
      "γ.</li>"
      "<li>The <b>Playground</b> shows, on toys, where each optimizer's implicit bias leads.</li></ol>"
      "<h3>The views</h3><table cellspacing=6>"
      "<tr><td><b>Training loss, Test metric</b></td><td>any series against step for every run, raw (faint) and "
      "smoothed; hover lists every run's value at that step; click a legend entry to hide a run.</td></tr>"
      "<tr><td><b>Per-layer loss</b></td><td>f<sub>ℓ</sub> against layer for the selected run (light = early "
      "evaluations, dark = late) and the newest curve of every other layerwise run; below, the share of test "
      "samples whose loss descends at each layer.</td></tr>"
      "<tr><td><b>Multipliers λ</b></td><td>λ<sub>ℓ</sub>, the slack g<sub>ℓ</sub> or the resilient "
      "relaxation u<sub>ℓ</sub> of the selected run, per layer.</td></tr>"
      "<tr><td><b>Weight geometry</b></td><td>the weight-magnitude distribution of every run, its sparsity and "
      "near-zero shares, and one run's histogram over time.</td></tr>"
      "<tr><td><b>Robustness</b></td><td>the test metric under noise, mean ± std over seeds.</td></tr>"
      "<tr><td><b>Runs, Log</b></td><td>one row per run (state, progress, speed, ETA, and the config keys in "
      "which runs differ); right-click for its menu. The Log is the selected run's.</td></tr></table>"
      "<p>Every run is written to an HDF5 run file as it trains (File &gt; Open brings it back, Resume continues a "
      "stopped one). Every plot zooms with a dragged rectangle or the wheel; a double click resets it; Export "
      "saves PNG, SVG, PDF or the CSV of what is drawn.</p>"
      "<h3>Keyboard shortcuts</h3><table cellspacing=6>"
      "<tr><td>F5</td><td>Start the experiment in the form</td></tr>"
      "<tr><td>F6 / F7 / Shift+F5</td><td>Pause / Resume / Stop the selected run</td></tr>"
      "<tr><td>Alt+Down / Alt+Up</td><td>Select the next / previous run</td></tr>"
      "<tr><td>Ctrl+H</td><td>Hide the selected run from the plots, or show it again</td></tr>"
      "<tr><td>Ctrl+W</td><td>Close the selected run (its file stays)</td></tr>"
      "<tr><td>Ctrl+O / Ctrl+Shift+S</td><td>Open run files / Save the selected run as</td></tr>"
      "<tr><td>Ctrl+Shift+O</td><td>Open a folder of run files as a study (the Study dock)</td></tr>"
      "<tr><td>F1</td><td>This page</td></tr>"
      "<tr><td>Ctrl+Q</td><td>Quit (running runs stop after their batch and keep their state)</td></tr>"
      "</table>");
}

void showEnvironment(QWidget* window, const EnvironmentSummary& summary) {
  QString datasets;
  for (const auto& line : summary.datasets) datasets += QStringLiteral("<li>%1</li>").arg(line.toHtmlEscaped());
  QMessageBox::information(
      window, QStringLiteral("DescentLab environment"),
      QStringLiteral("<p><b>DescentLab %1</b></p><p>LibTorch %2 · %3 · %4 thread(s)<br>BLAS: %5</p>"
                     "<p><b>Datasets</b></p><ul>%6</ul><p>Runs are HDF5 files: drop them on the window to open "
                     "them.</p>")
          .arg(summary.version.toHtmlEscaped(), summary.torch_version.toHtmlEscaped(), summary.device.toHtmlEscaped(),
               QString::number(summary.threads), summary.blas.toHtmlEscaped(), datasets));
}

}  // namespace descentlab::widgets
