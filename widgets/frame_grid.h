#pragma once
// The layer probe's video page (layer_probe_view.h): the widget that draws its grid of grey frames, shared by the
// view's construction (layer_probe_view.cpp) and its drawing (layer_probe_drawing.cpp).

#include <QColor>
#include <QImage>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

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
  void paintEvent(QPaintEvent*) override;

 private:
  QStringList titles_;
  QVector<Row> rows_;
};

}  // namespace descentlab::widgets
