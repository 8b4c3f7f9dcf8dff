// Issue 35 item 3: runs grouped across seeds in every view. Hand-made runs with closed-form values, 3 optimizers x 4
// seeds with seed 3 cut short, grouped by core/study's grouping (app/gui/study_backend): each view's group bands are
// checked numerically (mean, min-max and ±1 s.d. bands, the steps all members reached), a hidden run leaves its
// group, and each view's CSV exports the groups it draws.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>

#include "app/gui/study_backend.h"
#include "widgets/experiment_panel.h"
#include "widgets/frontier_view.h"
#include "widgets/histogram_statistics.h"
#include "widgets/hyperparameter_view.h"
#include "widgets/lab_model.h"
#include "widgets/lambda_view.h"
#include "widgets/layer_loss_view.h"
#include "widgets/robustness_view.h"
#include "widgets/runs_table.h"
#include "widgets/training_curves_view.h"
#include "widgets/weight_geometry_view.h"

namespace descentlab {
namespace {

using widgets::GroupBand;
using widgets::LabModel;
using widgets::RunData;
using widgets::RunsTable;

const QStringList kOptimizers = {QStringLiteral("adamw"), QStringLiteral("horst"), QStringLiteral("ham")};
constexpr int kSeeds = 4;
int evaluations(int seed) {
  return seed == 3 ? 5 : 8;  // seed 3 stops early
}
double accuracy(int o, int s, int e) {
  return 0.5 + 0.04 * e + 0.01 * o + 0.003 * s;
}
double layerLoss(int o, int s, int e, int layer) {
  return 2.0 - 0.3 * layer + 0.02 * o + 0.005 * s - 0.01 * e + (o == 0 && layer == 2 ? 0.4 : 0.0);
}
double lambda(int s, int e, int layer) {
  return 0.1 * layer + 0.01 * s + 0.001 * e;
}
double sweepValue(int o, int s, int g, int k) {
  return 0.9 - 0.1 * g - 0.01 * o - 0.001 * s + 0.0005 * k;
}
double frontier(int o, int s, int e, int level) {
  return 0.8 - 0.3 * level + 0.02 * o + 0.004 * s + 0.001 * e;
}
const QVector<double> kEdges = {0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
QVector<double> histogram(int o, int s) {
  return {100.0, 10.0 + s, 20.0 + 5 * o, 30.0 - s, 40.0};
}

// Sample standard deviation of the seeds' term 0.003 s over s = 0..2 (the steps all four reached hold seeds 0-3).
double mean(const QVector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / values.size();
}

class GroupViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.setGroupBackend(&backend_);
    for (int o = 0; o < 3; ++o) {
      for (int s = 0; s < kSeeds; ++s) {
        auto run = std::make_unique<RunData>();
        run->name = QStringLiteral("%1-seed%2").arg(kOptimizers[o]).arg(s);
        run->metric = QStringLiteral("accuracy");
        run->kind = widgets::RunKind::Sparse;
        run->config = {{QStringLiteral("name"), QStringLiteral("study")},
                       {QStringLiteral("optimizer.name"), kOptimizers[o]},
                       {QStringLiteral("train.seed"), QString::number(s)},
                       {QStringLiteral("data.split_seed"), QString::number(s)},
                       {QStringLiteral("train.lr"), QStringLiteral("0.001")}};
        for (int e = 1; e <= evaluations(s); ++e) {
          const int64_t step = 10 * e;
          run->addScalar(QStringLiteral("test_accuracy"), step, 0, accuracy(o, s, e));
          run->addVector(QStringLiteral("test_layer_loss"), step,
                         {layerLoss(o, s, e, 0), layerLoss(o, s, e, 1), layerLoss(o, s, e, 2)});
          run->addVector(QStringLiteral("lambda"), step, {lambda(s, e, 0), lambda(s, e, 1)});
          run->addVector(QStringLiteral("frontier_sparsity"), step, {0.5, 0.9});
          run->addVector(QStringLiteral("frontier_accuracy"), step, {frontier(o, s, e, 0), frontier(o, s, e, 1)});
        }
        run->addHistogram(QStringLiteral("global"), 10 * evaluations(s), kEdges, histogram(o, s));
        widgets::SweepTrack sweep;
        sweep.noise = QStringLiteral("gaussian");
        sweep.metric = QStringLiteral("accuracy");
        sweep.gamma = {0.0, 1.0, 2.0};
        sweep.seeds = 2;
        for (int g = 0; g < 3; ++g) {
          for (int k = 0; k < 2; ++k) sweep.values.push_back(sweepValue(o, s, g, k));
        }
        run->setSweep(QStringLiteral("gaussian"), sweep);
        model_.addRun(std::move(run));
      }
    }
    model_.setGrouping(true);
  }
  template <class View>
  void show(View& view) {
    view.resize(900, 600);
    view.show();
    view.refresh(true);
  }
  // The group of optimizer o among `bands`.
  static const GroupBand& bandOf(const QVector<GroupBand>& bands, int o) {
    for (const auto& band : bands) {
      if (band.group->label.contains(QStringLiteral(" %1 ").arg(kOptimizers[o]))) return band;
    }
    ADD_FAILURE() << "no group for " << kOptimizers[o].toStdString();
    static const GroupBand none;
    return none;
  }

