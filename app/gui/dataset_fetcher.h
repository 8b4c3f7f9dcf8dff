#pragma once
// Fetching a dataset the experiment panel found missing (one concern of the lab's controller): on a worker thread
// of its own, the same fetch as `descentlab-cli data fetch` (core/data/fetch.h), with its progress and its end
// handed to the GUI thread. One fetch at a time; closing the window cancels a download under way.

#include <QObject>
#include <QString>

#include <atomic>
#include <thread>

#include "app/gui/gui_task_queue.h"

namespace descentlab::gui {

class DatasetFetcher : public QObject {
  Q_OBJECT

 public:
  explicit DatasetFetcher(QObject* parent = nullptr);
  ~DatasetFetcher() override;  // cancels a download under way and waits for the worker

  // Starts fetching `dataset` into the data folder (data::default_data_root()); ignored while one is under way.
  void fetch(const QString& dataset);
  bool running() const { return running_.load(); }

 signals:
  void progress(const QString& text);  // "imdb: downloading 12.3 of 25.5 MB", at most ten times a second
  void finished(const QString& dataset, const QString& error);  // error empty: fetched (or already there)

 private:
  std::thread worker_;
  std::atomic<bool> running_{false};
  std::atomic<bool> cancel_{false};
  GuiTaskQueue posted_;
};

}  // namespace descentlab::gui
