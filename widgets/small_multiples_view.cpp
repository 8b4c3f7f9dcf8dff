#include "widgets/small_multiples_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include "core/record/metrics.h"
#include "widgets/elided_label.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace {

constexpr int kMostPanels = 12;

// Words for a series from the metric vocabulary (core/record/metrics.h).
QString seriesWords(const QString& name) {
  return QString::fromStdString(record::display_name(name.toStdString()));
}

// The training loss first, then the test metrics, then the rest by name.
int seriesRank(const QString& name) {
  if (name == QLatin1String(record::metric::kLoss)) return 0;
  if (name.startsWith(QStringLiteral("test_"))) return 1;
  return 2;
}

}  // namespace

SmallMultiplesView::SmallMultiplesView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Small multiples"), parent) {
  mode_ = new QComboBox(this);
  mode_->setObjectName(QStringLiteral("small-multiples-mode"));
  mode_->addItem(QStringLiteral("one plot per metric"), static_cast<int>(Mode::PerMetric));
  mode_->addItem(QStringLiteral("one plot per layer (test loss fₗ)"), static_cast<int>(Mode::PerLayer));
  mode_->setToolTip(
      QStringLiteral("A grid of small plots of the open runs: one per series they record, or one per "
                     "layer of the layerwise runs' test loss"));
  tools()->addWidget(mode_);
  note_ = new ElidedLabel(this);  // what the grid leaves out, beside the tools (elided, the whole in its tooltip)
  note_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);  // a flow layout gives Ignored no width
  note_->setStyleSheet(QStringLiteral("color: #8a4b00;"));
  note_->hide();
  tools()->addWidget(note_);
  addExportButton();
  setupLegend(plot());
  // The panels live in a grid of their own where the plot's axis rect was, under the shared legend.
  QCPAxisRect* first = plot()->axisRect();
  grid_ = new QCPLayoutGrid;
  plot()->plotLayout()->take(first);
  plot()->plotLayout()->simplify();
  plot()->plotLayout()->addElement(plot()->plotLayout()->rowCount(), 0, grid_);
  grid_->addElement(0, 0, first);
  grid_->setColumnSpacing(4);
  grid_->setRowSpacing(4);
  rects_ << first;
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
    resetZoom();
    refresh(true);
  });
}

void SmallMultiplesView::setMode(Mode mode) {
  mode_->setCurrentIndex(mode_->findData(static_cast<int>(mode)));
}

SmallMultiplesView::Mode SmallMultiplesView::mode() const {
  return static_cast<Mode>(mode_->currentData().toInt());
}

