#include "app/gui/study_loader.h"

#include <QDir>
#include <QFile>

#include <chrono>

#include "core/study/study.h"
#include "widgets/dock_layout.h"
#include "widgets/study_browser.h"

namespace descentlab::gui {

StudyLoader::StudyLoader(widgets::MainWindow& window, QObject* parent) : QObject(parent), window_(window) {
  window_.setStudyBackend(&backend_, &groupBackend_);
  connect(&window_, &widgets::MainWindow::openFolderRequested, this, &StudyLoader::open);
}

StudyLoader::~StudyLoader() {
  cancel();
  window_.setStudyBackend(nullptr, nullptr);
}

void StudyLoader::cancel() {
  if (cancelled_) cancelled_->store(true);
  if (worker_.joinable()) worker_.join();
  loading_ = false;
}

void StudyLoader::open(const QString& folder) {
  cancel();
  const int generation = ++generation_;
  cancelled_ = std::make_shared<std::atomic<bool>>(false);
  loading_ = true;
  const QString shown = QDir(folder).absolutePath();
  window_.studyBrowser()->beginStudy(shown, 0, 0);
  window_.docks()->showStudy();
  const std::string path = QFile::encodeName(shown).toStdString();
  worker_ = std::thread([this, path, shown, generation, cancelled = cancelled_] {
    int skipped = 0;
    std::vector<std::string> files;
    try {
      files = study::run_files_below(path, &skipped);
    } catch (const std::exception& error) {
      const QString message = QString::fromStdString(error.what());
      postToGui([this, message, generation] {
        if (generation != generation_) return;
        loading_ = false;
        window_.studyBrowser()->finishStudy();
        window_.showError(QStringLiteral("Cannot open the study: ") + message);
      });
      return;
    }
    const int count = static_cast<int>(files.size());
    postToGui([this, shown, count, skipped, generation] {
      if (generation != generation_) return;
      window_.studyBrowser()->beginStudy(shown, count, skipped);
      window_.docks()->showStudy();  // again: a window shown just now may have laid its docks out after open()
    });
    QVector<widgets::StudyRunRow> batch;
    auto sent = std::chrono::steady_clock::now();
    const auto send = [&] {
      if (batch.isEmpty()) return;
      postToGui([this, rows = std::move(batch), generation] {
        if (generation != generation_) return;
        ++batches_;
        window_.studyBrowser()->addRuns(rows);
      });
      batch.clear();
      sent = std::chrono::steady_clock::now();
    };
    for (const auto& file : files) {
      if (cancelled->load()) return;
      batch.push_back(to_study_row(study::read_entry(file, path)));
      if (batch.size() >= 16 || std::chrono::steady_clock::now() - sent > std::chrono::milliseconds(100)) send();
    }
    send();
    postToGui([this, generation] {
      if (generation != generation_) return;
      loading_ = false;
      window_.studyBrowser()->finishStudy();
    });
  });
}

void StudyLoader::postToGui(std::function<void()> task) {
  posted_.post(std::move(task));
}

}  // namespace descentlab::gui
