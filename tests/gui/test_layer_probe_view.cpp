// The layer probe view (issue 17 point 4), fed by a fake backend: A and B's per-layer P(true class) as bars, new
// requests when γ moves, only the newest request's answer shown (an older answer arriving late is dropped), the video
// grid, and the app's backend evaluating only the newest pending request per side (a γ drag queues nothing).
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QSlider>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "app/gui/probe_backend.h"
#include "widgets/lab_model.h"
#include "widgets/layer_probe_view.h"

namespace descentlab {
namespace {

using widgets::LabModel;
using widgets::LayerProbeView;
using widgets::ProbeOutcome;
using widgets::ProbeQuery;
using widgets::RunData;
using widgets::RunKind;

const RunData* addLayerwiseRun(LabModel& model, const QString& name, const QString& task, bool constrained) {
  auto run = std::make_unique<RunData>();
  run->name = name;
  run->path = QStringLiteral("/runs/%1.h5").arg(name);
  run->kind = RunKind::Layerwise;
  run->constrained = constrained;
  run->config.insert(QStringLiteral("task"), task);
  run->hasLatestCheckpoint = true;
  run->addVector(QStringLiteral("test_layer_loss"), 40, {0.7, 0.6, 0.5, 0.4});
  return model.addRun(std::move(run));
}

// Answers on demand: requests are kept until the test answers them.
class FakeBackend : public widgets::LayerProbeBackend {
 public:
  struct Pending {
    ProbeQuery query;
    std::function<void(const ProbeOutcome&)> done;
  };
  void probe(const ProbeQuery& query, std::function<void(const ProbeOutcome&)> done) override {
    pending.push_back({query, std::move(done)});
  }
  // A text answer: P(true class) at layer l = base + 0.1 l + γ / 10 (so γ shows in the bars).
  static ProbeOutcome textAnswer(const ProbeQuery& query, double base) {
    ProbeOutcome outcome;
    outcome.id = query.id;
    outcome.side = query.side;
    outcome.task = QStringLiteral("text");
    outcome.sample = query.sample;
    outcome.testSize = 50;
    outcome.layers = 3;
    outcome.checkpoint = query.checkpoint;
    outcome.step = 40;
    outcome.label = 1;
    outcome.classes = 2;
    outcome.words = {QStringLiteral("a"), QStringLiteral("fine"), QStringLiteral("film")};
    for (int l = 0; l <= 3; ++l) {
      const double p = base + 0.1 * l + query.gamma / 10.0;
      outcome.probabilities << 1.0 - p << p;
      outcome.loss << -std::log(p);
    }
    return outcome;
  }
  void answerAll(double baseA, double baseB) {
    auto all = std::move(pending);
    pending.clear();
    for (auto& each : all) each.done(textAnswer(each.query, each.query.side == 0 ? baseA : baseB));
  }
  std::vector<Pending> pending;
};

// The bars of the plot, in legend order (A, then B): their values per layer.
QVector<QVector<double>> barValues(QCustomPlot* plot) {
  QVector<QVector<double>> values;
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
    if (!bars) continue;
    QVector<double> row;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) row << it->value;
    values << row;
  }
  return values;
}

TEST(LayerProbeView, ShowsAAndBsPerLayerBarsAndFollowsGamma) {
  LabModel model;
  LayerProbeView view(&model);
  view.resize(700, 450);
  view.show();
  EXPECT_TRUE(view.placeholder().contains(QStringLiteral("Probing needs a layerwise run")));
  addLayerwiseRun(model, QStringLiteral("text-constrained"), QStringLiteral("text"), true);
  addLayerwiseRun(model, QStringLiteral("text-erm"), QStringLiteral("text"), false);
  view.refresh();  // what the view's own timer does at the next turn of the event loop: once for runs added together
  FakeBackend backend;
  view.setBackend(&backend);
  // The defaults: A is the ERM run, B the constrained one.
  EXPECT_EQ(view.runChoice(0)->currentText(), QStringLiteral("text-erm"));
  EXPECT_EQ(view.runChoice(1)->currentText(), QStringLiteral("text-constrained"));
  ASSERT_GE(backend.pending.size(), 2u);
  EXPECT_EQ(backend.pending.back().query.path, QStringLiteral("/runs/text-constrained.h5"));
  EXPECT_EQ(backend.pending.back().query.noise, QStringLiteral("gaussian"));
  const double gamma = view.gamma();
  backend.answerAll(0.5, 0.6);
  EXPECT_TRUE(view.placeholder().isEmpty());
  auto bars = barValues(view.plot());
  ASSERT_EQ(bars.size(), 2);
  for (int l = 0; l <= 3; ++l) {
    EXPECT_NEAR(bars[0][l], 0.5 + 0.1 * l + gamma / 10, 1e-12);
    EXPECT_NEAR(bars[1][l], 0.6 + 0.1 * l + gamma / 10, 1e-12);
  }
  // The 0.5 line is drawn.
  ASSERT_EQ(view.plot()->itemCount(), 1);
  // A new γ asks again, and the bars follow the answers.
  view.gammaSlider()->setValue(view.gammaSlider()->maximum());
  EXPECT_DOUBLE_EQ(view.gamma(), 2.0);
  ASSERT_EQ(backend.pending.size(), 2u);
  for (const auto& each : backend.pending) EXPECT_DOUBLE_EQ(each.query.gamma, 2.0);
  backend.answerAll(0.2, 0.3);
  bars = barValues(view.plot());
  ASSERT_EQ(bars.size(), 2);
  EXPECT_NEAR(bars[0][0], 0.2 + 0.2, 1e-12);
  EXPECT_NEAR(bars[1][3], 0.3 + 0.3 + 0.2, 1e-12);
}

