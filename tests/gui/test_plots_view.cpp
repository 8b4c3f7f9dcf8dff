// Tests of the training-curves view, fed with hand-made runs (see test_views_main.cpp): smoothing at any length,
// export = what is drawn, the hover table, a legend click hiding a run, identical runs told apart, and log y's
// count of the points it cannot draw.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QSet>
#include <QSlider>
#include <QTest>
#include <QToolButton>

#include <cmath>
#include <memory>

#include "gui_test_support.h"
#include "widgets/lab_model.h"
#include "widgets/lambda_view.h"
#include "widgets/layer_loss_view.h"
#include "widgets/plot_helpers.h"
#include "widgets/small_multiples_view.h"
#include "widgets/training_curves_view.h"

namespace descentlab {
namespace {

using widgets::DrawnCurve;
using widgets::LabModel;
using widgets::RunData;
using widgets::RunState;
using widgets::SmallMultiplesView;
using widgets::TrainingCurvesView;

const RunData* addRun(LabModel& model, const QString& name, const QVector<double>& steps,
                      const QVector<double>& values) {
  auto run = std::make_unique<RunData>();
  run->name = name;
  for (int i = 0; i < steps.size(); ++i)
    run->addScalar(QStringLiteral("loss"), static_cast<int64_t>(steps[i]), 0, values[i]);
  return model.addRun(std::move(run));
}

// The graphs drawn for runs (in the legend): name -> graph.
QMap<QString, QCPGraph*> legendGraphs(QCustomPlot* plot) {
  QMap<QString, QCPGraph*> graphs;
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->legend->hasItemWithPlottable(plot->graph(i))) graphs.insert(plot->graph(i)->name(), plot->graph(i));
  }
  return graphs;
}

QVector<double> valuesOf(const QCPGraph* graph) {
  QVector<double> values;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) values.push_back(it->value);
  return values;
}

class PlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    view_ = std::make_unique<TrainingCurvesView>(&model_, QStringLiteral("Training loss"), QStringLiteral("loss"));
    view_->resize(800, 500);
    view_->show();
  }
  LabModel model_;
  std::unique_ptr<TrainingCurvesView> view_;
};

TEST_F(PlotsTest, SmoothingIsTensorBoardsDebiasedEmaAtAnyLength) {
  // Five points: a quick run's evaluations. Smoothing used to be skipped under 40 points.
  addRun(model_, QStringLiteral("short"), {10, 20, 30, 40, 50}, {1.0, 0.5, 0.8, 0.2, 0.4});
  view_->setSmoothing(0.6);
  view_->refresh(true);
  const auto curves = view_->curves();
  ASSERT_EQ(curves.size(), 1);
  // By hand: last = 0.6 last + 0.4 v; smoothed = last / (1 - 0.6^n).
  double last = 0;
  QVector<double> expected;
  const QVector<double> values = {1.0, 0.5, 0.8, 0.2, 0.4};
  for (int n = 1; n <= values.size(); ++n) {
    last = 0.6 * last + 0.4 * values[n - 1];
    expected.push_back(last / (1.0 - std::pow(0.6, n)));
  }
  for (int i = 0; i < values.size(); ++i) EXPECT_NEAR(curves[0].smoothed[i], expected[i], 1e-12) << i;
  EXPECT_NE(curves[0].smoothed, curves[0].raw);
  // What is drawn is that curve.
  const auto graphs = legendGraphs(view_->plot());
  ASSERT_TRUE(graphs.contains(QStringLiteral("short")));
  EXPECT_EQ(valuesOf(graphs[QStringLiteral("short")]), curves[0].smoothed);
}

// Issue 18: an evaluation (the accuracy right after each compression) or a set value (the scheduled learning rate)
// is drawn as measured, with markers, whatever the slider says: an average over eight evaluations only lagged below
// them. The slider is greyed out while it has nothing to smooth, and smooths the training loss again after.
TEST_F(PlotsTest, EvaluationsAndSetValuesAreDrawnAsMeasured) {
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("scheduled");
  const QVector<double> values = {0.18, 0.47, 0.55, 0.62, 0.63, 0.68, 0.69, 0.70};
  for (int i = 0; i < values.size(); ++i) {
    run->addScalar(QStringLiteral("test_accuracy_after_compression"), 19 * (i + 1), 0, values[i]);
    run->addScalar(QStringLiteral("lr"), 19 * (i + 1), 0, 0.001 * (1.0 - i / 8.0));
    run->addScalar(QStringLiteral("loss"), 19 * (i + 1), 0, 2.0 - values[i]);
  }
  model_.addRun(std::move(run));
  view_->setSmoothing(0.6);
  auto* slider = view_->findChild<QSlider*>();
  ASSERT_NE(slider, nullptr);
  for (const QString& series : {QStringLiteral("test_accuracy_after_compression"), QStringLiteral("lr")}) {
    view_->setMetric(series);
    view_->refresh(true);
    const auto curves = view_->curves();
    ASSERT_EQ(curves.size(), 1);
    EXPECT_FALSE(curves[0].smoothable) << series.toStdString();
    EXPECT_EQ(curves[0].smoothed, curves[0].raw) << series.toStdString();
    const auto graphs = legendGraphs(view_->plot());
    ASSERT_TRUE(graphs.contains(QStringLiteral("scheduled")));
    EXPECT_EQ(valuesOf(graphs[QStringLiteral("scheduled")]), curves[0].raw);
    EXPECT_NE(graphs[QStringLiteral("scheduled")]->scatterStyle().shape(), QCPScatterStyle::ssNone);
    EXPECT_EQ(view_->plot()->graphCount(), 1) << "no faint raw copy under a smoothed line";
    EXPECT_FALSE(slider->isEnabled());
  }
  view_->setMetric(QStringLiteral("loss"));
  view_->refresh(true);
  EXPECT_TRUE(view_->curves()[0].smoothable);
  EXPECT_NE(view_->curves()[0].smoothed, view_->curves()[0].raw);
  EXPECT_TRUE(slider->isEnabled());
}

