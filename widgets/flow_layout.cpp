#include "widgets/flow_layout.h"

#include <QWidget>

#include <algorithm>

namespace descentlab::widgets {

FlowLayout::FlowLayout(QWidget* parent, int horizontalSpacing, int verticalSpacing)
    : QLayout(parent), horizontalSpacing_(horizontalSpacing), verticalSpacing_(verticalSpacing) {
  setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) {
  items_.append(item);
}

QLayoutItem* FlowLayout::takeAt(int index) {
  if (index < 0 || index >= items_.size()) return nullptr;
  return items_.takeAt(index);
}

QSize FlowLayout::minimumSize() const {
  QSize size;
  for (const auto* item : items_) size = size.expandedTo(item->minimumSize());
  const QMargins margins = contentsMargins();
  return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom());
}

QSize FlowLayout::sizeHint() const {
  // One line when there is room for it.
  int width = 0, height = 0;
  for (const auto* item : items_) {
    if (item->isEmpty()) continue;
    width += item->sizeHint().width() + (width > 0 ? horizontalSpacing_ : 0);
    height = std::max(height, item->sizeHint().height());
  }
  const QMargins margins = contentsMargins();
  return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom());
}

void FlowLayout::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
  const QRect area = rect.marginsRemoved(contentsMargins());
  int x = area.x(), y = area.y(), lineHeight = 0;
  QList<QPair<QLayoutItem*, QRect>> line;
  const auto placeLine = [&] {
    // Items of one line share its height and are centred in it.
    if (apply) {
      for (auto& [item, geometry] : line) {
        geometry.moveTop(geometry.top() + (lineHeight - geometry.height()) / 2);
        item->setGeometry(geometry);
      }
    }
    line.clear();
  };
  for (QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    QSize size = item->sizeHint();
    size.setWidth(std::min(size.width(), area.width()));
    size = size.expandedTo(item->minimumSize()).boundedTo(item->maximumSize());
    if (x > area.x() && x + size.width() > area.right() + 1) {
      placeLine();
      x = area.x();
      y += lineHeight + verticalSpacing_;
      lineHeight = 0;
    }
    line.append({item, QRect(QPoint(x, y), size)});
    x += size.width() + horizontalSpacing_;
    lineHeight = std::max(lineHeight, size.height());
  }
  placeLine();
  const QMargins margins = contentsMargins();
  return y + lineHeight - rect.y() + margins.bottom();
}

}  // namespace descentlab::widgets
