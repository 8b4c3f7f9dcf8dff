#include "app/gui/dataset_fetcher.h"

#include <chrono>
#include <exception>
#include <string>

#include "core/data/catalog.h"
#include "core/data/fetch.h"

namespace descentlab::gui {
namespace {

QString describe(const data::FetchProgress& progress) {
  QString text =
      QStringLiteral("%1: %2").arg(QString::fromStdString(progress.dataset), QString::fromStdString(progress.stage));
  if (progress.stage == "downloading" && progress.bytes > 0) {
    text += QStringLiteral(" %1").arg(static_cast<double>(progress.bytes) / 1e6, 0, 'f', 1);
    if (progress.total > 0) text += QStringLiteral(" of %1").arg(static_cast<double>(progress.total) / 1e6, 0, 'f', 1);
    text += QStringLiteral(" MB");
  }
  return text;
}

}  // namespace

DatasetFetcher::DatasetFetcher(QObject* parent) : QObject(parent) {}

DatasetFetcher::~DatasetFetcher() {
  cancel_.store(true);
  if (worker_.joinable()) worker_.join();
}

void DatasetFetcher::fetch(const QString& dataset) {
  if (running_.exchange(true)) return;
  if (worker_.joinable()) worker_.join();  // the last fetch's thread has ended: it posted its finish
  cancel_.store(false);
  emit progress(QStringLiteral("%1: starting").arg(dataset));
  worker_ = std::thread([this, name = dataset.toStdString()] {
    data::FetchOptions options;
    auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    options.progress = [this, &last](const data::FetchProgress& step) {
      const auto now = std::chrono::steady_clock::now();
      if (step.stage == "downloading" && step.bytes > 0 && now - last < std::chrono::milliseconds(100)) return;
      last = now;
      const QString text = describe(step);
      posted_.post([this, text] { emit progress(text); });
    };
    options.cancelled = [this] { return cancel_.load(); };
    QString error;
    try {
      data::fetch_dataset(name, data::default_data_root(), options);
    } catch (const std::exception& failure) {
      error = QString::fromUtf8(failure.what());
    }
    posted_.post([this, dataset = QString::fromStdString(name), error] {
      running_.store(false);
      emit finished(dataset, error);
    });
  });
}

}  // namespace descentlab::gui