TEST_F(PlotsTest, TheCsvExportWritesExactlyWhatIsDrawn) {
  addRun(model_, QStringLiteral("a"), {1, 2, 3}, {3.0, 2.0, 1.0});
  const RunData* hidden = addRun(model_, QStringLiteral("b"), {1, 2, 3}, {4.0, 0.0, 2.0});
  view_->setSmoothing(0.5);
  view_->setLogY(true);
  model_.setRunVisible(hidden->id, false);
  view_->refresh(true);
  const QStringList lines = view_->csv().trimmed().split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 4) << view_->csv().toStdString();  // the header and run a's three points: b is hidden
  EXPECT_EQ(lines[0], QStringLiteral("run,metric,step,value,smoothed"));
  const auto drawn = valuesOf(legendGraphs(view_->plot())[QStringLiteral("a")]);
  for (int i = 0; i < 3; ++i) {
    const QStringList fields = lines[i + 1].split(QLatin1Char(','));
    EXPECT_EQ(fields[0], QStringLiteral("a"));
    EXPECT_EQ(fields[4].toDouble(), drawn[i]) << i;  // the very double drawn
  }
  // Shown again under log y: its 0 is not drawn, so the CSV leaves that value empty, as the plot does.
  model_.setRunVisible(hidden->id, true);
  view_->refresh(true);
  EXPECT_TRUE(view_->csv().contains(QStringLiteral("b,loss,2,,")));
}

TEST_F(PlotsTest, HoverListsEveryVisibleRunAtTheNearestStep) {
  addRun(model_, QStringLiteral("adamw"), {0, 10, 20, 30}, {2.0, 1.5, 1.2, 1.0});
  addRun(model_, QStringLiteral("horst"), {0, 10, 20, 30}, {2.0, 1.4, 0.9, 0.7});
  view_->setSmoothing(0.0);
  view_->refresh(true);
  // x = 18 is nearest step 20: the curves' values there, not the cursor's y.
  const QString table = view_->hoverTableAt(18, 5.0);
  EXPECT_TRUE(table.contains(QStringLiteral("adamw"))) << table.toStdString();
  EXPECT_TRUE(table.contains(QStringLiteral("horst")));
  EXPECT_TRUE(table.contains(QStringLiteral(">20<")));
  EXPECT_TRUE(table.contains(QStringLiteral("1.2")));
  EXPECT_TRUE(table.contains(QStringLiteral("0.9")));
  EXPECT_FALSE(table.contains(QStringLiteral(">5<")));
  const QString line = view_->readoutAt(18, 5.0);
  EXPECT_TRUE(line.contains(QStringLiteral("adamw @20: 1.2"))) << line.toStdString();
  EXPECT_TRUE(line.contains(QStringLiteral("horst @20: 0.9")));
  // With smoothing, both the raw and the smoothed value.
  view_->setSmoothing(0.5);
  EXPECT_TRUE(view_->readoutAt(18, 5.0).contains(QStringLiteral("smoothed")));
  // A hidden run is not listed.
  model_.setRunVisible(model_.runAt(1)->id, false);
  view_->refresh(true);
  EXPECT_FALSE(view_->hoverTableAt(18, 5.0).contains(QStringLiteral("horst")));
}

TEST_F(PlotsTest, ALegendClickHidesARunAndASecondClickShowsIt) {
  const RunData* first = addRun(model_, QStringLiteral("first"), {0, 1, 2}, {1.0, 0.5, 0.25});
  addRun(model_, QStringLiteral("second"), {0, 1, 2}, {2.0, 1.5, 1.25});
  view_->refresh(true);
  auto* plot = view_->plot();
  plot->replot();
  QApplication::processEvents();
  auto* graph = legendGraphs(plot)[QStringLiteral("first")];
  ASSERT_NE(graph, nullptr);
  auto* item = plot->legend->itemWithPlottable(graph);
  ASSERT_NE(item, nullptr);
  const QPoint centre = item->rect().center();
  QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, centre);
  EXPECT_FALSE(first->visible);
  view_->refresh();
  QApplication::processEvents();
  graph = legendGraphs(plot)[QStringLiteral("first")];
  ASSERT_NE(graph, nullptr) << "a hidden run keeps its legend entry, to be clicked back on";
  EXPECT_FALSE(graph->visible());
  EXPECT_TRUE(legendGraphs(plot)[QStringLiteral("second")]->visible());
  plot->replot();
  QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, plot->legend->itemWithPlottable(graph)->rect().center());
  EXPECT_TRUE(first->visible);
}

TEST_F(PlotsTest, IdenticalRunsAreDrawnDistinctlyAndSaidToBeIdentical) {
  addRun(model_, QStringLiteral("seed0"), {0, 1, 2, 3}, {1.0, 0.8, 0.7, 0.6});
  addRun(model_, QStringLiteral("seed0 again"), {0, 1, 2, 3}, {1.0, 0.8, 0.7, 0.6});
  addRun(model_, QStringLiteral("seed1"), {0, 1, 2, 3}, {1.0, 0.9, 0.7, 0.5});
  view_->refresh(true);
  const auto graphs = legendGraphs(view_->plot());
  ASSERT_TRUE(graphs.contains(QStringLiteral("seed0 again (identical to seed0 so far)")))
      << QStringList(graphs.keys()).join(QStringLiteral(" | ")).toStdString();
  EXPECT_EQ(graphs[QStringLiteral("seed0")]->pen().style(), Qt::SolidLine);
  EXPECT_EQ(graphs[QStringLiteral("seed0 again (identical to seed0 so far)")]->pen().style(), Qt::DashLine);
  EXPECT_TRUE(graphs.contains(QStringLiteral("seed1")));
  EXPECT_EQ(graphs[QStringLiteral("seed1")]->pen().style(), Qt::SolidLine);
}

