#pragma once
// Run > Name, tags and note… (and the runs table's menu): what a person says of a run, kept in its run file (issue
// 54, item 3). Its own name replaces the automatic one in every view while it is set; its tags and note show in the
// runs table's and the study's tooltips, and both filters find them ("tag=baseline", or any text). Plain Qt.

#include <QDialog>
#include <QString>
#include <QStringList>

class QLineEdit;
class QPlainTextEdit;

namespace descentlab::widgets {

class RunData;

struct RunAnnotationEdit {
  QString name;  // "" for the automatic name
  QStringList tags;
  QString note;
};

class RunAnnotationDialog : public QDialog {
  Q_OBJECT
 public:
  RunAnnotationDialog(const RunData& run, QWidget* parent);
  // What the fields say: the name and each tag trimmed, tags split at commas.
  RunAnnotationEdit edit() const;

 private:
  QLineEdit* name_ = nullptr;
  QLineEdit* tags_ = nullptr;
  QPlainTextEdit* note_ = nullptr;
};

// "baseline, ablation" as a list, each tag trimmed, empty ones dropped.
QStringList tagsFromText(const QString& text);

}  // namespace descentlab::widgets
