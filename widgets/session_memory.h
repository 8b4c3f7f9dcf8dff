#pragma once
// What the window remembers from one start to the next (QSettings): File > Open recent (the last 8 run files opened
// or started) and the last session's runs (the run files open, kept as runs open and close, so that the next start
// can offer them again after a Quit and after a crash alike). Quit while runs train asks first.

#include <QObject>
#include <QStringList>
#include <QTimer>

class QMenu;
class QWidget;

namespace descentlab::widgets {

class LabModel;
class MessageBar;

class SessionMemory : public QObject {
  Q_OBJECT

 public:
  // `recentMenu` is File > Open recent; `messages` offers the last session's runs.
  SessionMemory(const LabModel& model, MessageBar& messages, QMenu* recentMenu, QObject* parent);

  void addRecentFile(const QString& path);
  void addRecentFiles(const QStringList& paths);  // one settings write and menu rebuild for a batch
  // Keeps the open runs' files as the session's; rememberSoon() does it once for a batch of runs opened together.
  void rememberRuns();
  void rememberSoon() { save_.start(); }
  // The runs of the last session (every run file open when it ended, however it ended) that still exist.
  QStringList lastSessionRuns() const;
  // Offers them in the message bar ("Reopen them" opens them all). Returns how many were offered.
  int offerLastSession();
  // Quitting stops the runs that train: asks first, with the choice to stay. True: quit.
  bool confirmQuit(QWidget* window) const;

 signals:
  void openRequested(const QStringList& paths);

 private:
  void updateRecentMenu();

  const LabModel& model_;
  MessageBar& messages_;
  QMenu* recentMenu_ = nullptr;
  QStringList offered_;  // the run files the bar's "Reopen them" opens
  QTimer save_;          // coalesces rememberRuns over the runs a single open or tour adds
};

}  // namespace descentlab::widgets