TEST_F(PlotsTest, LogYSaysHowManyPointsItHidesAndLabelsASmallRange) {
  addRun(model_, QStringLiteral("run"), {0, 1, 2, 3, 4}, {0.0, 0.3, -0.1, 0.12, 0.08});
  view_->refresh(true);
  EXPECT_TRUE(view_->logYNote().isEmpty());
  view_->setLogY(true);
  view_->refresh(true);
  EXPECT_EQ(view_->logYNote(), QStringLiteral("hides 2 points ≤ 0"));
  // 0.08 .. 0.3 lies within a decade: no power of ten to label, so evenly spaced ticks with labels.
  auto* axis = view_->plot()->yAxis;
  EXPECT_EQ(axis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_TRUE(axis->ticker().dynamicCast<QCPAxisTickerLog>().isNull());
  view_->plot()->replot();
  EXPECT_GE(axis->tickVectorLabels().size(), 2);
  for (const auto& label : axis->tickVectorLabels()) EXPECT_FALSE(label.isEmpty());
  view_->setLogY(false);
  view_->refresh(true);
  EXPECT_TRUE(view_->logYNote().isEmpty());
}

// Two runs' first losses 2e-6 apart: QCustomPlot's 6 significant digits labelled the y ticks 0.721279, 0.721279,
// 0.721278, 0.721278 (seen in a tour at 1024x700). Every label is distinct, and ordinary ranges keep short labels.
TEST_F(PlotsTest, NeighbouringTickLabelsAreDistinctOnATinyRange) {
  addRun(model_, QStringLiteral("erm"), {10}, {0.721279});
  addRun(model_, QStringLiteral("constrained"), {10}, {0.721277});
  view_->refresh(true);
  view_->plot()->replot();
  const QVector<QString> labels = view_->plot()->yAxis->tickVectorLabels();
  ASSERT_GE(labels.size(), 2);
  EXPECT_EQ(QSet<QString>(labels.begin(), labels.end()).size(), labels.size()) << labels.join(' ').toStdString();
  view_->plot()->yAxis->setRange(0.5, 1.0);
  view_->plot()->replot();
  for (const QString& label : view_->plot()->yAxis->tickVectorLabels())
    EXPECT_LE(label.size(), 4) << label.toStdString();
}

// A one-epoch layerwise run has no test evaluation until its end: the per-layer view shows the training per-layer
// losses meanwhile, named as training, and the test curves once they come.
// Issue 33: the x axis was step only. Wall time and the time since each run's start are choices too; a run started
// later sits beside the first one by relative time, and the CSV writes the x that is drawn.
TEST_F(PlotsTest, TheXAxisIsStepWallTimeOrTimeSinceTheStart) {
  auto early = std::make_unique<RunData>();
  early->name = QStringLiteral("early");
  auto late = std::make_unique<RunData>();
  late->name = QStringLiteral("late");
  for (int i = 0; i < 5; ++i) {
    early->addScalar(QStringLiteral("loss"), 10 * i, 1000.0 + 2.0 * i, 1.0 - 0.1 * i);
    late->addScalar(QStringLiteral("loss"), 10 * i, 1500.0 + 4.0 * i, 1.0 - 0.09 * i);
  }
  model_.addRun(std::move(early));
  model_.addRun(std::move(late));
  const auto keysOf = [&](const QString& name) {
    QVector<double> keys;
    for (int i = 0; i < view_->plot()->graphCount(); ++i) {
      QCPGraph* graph = view_->plot()->graph(i);
      if (graph->name() != name) continue;
      for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) keys.push_back(it->key);
    }
    return keys;
  };
  view_->refresh(true);
  EXPECT_EQ(keysOf(QStringLiteral("late")), (QVector<double>{0, 10, 20, 30, 40}));
  view_->setXAxis(TrainingCurvesView::XAxis::WallTime);
  view_->refresh(true);
  EXPECT_EQ(keysOf(QStringLiteral("late")), (QVector<double>{1500, 1504, 1508, 1512, 1516}));
  view_->setXAxis(TrainingCurvesView::XAxis::RelativeTime);
  view_->refresh(true);
  EXPECT_EQ(keysOf(QStringLiteral("early")), (QVector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(keysOf(QStringLiteral("late")), (QVector<double>{0, 4, 8, 12, 16}));
  EXPECT_TRUE(view_->csv().startsWith(QStringLiteral("run,metric,step,seconds_since_start,value,smoothed\n")));
  EXPECT_TRUE(view_->csv().contains(QStringLiteral("late,loss,40,16,")));
  EXPECT_TRUE(view_->readoutAt(12, 0.7).contains(QStringLiteral("late @30")));
}

TEST(LayerLossViewTest, TrainingPerLayerLossesShowUntilTheFirstTestEvaluation) {
  LabModel model;
  widgets::LayerLossView view(&model);
  view.resize(700, 500);
  view.show();
  view.refresh(true);
  EXPECT_FALSE(view.hasData());  // nothing open: the placeholder only
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("constrained");
  run->kind = widgets::RunKind::Layerwise;
  run->addVector(QStringLiteral("layer_loss"), 10, {0.9, 0.8, 0.7});
  run->addVector(QStringLiteral("layer_loss"), 20, {0.8, 0.7, 0.6});
  const RunData* added = model.addRun(std::move(run));
  view.refresh(true);
  ASSERT_TRUE(view.hasData());
  const QMap<QString, QCPGraph*> training = legendGraphs(view.plot());
  ASSERT_EQ(training.size(), 1);
  EXPECT_EQ(training.firstKey(), QStringLiteral("constrained (training, step 20)"));
  EXPECT_EQ(valuesOf(training.first()), (QVector<double>{0.8, 0.7, 0.6}));
  EXPECT_EQ(view.plot()->axisRect(0)->axis(QCPAxis::atLeft)->label(), QStringLiteral("training loss fₗ"));
  model.changeRun(added->id, [](RunData& changed) {
    changed.addVector(QStringLiteral("test_layer_loss"), 30, {0.85, 0.75, 0.7});
  });
  view.refresh(true);
  const QMap<QString, QCPGraph*> test = legendGraphs(view.plot());
  ASSERT_TRUE(test.contains(QStringLiteral("constrained"))) << test.firstKey().toStdString();
  EXPECT_EQ(valuesOf(test.value(QStringLiteral("constrained"))), (QVector<double>{0.85, 0.75, 0.7}));
  EXPECT_FALSE(test.contains(QStringLiteral("constrained (training, step 20)")));
  EXPECT_EQ(view.plot()->axisRect(0)->axis(QCPAxis::atLeft)->label(), QStringLiteral("test loss fₗ"));
}

// A hidden view is not redrawn as runs open (MainWindow::refreshViews draws the visible ones): shown again, it catches
// up, rather than keep the hint of the moment it was hidden (a sparse run of a user's model read "No layerwise-descent
// run open (presets text-* and video-*)" until another run changed).
TEST(LayerLossViewTest, AViewShownAgainCatchesUpWithTheRunsOpenedWhileHidden) {
  LabModel model;
  widgets::LayerLossView view(&model);
  view.resize(700, 500);
  view.show();
  view.refresh(true);
  view.hide();
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("cnn-horst");
  run->kind = widgets::RunKind::Sparse;
  run->config.insert(QStringLiteral("task"), QStringLiteral("torchscript"));
  model.addRun(std::move(run));
  view.show();
  QStringList hints;
  for (int i = 0; i < view.plot()->itemCount(); ++i) {
    if (auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i))) hints << text->text();
  }
  const QString shown = hints.join(QStringLiteral(" "));
  EXPECT_TRUE(shown.contains(QStringLiteral("cnn-horst"))) << shown.toStdString();
  EXPECT_TRUE(shown.contains(QStringLiteral("your-model-layerwise"))) << shown.toStdString();
}

