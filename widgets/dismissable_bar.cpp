// A bar above the main window's views (the error banner, a tour's caption): wrapped text that scrolls beyond a
// share of the window's height, and a button that hides the bar.
#include "widgets/dismissable_bar.h"

#include <algorithm>

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QToolButton>

namespace descentlab::widgets {
namespace {

// The text of a bar above the views, as tall as its wrapped text up to a share of the window's height and scrolled
// beyond it: at 1024x700 a tour's whole caption was taller than the room above the views and its end was cut off.
class TextScroller : public QScrollArea {
 public:
  TextScroller(QLabel* label, QWidget* parent) : QScrollArea(parent), label_(label) {
    setWidget(label);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    QSizePolicy policy = sizePolicy();
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    // Its cap follows the window's height, which a layout's cached height-for-width does not see.
    if (parent) parent->window()->installEventFilter(this);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == window() && event->type() == QEvent::Resize) updateGeometry();
    return QScrollArea::eventFilter(watched, event);
  }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override {
    const int whole = label_->heightForWidth(width);
    return std::min(whole > 0 ? whole : label_->sizeHint().height(), tallest());
  }
  QSize sizeHint() const override { return {label_->sizeHint().width(), heightForWidth(std::max(width(), 1))}; }
  QSize minimumSizeHint() const override { return {60, std::min(fontMetrics().height() * 2, tallest())}; }

 protected:
  // New text in the label: the bar takes its new height.
  bool viewportEvent(QEvent* event) override {
    if (event->type() == QEvent::LayoutRequest) updateGeometry();
    return QScrollArea::viewportEvent(event);
  }

 private:
  // At most 30 % of the window (at least three lines), so the plots keep most of the column.
  int tallest() const { return std::max(fontMetrics().height() * 3, window()->height() * 30 / 100); }
  QLabel* label_;
};

}  // namespace

QWidget* makeDismissableBar(QWidget* parent, QLabel*& label, const QString& dismissTip) {
  auto* bar = new QWidget(parent);
  auto* layout = new QHBoxLayout(bar);
  layout->setContentsMargins(8, 4, 8, 4);
  label = new QLabel;
  label->setWordWrap(true);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* scroller = new TextScroller(label, bar);
  auto* dismiss = new QToolButton(bar);
  dismiss->setText(QStringLiteral("✕"));
  dismiss->setAutoRaise(true);
  dismiss->setToolTip(dismissTip);
  QObject::connect(dismiss, &QToolButton::clicked, bar, &QWidget::hide);
  layout->addWidget(scroller, 1);
  layout->addWidget(dismiss, 0, Qt::AlignTop);
  bar->hide();
  return bar;
}

}  // namespace descentlab::widgets