  gui::StudyBackendImpl backend_;
  LabModel model_;
};

TEST_F(GroupViewsTest, GroupsAreMadeBySeedlessKeysAndLeaveHiddenRunsOut) {
  ASSERT_EQ(model_.groups().size(), 3);
  for (int o = 0; o < 3; ++o) {
    const auto& group = model_.groups()[o];
    EXPECT_EQ(group.label, QStringLiteral("name %1 (4 seeds)").arg(kOptimizers[o]));
    EXPECT_EQ(group.members.size(), kSeeds);
  }
  model_.setRunVisible(model_.runAt(1)->id, false);  // adamw seed 1
  EXPECT_EQ(model_.groups()[0].label, QStringLiteral("name adamw (3 of 4 seeds)"));
  EXPECT_EQ(model_.groups()[0].members.size(), 3);
  EXPECT_EQ(model_.groups()[0].hiddenMembers.size(), 1);
  EXPECT_EQ(model_.groupOf(model_.runAt(1)), nullptr);
  model_.setGrouping(true, {QStringLiteral("train.seed")});
  EXPECT_EQ(model_.groups().size(), 4) << "grouped by the seed: one group per seed";
  model_.setGrouping(false);
  EXPECT_TRUE(model_.groups().isEmpty());
}

// Issue 54: in grouped mode the runs table's swatches (one colour per run) contradicted the views' group colours.
TEST_F(GroupViewsTest, TheRunsTableShowsEachRunInItsGroupsColour) {
  QWidget window;
  RunsTable table(model_, &window);
  table.resize(900, 400);
  table.show();
  table.refresh();
  ASSERT_EQ(table.rowCount(), model_.count());
  const auto swatchOf = [&](int row) { return table.item(row, 0)->data(Qt::UserRole + 1).value<QColor>(); };
  for (int row = 0; row < table.rowCount(); ++row) {
    const RunData* run = model_.run(table.item(row, 0)->data(Qt::UserRole).toString());
    ASSERT_NE(model_.groupOf(run), nullptr);
    EXPECT_EQ(swatchOf(row), model_.groupOf(run)->colour) << run->name.toStdString();
  }
  EXPECT_NE(swatchOf(1), model_.runAt(1)->colour) << "the second run's own colour is not its group's";
  // Runs drawn one by one again: each its own colour.
  model_.setGrouping(false);
  table.invalidate();
  table.refresh();
  for (int row = 0; row < table.rowCount(); ++row) {
    const RunData* run = model_.run(table.item(row, 0)->data(Qt::UserRole).toString());
    EXPECT_EQ(swatchOf(row), run->colour) << run->name.toStdString();
  }
}

// Issue 54 item 5: the Runs table gets the study's filter field, and a key no run has is said, with the nearest.
TEST_F(GroupViewsTest, TheRunsTableFiltersAsTheStudyDoesAndNamesAKeyNoRunHas) {
  QWidget window;
  RunsTable table(model_, &window);
  table.resize(900, 400);
  table.show();
  table.refresh();
  QString said;
  int shownSaid = -1;
  QObject::connect(&table, &RunsTable::filtered, [&](int shown, int, const QString& message) {
    shownSaid = shown;
    said = message;
  });
  table.setFilterText(QStringLiteral("optimizer.name=horst"));
  EXPECT_EQ(table.shownRows(), kSeeds);
  EXPECT_EQ(shownSaid, kSeeds);
  EXPECT_TRUE(said.isEmpty()) << said.toStdString();
  for (int row = 0; row < table.rowCount(); ++row) {
    if (table.isRowHidden(row)) continue;
    EXPECT_EQ(model_.run(table.item(row, 0)->data(Qt::UserRole).toString())->config.value("optimizer.name"),
              QStringLiteral("horst"));
  }
  table.setFilterText(QStringLiteral("optimiser.name=horst"));
  EXPECT_EQ(table.shownRows(), 0);
  EXPECT_TRUE(said.contains(QStringLiteral("no run has the key \"optimiser.name\" (nearest: optimizer.name")))
      << said.toStdString();
  // A filter kept while the table refreshes; text matches names, comparisons final values.
  table.setFilterText(QStringLiteral("seed1 test_accuracy>0"));
  table.invalidate();
  table.refresh();
  EXPECT_EQ(table.shownRows(), 3);  // one seed-1 run per optimizer
  table.setFilterText(QString());
  EXPECT_EQ(table.shownRows(), model_.count());
  EXPECT_TRUE(said.isEmpty());
}

TEST_F(GroupViewsTest, TrainingCurvesDrawEachGroupsMeanAndBandOverTheStepsAllReached) {
  widgets::TrainingCurvesView view(&model_, QStringLiteral("Test metric"), QStringLiteral("@test"));
  view.setSmoothing(0);
  show(view);
  const auto bands = view.groupBands();
  ASSERT_EQ(bands.size(), 3);
  for (int o = 0; o < 3; ++o) {
    const GroupBand& band = bandOf(bands, o);
    ASSERT_EQ(band.steps.size(), 5) << "the steps every member reached: seed 3 stops at step 50";
    EXPECT_TRUE(band.shortened);
    EXPECT_EQ(band.longestStep, 80);
    EXPECT_EQ(band.members, 4);
    for (int e = 1; e <= 5; ++e) {
      QVector<double> seeds;
      for (int s = 0; s < kSeeds; ++s) seeds << accuracy(o, s, e);
      EXPECT_NEAR(band.mean[e - 1], mean(seeds), 1e-12);
      EXPECT_NEAR(band.low[e - 1], accuracy(o, 0, e), 1e-12);
      EXPECT_NEAR(band.high[e - 1], accuracy(o, 3, e), 1e-12);
    }
  }
  EXPECT_TRUE(widgets::bandNote(bands[0]).contains(QStringLiteral("all 4 runs reached (to 50")));
  // Drawn: a mean per group in the legend, named with its count.
  QStringList legend;
  for (int i = 0; i < view.plot()->legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(view.plot()->legend->item(i)))
      legend << item->plottable()->name();
  }
  EXPECT_EQ(legend.size(), 3) << legend.join(QStringLiteral(" | ")).toStdString();
  EXPECT_TRUE(legend.contains(QStringLiteral("name horst (4 seeds)")));
  // ±1 standard deviation: seeds 0..3 of 0.003 s have a sample s.d. of 0.003 * 1.29099.
  model_.setBandKind(record::BandKind::StandardDeviation);
  const GroupBand deviation = bandOf(view.groupBands(), 1);
  EXPECT_NEAR(deviation.high[0] - deviation.mean[0], 0.003 * std::sqrt(5.0 / 3.0), 1e-12);
  // The export is what is drawn: the groups.
  const QString csv = view.csv();
  EXPECT_TRUE(csv.startsWith(QStringLiteral("group,runs,metric,step,mean,low,high\n"))) << csv.left(80).toStdString();
  EXPECT_EQ(csv.count(QLatin1Char('\n')), 1 + 3 * 5);
}