// In a short dock (a tour's per-layer view at 1024x700) the losses and the descending shares were two plots of about
// 30 px each: below 200 px of plot the shares give their room to the losses, and come back when the view grows.
TEST(LayerLossViewTest, TheDescendingSharesGiveWayInAShortView) {
  LabModel model;
  widgets::LayerLossView view(&model);
  view.resize(700, 500);
  view.show();
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("constrained");
  run->kind = widgets::RunKind::Layerwise;
  run->addVector(QStringLiteral("test_layer_loss"), 30, {0.85, 0.75, 0.7});
  run->addVector(QStringLiteral("test_descending_frequency"), 30, {0.6, 0.55});
  model.addRun(std::move(run));
  const auto barsDrawn = [&view] {
    int bars = 0;
    for (int i = 0; i < view.plot()->plottableCount(); ++i)
      bars += qobject_cast<QCPBars*>(view.plot()->plottable(i)) ? 1 : 0;
    return bars;
  };
  view.refresh(true);
  QApplication::processEvents();
  ASSERT_GE(view.plot()->height(), 200);
  EXPECT_EQ(view.plot()->axisRectCount(), 2);
  EXPECT_EQ(barsDrawn(), 1);
  const int tallLossHeight = view.plot()->axisRect(0)->outerRect().height();
  view.resize(700, 200);
  QApplication::processEvents();
  ASSERT_LT(view.plot()->height(), 200);
  view.plot()->replot();
  EXPECT_EQ(view.plot()->axisRectCount(), 1);
  EXPECT_EQ(barsDrawn(), 0);
  // The losses have the whole plot below the legend, not the two thirds they had.
  EXPECT_GT(view.plot()->axisRect(0)->outerRect().height(), view.plot()->height() * 3 / 4);
  view.resize(700, 500);
  QApplication::processEvents();
  view.plot()->replot();
  EXPECT_EQ(view.plot()->axisRectCount(), 2);
  EXPECT_EQ(barsDrawn(), 1);
  EXPECT_EQ(view.plot()->axisRect(0)->outerRect().height(), tallLossHeight);
}

// Issue 54, item 8: four runs at 1024x700 gave the per-layer view a legend of four rows over 45-60 px of data. In a
// short view the legend takes more columns (each name shortened around what tells it apart) so that its rows take at
// most a third of the plot's height; in a tall view it keeps one whole name a row.
TEST(LayerLossViewTest, AShortViewsLegendTakesColumnsRatherThanTheDatasRoom) {
  LabModel model;
  widgets::LayerLossView view(&model);
  view.resize(390, 520);
  view.show();
  for (const QString& name :
       {QStringLiteral("video-constrained-quick seed 0"), QStringLiteral("video-constrained-quick seed 0 (2)"),
        QStringLiteral("video-erm-quick seed 0"), QStringLiteral("video-erm-quick seed 0 (2)")}) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->kind = widgets::RunKind::Layerwise;
    run->addVector(QStringLiteral("test_layer_loss"), 30, {0.85, 0.75, 0.7});
    model.addRun(std::move(run));
  }
  view.refresh(true);
  QApplication::processEvents();
  EXPECT_EQ(view.plot()->legend->rowCount(), 4) << "a tall view keeps one whole name a row";
  view.resize(390, 230);
  QApplication::processEvents();
  view.plot()->replot();
  QCPLegend* legend = view.plot()->legend;
  EXPECT_EQ(legend->rowCount(), 2);
  EXPECT_LE(legend->outerRect().height(), view.plot()->height() / 3 + 4);
  QSet<QString> names;
  for (int i = 0; i < legend->itemCount(); ++i) {
    auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
    ASSERT_NE(item, nullptr);
    names.insert(item->plottable()->name());
    EXPECT_LE(item->outerRect().right(), view.plot()->width()) << item->plottable()->name().toStdString();
  }
  EXPECT_EQ(names.size(), 4) << "shortened names still tell the runs apart";
}

// Issue 33: in the descent-breaks tour ERM's rise of a few thousandths of a nat near the top was invisible on an
// axis spanning the constrained model's f_0 of 2.3 nats, and the red break markers named no run (they sat where the
// two lines overlap, reading as the constrained run's). The change mode plots f_l - f_(l-1) with the range fitted to
// the top layers, and each run's markers are in its colour and named after it. Seed 0's final losses of the tour.
TEST(LayerLossViewTest, TheChangeModeShowsASmallRiseAndEveryMarkerNamesItsRun) {
  LabModel model;
  widgets::LayerLossView view(&model);
  view.resize(640, 520);
  view.show();
  const auto addLayerwise = [&](const QString& name, const QVector<double>& losses, const QColor& colour) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->kind = widgets::RunKind::Layerwise;
    run->colour = colour;
    run->addVector(QStringLiteral("test_layer_loss"), 100, losses);
    return model.addRun(std::move(run));
  };
  addLayerwise(QStringLiteral("ERM"), {0.7035, 0.6918, 0.6748, 0.6217, 0.6083, 0.6084, 0.6157}, QColor(31, 119, 180));
  addLayerwise(QStringLiteral("Constrained"), {2.3130, 1.3711, 1.3355, 0.8180, 0.7829, 0.7177, 0.6323},
               QColor(255, 127, 14));
  view.refresh(true);
  QApplication::processEvents();
  QCPAxis* y = view.plot()->axisRect(0)->axis(QCPAxis::atLeft);
  const auto pixelsAboveZero = [&](double value) { return y->coordToPixel(0) - y->coordToPixel(value); };
  // As values, ERM's rise at layer 6 (+0.0073) is about a pixel: nobody sees it.
  const double asValue = y->coordToPixel(0.6084) - y->coordToPixel(0.6157);
  EXPECT_LT(asValue, 3.0);
  // Markers: one per run whose descent breaks, in its colour, named after it.
  const QMap<QString, QCPGraph*> named = legendGraphs(view.plot());
  ASSERT_TRUE(named.contains(QStringLiteral("ERM: descent breaks at ℓ 5, 6"))) << named.keys().join(',').toStdString();
  EXPECT_EQ(named.value(QStringLiteral("ERM: descent breaks at ℓ 5, 6"))->scatterStyle().brush().color(),
            QColor(31, 119, 180));
  for (const QString& name : named.keys())
    EXPECT_FALSE(name.startsWith(QStringLiteral("Constrained:"))) << name.toStdString();
  EXPECT_TRUE(view.readoutAt(6, 0.62).contains(QStringLiteral("descent breaks here: ERM")))
      << view.readoutAt(6, 0.62).toStdString();
  EXPECT_TRUE(view.hoverTableAt(6, 0.62).contains(QStringLiteral("breaks")));

  view.setMode(QStringLiteral("change"));
  view.refresh(true);
  QApplication::processEvents();
  ASSERT_EQ(view.mode(), QStringLiteral("change"));
  const QMap<QString, QCPGraph*> changes = legendGraphs(view.plot());
  ASSERT_TRUE(changes.contains(QStringLiteral("ERM")));
  const QVector<double> erm = valuesOf(changes.value(QStringLiteral("ERM")));
  ASSERT_EQ(erm.size(), 6);  // layers 1..6
  EXPECT_NEAR(erm.back(), 0.0073, 1e-9);
  // Fitted to the top layers: the rise stands clear of the zero line, over 10x its height as a value (the constrained
  // model's own top-layer falls, -0.085, share the range).
  const double plotHeight = view.plot()->axisRect(0)->height();
  EXPECT_GT(pixelsAboveZero(0.0073), plotHeight / 20) << "range " << y->range().lower << ".." << y->range().upper;
  EXPECT_GT(pixelsAboveZero(0.0073), 10 * asValue);
  EXPECT_GT(y->range().upper, 0.0073);
  EXPECT_LT(y->range().lower, -0.085);  // the constrained model's top-layer falls are in range
  EXPECT_TRUE(view.csv().contains(QStringLiteral("ERM,test_layer_loss_change,100,6,")));
  // Every layer fitted on request: the first layers' fall of 0.94 nats is in range again.
  view.setFitTopLayers(false);
  view.refresh(true);
  EXPECT_LT(y->range().lower, -0.94);
}

