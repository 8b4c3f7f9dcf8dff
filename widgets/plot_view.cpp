#include "widgets/plot_view.h"

#include <qcustomplot.h>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QSvgGenerator>
#include <QTextStream>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

PlotView::PlotView(LabModel* model, QString title, QWidget* parent)
    : QWidget(parent), model_(model), title_(std::move(title)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(2);
  auto* toolRow = new QWidget(this);
  tools_ = new FlowLayout(toolRow);
  layout->addWidget(toolRow);
  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(220, 140);
  plot_->xAxis->setTicker(distinctLabelTicker());
  plot_->yAxis->setTicker(distinctLabelTicker());
  plot_->setInteractions(QCP::iRangeZoom);
  plot_->setSelectionRectMode(QCP::srmZoom);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->setAntialiasedElements(QCP::aePlottables);
  layout->addWidget(plot_, 1);
  readout_ = new QLabel(this);
  readout_->setProperty("elides", true);
  readout_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  readout_->setStyleSheet(QStringLiteral("color: #555;"));
  setReadoutText(QStringLiteral("drag: zoom · wheel: zoom · double-click: reset"));
  layout->addWidget(readout_);

  connect(plot_, &QCustomPlot::mouseMove, this, &PlotView::onMouseMove);
  // A click on a run's legend entry hides the run from every multi-run view, or shows it again. (QCustomPlot's own
  // legendClick never fires while drag-to-zoom is on, so the click is found here.)
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) { pressedAt_ = event->pos(); });
  connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || (event->pos() - pressedAt_).manhattanLength() > 3) return;
    for (int i = 0; i < plot_->legend->itemCount(); ++i) {
      auto* entry = qobject_cast<QCPPlottableLegendItem*>(plot_->legend->item(i));
      if (!entry || !entry->visible() || !entry->rect().contains(event->pos())) continue;
      // A group's entry hides or shows every member of the group (a run of it stays so in the runs table).
      const QString groupLabel = entry->plottable()->property("groupLabel").toString();
      if (!groupLabel.isEmpty()) {
        model_->toggleGroup(groupLabel);
        return;
      }
      if (const RunData* run = model_->run(entry->plottable()->property("runId").toString())) {
        model_->setRunVisible(run->id, !run->visible);
      }
      return;
    }
  });
  // Log axes over less than a decade get evenly spaced ticks, so there are always labels to read.
  for (auto* axis : {plot_->yAxis, plot_->xAxis}) {
    connect(axis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [axis] { fitLogTicks(axis); });
  }
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, &PlotView::onDoubleClick);
  connect(plot_, &QCustomPlot::mouseWheel, this, [this] { userZoomed_ = true; });
  connect(plot_->selectionRect(), &QCPSelectionRect::accepted, this, [this] { userZoomed_ = true; });
}

QString PlotView::fileStem() const {
  return QString(title_).toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
}

PlotView::~PlotView() {
  // A legend taken out of the layout is owned by no one: hand it back, so the plot deletes it.
  if (legendTaken_ && !plot_->plotLayout()->hasElement(0, 0)) {
    plot_->plotLayout()->addElement(0, 0, plot_->legend);
  }
}

void PlotView::addExportButton() {
  auto* button = new QToolButton(this);
  button->setText(QStringLiteral("Export…"));
  button->setToolTip(QStringLiteral("Save this plot as PNG, SVG or PDF, or its data as CSV"));
  connect(button, &QToolButton::clicked, this, &PlotView::exportWithDialog);
  tools_->addWidget(button);
}

void PlotView::setReadoutText(const QString& text) {
  readoutText_ = text;
  const int width = readout_->width() > 20 ? readout_->width() : 400;
  readout_->setText(readout_->fontMetrics().elidedText(text, Qt::ElideRight, width));
  readout_->setToolTip(text);
}

void PlotView::setLowerRow(QCPAxisRect* rect, double upper, double lower) {
  lowerRow_ = rect;
  lowerRowIndex_ = plot_->plotLayout()->rowCount();
  plot_->plotLayout()->addElement(lowerRowIndex_, 0, rect);
  upperStretch_ = upper;
  lowerStretch_ = lower;
  plot_->plotLayout()->setRowStretchFactor(lowerRowIndex_ - 1, upper);
  plot_->plotLayout()->setRowStretchFactor(lowerRowIndex_, lower);
  lowerRowShown_ = true;
}