// Issue 33: with text runs and a video run open (a tour, then the default experiment) the view paired the text ERM
// run with the video constrained one and then said they cannot be compared. The defaults stay within one task.
TEST(LayerProbeView, TheDefaultPairIsOfOneTask) {
  LabModel model;
  LayerProbeView view(&model);
  view.resize(700, 450);
  view.show();
  addLayerwiseRun(model, QStringLiteral("text-erm"), QStringLiteral("text"), false);
  addLayerwiseRun(model, QStringLiteral("text-constrained"), QStringLiteral("text"), true);
  addLayerwiseRun(model, QStringLiteral("video-constrained"), QStringLiteral("video"), true);
  view.refresh();
  FakeBackend backend;
  view.setBackend(&backend);
  EXPECT_EQ(view.runChoice(0)->currentText(), QStringLiteral("text-erm"));
  EXPECT_EQ(view.runChoice(1)->currentText(), QStringLiteral("text-constrained"));
  // A video ERM run opened: the newest task with a pair is video's.
  addLayerwiseRun(model, QStringLiteral("video-erm"), QStringLiteral("video"), false);
  view.refresh();
  EXPECT_EQ(view.runChoice(0)->currentText(), QStringLiteral("video-erm"));
  EXPECT_EQ(view.runChoice(1)->currentText(), QStringLiteral("video-constrained"));
  // Two constrained video runs and a text ERM one: no ERM-constrained pair, so the two newest runs of one task.
  LabModel other;
  LayerProbeView second(&other);
  addLayerwiseRun(other, QStringLiteral("video-a"), QStringLiteral("video"), true);
  addLayerwiseRun(other, QStringLiteral("video-b"), QStringLiteral("video"), true);
  addLayerwiseRun(other, QStringLiteral("text-erm"), QStringLiteral("text"), false);
  second.setBackend(&backend);
  second.refresh();
  EXPECT_EQ(second.runChoice(0)->currentText(), QStringLiteral("video-a"));
  EXPECT_EQ(second.runChoice(1)->currentText(), QStringLiteral("video-b"));
}

// A user's model (issue 53): the noise menu lists the kinds its inputs take (the app reads them from the data file
// into RunData::noiseKinds), not the text model's three.
TEST(LayerProbeView, AUsersModelOffersTheNoiseItsInputsTake) {
  LabModel model;
  LayerProbeView view(&model);
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("cnn-tc");
  run->kind = RunKind::Layerwise;
  run->constrained = true;
  run->config.insert(QStringLiteral("task"), QStringLiteral("torchscript-layerwise"));
  run->noiseKinds = {QStringLiteral("gaussian"), QStringLiteral("uniform")};
  run->hasLatestCheckpoint = true;
  run->addVector(QStringLiteral("test_layer_loss"), 40, {0.7, 0.6, 0.5});
  model.addRun(std::move(run));
  view.refresh();
  QStringList offered;
  for (int i = 0; i < view.noiseChoice()->count(); ++i) offered << view.noiseChoice()->itemText(i);
  EXPECT_EQ(offered, (QStringList{QStringLiteral("gaussian"), QStringLiteral("uniform")}));
}

// Draw groups adds 300 runs in batches: the view's run lists, rebuilt from every run, follow once per batch at the
// next turn of the event loop, not once per run added (quadratic in the runs opened).
TEST(LayerProbeView, RunsAddedTogetherAreListedAtTheNextTurn) {
  LabModel model;
  LayerProbeView view(&model);
  view.resize(700, 450);
  view.show();
  for (int i = 0; i < 20; ++i) {
    addLayerwiseRun(model, QStringLiteral("text-%1").arg(i), QStringLiteral("text"), i % 2 == 0);
  }
  EXPECT_EQ(view.runChoice(0)->count(), 0) << "listed before the event loop turned";
  QElapsedTimer timer;
  timer.start();
  while (view.runChoice(0)->count() < 20 && timer.elapsed() < 5000) QApplication::processEvents();
  EXPECT_EQ(view.runChoice(0)->count(), 20);
}