// Issue 33: in a 1024x700 window the λ view's hint for an ERM run ran past both sides of its plot ("cent-breaks ERM
// trains without constraints (ERM): it has no mu"). A hint is wrapped between words to its plot's width, also after
// the view narrows.
TEST(LambdaViewTest, AHintFitsItsPlotsWidth) {
  LabModel model;
  widgets::LambdaView view(&model);
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("descent-breaks ERM");
  run->kind = widgets::RunKind::Layerwise;
  model.addRun(std::move(run));
  for (const int width : {700, 380, 250}) {
    SCOPED_TRACE(width);
    view.resize(width, 260);
    view.show();
    QApplication::processEvents();
    view.refresh(true);
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QCPItemText* hint = nullptr;
    for (int i = 0; i < view.plot()->itemCount(); ++i) {
      if (auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i))) hint = text;
    }
    ASSERT_NE(hint, nullptr);
    EXPECT_TRUE(hint->text().simplified().contains(QStringLiteral("descent-breaks ERM trains without constraints")));
    const QFontMetrics metrics(hint->font());
    for (const QString& line : hint->text().split(QLatin1Char('\n'))) {
      EXPECT_LE(metrics.horizontalAdvance(line), view.plot()->axisRect()->width()) << line.toStdString();
    }
  }
}

// Issue 33: two runs reopened from their files were named by their stems and, elided in the middle, both read
// "horst-…164443". Shortened names keep what tells them apart, and fit.
TEST(PlotHelpers, DistinctElideKeepsWhatTellsNamesApart) {
  const QFontMetrics metrics(QApplication::font());
  const QStringList names = {QStringLiteral("horst-pruned-alive-AdamW-20261203-164443"),
                             QStringLiteral("horst-pruned-alive-HORST-20261203-164443"), QStringLiteral("short")};
  const int width = metrics.horizontalAdvance(QStringLiteral("horst-pruned-al"));
  // The usual elision makes the two the same: the case being fixed.
  EXPECT_EQ(metrics.elidedText(names[0], Qt::ElideMiddle, width), metrics.elidedText(names[1], Qt::ElideMiddle, width));
  const QStringList shown = widgets::distinctElide(names, metrics, width);
  ASSERT_EQ(shown.size(), 3);
  EXPECT_NE(shown[0], shown[1]);
  EXPECT_TRUE(shown[0].contains(QStringLiteral("AdamW"))) << shown[0].toStdString();
  EXPECT_TRUE(shown[1].contains(QStringLiteral("HORST"))) << shown[1].toStdString();
  EXPECT_EQ(shown[2], QStringLiteral("short"));  // fits: untouched
  for (const QString& name : shown) EXPECT_LE(metrics.horizontalAdvance(name), width) << name.toStdString();
  // Identical names: the usual middle elision.
  const QStringList twins = widgets::distinctElide({names[0], names[0]}, metrics, width);
  EXPECT_EQ(twins[0], metrics.elidedText(names[0], Qt::ElideMiddle, width));
  // Issue 54: group legends lost their count ("…horst…"). A closing count stays after the part that differs.
  const QStringList groups = {QStringLiteral("vit-quick, optimizer horst, alpha 5, beta 0 (5 runs, 3 seeds)"),
                              QStringLiteral("vit-quick, optimizer adamw, alpha 5, beta 0 (5 runs, 3 seeds)")};
  const int groupWidth = metrics.horizontalAdvance(QStringLiteral("vit-quick, optimizer horst (5 runs, 3 se"));
  const QStringList legends = widgets::distinctElide(groups, metrics, groupWidth);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(legends[i].endsWith(QStringLiteral("(5 runs, 3 seeds)"))) << legends[i].toStdString();
    EXPECT_LE(metrics.horizontalAdvance(legends[i]), groupWidth) << legends[i].toStdString();
  }
  EXPECT_TRUE(legends[0].contains(QStringLiteral("horst"))) << legends[0].toStdString();
  EXPECT_TRUE(legends[1].contains(QStringLiteral("adamw"))) << legends[1].toStdString();
}

TEST(PlotHelpers, WrapToWidthBreaksBetweenWordsOnly) {
  const QFontMetrics metrics(QApplication::font());
  const QString text = QStringLiteral("one two three four five six seven\neight");
  const int width = metrics.horizontalAdvance(QStringLiteral("one two three"));
  const QStringList lines = widgets::wrapToWidth(text, metrics, width).split(QLatin1Char('\n'));
  EXPECT_EQ(lines.front(), QStringLiteral("one two three"));
  EXPECT_EQ(lines.back(), QStringLiteral("eight"));  // the text's own line break stays
  EXPECT_GE(lines.size(), 4);
  for (const QString& line : lines) EXPECT_LE(metrics.horizontalAdvance(line), width) << line.toStdString();
  EXPECT_EQ(lines.join(QLatin1Char(' ')), QString(text).replace(QLatin1Char('\n'), QLatin1Char(' ')));
  EXPECT_EQ(widgets::wrapToWidth(QStringLiteral("unbreakable"), metrics, 5), QStringLiteral("unbreakable"));
}

