// The Study dock's runs table columns: sorting by one, and the header's menu that shows or hides them.
#include <QDockWidget>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenu>
#include <QSignalBlocker>
#include <QStandardItem>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>

#include "widgets/elided_label.h"
#include "widgets/hyperparameter_view.h"
#include "widgets/lab_model.h"
#include "widgets/study_browser.h"

namespace descentlab::widgets {

QStandardItem* studyNameItem(const StudyRunRow& run, int index, int sortRole) {
  // The name a person gave the run in place of its path below the study's folder, which the tooltip keeps; its tags
  // after it, its note in the tooltip.
  const QString shown = run.label.isEmpty() ? run.name : run.label;
  auto* name =
      new QStandardItem(run.tags.isEmpty() ? shown : QStringLiteral("%1  [%2]").arg(shown, run.tags.join(", ")));
  name->setData(shown, sortRole);
  if (run.branchStep >= 0) {
    // A family as a tree: a branch sorts right under its parent (by the parent's file name, then its own), indented,
    // and says what it changed where.
    const QString parentName = QFileInfo(run.branchParent).completeBaseName();
    name->setText(QStringLiteral("    ↳ %1%2").arg(name->text(), branchSuffix(run.branchChanges, run.branchStep)));
    name->setData(parentName + QChar(0x1f) + shown, sortRole);
  }
  name->setData(index, Qt::UserRole);
  QString tip = run.path;
  if (!run.tags.isEmpty()) tip += QStringLiteral("\ntags: ") + run.tags.join(QStringLiteral(", "));
  if (!run.note.isEmpty()) tip += QStringLiteral("\nnote: ") + run.note;
  if (!run.error.isEmpty()) tip += QStringLiteral("\n") + run.error;
  if (run.branchStep >= 0) {
    tip += QStringLiteral("\nbranch of %1 at step %2: %3")
               .arg(run.branchParent)
               .arg(run.branchStep)
               .arg(run.branchChanges.isEmpty() ? QStringLiteral("nothing changed") : run.branchChanges);
  }
  name->setToolTip(tip);
  if (!run.error.isEmpty()) name->setText(run.name + QStringLiteral(" (unreadable)"));
  return name;
}

void StudyBrowser::setRunAnnotation(const QString& path, const QString& label, const QStringList& tags,
                                    const QString& note) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  for (int i = 0; i < runs_.size(); ++i) {
    if (QFileInfo(runs_[i].path).absoluteFilePath() != absolute) continue;
    runs_[i].label = label;
    runs_[i].tags = tags;
    runs_[i].note = note;
    for (int row = 0; row < model_->rowCount(); ++row) {
      if (model_->item(row, 0)->data(Qt::UserRole).toInt() == i) {
        model_->setItem(row, 0, studyNameItem(runs_[i], i, kStudySortRole));
      }
    }
    setFilterText(filter_->text());
  }
}

QLayout* StudyBrowser::buildStatusRow() {
  fullWindow_ = new QToolButton(this);
  fullWindow_->setObjectName(QStringLiteral("study-full-window"));
  fullWindow_->setText(QStringLiteral("Full window"));
  fullWindow_->setCheckable(true);
  fullWindow_->setAutoRaise(true);
  fullWindow_->setToolTip(
      QStringLiteral("The study over the whole window, for more rows; again (or a double-click on its title) to dock "
                     "it back"));
  connect(fullWindow_, &QToolButton::toggled, this, [this](bool on) { setFullWindow(on); });
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(status_, 1);
  row->addWidget(fullWindow_);
  return row;
}

namespace {

// The dock that holds `widget` (the Study dock), or nullptr.
QDockWidget* dockOf(const QWidget* widget) {
  for (QWidget* up = widget->parentWidget(); up; up = up->parentWidget()) {
    if (auto* dock = qobject_cast<QDockWidget*>(up)) return dock;
  }
  return nullptr;
}

}  // namespace

void StudyBrowser::setFullWindow(bool on) {
  QDockWidget* dock = dockOf(this);
  if (!dock) return;
  if (on && !dock->isFloating()) {
    QWidget* main = dock->parentWidget();
    // The button follows the dock: docked back by its title or its float button, the button is off again.
    if (!dock->property("studyFollowed").toBool()) {
      dock->setProperty("studyFollowed", true);
      connect(dock, &QDockWidget::topLevelChanged, fullWindow_, [this](bool floating) {
        const QSignalBlocker quiet(fullWindow_);
        fullWindow_->setChecked(floating);
      });
    }
    dock->setFloating(true);
    if (main) dock->setGeometry(QRect(main->mapToGlobal(QPoint(0, 0)), main->size()));
    dock->raise();
  } else if (!on && dock->isFloating()) {
    dock->setFloating(false);
  }
  const QSignalBlocker quiet(fullWindow_);
  fullWindow_->setChecked(dock->isFloating());
}

bool StudyBrowser::fullWindow() const {
  const QDockWidget* dock = dockOf(this);
  return dock && dock->isFloating();
}

void StudyBrowser::showHyperparameters() {
  side_->setCurrentWidget(hyper_);
}

void StudyBrowser::sortBy(const QString& column, bool ascending) {
  const int index = column == QStringLiteral("run") ? 0 : columnKeys_.indexOf(column) + 1;
  if (index < 0 || (index == 0 && column != QStringLiteral("run"))) return;
  table_->sortByColumn(index, ascending ? Qt::AscendingOrder : Qt::DescendingOrder);
}

QStringList StudyBrowser::columns() const {
  QStringList shown = {QStringLiteral("run")};
  for (int c = 0; c < columnKeys_.size(); ++c) {
    if (!table_->isColumnHidden(c + 1)) shown << columnKeys_[c];
  }
  return shown;
}

void StudyBrowser::setColumnShown(const QString& column, bool shown) {
  columnChoice_[column] = shown;
  const int index = columnKeys_.indexOf(column);
  if (index >= 0) table_->setColumnHidden(index + 1, !shown);
}

void StudyBrowser::showColumnMenu(const QPoint& position) {
  QMenu menu(this);
  for (int c = 0; c < columnKeys_.size(); ++c) {
    QAction* action = menu.addAction(columnKeys_[c]);
    action->setCheckable(true);
    action->setChecked(!table_->isColumnHidden(c + 1));
    connect(action, &QAction::toggled, this, [this, key = columnKeys_[c]](bool on) { setColumnShown(key, on); });
  }
  menu.exec(table_->horizontalHeader()->mapToGlobal(position));
}

}  // namespace descentlab::widgets