bool PlotView::fitLowerRow() {
  if (!lowerRow_) return false;
  // The room the plots share is what the legend above them leaves: a tour's three legend rows left the per-layer
  // losses 40 px at 1280x800 while the plot as a whole had 240.
  const bool legendShown = plot_->legend->visible() && plot_->legend->itemCount() > 0 && plot_->legend->layout();
  const int height = plot_->height() - (legendShown ? plot_->legend->minimumOuterSizeHint().height() : 0);
  const bool shown = height >= 200;
  const bool changed = shown != lowerRowShown_;
  if (changed) {
    lowerRowShown_ = shown;
    if (shown) {
      plot_->plotLayout()->addElement(lowerRowIndex_, 0, lowerRow_);
    } else {
      plot_->plotLayout()->take(lowerRow_);
      plot_->plotLayout()->simplify();
    }
    lowerRow_->setVisible(shown);
  }
  if (shown) {
    plot_->plotLayout()->setRowStretchFactor(lowerRowIndex_ - 1, height >= 320 ? upperStretch_ : upperStretch_ * 1.5);
    plot_->plotLayout()->setRowStretchFactor(lowerRowIndex_, lowerStretch_);
  }
  return changed;
}

void PlotView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (drawnRevision_ != model_->revision()) refresh();
}

void PlotView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Legend entries are fitted (columns, shortened names) to the width: a new width redraws them from the model; a
  // lower plot that comes or goes with the height, too, and the legend's columns while it has several rows.
  const bool rowsChanged = fitLowerRow();
  const bool legendRows = plot_->legend->visible() && plot_->legend->rowCount() > 1;
  const bool resized = event->oldSize().width() != event->size().width() ||
                       (legendRows && event->oldSize().height() != event->size().height());
  if ((rowsChanged || resized) && drawnRevision_ >= 0) refresh(true);
  setReadoutText(readoutText_);
  // As many ticks as the axis has room for, so tick labels never run into each other in a small view.
  for (auto* rect : plot_->axisRects()) {
    const int height = std::max(rect->height(), plot_->height() / std::max(1, plot_->axisRectCount()) - 60);
    const int width = std::max(rect->width(), plot_->width() - 80);
    for (auto* axis : rect->axes()) {
      // At least three ticks across, or a narrow plot may label one step only.
      const int room = axis->orientation() == Qt::Vertical ? height / 32 : width / 60;
      axis->ticker()->setTickCount(axis->orientation() == Qt::Vertical ? std::clamp(room, 2, 6)
                                                                       : std::clamp(room, 3, 8));
    }
  }
}

void PlotView::styleAxisRect(QCPAxisRect* rect, const QString& xLabel, const QString& yLabel) {
  QFont labelFont = font();
  labelFont.setPointSizeF(labelFont.pointSizeF() * 1.05);
  rect->axis(QCPAxis::atBottom)->setLabel(xLabel);
  rect->axis(QCPAxis::atLeft)->setLabel(yLabel);
  for (auto* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
    axis->setLabelFont(labelFont);
    axis->grid()->setPen(QPen(QColor(220, 220, 220), 0, Qt::DotLine));
  }
}

void PlotView::fitLegend() {
  // As many legend columns (up to 3) as the widest entry allows in the plot's width: an entry is never clipped.
  const QFontMetrics metrics(plot_->legend->font());
  int widest = 0, entries = 0;
  for (int i = 0; i < plot_->legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot_->legend->item(i))) {
      widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()) + 48);
      ++entries;
    }
  }
  const int width = plot_->width() > 100 ? plot_->width() : 800;
  int columns = widest > 0 ? std::clamp((width - 16) / widest, 1, 3) : 2;
  // A legend of more rows than a third of a short plot's height holds left the data 45-60 px (issue 54: four runs at
  // 1024x700): then more columns, each entry shortened to its share of the width, while a share keeps 90 px. A row
  // is as the legend lays it out: its entry's icon and text, and the spacing between rows.
  const int rowHeight =
      std::max(metrics.height(),
               plot_->legend->itemCount() > 0 ? plot_->legend->item(0)->minimumOuterSizeHint().height() : 0) +
      std::max(0, plot_->legend->rowSpacing());
  const int allowedRows = std::max(1, plot_->height() / 3 / rowHeight);
  while (columns < 3 && (entries + columns - 1) / columns > allowedRows && (width - 16) / (columns + 1) - 48 >= 90) {
    ++columns;
  }
  plot_->legend->setWrap(columns);
  plot_->legend->setFillOrder(plot_->legend->fillOrder(), true);  // a new wrap only applies once rearranged
  // An entry wider than its column is shortened around what tells it from the other entries, so it is never cut at
  // the edge and two runs never read the same.
  const int room = (width - 16) / columns - 48;
  QVector<QCPPlottableLegendItem*> items;
  QStringList names;
  for (int i = 0; i < plot_->legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot_->legend->item(i))) {
      items << item;
      names << item->plottable()->name();
    }
  }
  const QStringList shortened = distinctElide(names, metrics, std::max(room, 40));
  for (int i = 0; i < items.size(); ++i) {
    if (shortened[i] != names[i]) items[i]->plottable()->setName(shortened[i]);
  }
}