// The window's default constrained run (video-constrained quick) never binds: λ was a flat line at 0 on an axis of
// ±1e-6 with nothing saying why (issue 17). The view now says why, on a 0-to-1 axis, and says nothing once λ moves.
TEST(LambdaViewTest, AFlatZeroLambdaSaysTheConstraintsDoNotBind) {
  LabModel model;
  widgets::LambdaView view(&model);
  view.resize(600, 400);
  view.show();
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("video-constrained-quick");
  run->kind = widgets::RunKind::Layerwise;
  run->constrained = true;
  run->config.insert(QStringLiteral("constraints.alpha"), QStringLiteral("0.05"));
  for (int step = 10; step <= 30; step += 10) {
    run->addVector(QStringLiteral("lambda"), step, {0.0, 0.0, 0.0});
    run->addVector(QStringLiteral("slack"), step, {-0.4, -0.3, -0.25});
  }
  const RunData* added = model.addRun(std::move(run));
  const auto texts = [&view] {
    QStringList all;
    for (int i = 0; i < view.plot()->itemCount(); ++i) {
      if (auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i))) all << text->text();
    }
    return all.join(QLatin1Char('|'));
  };
  view.refresh(true);
  EXPECT_TRUE(texts().contains(QStringLiteral("do not bind"))) << texts().toStdString();
  EXPECT_TRUE(texts().contains(QStringLiteral("α = 0.05"))) << texts().toStdString();
  EXPECT_TRUE(texts().contains(QStringLiteral("largest slack -0.25"))) << texts().toStdString();
  EXPECT_DOUBLE_EQ(view.plot()->yAxis->range().upper, 1.0);
  model.changeRun(added->id, [](RunData& changed) {
    changed.addVector(QStringLiteral("lambda"), 40, {0.0, 0.02, 0.0});
  });
  view.refresh(true);
  EXPECT_FALSE(texts().contains(QStringLiteral("do not bind"))) << texts().toStdString();
  EXPECT_LT(view.plot()->yAxis->range().upper, 0.1);
  // Issue 54: the run's name was drawn in the plot's top-right corner, over the curves. It is above the data now,
  // in the strip the axis rect keeps for it.
  EXPECT_EQ(view.runTitle(), QStringLiteral("video-constrained-quick"));
  view.plot()->replot(QCustomPlot::rpImmediateRefresh);
  for (int i = 0; i < view.plot()->itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i));
    if (!text || text->text() != view.runTitle()) continue;
    EXPECT_LE(text->position->pixelPosition().y(), view.plot()->axisRect()->top()) << "the name sits on the data";
  }
}

TEST(RunDataTest, SpeedAndEtaAfterAPauseCountRunningTimeOnly) {
  RunData run;
  run.totalSteps = 200;
  for (int i = 0; i <= 5; ++i) run.addScalar(QStringLiteral("loss"), i * 10, 1000.0 + i, 1.0);  // 10 steps/s
  EXPECT_NEAR(run.stepsPerSecond, 10.0, 1e-9);
  run.restartSpeed();  // paused at step 50 for 95 s, then resumed
  for (int i = 0; i <= 3; ++i) run.addScalar(QStringLiteral("loss"), 60 + i * 20, 1100.0 + i, 1.0);  // 20 steps/s
  EXPECT_NEAR(run.stepsPerSecond, 20.0, 1e-9);                  // not (120 - 0) / 103 s
  EXPECT_NEAR(run.etaSeconds(), (200.0 - 120.0) / 20.0, 1e-9);  // 4 s
}

TEST(RunDataTest, WhatAUserCanDoFollowsTheRunsState) {
  RunData run;
  run.state = RunState::Running;
  EXPECT_TRUE(widgets::availableActions(run).pause);
  EXPECT_FALSE(widgets::availableActions(run).resume);
  EXPECT_FALSE(widgets::availableActions(run).close);
  run.state = RunState::Paused;
  EXPECT_TRUE(widgets::availableActions(run).resume);
  EXPECT_TRUE(widgets::availableActions(run).stop);
  run.state = RunState::Stopped;
  EXPECT_FALSE(widgets::availableActions(run).resume) << "no checkpoint, nothing to resume from";
  run.hasLatestCheckpoint = true;
  EXPECT_TRUE(widgets::availableActions(run).resume);
  EXPECT_TRUE(widgets::availableActions(run).close);
  run.state = RunState::Finished;
  EXPECT_FALSE(widgets::availableActions(run).resume);
}

// A 1024x700 window grew past the screen's right edge once a study's groups were drawn beside a video run: the test
// metric view's note ("not on this axis: ...") was a plain label, whose whole text became the view's minimum width.
// The note now shortens to the width it is given, the whole of it kept (and in its tooltip).
TEST(PlotsNoteTest, ALongNoteNeverWidensTheView) {
  LabModel model;
  TrainingCurvesView view(&model, QStringLiteral("Test metric"), QStringLiteral("@test"));
  view.resize(300, 400);
  view.show();
  const int before = view.minimumSizeHint().width();
  const QStringList metrics = {QStringLiteral("accuracy"), QStringLiteral("rmse"), QStringLiteral("perplexity")};
  for (int i = 0; i < 12; ++i) {
    auto run = std::make_unique<RunData>();
    run->name = QStringLiteral("a run of a task with a long name %1").arg(i);
    run->metric = metrics[i % 3] + QString::number(i);
    run->addScalar(QStringLiteral("test_") + run->metric, 1, 0, 0.5);
    model.addRun(std::move(run));
  }
  view.refresh(true);
  ASSERT_TRUE(view.logYNote().startsWith(QStringLiteral("not on this axis: "))) << view.logYNote().toStdString();
  EXPECT_GT(view.fontMetrics().horizontalAdvance(view.logYNote()), 600);
  EXPECT_LE(view.minimumSizeHint().width(), std::max(before, 300)) << view.logYNote().toStdString();
}

