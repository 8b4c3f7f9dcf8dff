#include "widgets/run_file_drop.h"

#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include <QUrl>
#include <QWidget>

namespace descentlab::widgets {
namespace {

// The run files and folders (studies) of a drop.
QStringList runFilesIn(const QMimeData* mime) {
  QStringList paths;
  if (!mime || !mime->hasUrls()) return paths;
  for (const auto& url : mime->urls()) {
    const QString path = url.toLocalFile();
    if (path.endsWith(QStringLiteral(".h5"), Qt::CaseInsensitive) || QFileInfo(path).isDir()) paths << path;
  }
  return paths;
}

}  // namespace

RunFileDrop::RunFileDrop(QWidget* window) : QObject(window) {
  window->setAcceptDrops(true);
  window->installEventFilter(this);
}

bool RunFileDrop::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::DragEnter && event->type() != QEvent::Drop) return QObject::eventFilter(watched, event);
  auto* drop = static_cast<QDropEvent*>(event);  // a QDragEnterEvent is one
  const QStringList paths = runFilesIn(drop->mimeData());
  if (paths.isEmpty()) return true;  // not accepted: the window takes no other drops
  drop->acceptProposedAction();
  if (event->type() == QEvent::DragEnter) return true;
  QStringList files;
  for (const auto& path : paths) {
    if (QFileInfo(path).isDir()) {
      emit openFolderRequested(path);
    } else {
      files << path;
    }
  }
  if (!files.isEmpty()) emit openRequested(files);
  return true;
}

}  // namespace descentlab::widgets
