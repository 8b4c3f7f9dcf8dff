// The live sparsity frontier view (issue 17 ★), fed with hand-made runs: the newest frontier of every run bold,
// earlier ones behind it, the chosen sparsity over time below, the reason when there is nothing to draw, the CSV.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>

#include <memory>

#include <QPushButton>

#include "widgets/frontier_view.h"
#include "widgets/lab_model.h"
#include "widgets/robustness_view.h"

namespace descentlab {
namespace {

using widgets::FrontierView;
using widgets::LabModel;
using widgets::RunData;
using widgets::RunKind;

// A run whose frontier at sparsities 0, 0.5, 0.9 was evaluated at steps 10, 20, 30: accuracy `start` - 0.1 * s at
// sparsity s, rising by `gain` per evaluation.
const RunData* addFrontierRun(LabModel& model, const QString& name, double start, double gain) {
  auto run = std::make_unique<RunData>();
  run->name = name;
  run->kind = RunKind::Sparse;
  run->metric = QStringLiteral("accuracy");
  const QVector<double> levels = {0.0, 0.5, 0.9};
  for (int row = 0; row < 3; ++row) {
    QVector<double> values;
    for (double level : levels) values.push_back(start + gain * row - 0.1 * level);
    run->addVector(QStringLiteral("frontier_sparsity"), 10 * (row + 1), levels);
    run->addVector(QStringLiteral("frontier_accuracy"), 10 * (row + 1), values);
    run->addVector(QStringLiteral("frontier_achieved"), 10 * (row + 1), levels);
  }
  return model.addRun(std::move(run));
}

QVector<double> valuesOf(const QCPGraph* graph) {
  QVector<double> values;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) values.push_back(it->value);
  return values;
}

void expectNear(const QVector<double>& actual, const QVector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (int i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-12) << i;
}

QCPGraph* legendGraph(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->legend->hasItemWithPlottable(plot->graph(i)) && plot->graph(i)->name() == name) return plot->graph(i);
  }
  return nullptr;
}

// The graphs of the lower axis rect (the metric at the chosen sparsity over time), in run order.
QVector<QCPGraph*> overTimeGraphs(QCustomPlot* plot) {
  QVector<QCPGraph*> graphs;
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->keyAxis()->axisRect() != plot->axisRect(0)) graphs.push_back(plot->graph(i));
  }
  return graphs;
}

// Until the user picks a level, the plot over time follows the level where the runs differ most: in the tour
// horst-pruned-alive both models collapse at 90 % and their frontiers cross there, so following 90 % (the old
// default) hid HORST's lead at 50-80 % (issue 33). A choice then stays while the runs train on.
TEST(FrontierView, OverTimeFollowsWhereTheRunsDifferMostUntilChosen) {
  LabModel model;
  const QVector<double> levels = {0.0, 0.5, 0.8, 0.9};
  const auto add = [&](const QString& name, const QVector<double>& perplexity) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->kind = RunKind::Sparse;
    run->metric = QStringLiteral("perplexity");
    run->addVector(QStringLiteral("frontier_sparsity"), 50, levels);
    run->addVector(QStringLiteral("frontier_perplexity"), 50, perplexity);
    return model.addRun(std::move(run));
  };
  const QString adamw = add(QStringLiteral("adamw"), {7.2, 7.7, 12.6, 16.1})->id;
  const QString horst = add(QStringLiteral("horst"), {6.9, 7.2, 11.0, 16.4})->id;  // widest at 80 %: 1.6 / 11.8
  // A new evaluation of both runs, through the model as the app adds one.
  const auto evaluate = [&](const QString& id, int64_t step, const QVector<double>& perplexity) {
    model.changeRun(id, [&](RunData& run) {
      run.addVector(QStringLiteral("frontier_sparsity"), step, levels);
      run.addVector(QStringLiteral("frontier_perplexity"), step, perplexity);
    });
  };
  FrontierView view(&model);
  view.resize(700, 500);
  view.show();
  view.refresh(true);
  EXPECT_DOUBLE_EQ(view.chosenSparsity(), 0.8);
  // Newer evaluations move the widest gap to 50 %: the default follows.
  evaluate(adamw, 100, {7.0, 8.6, 11.0, 15.0});
  evaluate(horst, 100, {6.8, 7.0, 10.5, 15.2});
  view.refresh(true);
  EXPECT_DOUBLE_EQ(view.chosenSparsity(), 0.5);
  // Once chosen, the level stays.
  ASSERT_TRUE(view.setChosenSparsity(0.9));
  evaluate(adamw, 150, {7.0, 7.1, 13.0, 15.0});
  evaluate(horst, 150, {6.8, 7.0, 10.5, 15.2});
  view.refresh(true);
  EXPECT_DOUBLE_EQ(view.chosenSparsity(), 0.9);
}

