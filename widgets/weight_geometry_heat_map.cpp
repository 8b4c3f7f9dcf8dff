// The weight-geometry view's heat map (one run's histogram over time, any run chosen beside it), the arrangement of
// the legend, the distribution and the heat map for the plot's shape, and the readout under the pointer.
#include "widgets/weight_geometry_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QLabel>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include "widgets/histogram_statistics.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

void WeightGeometryView::drawHeatMap(const QString& group) {
  // Any run with histograms of this group may be shown, hidden ones too.
  QStringList ids;
  QStringList names;
  for (auto* run : model()->runs()) {
    const auto it = run->histograms.constFind(group);
    if (it == run->histograms.cend() || it->counts.isEmpty()) continue;
    ids << run->id;
    names << run->name;
  }
  const RunData* focus = model()->focusRun();
  QString chosen = heatRunChosen_ && ids.contains(heatRunId_) ? heatRunId_ : QString();
  if (chosen.isEmpty() && focus && ids.contains(focus->id)) chosen = focus->id;
  if (chosen.isEmpty() && !ids.isEmpty()) chosen = ids.front();
  heatRunId_ = chosen;
  {
    const QSignalBlocker blocker(heatRunBox_);
    if (itemDataList(heatRunBox_) != ids) {
      heatRunBox_->clear();
      for (int i = 0; i < ids.size(); ++i) heatRunBox_->addItem(names[i], ids[i]);
    }
    for (int i = 0; i < ids.size(); ++i) heatRunBox_->setItemText(i, names[i]);
    selectData(heatRunBox_, chosen);
  }
  heatRunBox_->setEnabled(ids.size() > 1);
  heatTrack_ = HistogramTrack();
  heatRunName_.clear();
  const RunData* run = model()->run(chosen);
  if (!run) {
    heatTitle_->setText(QStringLiteral("histogram over steps"));
    heatTitle_->setTextColor(QColor(120, 120, 120));
    return;
  }
  const HistogramTrack& track = run->histograms[group];
  const int snapshots = static_cast<int>(track.counts.size());
  const int bins = static_cast<int>(track.edges.size()) - 1;
  heatTitle_->setText(QStringLiteral("%1: histogram over steps").arg(run->name));
  heatTitle_->setTextColor(run->colour.darker(125));
  if (snapshots < 1 || bins < 3) return;
  heatTrack_ = track;
  heatRunName_ = run->name;
  heatMap_ = new QCPColorMap(heat_->axis(QCPAxis::atBottom), heat_->axis(QCPAxis::atLeft));
  heatMap_->data()->setSize(snapshots, bins);
  const double firstStep = track.steps.front();
  const double lastStep = snapshots > 1 ? track.steps.back() : firstStep + 1;
  // Cell centres on the log-spaced bins; the first cell (zeros and |w| below the second edge) sits one bin lower.
  const double binWidth = std::log10(track.edges[2] / track.edges[1]);
  heatMap_->data()->setRange(QCPRange(firstStep, lastStep),
                             QCPRange(std::log10(track.edges[1]) - 0.5 * binWidth,
                                      std::log10(std::sqrt(track.edges[bins - 1] * track.edges[bins]))));
  for (int column = 0; column < snapshots; ++column) {
    double total = 0;
    for (double count : track.counts[column]) total += count;
    for (int bin = 0; bin < bins && bin < track.counts[column].size(); ++bin) {
      const double share = total > 0 ? track.counts[column][bin] / total : 0.0;
      heatMap_->data()->setCell(column, bin, share > 0 ? std::log10(share) : qQNaN());
    }
  }
  heatMap_->setInterpolate(false);
  heatMap_->setColorScale(scale_);
  heatMap_->setDataRange(QCPRange(-5, 0));
  heatMap_->removeFromLegend();
}

bool WeightGeometryView::heatMapShown() const {
  return heat_->visible();
}

bool WeightGeometryView::legendWanted() const {
  return exporting_ || !tableShown_ || hiddenRuns_ > 0;
}

void WeightGeometryView::setExporting(bool exporting) {
  if (exporting == exporting_) return;
  exporting_ = exporting;
  arrange();  // the export's replot arranges again, for the picture's size
  if (!exporting) plot()->replot(QCustomPlot::rpQueuedReplot);
}

