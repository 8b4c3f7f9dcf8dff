#pragma once
// Run files (.h5) and folders (studies) dropped on the window: a drag that carries any is accepted, and a drop asks to
// open the files as runs and each folder as a study.

#include <QObject>
#include <QStringList>

namespace descentlab::widgets {

class RunFileDrop : public QObject {
  Q_OBJECT

 public:
  // Takes the drags and drops of `window` (which then accepts drops).
  explicit RunFileDrop(QWidget* window);

 signals:
  void openRequested(const QStringList& paths);
  void openFolderRequested(const QString& folder);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace descentlab::widgets
