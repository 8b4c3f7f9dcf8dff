// The layer probe's grid of grey frames, drawn (see frame_grid.h).
#include "widgets/frame_grid.h"

#include <QPainter>

#include <algorithm>

namespace descentlab::widgets {

void FrameGrid::paintEvent(QPaintEvent*) {
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
    painter.drawText(QRect(0, top, nameWidth - 4, side), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap, row.name);
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

}  // namespace descentlab::widgets
