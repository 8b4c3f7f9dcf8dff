#pragma once
// A one-line label that never asks for more width than it gets: its text is elided to its width (the whole text
// in its tooltip), so a long run name or readout cannot push a dock wider or be cut mid-letter.

#include <QLabel>

namespace descentlab::widgets {

class ElidedLabel : public QLabel {
  Q_OBJECT

 public:
  explicit ElidedLabel(QWidget* parent = nullptr, Qt::TextElideMode mode = Qt::ElideRight);
  void setFullText(const QString& text);
  QString fullText() const { return fullText_; }
  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();
  QString fullText_;
  Qt::TextElideMode mode_;
};

}  // namespace descentlab::widgets