TEST(LayerProbeView, OnlyTheNewestRequestsAnswerIsShown) {
  LabModel model;
  addLayerwiseRun(model, QStringLiteral("erm"), QStringLiteral("text"), false);
  addLayerwiseRun(model, QStringLiteral("constrained"), QStringLiteral("text"), true);
  LayerProbeView view(&model);
  FakeBackend backend;
  view.setBackend(&backend);
  backend.pending.clear();
  // A drag: three γ values; the answers arrive newest first, then the older ones late.
  for (int value : {10, 20, 30}) view.gammaSlider()->setValue(value);
  ASSERT_EQ(backend.pending.size(), 6u);
  std::vector<FakeBackend::Pending> all = std::move(backend.pending);
  backend.pending.clear();
  for (int i = static_cast<int>(all.size()) - 1; i >= 0; --i) {
    all[static_cast<size_t>(i)].done(FakeBackend::textAnswer(all[static_cast<size_t>(i)].query, 0.4));
  }
  EXPECT_DOUBLE_EQ(view.gamma(), 0.3);
  const auto bars = barValues(view.plot());
  ASSERT_EQ(bars.size(), 2);
  EXPECT_NEAR(bars[0][0], 0.4 + 0.03, 1e-12);  // γ 0.3's answer, not γ 0.1's that came last
  EXPECT_EQ(view.shown(0).id, all[4].query.id);
}

TEST(LayerProbeView, VideoRunsShowAGridAndErrorsAreShownPerSide) {
  LabModel model;
  addLayerwiseRun(model, QStringLiteral("video-erm"), QStringLiteral("video"), false);
  addLayerwiseRun(model, QStringLiteral("video-constrained"), QStringLiteral("video"), true);
  LayerProbeView view(&model);
  view.resize(800, 400);
  view.show();
  FakeBackend backend;
  view.setBackend(&backend);
  EXPECT_EQ(view.noiseChoice()->currentText(), QStringLiteral("video"));
  auto all = std::move(backend.pending);
  backend.pending.clear();
  for (auto& each : all) {
    ProbeOutcome outcome;
    outcome.id = each.query.id;
    outcome.side = each.query.side;
    if (each.query.side == 1) {
      outcome.error = QStringLiteral("sample 9 is out of range: the test set has 8 samples (0..7)");
    } else {
      outcome.task = QStringLiteral("video");
      outcome.testSize = 8;
      outcome.layers = 2;
      outcome.frames = 2;
      outcome.height = outcome.width = 4;
      outcome.input = QVector<double>(32, 0.5);
      outcome.target = QVector<double>(32, 1.0);
      outcome.predictions = QVector<double>(3 * 32, 0.75);
      outcome.loss = {0.3, 0.2, 0.1};
    }
    each.done(outcome);
  }
  EXPECT_TRUE(view.placeholder().isEmpty());
  EXPECT_EQ(view.shown(0).layers, 2);
  EXPECT_TRUE(view.shown(1).error.contains(QStringLiteral("out of range")));
  const QImage picture = view.grab().toImage();
  EXPECT_FALSE(picture.isNull());
}

// The app's backend: while one evaluation runs, 50 requests of a side leave one pending, and only the newest one
// is evaluated after it; every delivered answer is one the view asked for.
TEST(LayerProbeView, TheAppsBackendEvaluatesOnlyTheNewestPendingRequest) {
  std::mutex mutex;
  std::condition_variable release;
  bool go = false;
  std::atomic<int> started{0};
  gui::ProbeBackend backend([&](const ProbeQuery& query) {
    ++started;
    std::unique_lock<std::mutex> lock(mutex);
    release.wait(lock, [&] { return go; });
    ProbeOutcome outcome = FakeBackend::textAnswer(query, 0.5);
    return outcome;
  });
  std::vector<quint64> answered;
  ProbeQuery query;
  query.id = 1;
  backend.probe(query, [&](const ProbeOutcome& outcome) { answered.push_back(outcome.id); });
  QElapsedTimer timer;
  timer.start();
  while (started.load() == 0 && timer.elapsed() < 5000) QApplication::processEvents();
  for (quint64 id = 2; id <= 51; ++id) {
    query.id = id;
    query.gamma = 0.04 * static_cast<double>(id);
    backend.probe(query, [&](const ProbeOutcome& outcome) { answered.push_back(outcome.id); });
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    go = true;
  }
  release.notify_all();
  while (answered.size() < 2 && timer.elapsed() < 5000) QApplication::processEvents();
  for (int i = 0; i < 20; ++i) QApplication::processEvents();
  EXPECT_EQ(backend.evaluations(), 2);
  EXPECT_EQ(answered, (std::vector<quint64>{1, 51}));
}

}  // namespace
}  // namespace descentlab