void PlotView::refresh(bool force) {
  const int64_t revision = model_->revision();
  if (!force && revision == drawnRevision_) return;
  drawnRevision_ = revision;
  fitLowerRow();
  rebuild();
  bindGroupEntries();
  fitLegend();
  // The legend just drawn may leave the plots another room than the one fitLowerRow saw: then once more.
  if (fitLowerRow()) {
    rebuild();
    bindGroupEntries();
    fitLegend();
  }
  // A legend without items would squeeze its layout column to nothing (QCustomPlot takes the smallest maximum
  // width of a column): it leaves the layout while empty and comes back with its first item.
  auto* layout = plot_->plotLayout();
  if (legendTaken_ && plot_->legend->itemCount() > 0 && !layout->hasElement(0, 0)) {
    layout->addElement(0, 0, plot_->legend);
    legendTaken_ = false;
  } else if (!legendTaken_ && plot_->legend->itemCount() == 0 && layout->hasElement(0, 0) &&
             layout->element(0, 0) == plot_->legend) {
    layout->take(plot_->legend);
    legendTaken_ = true;
  }
  if (!userZoomed_) resetRanges();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void PlotView::bindGroupEntries() {
  if (!model_->grouped() || !listsGroups()) return;
  // Each view tied its groups' mean lines to their groups where it drew them (bindToGroup). A hidden group draws
  // nothing but keeps its entry, struck out and grey, so that a click shows it again.
  const auto& groups = model_->groups();
  for (int i = 0; i < plot_->plottableCount(); ++i) {
    const QString label = plot_->plottable(i)->property("groupLabel").toString();
    for (const auto& group : groups) {
      if (group.label != label || label.isEmpty()) continue;
      for (const auto* member : group.members) drawnInGroups_.insert(member->id);
    }
  }
  // Only where the group was drawn: a ViT group hidden from the training curves has no entry in the per-layer loss.
  for (const auto& group : groups) {
    if (!group.hidden()) continue;
    bool drawnHere = false;
    for (const auto* member : group.hiddenMembers) drawnHere = drawnHere || drawnInGroups_.contains(member->id);
    if (!drawnHere) continue;
    auto* entry = plot_->addGraph(firstAxisRect()->axis(QCPAxis::atBottom), firstAxisRect()->axis(QCPAxis::atLeft));
    entry->setName(group.label);
    entry->setPen(QPen(group.colour, 2));
    bindToGroup(entry, group);
    styleLegendEntry(plot_, entry, true);
  }
  // The entries in the groups' order, hidden ones in their place: a second click where the first one was shows the
  // group again (entries of no group keep their order, after the groups').
  auto* legend = plot_->legend;
  QVector<QPair<int, QCPAbstractLegendItem*>> items;
  for (int i = 0; i < legend->itemCount(); ++i) {
    QCPAbstractLegendItem* item = legend->item(i);
    int order = static_cast<int>(groups.size()) + i;
    if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item)) {
      const QString label = entry->plottable()->property("groupLabel").toString();
      for (int g = 0; g < groups.size(); ++g) {
        if (groups[g].label == label) order = g;
      }
    }
    items.push_back({order, item});
  }
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  bool sorted = true;
  for (int i = 0; i < items.size(); ++i) sorted = sorted && items[i].second == legend->item(i);
  if (sorted) return;
  for (const auto& item : items) legend->take(item.second);
  legend->simplify();
  for (const auto& item : items) legend->addItem(item.second);
}

void PlotView::resetRanges() {
  for (auto* rect : plot_->axisRects()) {
    for (auto* axis : rect->axes()) {
      bool found = false;
      QCPRange range;
      for (auto* plottable : axis->plottables()) {
        if (!plottable->visible()) continue;
        bool ok = false;
        const QCPRange part = axis->orientation() == Qt::Horizontal ? plottable->getKeyRange(ok, QCP::sdBoth)
                                                                    : plottable->getValueRange(ok, QCP::sdBoth);
        if (ok) {
          range = found ? QCPRange(std::min(range.lower, part.lower), std::max(range.upper, part.upper)) : part;
          found = true;
        }
      }
      if (!found) continue;
      if (range.size() <= 0) {  // one point (or a flat line): a margin in proportion to the value
        const double half = std::max(std::abs(range.lower) * 0.1, 1e-6);
        range = QCPRange(range.lower - half, range.upper + half);
      }
      if (axis->scaleType() == QCPAxis::stLogarithmic) {
        axis->setRange(range.lower / 1.3, range.upper * 1.3);
      } else {
        const double pad = range.size() * 0.04;
        axis->setRange(range.lower - pad, range.upper + pad);
      }
    }
  }
}

