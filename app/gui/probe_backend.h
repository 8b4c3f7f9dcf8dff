#pragma once
// The layer probe's backend (widgets/layer_probe_view.h): evaluates on one worker thread with the engine's
// LayerProbeSession (core/session/layer_probe_session.h), which keeps the probed runs' tasks loaded, and hands each
// outcome to the GUI thread. Newest request wins: a side's request that a newer one of the same side replaces before
// it starts is dropped, so dragging γ runs at most the evaluation under way and the newest one per side.

#include <QObject>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "widgets/layer_probe_view.h"

namespace descentlab::session {
class LayerProbeSession;
}

namespace descentlab::gui {

class ProbeBackend : public QObject, public widgets::LayerProbeBackend {
  Q_OBJECT

 public:
  using Evaluator = std::function<widgets::ProbeOutcome(const widgets::ProbeQuery&)>;
  // `evaluator` replaces the engine (tests); empty: the engine.
  explicit ProbeBackend(Evaluator evaluator = {}, QObject* parent = nullptr);
  ~ProbeBackend() override;  // finishes the evaluation under way, drops the rest, joins the worker

  void probe(const widgets::ProbeQuery& query, std::function<void(const widgets::ProbeOutcome&)> done) override;
  int evaluations() const;  // how many requests were evaluated (tests)

  // The engine's answer for `query`, on the calling thread (what the worker runs).
  static widgets::ProbeOutcome evaluate(session::LayerProbeSession& session, const widgets::ProbeQuery& query);

 private:
  struct Request {
    widgets::ProbeQuery query;
    std::function<void(const widgets::ProbeOutcome&)> done;
  };
  void work();
  Q_INVOKABLE void deliver();  // runs on the GUI thread: hands one finished outcome to its caller

  Evaluator evaluator_;
  std::unique_ptr<session::LayerProbeSession> session_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<int, Request> pending_;  // per side, the newest request not yet started
  std::deque<std::pair<std::function<void(const widgets::ProbeOutcome&)>, widgets::ProbeOutcome>> finished_;
  int evaluations_ = 0;
  bool quit_ = false;
  std::thread worker_;
};

}  // namespace descentlab::gui