QVector<SmallMultiplesView::Curve> SmallMultiplesView::curvesFor(QStringList& panels, QStringList& notes) const {
  QVector<Curve> curves;
  const RunData* focus = model()->focusRun();
  const QString unit = focus ? lossUnit(*focus) : QString();
  int otherUnit = 0;
  if (mode() == Mode::PerMetric) {
    QSet<QString> names;
    for (const RunData* run : model()->runs()) {
      for (auto it = run->scalars.cbegin(); it != run->scalars.cend(); ++it) {
        if (!it->steps.isEmpty()) names.insert(it.key());
      }
    }
    panels = QStringList(names.begin(), names.end());
    std::sort(panels.begin(), panels.end(), [](const QString& a, const QString& b) {
      return seriesRank(a) != seriesRank(b) ? seriesRank(a) < seriesRank(b) : a < b;
    });
    if (panels.size() > kMostPanels) {
      notes << QStringLiteral("the first %1 of %2 series").arg(kMostPanels).arg(panels.size());
      panels = panels.mid(0, kMostPanels);
    }
    for (int p = 0; p < panels.size(); ++p) {
      for (const RunData* run : model()->runs()) {
        const auto track = run->scalars.constFind(panels[p]);
        if (track == run->scalars.cend() || track->steps.isEmpty()) continue;
        if (isLossSeries(panels[p]) && !unit.isEmpty() && lossUnit(*run) != unit) {  // units never share an axis
          ++otherUnit;
          continue;
        }
        curves.push_back({run, p, track->steps, track->values});
      }
    }
  } else {
    const QString series = QLatin1String(record::metric::kTestLayerLoss);
    int layers = 0;
    for (const RunData* run : model()->runs()) {
      const auto track = run->vectors.constFind(series);
      if (track == run->vectors.cend() || track->rows.isEmpty()) continue;
      if (!unit.isEmpty() && lossUnit(*run) != unit) {
        ++otherUnit;
        continue;
      }
      layers = std::max(layers, track->width);
    }
    if (layers > kMostPanels) notes << QStringLiteral("the first %1 of %2 layers").arg(kMostPanels).arg(layers);
    for (int layer = 0; layer < std::min(layers, kMostPanels); ++layer) {
      panels << QStringLiteral("layer %1").arg(layer);
      for (const RunData* run : model()->runs()) {
        const auto track = run->vectors.constFind(series);
        if (track == run->vectors.cend() || track->rows.isEmpty() || layer >= track->width) continue;
        if (!unit.isEmpty() && lossUnit(*run) != unit) continue;
        Curve curve{run, layer, {}, {}};
        for (int row = 0; row < track->rows.size(); ++row) {
          if (layer >= track->rows[row].size()) continue;
          curve.steps << track->steps[row];
          curve.values << track->rows[row][layer];
        }
        curves.push_back(curve);
      }
    }
  }
  // A panel left with no curve (a loss only runs of another unit have) is dropped, the others renumbered.
  QVector<int> newIndex(panels.size(), -1);
  QStringList kept;
  for (int p = 0; p < panels.size(); ++p) {
    if (std::any_of(curves.begin(), curves.end(), [p](const Curve& curve) { return curve.panel == p; })) {
      newIndex[p] = static_cast<int>(kept.size());
      kept << panels[p];
    }
  }
  panels = kept;
  for (Curve& curve : curves) curve.panel = newIndex[curve.panel];
  if (otherUnit > 0) {
    notes << QStringLiteral("%1 curve%2 in another unit than %3 left out (select such a run)")
                 .arg(otherUnit)
                 .arg(otherUnit == 1 ? "" : "s")
                 .arg(unit);
  }
  return curves;
}

void SmallMultiplesView::layOut(int count) {
  // Extra panels of an earlier layout go; the first stays (the frame's hover and placeholder use it).
  while (rects_.size() > std::max(count, 1)) {
    QCPAxisRect* extra = rects_.takeLast();
    grid_->remove(extra);
  }
  for (int i = 0; i < rects_.size(); ++i) grid_->take(rects_[i]);
  grid_->simplify();
  while (rects_.size() < count) {
    auto* rect = new QCPAxisRect(plot());
    rects_ << rect;
  }
  // As square a grid as the plot's shape allows.
  const double aspect = plot()->height() > 0 ? static_cast<double>(plot()->width()) / plot()->height() : 1.5;
  columns_ = std::clamp(static_cast<int>(std::lround(std::sqrt(count * aspect))), 1, std::max(count, 1));
  for (int i = 0; i < rects_.size(); ++i) grid_->addElement(i / columns_, i % columns_, rects_[i]);
}