// Issue 54: the training-loss view drew video MSE under text and ViT cross-entropy in nats on one y axis. A loss keeps
// the selected run's unit on the axis and names the runs in another unit beside it.
TEST(PlotsUnitsTest, LossesInDifferentUnitsNeverShareTheAxis) {
  LabModel model;
  TrainingCurvesView view(&model, QStringLiteral("Training loss"), QStringLiteral("loss"));
  view.resize(700, 400);
  view.show();
  const auto add = [&](const QString& name, const QString& metric) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->metric = metric;
    for (int step = 1; step <= 5; ++step) run->addScalar(QStringLiteral("loss"), step, 0, 1.0 / step);
    return model.addRun(std::move(run))->id;
  };
  const QString video = add(QStringLiteral("video-erm"), QStringLiteral("rmse"));
  add(QStringLiteral("text-erm"), QStringLiteral("accuracy"));
  add(QStringLiteral("gpt"), QStringLiteral("perplexity"));
  model.setFocusRun(video);
  view.refresh(true);
  const auto drawn = [&view] {
    QStringList names;
    for (const auto& curve : view.curves()) names << curve.run->name;
    return names;
  };
  EXPECT_EQ(drawn(), QStringList{QStringLiteral("video-erm")});
  EXPECT_TRUE(view.plot()->yAxis->label().contains(QStringLiteral("squared error")))
      << view.plot()->yAxis->label().toStdString();
  EXPECT_TRUE(view.logYNote().contains(QStringLiteral("not on this axis: cross-entropy, nats (2 runs)")))
      << view.logYNote().toStdString();
  // The text run selected: both cross-entropy runs share the axis, the video run is named.
  model.setFocusRun(model.runAt(1)->id);
  view.refresh(true);
  EXPECT_EQ(drawn(), (QStringList{QStringLiteral("text-erm"), QStringLiteral("gpt")}));
  EXPECT_TRUE(view.logYNote().contains(QStringLiteral("squared error (1 run)"))) << view.logYNote().toStdString();
  // A series with one unit for every task (the learning rate) draws every run.
  view.setMetric(QStringLiteral("lr"));
  for (int i = 0; i < model.count(); ++i) {
    model.changeRun(model.runAt(i)->id, [](RunData& run) { run.addScalar(QStringLiteral("lr"), 1, 0, 0.001); });
  }
  view.refresh(true);
  EXPECT_EQ(view.curves().size(), 3);
}

// Issue 54 item 9: what TensorBoard and W&B users reach for, an epoch axis and a log-scale step axis.
TEST(PlotsAxesTest, CurvesAreDrawnByEpochOrOnALogStepAxis) {
  LabModel model;
  TrainingCurvesView view(&model, QStringLiteral("Training loss"), QStringLiteral("loss"));
  view.resize(700, 400);
  view.show();
  auto run = std::make_unique<RunData>();
  run->name = QStringLiteral("two epochs of 50 steps");
  run->metric = QStringLiteral("accuracy");
  for (int step = 0; step <= 100; ++step) run->addScalar(QStringLiteral("loss"), step, 0, 2.0 / (1 + step));
  for (int step = 10; step <= 100; step += 10) run->addScalar(QStringLiteral("epoch"), step, 0, step / 50.0);
  model.addRun(std::move(run));
  auto other = std::make_unique<RunData>();  // no epoch series: left out and counted
  other->name = QStringLiteral("no epochs");
  other->metric = QStringLiteral("accuracy");
  other->addScalar(QStringLiteral("loss"), 1, 0, 1.0);
  model.addRun(std::move(other));
  view.setXAxis(TrainingCurvesView::XAxis::Epoch);
  view.refresh(true);
  auto curves = view.curves();
  ASSERT_EQ(curves.size(), 1);
  EXPECT_NEAR(curves[0].x[25], 0.5, 1e-12);
  EXPECT_NEAR(curves[0].x[100], 2.0, 1e-12);
  EXPECT_NEAR(curves[0].x[1], 0.02, 1e-12);  // before the first epoch row, at its pace
  EXPECT_EQ(view.plot()->xAxis->label(), QStringLiteral("epoch"));
  EXPECT_TRUE(view.logYNote().contains(QStringLiteral("1 run without an epoch series")))
      << view.logYNote().toStdString();
  view.setXAxis(TrainingCurvesView::XAxis::LogStep);
  view.refresh(true);
  curves = view.curves();
  ASSERT_EQ(curves.size(), 2);
  EXPECT_EQ(view.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_TRUE(std::isnan(curves[0].x[0])) << "step 0 has no place on a log axis";
  EXPECT_DOUBLE_EQ(curves[0].x[10], 10.0);
  EXPECT_GT(view.plot()->xAxis->range().lower, 0.0);
  view.setXAxis(TrainingCurvesView::XAxis::Step);
  EXPECT_EQ(view.plot()->xAxis->scaleType(), QCPAxis::stLinear);
}

// Issue 54 item 9: small multiples, a grid of one plot per metric or per layer, chosen in the view and opened from
// the training-curves view's "Grid…" button.
TEST(SmallMultiplesTest, AGridOfOnePlotPerMetricOrPerLayer) {
  LabModel model;
  TrainingCurvesView curves(&model, QStringLiteral("Training loss"), QStringLiteral("loss"));
  curves.resize(700, 400);
  curves.show();
  const auto add = [&](const QString& name, const QString& metric, double scale) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->metric = metric;
    for (int step = 10; step <= 50; step += 10) {
      run->addScalar(QStringLiteral("loss"), step, 0, scale / step);
      run->addScalar(QStringLiteral("lr"), step, 0, 0.001);
      run->addScalar(QStringLiteral("test_") + metric, step, 0, 0.5 + step / 200.0);
      run->addVector(QStringLiteral("test_layer_loss"), step, {2.0 * scale, 1.0 * scale, 0.5 * scale / step});
    }
    return model.addRun(std::move(run))->id;
  };
  const QString text = add(QStringLiteral("text-erm"), QStringLiteral("accuracy"), 1.0);
  add(QStringLiteral("text-constrained"), QStringLiteral("accuracy"), 1.1);
  add(QStringLiteral("video-erm"), QStringLiteral("rmse"), 0.1);
  model.setFocusRun(text);
  auto* button = curves.findChild<QToolButton*>(QStringLiteral("small-multiples"));
  ASSERT_NE(button, nullptr);
  button->click();
  auto* grid = curves.findChild<SmallMultiplesView*>();
  ASSERT_NE(grid, nullptr);
  ASSERT_TRUE(grid->isWindow());
  ASSERT_TRUE(grid->isVisible());
  // Per metric: the training loss first, the test metrics next, then the rest by name.
  EXPECT_EQ(grid->panels(), (QStringList{QStringLiteral("loss"), QStringLiteral("test_accuracy"),
                                         QStringLiteral("test_rmse"), QStringLiteral("lr")}));
  EXPECT_EQ(grid->plot()->axisRects().size(), 4);
  EXPECT_GE(grid->columns(), 2);
  // The loss panel keeps the selected run's unit: the video run's squared error is left out and said.
  const QString table = grid->csv();
  EXPECT_TRUE(table.contains(QStringLiteral("loss,text-erm,10,")));
  EXPECT_FALSE(table.contains(QStringLiteral("loss,video-erm,"))) << "squared error beside nats";
  EXPECT_TRUE(table.contains(QStringLiteral("test_rmse,video-erm,10,")));
  EXPECT_TRUE(table.contains(QStringLiteral("lr,video-erm,10,")));
  EXPECT_TRUE(grid->note().contains(QStringLiteral("1 curve in another unit than cross-entropy, nats left out")))
      << grid->note().toStdString();
  // One legend entry per run, however many panels draw it.
  EXPECT_EQ(grid->plot()->legend->itemCount(), 3);
  // Per layer: one panel per layer ℓ, fₗ against step, the selected run's task only.
  grid->setMode(SmallMultiplesView::Mode::PerLayer);
  EXPECT_EQ(grid->panels(),
            (QStringList{QStringLiteral("layer 0"), QStringLiteral("layer 1"), QStringLiteral("layer 2")}));
  EXPECT_EQ(grid->plot()->axisRects().size(), 3);
  EXPECT_TRUE(grid->csv().contains(QStringLiteral("layer 2,text-constrained,50,")));
  EXPECT_FALSE(grid->csv().contains(QStringLiteral("video-erm")));
  // It follows the lab: a new series appears as a panel of its own.
  grid->setMode(SmallMultiplesView::Mode::PerMetric);
  model.changeRun(text, [](RunData& run) { run.addScalar(QStringLiteral("sparsity"), 50, 0, 0.3); });
  ASSERT_TRUE(testing::waitUntil([&] { return grid->panels().contains(QStringLiteral("sparsity")); }, 5000));
  EXPECT_EQ(grid->plot()->axisRects().size(), 5);
  // A second click brings the same window back.
  button->click();
  EXPECT_EQ(curves.findChildren<SmallMultiplesView*>().size(), 1);
}

