#include "widgets/message_bar.h"

#include <QLabel>
#include <QMainWindow>
#include <QStatusBar>

#include "widgets/dismissable_bar.h"
#include "widgets/lab_model.h"

namespace descentlab::widgets {

MessageBar::MessageBar(QMainWindow& window, LabModel& model, QWidget* parent)
    : QObject(parent), window_(window), model_(model) {
  box_ = makeDismissableBar(parent, text_, QStringLiteral("Hide this message"));
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  // Every message is set as escaped HTML: read as plain text, a notice's quotes showed as "&quot;".
  text_->setTextFormat(Qt::RichText);
  connect(text_, &QLabel::linkActivated, this, &MessageBar::linkActivated);
}

void MessageBar::showError(const QString& message, const QString& runId) {
  lastMessage_ = message;
  runId_ = runId;
  text_->setText(QStringLiteral("<b>Error:</b> %1").arg(message.toHtmlEscaped()));
  box_->setStyleSheet(QStringLiteral("background: #fde2e2; color: #7a0016;"));
  box_->show();
  model_.changeRun(runId, [&message](RunData& run) { run.appendLog(QStringLiteral("error: ") + message); });
  window_.statusBar()->showMessage(QStringLiteral("Error: ") + message, 15000);
}

void MessageBar::showInfo(const QString& message, const QString& runId) {
  lastMessage_ = message;
  runId_ = runId;
  text_->setText(message.toHtmlEscaped());
  box_->setStyleSheet(QStringLiteral("background: #e3f1fd; color: #0b3d66;"));
  box_->show();
}

void MessageBar::showInfoWithLink(const QString& message, const QString& linkHtml) {
  showInfo(message);
  text_->setText(lastMessage_.toHtmlEscaped() + linkHtml);
}

void MessageBar::clearErrorOf(const QString& runId) {
  if (runId.isEmpty() || runId_ != runId) return;
  runId_.clear();
  box_->hide();
  window_.statusBar()->clearMessage();
}

void MessageBar::clearMessage(const QString& message) {
  if (message.isEmpty() || lastMessage_ != message || !box_->isVisible()) return;
  box_->hide();
}

void MessageBar::hide() {
  box_->hide();
}

bool MessageBar::shown() const {
  return box_->isVisible();
}

}  // namespace descentlab::widgets