TEST_F(GroupViewsTest, PerLayerLossAndLambdaDrawTheGroupsBands) {
  widgets::LayerLossView layers(&model_);
  show(layers);
  const auto bands = layers.groupBands();
  ASSERT_EQ(bands.size(), 3);
  const GroupBand& adamw = bandOf(bands, 0);
  EXPECT_EQ(adamw.atStep, 50) << "the last evaluation all members reached";
  ASSERT_EQ(adamw.steps, (QVector<double>{0, 1, 2}));
  for (int layer = 0; layer < 3; ++layer) {
    QVector<double> seeds;
    for (int s = 0; s < kSeeds; ++s) seeds << layerLoss(0, s, 5, layer);
    EXPECT_NEAR(adamw.mean[layer], mean(seeds), 1e-12);
    EXPECT_NEAR(adamw.low[layer], layerLoss(0, 0, 5, layer), 1e-12);
    EXPECT_NEAR(adamw.high[layer], layerLoss(0, 3, 5, layer), 1e-12);
  }
  layers.setMode(QStringLiteral("change"));
  const GroupBand change = bandOf(layers.groupBands(), 0);
  ASSERT_EQ(change.steps, (QVector<double>{1, 2}));
  EXPECT_NEAR(change.mean[1], 0.1, 1e-12) << "adamw's rise at layer 2: descent breaks, for every seed";
  EXPECT_TRUE(layers.csv().startsWith(QStringLiteral("group,runs,series,step,layer,mean,low,high\n")));

  widgets::LambdaView lambdas(&model_);
  show(lambdas);
  model_.setFocusRun(model_.runAt(5)->id);  // horst seed 1
  const GroupBand focus = lambdas.focusGroupBand();
  ASSERT_NE(focus.group, nullptr);
  EXPECT_EQ(focus.group->label, QStringLiteral("name horst (4 seeds)"));
  ASSERT_EQ(focus.width, 2);
  ASSERT_EQ(focus.steps.size(), 5);
  EXPECT_NEAR(focus.mean[4 * 2 + 1], 0.1 + 0.01 * 1.5 + 0.005, 1e-12);
  EXPECT_NEAR(focus.low[4 * 2 + 1], lambda(0, 5, 1), 1e-12);
  EXPECT_NEAR(focus.high[4 * 2 + 1], lambda(3, 5, 1), 1e-12);
  EXPECT_TRUE(lambdas.csv().startsWith(QStringLiteral("group,runs,series,step,layer,mean,low,high\n")));
}

