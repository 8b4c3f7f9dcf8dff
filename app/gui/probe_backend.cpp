#include "app/gui/probe_backend.h"

#include "core/session/failure.h"
#include "core/session/layer_probe_session.h"
#include "core/session/training_session.h"

namespace descentlab::gui {

ProbeBackend::ProbeBackend(Evaluator evaluator, QObject* parent) : QObject(parent), evaluator_(std::move(evaluator)) {
  if (!evaluator_) {
    session_ = std::make_unique<session::LayerProbeSession>();
    evaluator_ = [this](const widgets::ProbeQuery& query) { return evaluate(*session_, query); };
  }
  worker_ = std::thread([this] { work(); });
}

ProbeBackend::~ProbeBackend() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
    pending_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

int ProbeBackend::evaluations() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return evaluations_;
}

void ProbeBackend::probe(const widgets::ProbeQuery& query, std::function<void(const widgets::ProbeOutcome&)> done) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    pending_[query.side] = Request{query, std::move(done)};  // replaces an older request of this side
  }
  wake_.notify_one();
}

void ProbeBackend::work() {
  for (;;) {
    Request request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return quit_ || !pending_.empty(); });
      if (quit_) return;
      request = std::move(pending_.begin()->second);
      pending_.erase(pending_.begin());
      ++evaluations_;
    }
    widgets::ProbeOutcome outcome = evaluator_(request.query);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      finished_.emplace_back(std::move(request.done), std::move(outcome));
    }
    QMetaObject::invokeMethod(this, "deliver", Qt::QueuedConnection);
  }
}

void ProbeBackend::deliver() {
  std::pair<std::function<void(const widgets::ProbeOutcome&)>, widgets::ProbeOutcome> next;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (finished_.empty()) return;
    next = std::move(finished_.front());
    finished_.pop_front();
  }
  if (next.first) next.first(next.second);
}

widgets::ProbeOutcome ProbeBackend::evaluate(session::LayerProbeSession& session, const widgets::ProbeQuery& query) {
  widgets::ProbeOutcome outcome;
  outcome.id = query.id;
  outcome.side = query.side;
  session::LayerProbeRequest request;
  request.run_path = query.path.toStdString();
  request.checkpoint = query.checkpoint.toStdString();
  request.settings = {query.sample, query.noise.toStdString(), query.gamma, query.seed};
  try {
    const session::RunProbe result = session.probe(request);
    const record::LayerProbe& probe = result.probe;
    outcome.task = QString::fromStdString(probe.task);
    outcome.sample = static_cast<int>(probe.sample);
    outcome.testSize = static_cast<int>(probe.test_size);
    outcome.layers = static_cast<int>(probe.layers);
    outcome.step = result.step;
    outcome.checkpoint = QString::fromStdString(result.checkpoint);
    outcome.loss = QVector<double>(probe.loss.begin(), probe.loss.end());
    outcome.label = static_cast<int>(probe.label);
    outcome.classes = static_cast<int>(probe.classes);
    outcome.probabilities = QVector<double>(probe.probabilities.begin(), probe.probabilities.end());
    for (const auto& word : probe.words) outcome.words << QString::fromStdString(word);
    if (probe.words.empty()) {
      for (int64_t id : probe.token_ids) outcome.words << QString::number(id);
    }
    outcome.frames = static_cast<int>(probe.frames);
    outcome.height = static_cast<int>(probe.height);
    outcome.width = static_cast<int>(probe.width);
    outcome.input = QVector<double>(probe.input.begin(), probe.input.end());
    outcome.target = QVector<double>(probe.target.begin(), probe.target.end());
    outcome.predictions = QVector<double>(probe.predictions.begin(), probe.predictions.end());
    outcome.seconds = result.seconds;
  } catch (const std::exception& error) {
    outcome.error = QString::fromStdString(session::error_text(error));
  }
  return outcome;
}

}  // namespace descentlab::gui