// Issue 54: runs opened from files were named by their file's stem ("seed0", "seed0 (2)"), losing what told them
// apart. A run named by its config reads as its experiment and seed, and where others of that experiment and seed are
// open, the keys in which they differ.
TEST(LabModelNamesTest, RunsReadFromFilesAreNamedByTheirConfig) {
  LabModel model;
  const auto open = [&](const QString& stem, const QMap<QString, QString>& config) {
    auto run = std::make_unique<RunData>();
    run->name = stem;
    run->path = QStringLiteral("/study/") + stem + QStringLiteral(".h5");
    run->config = config;
    run->nameFromConfig = true;
    return model.addRun(std::move(run))->id;
  };
  const QString adamw =
      open(QStringLiteral("seed0"),
           {{"name", "vit-quick"}, {"optimizer.name", "adamw"}, {"train.seed", "0"}, {"train.lr", "0.001"}});
  EXPECT_EQ(model.run(adamw)->name, QStringLiteral("vit-quick seed 0"));
  const QString horst =
      open(QStringLiteral("seed0"),
           {{"name", "vit-quick"}, {"optimizer.name", "horst"}, {"train.seed", "0"}, {"train.lr", "0.001"}});
  EXPECT_EQ(model.run(adamw)->name, QStringLiteral("vit-quick seed 0, optimizer adamw"));
  EXPECT_EQ(model.run(horst)->name, QStringLiteral("vit-quick seed 0, optimizer horst"));
  const QString seed1 =
      open(QStringLiteral("seed1"),
           {{"name", "vit-quick"}, {"optimizer.name", "horst"}, {"train.seed", "1"}, {"train.lr", "0.001"}});
  EXPECT_EQ(model.run(seed1)->name, QStringLiteral("vit-quick seed 1"));
  // A copy alike in every key keeps a number; the others keep theirs.
  const QString copy =
      open(QStringLiteral("seed0"),
           {{"name", "vit-quick"}, {"optimizer.name", "horst"}, {"train.seed", "0"}, {"train.lr", "0.001"}});
  EXPECT_EQ(model.run(copy)->name, QStringLiteral("vit-quick seed 0, optimizer horst (2)"));
  EXPECT_EQ(model.run(adamw)->name, QStringLiteral("vit-quick seed 0, optimizer adamw"));
  EXPECT_EQ(model.run(horst)->name, QStringLiteral("vit-quick seed 0, optimizer horst"));
  // Issue 55: a branch reads as its parent's experiment and seed, what it changed and where.
  auto branch = std::make_unique<RunData>();
  branch->path = QStringLiteral("/study/child.h5");
  branch->config = {{"name", "vit-quick"}, {"optimizer.name", "adamw"}, {"train.seed", "0"}, {"train.lr", "0.0005"}};
  branch->nameFromConfig = true;
  branch->branchChanges = QStringLiteral("train.lr 0.001 -> 0.0005; train.epochs 2 -> 4");
  branch->branchStep = 200;
  EXPECT_EQ(model.addRun(std::move(branch))->name, QStringLiteral("vit-quick seed 0 › lr 0.0005, epochs 4 @ step 200"));
  EXPECT_EQ(model.run(adamw)->name, QStringLiteral("vit-quick seed 0, optimizer adamw"));
  // A run the lab started keeps the name it was given.
  auto started = std::make_unique<RunData>();
  started->name = QStringLiteral("my run");
  started->config = {{"name", "vit-quick"}, {"train.seed", "0"}};
  EXPECT_EQ(model.addRun(std::move(started))->name, QStringLiteral("my run"));
}

// The runs table's config columns: the keys whose values differ between the runs, kept up to date as runs are added
// (extended run by run), removed (made again) or changed (a config replaced through changeRun).
TEST(LabModelKeysTest, DifferingKeysFollowAddedRemovedAndChangedRuns) {
  LabModel model;
  const auto add = [&](const QString& name, const QMap<QString, QString>& config) {
    auto run = std::make_unique<RunData>();
    run->name = name;
    run->config = config;
    return model.addRun(std::move(run))->id;
  };
  const QString a = add(QStringLiteral("a"), {{"name", "a"}, {"train.lr", "0.1"}, {"train.seed", "0"}});
  EXPECT_TRUE(model.differingKeys().isEmpty());
  const QString b = add(QStringLiteral("b"), {{"name", "b"}, {"train.lr", "0.1"}, {"train.seed", "1"}});
  EXPECT_EQ(model.differingKeys(), QStringList({"train.seed"}));  // "name" is the table's first column already
  // A key only the new run has, and one it lacks: both differ from the first run's "(unset)" or value.
  const QString c = add(QStringLiteral("c"), {{"name", "c"}, {"train.seed", "0"}, {"optimizer.alpha", "5"}});
  EXPECT_EQ(model.differingKeys(), QStringList({"optimizer.alpha", "train.lr", "train.seed"}));
  model.removeRun(c);
  EXPECT_EQ(model.differingKeys(), QStringList({"train.seed"}));
  model.changeRun(b, [](RunData& run) { run.config[QStringLiteral("train.seed")] = QStringLiteral("0"); });
  EXPECT_TRUE(model.differingKeys().isEmpty());
  model.removeRun(a);
  EXPECT_TRUE(model.differingKeys().isEmpty());
}

}  // namespace
}  // namespace descentlab