void SmallMultiplesView::rebuild() {
  plot()->clearPlottables();
  plot()->clearItems();
  QStringList panels, notes;
  curves_ = curvesFor(panels, notes);
  panels_ = panels;
  layOut(static_cast<int>(panels.size()));
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (int p = 0; p < rects_.size(); ++p) {
    QCPAxisRect* rect = rects_[p];
    QString words = p < panels.size() ? (mode() == Mode::PerMetric ? seriesWords(panels[p]) : panels[p]) : "";
    // A loss names its unit (the selected run's): squared error and nats are never one panel.
    const RunData* focus = model()->focusRun();
    const bool lossPanel = p < panels.size() && (mode() == Mode::PerLayer || isLossSeries(panels[p]));
    if (lossPanel && focus && !lossUnit(*focus).isEmpty()) words += QStringLiteral(" (%1)").arg(lossUnit(*focus));
    styleAxisRect(rect, QStringLiteral("step"), words);
    for (auto* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
      axis->setLabelFont(small);
      axis->setTickLabelFont(small);
      axis->ticker()->setTickCount(3);
    }
  }
  QSet<QString> listed;  // one legend entry per run, from the first panel that draws it
  for (const Curve& curve : curves_) {
    QCPAxisRect* rect = rects_[curve.panel];
    auto* graph = plot()->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    graph->setData(curve.steps, curve.values, true);
    graph->setPen(QPen(curve.run->colour, 1.6));
    if (curve.steps.size() < 40) {
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, curve.run->colour, Qt::white, 4));
    }
    graph->setName(curve.run->name);
    if (listed.contains(curve.run->id)) {
      graph->removeFromLegend();
    } else {
      listed.insert(curve.run->id);
    }
    bindToRun(plot(), graph, *curve.run);
  }
  if (panels.isEmpty()) {
    placeholder(plot(), rects_.front(),
                mode() == Mode::PerMetric ? QStringLiteral("No run yet: open or start one")
                                          : QStringLiteral("No layerwise run with an evaluation yet\n(presets text-* "
                                                           "and video-*, or your-model-layerwise)"));
  }
  note_->setFullText(notes.join(QStringLiteral("; ")));
  note_->setVisible(!notes.isEmpty());
}

QString SmallMultiplesView::readout(QCPAxisRect* rect, double x, double) const {
  const int panel = static_cast<int>(rects_.indexOf(rect));
  if (panel < 0 || panel >= panels_.size()) return {};
  QStringList parts;
  for (const Curve& curve : curves_) {
    if (curve.panel != panel || !curve.run->visible) continue;
    const int i = nearestIndex(curve.steps, x);
    if (i < 0) continue;
    parts << QStringLiteral("%1 @%2: %3")
                 .arg(curve.run->name)
                 .arg(std::llround(curve.steps[i]))
                 .arg(shortNumber(curve.values[i]));
  }
  return panels_[panel] + QStringLiteral(": ") + parts.join(QStringLiteral("   "));
}

QString SmallMultiplesView::note() const {
  return note_->fullText();
}

SmallMultiplesView* SmallMultiplesView::showFor(QWidget* owner, LabModel* model) {
  auto* view = owner->findChild<SmallMultiplesView*>(QString(), Qt::FindDirectChildrenOnly);
  if (!view) {
    view = new SmallMultiplesView(model, owner);
    view->setWindowFlag(Qt::Window);
    view->setWindowTitle(QStringLiteral("Small multiples — DescentLab"));
    view->resize(980, 680);
    // Redrawn with the lab, once per turn of the event loop however many changes came (refresh skips unchanged).
    auto* soon = new QTimer(view);
    soon->setSingleShot(true);
    soon->setInterval(0);
    connect(soon, &QTimer::timeout, view, [view] {
      if (view->isVisible()) view->refresh();
    });
    connect(model, &LabModel::changed, soon, qOverload<>(&QTimer::start));
    connect(model, &LabModel::runsChanged, soon, qOverload<>(&QTimer::start));
  }
  view->show();
  view->raise();
  view->refresh(true);
  return view;
}

CsvTable SmallMultiplesView::table() const {
  CsvTable table({QStringLiteral("panel"), QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("value")});
  for (const Curve& curve : curves_) {
    if (!curve.run->visible) continue;  // as drawn
    for (int i = 0; i < curve.steps.size(); ++i) {
      table.add({panels_.value(curve.panel), curve.run->name, QString::number(static_cast<qint64>(curve.steps[i])),
                 roundTripNumber(curve.values[i])});
    }
  }
  return table;
}

}  // namespace descentlab::widgets