void WeightGeometryView::arrange() {
  auto* legend = plot()->legend;
  const QRect area = plot()->viewport();
  const bool wide = area.width() >= 560 && area.width() >= 1.6 * area.height();
  // Stacked in a short view (a docked cell of a 1920x1080 window), the distribution and the heat map would both be
  // too low to read; and where the table has no room, the legend takes it: in both, the heat map steps aside until
  // the view has room (float it, or give the dock more height).
  const bool compact = !tableShown_ || (!wide && area.height() < 360);
  const bool sideBySide = wide && !compact;  // the heat map beside the distribution
  const bool withLegend = legend->itemCount() > 0 && legendWanted();
  const auto [widest, columns, beside] = fitLegend(area, wide, sideBySide, withLegend);
  // As many |w| ticks as the distribution's width has room for ("0.0001" is wide), so labels never run together.
  const int besideWidth = beside ? columns * (widest + 8) : 0;
  const double share = sideBySide ? (beside ? 1.3 / 2.3 : 0.5) : 1.0;
  const int distributionWidth = static_cast<int>((area.width() - besideWidth - 70) * share) - 60;
  plot()->xAxis->ticker()->setTickCount(std::clamp(distributionWidth / 75, 2, 6));
  const int state = (sideBySide ? 1 : 0) + (beside ? 2 : 0) + (compact ? 4 : 0);
  if (state == arrangedState_) return;
  arrangedState_ = state;
  for (QCPLayerable* part : std::initializer_list<QCPLayerable*>{heatTitle_, heat_, scale_}) part->setVisible(!compact);
  // A chooser for a heat map that is not drawn seemed to do nothing (issue 33): it goes with the heat map (a note in
  // its place wrapped the tools onto a second row at 1280x800 and cost the table a run's row). Queued: this runs
  // inside a replot.
  QTimer::singleShot(0, this, [this, compact] {
    heatRunBox_->setVisible(!compact);
    heatLabel_->setVisible(!compact);
    this->layout()->activate();  // the tool row's new height, then the table's rows for the room it leaves
    fitTableColumns();
  });
  placeLayoutElements(sideBySide, beside, compact);
}

WeightGeometryView::LegendFit WeightGeometryView::fitLegend(const QRect& area, bool wide, bool sideBySide,
                                                            bool withLegend) {
  auto* legend = plot()->legend;
  // The legend's columns: as many as fit its part of the width, so an entry is never clipped. Above the plots
  // when its rows take little of the height; beside the distribution in a short, wide plot (the dock), where
  // rows above would leave the plots too low to read.
  const QFontMetrics metrics(legend->font());
  const int entryHeight = metrics.height() + 4;
  int widest = 0;
  for (int i = 0; i < legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
      widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()) + 40);
    }
  }
  const int entries = std::max(1, legend->itemCount());
  const int aboveColumns =
      widest > 0 ? std::clamp(((sideBySide ? area.width() / 2 : area.width()) - 60) / widest, 1, 4) : 1;
  const int aboveRows = withLegend ? (entries + aboveColumns - 1) / aboveColumns : 0;
  const bool beside = wide && aboveRows * entryHeight > area.height() / 5;
  const int besideRows = std::max(1, (area.height() - 60) / entryHeight);
  const int columns = beside ? (entries + besideRows - 1) / besideRows : aboveColumns;
  if (legend->wrap() != columns || legend->columnCount() > columns ||
      legend->columnCount() < std::min(columns, legend->itemCount())) {
    legend->setWrap(columns);
    legend->setFillOrder(QCPLegend::foColumnsFirst, /*rearrange=*/true);  // setWrap alone moves no entry
  }
  // An empty legend has no maximum width and would squeeze its column to nothing: it waits outside its box for
  // its first entry. The box always holds a spacer, so it never squeezes anything.
  if (withLegend && !legend->layout()) {
    legendBox_->addElement(0, 0, legend);
  } else if (!withLegend && legend->layout()) {
    legend->layout()->take(legend);
  }
  return {widest, columns, beside};
}

