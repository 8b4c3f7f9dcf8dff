#include "widgets/session_memory.h"

#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>

#include "widgets/lab_model.h"
#include "widgets/message_bar.h"

namespace descentlab::widgets {
namespace {

constexpr int kRecentFiles = 8;

}  // namespace

SessionMemory::SessionMemory(const LabModel& model, MessageBar& messages, QMenu* recentMenu, QObject* parent)
    : QObject(parent), model_(model), messages_(messages), recentMenu_(recentMenu) {
  save_.setSingleShot(true);
  save_.setInterval(0);
  connect(&save_, &QTimer::timeout, this, &SessionMemory::rememberRuns);
  connect(&messages_, &MessageBar::linkActivated, this, [this](const QString& link) {
    if (link != QLatin1String("#reopen") || offered_.isEmpty()) return;
    const QStringList paths = offered_;
    offered_.clear();
    messages_.hide();
    emit openRequested(paths);
  });
  updateRecentMenu();
}

void SessionMemory::addRecentFile(const QString& path) {
  addRecentFiles({path});
}

void SessionMemory::addRecentFiles(const QStringList& paths) {
  if (paths.isEmpty()) return;
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
  for (const QString& path : paths) {  // the last one on top, as if added one by one
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
  }
  while (recent.size() > kRecentFiles) recent.removeLast();
  settings.setValue(QStringLiteral("recentFiles"), recent);
  updateRecentMenu();
}

void SessionMemory::updateRecentMenu() {
  // Not clear(): that deletes the entries at once, and this runs from inside an entry's own triggered signal (an
  // opened file joins the list).
  for (QAction* action : recentMenu_->actions()) {
    recentMenu_->removeAction(action);
    action->deleteLater();
  }
  const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  for (const auto& path : recent) {
    recentMenu_->addAction(path, this, [this, path] { emit openRequested({path}); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void SessionMemory::rememberRuns() {
  QStringList paths;
  for (const auto* run : model_.runs()) {
    if (!run->path.isEmpty()) paths << run->path;
  }
  QSettings().setValue(QStringLiteral("session/runs"), paths);
}

QStringList SessionMemory::lastSessionRuns() const {
  QStringList existing;
  for (const QString& path : QSettings().value(QStringLiteral("session/runs")).toStringList()) {
    if (QFileInfo::exists(path)) existing << path;
  }
  return existing;
}

int SessionMemory::offerLastSession() {
  offered_ = lastSessionRuns();
  if (offered_.isEmpty()) return 0;
  QStringList names;
  for (const QString& path : offered_) names << QFileInfo(path).completeBaseName();
  const int shown = 4;
  QString listed = names.mid(0, shown).join(QStringLiteral(", "));
  if (names.size() > shown) listed += QStringLiteral(" and %1 more").arg(names.size() - shown);
  messages_.showInfoWithLink(QStringLiteral("The last session had %1 run%2 open: %3.")
                                 .arg(names.size())
                                 .arg(names.size() == 1 ? "" : "s")
                                 .arg(listed),
                             QStringLiteral(" <a href=\"#reopen\">Reopen them</a> (a run stopped mid-training then "
                                            "continues with Resume)"));
  return static_cast<int>(offered_.size());
}

bool SessionMemory::confirmQuit(QWidget* window) const {
  QStringList training;
  for (const auto* run : model_.runs()) {
    if (run->isActive()) training << run->name;
  }
  if (training.isEmpty()) return true;
  QMessageBox ask(QMessageBox::Question, QStringLiteral("Quit DescentLab?"),
                  QStringLiteral("%1 %2 still training: %3.")
                      .arg(training.size())
                      .arg(training.size() == 1 ? QStringLiteral("run is") : QStringLiteral("runs are"),
                           training.join(QStringLiteral(", "))),
                  QMessageBox::NoButton, window);
  ask.setInformativeText(
      QStringLiteral("Quit stops each after its current batch and keeps its state as "
                     "\"latest\"; the next start offers to reopen them, and Resume continues "
                     "each where it stopped."));
  QPushButton* quit = ask.addButton(QStringLiteral("Stop them and quit"), QMessageBox::AcceptRole);
  ask.addButton(QMessageBox::Cancel);
  ask.setDefaultButton(quit);
  ask.exec();
  return ask.clickedButton() == quit;
}

}  // namespace descentlab::widgets
