#pragma once
// The bar above the views where errors and notices appear (not a modal box: nothing stops). An error of a run also
// goes into that run's log, through the model, and into the status bar.

#include <QObject>
#include <QString>

class QLabel;
class QMainWindow;
class QWidget;

namespace descentlab::widgets {

class LabModel;

class MessageBar : public QObject {
  Q_OBJECT

 public:
  // The bar is made in `parent` (the central widget above the views), hidden until a message shows.
  MessageBar(QMainWindow& window, LabModel& model, QWidget* parent);
  QWidget* widget() const { return box_; }

  void showError(const QString& message, const QString& runId = QString());
  // A notice; with `runId`, one about that run, which clearErrorOf(runId) takes away (an interrupted run's, once it
  // resumes).
  void showInfo(const QString& message, const QString& runId = QString());
  // A notice followed by `linkHtml` (a link the bar's linkActivated reports, e.g. the last session's "Reopen them").
  void showInfoWithLink(const QString& message, const QString& linkHtml);
  // Hides the bar if it still shows an error or a notice of `runId` (the run has since started or resumed).
  void clearErrorOf(const QString& runId);
  // Hides the bar if it still shows `message` (a notice that no longer holds, e.g. a cancelled sweep's).
  void clearMessage(const QString& message);
  void hide();
  bool shown() const;
  QString lastMessage() const { return lastMessage_; }

 signals:
  void linkActivated(const QString& link);

 private:
  QMainWindow& window_;
  LabModel& model_;
  QWidget* box_ = nullptr;
  QLabel* text_ = nullptr;
  QString lastMessage_;
  QString runId_;  // the run whose error or notice the bar shows, empty for other messages
};

}  // namespace descentlab::widgets