void WeightGeometryView::placeLayoutElements(bool sideBySide, bool beside, bool compact) {
  auto* layout = plot()->plotLayout();
  auto* distribution = plot()->axisRect(0);
  for (QCPLayoutElement* element :
       std::initializer_list<QCPLayoutElement*>{legendBox_, distribution, heatTitle_, heat_, scale_}) {
    if (element->layout()) element->layout()->take(element);
  }
  layout->simplify();
  if (sideBySide && beside) {  // title above the heat map; distribution | legend | heat map | colour bar
    layout->addElement(0, 2, heatTitle_);
    layout->addElement(1, 0, distribution);
    layout->addElement(1, 1, legendBox_);
    layout->addElement(1, 2, heat_);
    layout->addElement(1, 3, scale_);
    layout->setRowStretchFactors({0.001, 1.0});
    layout->setColumnStretchFactors({1.3, 0.001, 1.0, 0.001});
  } else if (sideBySide) {  // legend | title above, distribution | heat map | colour bar below
    layout->addElement(0, 0, legendBox_);
    layout->addElement(0, 1, heatTitle_);
    layout->addElement(1, 0, distribution);
    layout->addElement(1, 1, heat_);
    layout->addElement(1, 2, scale_);
    layout->setRowStretchFactors({0.001, 1.0});
    layout->setColumnStretchFactors({1.0, 1.0, 0.001});
  } else if (compact && beside) {  // distribution | legend
    layout->addElement(0, 0, distribution);
    layout->addElement(0, 1, legendBox_);
    layout->setColumnStretchFactors({1.0, 0.001});
  } else if (compact) {  // legend, distribution
    layout->addElement(0, 0, legendBox_);
    layout->addElement(1, 0, distribution);
    layout->setRowStretchFactors({0.001, 1.0});
  } else {  // legend, distribution, title, heat map beside its colour bar
    layout->addElement(0, 0, legendBox_);
    layout->addElement(1, 0, distribution);
    layout->addElement(2, 0, heatTitle_);
    layout->addElement(3, 0, heat_);
    layout->addElement(3, 1, scale_);
    layout->setRowStretchFactors({0.001, 1.0, 0.001, 1.0});
    layout->setColumnStretchFactors({1.0, 0.001});
  }
  if (sideBySide) {
    distribution->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
    heat_->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
    distribution->setMarginGroup(QCP::msTop | QCP::msBottom, alignScale_);
  } else {
    distribution->setMarginGroup(QCP::msTop | QCP::msBottom, nullptr);
    distribution->setMarginGroup(QCP::msLeft | QCP::msRight, alignColumns_);
    heat_->setMarginGroup(QCP::msLeft | QCP::msRight, alignColumns_);
  }
  layout->setRowSpacing(0);
}

QString WeightGeometryView::readout(QCPAxisRect* rect, double x, double y) const {
  if (rect == heat_) {
    if (!heatMap_ || heatTrack_.counts.isEmpty()) return QString();
    int column = 0;
    int bin = 0;
    heatMap_->data()->coordToCell(x, y, &column, &bin);
    column = std::clamp(column, 0, static_cast<int>(heatTrack_.counts.size()) - 1);
    bin = std::clamp(bin, 0, static_cast<int>(heatTrack_.edges.size()) - 2);
    const auto& counts = heatTrack_.counts[column];
    double total = 0;
    for (double count : counts) total += count;
    const double share = total > 0 && bin < counts.size() ? counts[bin] / total : 0.0;
    const QString range =
        bin == 0 ? QStringLiteral("|w| < %1 (zeros)").arg(magnitudeText(heatTrack_.edges[1]))
                 : QStringLiteral("|w| %1 – %2")
                       .arg(magnitudeText(heatTrack_.edges[bin]), magnitudeText(heatTrack_.edges[bin + 1]));
    return QStringLiteral("%1 · step %2 · %3: %4 of all weights")
        .arg(heatRunName_)
        .arg(static_cast<qint64>(heatTrack_.steps[column]))
        .arg(range, percentText(share));
  }
  Q_UNUSED(y);
  if (curves_.isEmpty() || x <= 0) return QString();
  QStringList parts;
  QString where;
  for (const Curve& curve : curves_) {
    if (mode_ == Mode::Cumulative) {
      where = QStringLiteral("kept |w| < %1").arg(magnitudeText(x));
      parts << QStringLiteral("%1 %2").arg(curve.name, percentText(keptShareBelow(curve.edges, curve.counts, x)));
    } else {
      const auto upper = std::upper_bound(curve.edges.begin() + 1, curve.edges.end(), x);
      if (upper == curve.edges.begin() + 1 || upper == curve.edges.end()) continue;
      const int bin = static_cast<int>(upper - curve.edges.begin()) - 1;
      where =
          QStringLiteral("kept |w| %1 – %2").arg(magnitudeText(curve.edges[bin]), magnitudeText(curve.edges[bin + 1]));
      const int point = bin - 1;  // the drawn points start at the second bin
      parts << QStringLiteral("%1 %2").arg(curve.name,
                                           point < curve.y.size() ? percentText(curve.y[point]) : QStringLiteral("–"));
    }
  }
  if (parts.isEmpty()) return QString();
  return QStringLiteral("%1: %2").arg(where, parts.join(QStringLiteral(", ")));
}

}  // namespace descentlab::widgets