TEST(FrontierView, NewestFrontierBoldEarlierBehindAndTheChosenSparsityOverTime) {
  LabModel model;
  addFrontierRun(model, QStringLiteral("adamw"), 0.8, 0.01);
  addFrontierRun(model, QStringLiteral("horst"), 0.85, 0.02);
  FrontierView view(&model);
  view.resize(700, 500);
  view.show();
  view.refresh(true);
  ASSERT_TRUE(view.hasData());
  const QCPGraph* newest = legendGraph(view.plot(), QStringLiteral("horst"));
  ASSERT_NE(newest, nullptr);
  expectNear(valuesOf(newest), {0.89, 0.84, 0.80});
  // Two earlier evaluations behind each newest curve, and one line per run below: 2 x (2 + 1 + 1).
  EXPECT_EQ(view.plot()->graphCount(), 8);
  // The lower plot follows the level where the runs differ most (relative to their mean, 90 % here): each run's
  // accuracy there at steps 10, 20, 30.
  EXPECT_DOUBLE_EQ(view.chosenSparsity(), 0.9);
  auto below = overTimeGraphs(view.plot());
  ASSERT_EQ(below.size(), 2);
  expectNear(valuesOf(below[0]), {0.71, 0.72, 0.73});
  ASSERT_TRUE(view.setChosenSparsity(0.5));
  view.refresh(true);
  below = overTimeGraphs(view.plot());
  ASSERT_EQ(below.size(), 2);
  expectNear(valuesOf(below[1]), {0.80, 0.82, 0.84});
  EXPECT_FALSE(view.setChosenSparsity(0.7));  // no run has it
  // The CSV: every evaluation of every run, with the achieved sparsity.
  const QStringList lines = view.csv().trimmed().split(QLatin1Char('\n'));
  EXPECT_EQ(lines.front(), QStringLiteral("run,metric,step,sparsity,achieved_sparsity,value"));
  EXPECT_EQ(lines.size(), 1 + 2 * 3 * 3);
  // In a short dock (a tour's at 1280x800: two plots of about 30 px) the frontier takes the whole plot, and comes
  // back with its plot over time when the dock grows.
  view.resize(700, 200);
  QApplication::processEvents();
  EXPECT_EQ(view.plot()->axisRectCount(), 1);
  EXPECT_TRUE(overTimeGraphs(view.plot()).isEmpty());
  EXPECT_EQ(view.plot()->graphCount(), 6);  // each run's newest and two earlier frontiers
  view.resize(700, 500);
  QApplication::processEvents();
  EXPECT_EQ(view.plot()->axisRectCount(), 2);
  EXPECT_EQ(overTimeGraphs(view.plot()).size(), 2);
}

TEST(FrontierView, SaysWhyItIsEmpty) {
  LabModel model;
  FrontierView view(&model);
  view.resize(700, 500);
  view.show();
  const auto placeholderText = [&] {
    view.refresh(true);
    for (int i = 0; i < view.plot()->itemCount(); ++i) {
      if (auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i))) return text->text();
    }
    return QString();
  };
  EXPECT_TRUE(placeholderText().contains(QStringLiteral("No ViT or GPT run open")));
  auto waiting = std::make_unique<RunData>();
  waiting->name = QStringLiteral("vit-horst-quick");
  waiting->kind = RunKind::Sparse;
  waiting->config.insert(QStringLiteral("sparsity.frontier_interval"), QStringLiteral("100"));
  const RunData* run = model.addRun(std::move(waiting));
  EXPECT_TRUE(placeholderText().contains(QStringLiteral("No frontier yet: vit-horst-quick")));
  model.changeRun(run->id, [](RunData& changed) {
    changed.config.insert(QStringLiteral("sparsity.frontier_interval"), QStringLiteral("0"));
  });
  EXPECT_TRUE(placeholderText().contains(QStringLiteral("off: vit-horst-quick")));
  EXPECT_FALSE(view.hasData());
}

// Issue 53 item 4: a finished run of a user's own model by the sparse engine (the torchscript task) can be swept for
// robustness, with the noise its inputs take; a built-in sparse run (vit, gpt) cannot, and the button says why.
TEST(RobustnessViewTest, ASparseRunOfAUsersModelCanBeSweptAndABuiltInOneSaysWhyNot) {
  LabModel model;
  widgets::RobustnessView view(&model);
  const auto add = [&](const QString& name, const QString& task) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->kind = RunKind::Sparse;
    run->state = widgets::RunState::Finished;
    run->config.insert(QStringLiteral("task"), task);
    if (task == QLatin1String("torchscript")) run->noiseKinds = {QStringLiteral("gaussian"), QStringLiteral("uniform")};
    return model.addRun(std::move(run));
  };
  const RunData* own = add(QStringLiteral("cnn-horst"), QStringLiteral("torchscript"));
  const RunData* builtIn = add(QStringLiteral("vit-horst"), QStringLiteral("vit"));
  QPushButton* sweep = nullptr;
  for (auto* button : view.findChildren<QPushButton*>()) {
    if (button->text() == QLatin1String("Sweep selected run")) sweep = button;
  }
  ASSERT_NE(sweep, nullptr);
  model.setFocusRun(own->id);
  view.refresh();
  EXPECT_TRUE(sweep->isEnabled()) << sweep->toolTip().toStdString();
  model.setFocusRun(builtIn->id);
  view.refresh();
  EXPECT_FALSE(sweep->isEnabled());
  EXPECT_TRUE(sweep->toolTip().contains(QStringLiteral("a run of your own model"))) << sweep->toolTip().toStdString();
}

}  // namespace
}  // namespace descentlab
