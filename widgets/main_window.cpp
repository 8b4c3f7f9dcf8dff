#include "widgets/main_window.h"

#include <QLabel>
#include <QStatusBar>
#include <QVBoxLayout>

namespace descentlab::widgets {

MainWindow::MainWindow(const EnvironmentSummary& summary, QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("DescentLab %1").arg(summary.version));
  resize(960, 600);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  overview_ = new QLabel(central);
  overview_->setTextFormat(Qt::RichText);
  overview_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  overview_->setWordWrap(true);
  QString datasets;
  for (const auto& line : summary.datasets) datasets += QStringLiteral("<li>%1</li>").arg(line.toHtmlEscaped());
  overview_->setText(QStringLiteral("<h2>DescentLab %1</h2>"
                                    "<p>Layerwise descent and HORST, watched live. The training views arrive with "
                                    "the engines; the headless CLI (<tt>descentlab-cli</tt>) works now.</p>"
                                    "<p><b>Engine:</b> LibTorch %2 &middot; %3 &middot; %4 thread(s)<br>"
                                    "<b>BLAS:</b> %5</p><p><b>Datasets</b></p><ul>%6</ul>")
                         .arg(summary.version.toHtmlEscaped(), summary.torch_version.toHtmlEscaped(),
                              summary.device.toHtmlEscaped(), QString::number(summary.threads),
                              summary.blas.toHtmlEscaped(), datasets));
  layout->addWidget(overview_);
  setCentralWidget(central);

  statusBar()->showMessage(QStringLiteral("Ready · device %1 · %2 thread(s)").arg(summary.device).arg(summary.threads));
}

}  // namespace descentlab::widgets