TEST_F(GroupViewsTest, RobustnessFrontierAndWeightGeometryDrawTheGroupsBands) {
  widgets::RobustnessView robustness(&model_);
  show(robustness);
  const GroupBand ham = bandOf(robustness.groupBands(), 2);
  ASSERT_EQ(ham.steps, (QVector<double>{0, 1, 2})) << "x is the noise strength";
  for (int g = 0; g < 3; ++g) {
    QVector<double> seeds;
    for (int s = 0; s < kSeeds; ++s) seeds << (sweepValue(2, s, g, 0) + sweepValue(2, s, g, 1)) / 2;
    EXPECT_NEAR(ham.mean[g], mean(seeds), 1e-12);
    EXPECT_NEAR(ham.low[g], seeds[3], 1e-12);
    EXPECT_NEAR(ham.high[g], seeds[0], 1e-12);
  }
  EXPECT_TRUE(robustness.csv().startsWith(QStringLiteral("group,runs,noise,metric,gamma,mean,low,high\n")));

  widgets::FrontierView frontierView(&model_);
  show(frontierView);
  const GroupBand horst = bandOf(frontierView.groupBands(), 1);
  ASSERT_EQ(horst.columns, (QVector<double>{0.5, 0.9}));
  ASSERT_EQ(horst.steps.size(), 5);
  EXPECT_NEAR(horst.mean[4 * 2 + 1], frontier(1, 0, 5, 1) + 0.004 * 1.5, 1e-12);
  EXPECT_NEAR(horst.high[4 * 2 + 1], frontier(1, 3, 5, 1), 1e-12);
  EXPECT_TRUE(frontierView.csv().startsWith(QStringLiteral("group,runs,metric,step,sparsity,mean,low,high\n")));

  widgets::WeightGeometryView geometry(&model_);
  geometry.setMode(widgets::WeightGeometryView::Mode::Cumulative);
  show(geometry);
  const GroupBand adamw = bandOf(geometry.groupBands(), 0);
  ASSERT_FALSE(adamw.steps.isEmpty());
  // The mean of the members' cumulative shares at each |w|.
  for (int point = 0; point < adamw.steps.size(); ++point) {
    QVector<double> seeds;
    for (int s = 0; s < kSeeds; ++s) {
      const auto cumulative = widgets::keptCumulative(kEdges, histogram(0, s));
      const auto at = cumulative.edges.indexOf(adamw.steps[point]);
      ASSERT_GE(at, 0);
      seeds << cumulative.shares[at];
    }
    EXPECT_NEAR(adamw.mean[point], mean(seeds), 1e-12);
  }
}

