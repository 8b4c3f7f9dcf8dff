#pragma once
// What a person sees as a broken layout, checked on a laid-out window: visible sibling widgets that overlap, a
// widget cut off by its parent, text wider than the label or button that shows it (unless the widget elides it on
// purpose: property "elides" = true), a tab whose title is cut, a plot below a usable size.

#include <QAbstractButton>
#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QToolButton>

#include <qcustomplot.h>

#include <string>
#include <vector>

namespace descentlab::testing {

inline QString describe(const QWidget* widget) {
  QString name = QString::fromLatin1(widget->metaObject()->className());
  if (!widget->objectName().isEmpty()) name += QStringLiteral(" '%1'").arg(widget->objectName());
  if (const auto* label = qobject_cast<const QLabel*>(widget))
    name += QStringLiteral(" \"%1\"").arg(label->text().left(40));
  if (const auto* button = qobject_cast<const QAbstractButton*>(widget)) {
    name += QStringLiteral(" \"%1\"").arg(button->text().left(40));
  }
  for (const QWidget* up = widget->parentWidget(); up; up = up->parentWidget()) {
    if (const auto* dock = qobject_cast<const QDockWidget*>(up)) {
      name += QStringLiteral(" in dock '%1'").arg(dock->windowTitle());
      break;
    }
  }
  return name;
}

// Widgets whose children Qt itself lays out on top of each other (scroll buttons over tabs, a viewport under its
// scroll bars, a spin box's line edit): their insides are not ours to check.
inline bool qtInternals(const QWidget* widget) {
  return qobject_cast<const QTabBar*>(widget) || qobject_cast<const QComboBox*>(widget) ||
         qobject_cast<const QAbstractSpinBox*>(widget) || qobject_cast<const QScrollBar*>(widget) ||
         qobject_cast<const QMenuBar*>(widget) || qobject_cast<const QStatusBar*>(widget) ||
         qobject_cast<const QToolButton*>(widget) || qobject_cast<const QCustomPlot*>(widget);
}

// Visible, in its window, and not a tabbed dock Qt has parked outside the window (geometry wholly outside).
inline bool shown(const QWidget* widget) {
  if (!widget->isVisible() || widget->isWindow() || widget->width() <= 0) return false;
  // A dock behind a tab, and a tab bar the main window keeps for a tab group that emptied (a tour moved its
  // views), are parked wholly outside the window, where no one sees them; such a bar left in place has no tab and
  // draws nothing.
  const auto* tabs = qobject_cast<const QTabBar*>(widget);
  if ((qobject_cast<const QDockWidget*>(widget) || tabs) && widget->parentWidget() &&
      !widget->parentWidget()->rect().intersects(widget->geometry())) {
    return false;
  }
  if (tabs && tabs->count() == 0) return false;
  return true;
}

inline void checkText(const QWidget* widget, std::vector<std::string>& problems) {
  if (widget->property("elides").toBool()) return;
  if (const auto* label = qobject_cast<const QLabel*>(widget)) {
    if (label->text().isEmpty() || label->pixmap().isNull() == false) return;
    if (label->wordWrap()) {
      if (label->heightForWidth(label->width()) > label->height() + 2) {
        problems.push_back(QStringLiteral("%1: wrapped text needs %2 px of height, has %3")
                               .arg(describe(label))
                               .arg(label->heightForWidth(label->width()))
                               .arg(label->height())
                               .toStdString());
      }
    } else if (label->minimumSizeHint().width() > label->width() + 1) {
      problems.push_back(QStringLiteral("%1: text needs %2 px, has %3")
                             .arg(describe(label))
                             .arg(label->minimumSizeHint().width())
                             .arg(label->width())
                             .toStdString());
    }
    return;
  }
  if (const auto* button = qobject_cast<const QAbstractButton*>(widget)) {
    if (!button->text().isEmpty() && button->minimumSizeHint().width() > button->width() + 1) {
      problems.push_back(QStringLiteral("%1: text needs %2 px, has %3")
                             .arg(describe(button))
                             .arg(button->minimumSizeHint().width())
                             .arg(button->width())
                             .toStdString());
    }
    return;
  }
  if (const auto* box = qobject_cast<const QComboBox*>(widget)) {
    const QFontMetrics metrics(box->font());
    const int needed = metrics.horizontalAdvance(box->currentText()) + 30;  // text + frame + arrow
    if (!box->currentText().isEmpty() && needed > box->width() + 1) {
      problems.push_back(QStringLiteral("%1 \"%2\": text needs %3 px, has %4")
                             .arg(describe(box), box->currentText())
                             .arg(needed)
                             .arg(box->width())
                             .toStdString());
    }
    return;
  }
  if (const auto* tabs = qobject_cast<const QTabBar*>(widget)) {
    for (int i = 0; i < tabs->count(); ++i) {
      const int needed = QFontMetrics(tabs->font()).horizontalAdvance(tabs->tabText(i));
      if (tabs->tabRect(i).width() < needed + 8) {
        problems.push_back(QStringLiteral("tab \"%1\": title needs %2 px, tab has %3")
                               .arg(tabs->tabText(i))
                               .arg(needed)
                               .arg(tabs->tabRect(i).width())
                               .toStdString());
      }
    }
  }
}

inline void checkTree(const QWidget* parent, std::vector<std::string>& problems) {
  checkText(parent, problems);
  if (qtInternals(parent)) return;
  std::vector<const QWidget*> children;
  for (const QObject* object : parent->children()) {
    const auto* child = qobject_cast<const QWidget*>(object);
    if (child && shown(child)) children.push_back(child);
  }
  const bool scrolled = parent->objectName() == QStringLiteral("qt_scrollarea_viewport");
  for (size_t i = 0; i < children.size(); ++i) {
    const QRect area = children[i]->geometry();
    if (!scrolled && !qobject_cast<const QAbstractScrollArea*>(parent) && !parent->rect().contains(area)) {
      problems.push_back(QStringLiteral("%1 is cut off by %2 (%3,%4 %5x%6 in %7x%8)")
                             .arg(describe(children[i]), describe(parent))
                             .arg(area.x())
                             .arg(area.y())
                             .arg(area.width())
                             .arg(area.height())
                             .arg(parent->width())
                             .arg(parent->height())
                             .toStdString());
    }
    for (size_t j = i + 1; j < children.size(); ++j) {
      const QRect overlap = area.intersected(children[j]->geometry());
      if (overlap.width() > 1 && overlap.height() > 1) {
        problems.push_back(QStringLiteral("%1 overlaps %2 by %3x%4")
                               .arg(describe(children[i]), describe(children[j]))
                               .arg(overlap.width())
                               .arg(overlap.height())
                               .toStdString());
      }
    }
    checkTree(children[i], problems);
  }
}

// Every problem in `window` as laid out now, plus plots smaller than `minimumPlot`.
inline std::vector<std::string> layoutProblems(const QMainWindow& window, QSize minimumPlot) {
  std::vector<std::string> problems;
  checkTree(&window, problems);
  for (const auto* plot : window.findChildren<QCustomPlot*>()) {
    if (!shown(plot)) continue;
    if (plot->width() < minimumPlot.width() || plot->height() < minimumPlot.height()) {
      problems.push_back(QStringLiteral("%1 plot is %2x%3, under the usable %4x%5")
                             .arg(describe(plot->parentWidget()))
                             .arg(plot->width())
                             .arg(plot->height())
                             .arg(minimumPlot.width())
                             .arg(minimumPlot.height())
                             .toStdString());
    }
  }
  return problems;
}

}  // namespace descentlab::testing
