#pragma once
// A bar above the main window's views (the error banner, a tour's caption): selectable, wrapped text, as tall as the
// text up to 30 % of the window and scrolled beyond it, and a ✕ that hides the bar.

class QLabel;
class QString;
class QWidget;

namespace descentlab::widgets {

// A bar above the views: selectable, wrapped text and a ✕ that hides the bar (the error banner, a tour's caption).
// Hidden until shown; `label` receives the text widget.
QWidget* makeDismissableBar(QWidget* parent, QLabel*& label, const QString& dismissTip);

}  // namespace descentlab::widgets