// Issue 35 item 8: one CSV export (widgets/csv_table.h) serves every view. Each view's table is what it draws: a group
// as one row per cell of its band, in the same shape everywhere, with values that read back exactly; ungrouped, a
// hidden run is in no view's table.
QVector<QStringList> parseCsv(const QString& text) {
  QVector<QStringList> rows;
  QStringList row;
  QString field;
  bool quoted = false;
  for (int i = 0; i < text.size(); ++i) {
    const QChar c = text[i];
    if (quoted) {
      if (c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"')) {
        field += c;
        ++i;
      } else if (c == QLatin1Char('"')) {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == QLatin1Char('"')) {
      quoted = true;
    } else if (c == QLatin1Char(',')) {
      row << field;
      field.clear();
    } else if (c == QLatin1Char('\n')) {
      rows.push_back(row << field);
      row.clear();
      field.clear();
    } else {
      field += c;
    }
  }
  return rows;
}

TEST(CsvTableTest, FieldsAreQuotedWhereNeededAndEveryRowHasTheHeadersWidth) {
  widgets::CsvTable table({QStringLiteral("run"), QStringLiteral("value")});
  table.add({QStringLiteral("vit, alpha \"5\""), QStringLiteral("0.5")});
  table.add({QStringLiteral("plain"), QString()});
  EXPECT_EQ(table.rows(), 2);
  const QVector<QStringList> rows = parseCsv(table.text());
  ASSERT_EQ(rows.size(), 3);
  EXPECT_EQ(rows[1], (QStringList{QStringLiteral("vit, alpha \"5\""), QStringLiteral("0.5")}));
  EXPECT_EQ(rows[2], (QStringList{QStringLiteral("plain"), QString()}));
}

// A click on a group's legend entry hides the whole group in every view; its entry stays, struck out, and a second
// click shows it again. The other groups keep their members and colours.
TEST_F(GroupViewsTest, ALegendClickHidesAGroupAndASecondClickShowsIt) {
  widgets::TrainingCurvesView view(&model_, QStringLiteral("Test metric"), QStringLiteral("@test"));
  show(view);
  auto* plot = view.plot();
  const auto entryOf = [plot](const QString& startsWith) -> QCPPlottableLegendItem* {
    plot->replot();
    QApplication::processEvents();
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
      if (item && item->plottable()->name().startsWith(startsWith)) return item;
    }
    return nullptr;
  };
  const QColor horstColour = model_.groups()[1].colour;
  auto* adamw = entryOf(QStringLiteral("name adamw"));
  ASSERT_NE(adamw, nullptr);
  QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, adamw->rect().center());
  for (int s = 0; s < kSeeds; ++s) EXPECT_FALSE(model_.runAt(s)->visible) << "adamw seed " << s;
  EXPECT_TRUE(model_.runAt(kSeeds)->visible);
  ASSERT_EQ(model_.groups().size(), 3) << "hiding runs changes neither the groups nor their colours";
  EXPECT_TRUE(model_.groups()[0].hidden());
  EXPECT_EQ(model_.groups()[1].colour, horstColour);
  view.refresh();
  EXPECT_EQ(view.groupBands().size(), 2) << "a hidden group draws nothing";
  adamw = entryOf(QStringLiteral("name adamw"));
  ASSERT_NE(adamw, nullptr) << "a hidden group keeps its legend entry, to be clicked back on";
  EXPECT_TRUE(adamw->font().strikeOut());
  EXPECT_EQ(plot->legend->item(0), adamw) << "in its place: a second click where the first was shows it again";
  EXPECT_TRUE(view.csv().indexOf(QStringLiteral("name adamw")) < 0) << "nor is it exported";
  QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, adamw->rect().center());
  for (int s = 0; s < kSeeds; ++s) EXPECT_TRUE(model_.runAt(s)->visible);
  view.refresh();
  EXPECT_EQ(view.groupBands().size(), 3);
}

