// The Study dock's runs table columns: sorting by one, and the header's menu that shows or hides them.
#include <QHeaderView>
#include <QMenu>
#include <QTabWidget>
#include <QTableView>

#include "widgets/hyperparameter_view.h"
#include "widgets/study_browser.h"

namespace descentlab::widgets {

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