QString PlotView::readout(QCPAxisRect* rect, double x, double y) const {
  Q_UNUSED(rect);
  return QStringLiteral("x %1   y %2").arg(x, 0, 'g', 5).arg(y, 0, 'g', 5);
}

QString PlotView::hoverTable(QCPAxisRect*, double, double) const {
  return {};
}

QCPAxisRect* PlotView::firstAxisRect() const {
  return plot_->axisRect(0);
}

void PlotView::onMouseMove(QMouseEvent* event) {
  QCPAxisRect* rect = plot_->axisRectAt(event->pos());
  if (!rect) return;
  const double x = rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x());
  const double y = rect->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y());
  setReadoutText(readout(rect, x, y));
  lastHoverTable_ = hoverTable(rect, x, y);
  if (lastHoverTable_.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint() + QPoint(16, 16), lastHoverTable_, plot_);
  }
  if (!plot_->hasItem(crossVertical_)) {
    crossVertical_ = new QCPItemStraightLine(plot_);
    crossHorizontal_ = new QCPItemStraightLine(plot_);
    for (auto* line : {crossVertical_, crossHorizontal_}) {
      line->setPen(QPen(QColor(120, 120, 120, 160), 1, Qt::DashLine));
      line->setSelectable(false);
      line->setLayer(QStringLiteral("overlay"));
    }
  }
  for (auto* line : {crossVertical_, crossHorizontal_}) {
    line->setClipAxisRect(rect);
    line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  }
  crossVertical_->point1->setCoords(x, 0);
  crossVertical_->point2->setCoords(x, 1);
  crossHorizontal_->point1->setCoords(0, y);
  crossHorizontal_->point2->setCoords(1, y);
  plot_->layer(QStringLiteral("overlay"))->replot();
}

void PlotView::onDoubleClick(QMouseEvent*) {
  userZoomed_ = false;
  resetRanges();
  plot_->replot();
}

bool PlotView::hasData() const {
  for (int i = 0; i < plot_->plottableCount(); ++i) {
    auto* plottable = plot_->plottable(i);
    if (!plottable->visible()) continue;
    bool ok = false;
    plottable->getKeyRange(ok, QCP::sdBoth);
    if (ok) return true;
  }
  return false;
}

bool PlotView::exportImage(const QString& path, int width, int height) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  const int w = width > 0 ? width : plot_->width();
  const int h = height > 0 ? height : plot_->height();
  setExporting(true);
  bool ok = false;
  if (suffix == QStringLiteral("png")) {
    ok = plot_->savePng(path, w, h, 2.0);
  } else if (suffix == QStringLiteral("pdf")) {
    ok = plot_->savePdf(path, w, h, QCP::epNoCosmetic, QStringLiteral("DescentLab"), title_);
  } else if (suffix == QStringLiteral("svg")) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(QSize(w, h));
    generator.setViewBox(QRect(0, 0, w, h));
    generator.setTitle(title_);
    QCPPainter painter;
    if (painter.begin(&generator)) {
      plot_->toPainter(&painter, w, h);
      ok = painter.end();
    }
  } else if (suffix == QStringLiteral("csv")) {
    ok = exportCsv(path);
  }
  setExporting(false);
  if (ok) emit const_cast<PlotView*>(this)->exported(path);
  return ok;
}

bool PlotView::exportCsv(const QString& path) const {
  // Written beside, then renamed: a failed export never leaves half a file under the chosen name.
  const QString temporary = path + QStringLiteral(".tmp");
  QFile file(temporary);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
  QTextStream out(&file);
  out << csv();
  out.flush();
  file.close();
  if (file.error() != QFile::NoError) return false;
  QFile::remove(path);
  return QFile::rename(temporary, path);
}

void PlotView::exportWithDialog() {
  QString filter;
  const QString base = fileStem();
  const QString path = QFileDialog::getSaveFileName(
      this, QStringLiteral("Export %1").arg(title_), base + QStringLiteral(".png"),
      QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv)"), &filter);
  if (path.isEmpty()) return;
  exportImage(path);
}

}  // namespace descentlab::widgets