TEST_F(GroupViewsTest, EveryViewsExportIsTheOneTableOfWhatItDraws) {
  widgets::TrainingCurvesView curves(&model_, QStringLiteral("Test metric"), QStringLiteral("@test"));
  widgets::LayerLossView layers(&model_);
  widgets::LambdaView lambdas(&model_);
  widgets::RobustnessView robustness(&model_);
  widgets::FrontierView frontierView(&model_);
  show(curves);
  show(layers);
  show(lambdas);
  show(robustness);
  show(frontierView);
  struct Exported {
    const char* name;
    widgets::PlotView* view;
    QVector<GroupBand> bands;
  };
  const QVector<Exported> views = {{"curves", &curves, curves.groupBands()},
                                   {"per-layer", &layers, layers.groupBands()},
                                   {"lambda", &lambdas, {lambdas.focusGroupBand()}},
                                   {"robustness", &robustness, robustness.groupBands()},
                                   {"frontier", &frontierView, frontierView.groupBands()}};
  for (const auto& exported : views) {
    SCOPED_TRACE(exported.name);
    const QVector<QStringList> rows = parseCsv(exported.view->csv());
    ASSERT_FALSE(rows.isEmpty());
    const QStringList& header = rows.front();
    ASSERT_GE(header.size(), 5);
    EXPECT_EQ(header.mid(0, 2), (QStringList{QStringLiteral("group"), QStringLiteral("runs")}));
    EXPECT_EQ(header.mid(header.size() - 3),
              (QStringList{QStringLiteral("mean"), QStringLiteral("low"), QStringLiteral("high")}));
    // One row per cell of every band drawn, each with its group's label and member count and the band's own values.
    int expected = 0;
    QVector<double> means;
    for (const auto& band : exported.bands) {
      ASSERT_NE(band.group, nullptr);
      expected += static_cast<int>(band.steps.size()) * band.width;
      means += band.mean;
    }
    ASSERT_EQ(rows.size(), 1 + expected);
    for (int i = 1; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].size(), header.size());
      EXPECT_TRUE(rows[i][0].contains(QStringLiteral("seeds)"))) << rows[i][0].toStdString();
      EXPECT_EQ(rows[i][1], QStringLiteral("4"));
      EXPECT_EQ(rows[i][header.size() - 3].toDouble(), means[i - 1]) << "the mean reads back exactly";
    }
  }

  // Ungrouped, with one run hidden: no view's table holds it (three views exported hidden runs before).
  model_.setGrouping(false);
  const RunData* hidden = model_.runAt(5);
  model_.setRunVisible(hidden->id, false);
  model_.setFocusRun(hidden->id);
  for (const auto& exported : views) {
    SCOPED_TRACE(exported.name);
    exported.view->refresh(true);
    const QVector<QStringList> rows = parseCsv(exported.view->csv());
    ASSERT_FALSE(rows.isEmpty());
    EXPECT_EQ(rows.front().front(), QStringLiteral("run"));
    EXPECT_GT(rows.size(), 1);
    for (const auto& row : rows) EXPECT_NE(row.front(), hidden->name);
  }
}

// Issue 35 item 5: a tuning grid (lr x alpha, two seeds) as the metric against a key, one point per run coloured by
// its group, log x for the rate; and as parallel coordinates.
TEST(HyperparameterViewTest, ATuningGridIsDrawnAgainstItsKeysAndAsParallelCoordinates) {
  const QVector<double> rates = {1e-4, 1e-3, 1e-2};
  const QVector<double> alphas = {1.0, 5.0};
  const auto score = [](int r, int a, int s) { return 0.6 + 0.1 * r - 0.02 * r * r + 0.03 * a + 0.001 * s; };
  QVector<widgets::StudyRunRow> rows;
  for (int r = 0; r < 3; ++r) {
    for (int a = 0; a < 2; ++a) {
      for (int s = 0; s < 2; ++s) {
        widgets::StudyRunRow row;
        row.name = QStringLiteral("lr%1-alpha%2-seed%3").arg(r).arg(a).arg(s);
        row.path = row.name + QStringLiteral(".h5");
        row.config = {{QStringLiteral("train.lr"), QString::number(rates[r])},
                      {QStringLiteral("optimizer.alpha"), QString::number(alphas[a])},
                      {QStringLiteral("train.seed"), QString::number(s)}};
        row.finals = {{QStringLiteral("val_accuracy"), score(r, a, s)}};
        rows << row;
      }
    }
  }
  gui::StudyBackendImpl backend;
  const QVector<bool> kept(rows.size(), true);
  const QStringList varying = backend.varyingKeys(rows);
  const auto groups = backend.group(rows, kept, backend.defaultGroupKeys(rows), QStringLiteral("val_accuracy"));
  ASSERT_EQ(groups.size(), 6);
  widgets::HyperparameterView view;
  view.resize(700, 400);
  view.show();
  view.setStudy(rows, kept, groups, varying, QStringLiteral("val_accuracy"));
  EXPECT_EQ(view.key(), QStringLiteral("optimizer.alpha")) << "the first differing key that is not a seed";
  EXPECT_FALSE(view.logX());
  view.setKey(QStringLiteral("train.lr"));
  EXPECT_TRUE(view.logX()) << "a rate gets a log x axis";
  EXPECT_EQ(view.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
  ASSERT_EQ(view.points().size(), 12);
  for (const auto& point : view.points()) {
    const int index = static_cast<int>(
        std::find_if(rows.begin(), rows.end(), [&](const auto& row) { return row.name == point.run; }) - rows.begin());
    ASSERT_LT(index, rows.size());
    EXPECT_EQ(point.x, rows[index].config.value(QStringLiteral("train.lr")).toDouble());
    EXPECT_EQ(point.y, rows[index].finals.value(QStringLiteral("val_accuracy")));
    EXPECT_TRUE(groups[point.group].members.contains(index)) << "coloured by its own group";
  }
  int graphs = 0;
  for (int i = 0; i < view.plot()->graphCount(); ++i) graphs += view.plot()->graph(i)->dataCount() == 2 ? 1 : 0;
  EXPECT_EQ(graphs, 6) << "one colour per group, each with its two seeds";
  // Issue 54: in the Study dock at 1280x800 (a plot about 90 px tall) seven tick labels ran together and the axis
  // label was cut. The ticks and the label follow the height.
  view.resize(700, 150);
  QApplication::processEvents();
  view.plot()->replot(QCustomPlot::rpImmediateRefresh);
  EXPECT_LE(view.plot()->yAxis->ticker()->tickCount(), 3);
  const QFontMetrics labelMetrics(view.plot()->yAxis->labelFont());
  EXPECT_LE(labelMetrics.horizontalAdvance(view.plot()->yAxis->label()),
            std::max(view.plot()->axisRect()->height(), view.plot()->height() - 70))
      << view.plot()->yAxis->label().toStdString();
  view.resize(700, 400);
  QApplication::processEvents();

  view.setMode(widgets::HyperparameterView::Mode::ParallelCoordinates);
  EXPECT_EQ(view.parallelAxes(), (QStringList{QStringLiteral("optimizer.alpha"), QStringLiteral("train.lr"),
                                              QStringLiteral("val_accuracy")}));
  ASSERT_EQ(view.lines().size(), 12);
  // lr0 alpha1 seed0 (run 2): alpha at the top, lr 1e-4 at the bottom of its log-scaled axis.
  EXPECT_NEAR(view.lines()[2][0], 1.0, 1e-12);
  EXPECT_NEAR(view.lines()[2][1], 0.0, 1e-12);
  // lr 1e-3 is half-way between 1e-4 and 1e-2 on the log scale.
  for (const auto& line : view.lines()) {
    EXPECT_TRUE(std::abs(line[1] - 0.0) < 1e-12 || std::abs(line[1] - 0.5) < 1e-12 || std::abs(line[1] - 1.0) < 1e-12);
  }
}

TEST(SeedsTextTest, ListsAndRangesAreReadAndMistakesNamed) {
  QString error;
  EXPECT_EQ(widgets::parseSeeds(QStringLiteral("0,1,2"), &error), (QVector<int>{0, 1, 2}));
  EXPECT_EQ(widgets::parseSeeds(QStringLiteral("0-4"), &error), (QVector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(widgets::parseSeeds(QStringLiteral(" 0..2, 7, 1"), &error), (QVector<int>{0, 1, 2, 7}));
  EXPECT_TRUE(error.isEmpty()) << error.toStdString();
  EXPECT_TRUE(widgets::parseSeeds(QString(), &error).isEmpty());
  EXPECT_TRUE(widgets::parseSeeds(QStringLiteral("0,a"), &error).isEmpty());
  EXPECT_TRUE(error.contains(QStringLiteral("\"a\""))) << error.toStdString();
  error.clear();
  EXPECT_TRUE(widgets::parseSeeds(QStringLiteral("3-1"), &error).isEmpty());
  EXPECT_FALSE(error.isEmpty());
  error.clear();
  EXPECT_TRUE(widgets::parseSeeds(QStringLiteral("0-500"), &error).isEmpty());
  EXPECT_TRUE(error.contains(QStringLiteral("more than 100"))) << error.toStdString();
}

}  // namespace
}  // namespace descentlab
