// Tests of the weight-geometry view, fed with hand-made runs (see test_views_main.cpp): the statistics against
// numbers computed by hand, what is drawn in each mode, the heat map's run selector, the CSV, and the layout at the
// dock's size. DESCENTLAB_GEOMETRY_SHOTS=DIR writes the view as PNGs at each size checked.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMouseEvent>
#include <QTableWidget>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>

#include "app/gui/run_conversion.h"
#include "layout_check.h"
#include "widgets/histogram_statistics.h"
#include "widgets/lab_model.h"
#include "widgets/weight_geometry_view.h"

namespace descentlab {
namespace {

using widgets::WeightGeometryView;

// The edges core/eval/weight_histograms writes: 45 log-spaced bins from 1e-8 to 10, five a decade, so
// edges[20] = 1e-4, edges[25] = 1e-3, edges[30] = 1e-2, edges[35] = 1e-1. Bin 0 holds the zeros.
QVector<double> labEdges() {
  QVector<double> edges;
  for (int i = 0; i <= 45; ++i) edges.push_back(std::pow(10.0, -8.0 + 0.2 * i));
  return edges;
}

// Counts in the lab's 45 bins: {bin, count} pairs, everything else zero.
QVector<double> counts(std::initializer_list<std::pair<int, double>> filled) {
  QVector<double> result(45, 0.0);
  for (const auto& [bin, count] : filled) result[bin] = count;
  return result;
}

// Both runs start from the same dense initialisation (1000 weights around 1e-2..1e-1) and end 90 % sparse. AdamW
// keeps 100 weights spread evenly over [1e-2, 1e-1); HORST pulls its kept weights towards zero: 40 in [1e-4,
// 10^-3.8), 20 in [1e-3, 10^-2.8) and 40 in [1e-2, 10^-1.8).
const QVector<double> kStart = counts({{28, 125},
                                       {29, 125},
                                       {30, 125},
                                       {31, 125},  //
                                       {32, 125},
                                       {33, 125},
                                       {34, 125},
                                       {35, 125}});
const QVector<double> kAdamWEnd = counts({{0, 900}, {30, 20}, {31, 20}, {32, 20}, {33, 20}, {34, 20}});
const QVector<double> kHorstEnd = counts({{0, 900}, {20, 40}, {25, 20}, {30, 40}});
const QVector<double> kHamEnd = counts({{0, 900}, {24, 30}, {28, 40}, {33, 30}});

std::unique_ptr<widgets::RunData> makeRun(const QString& name, const QVector<double>& end) {
  auto run = std::make_unique<widgets::RunData>();
  run->name = name;
  run->addHistogram(QStringLiteral("global"), 0, labEdges(), kStart);
  run->addHistogram(QStringLiteral("global"), 100, labEdges(), end);
  run->addHistogram(QStringLiteral("blocks.0"), 0, labEdges(), kStart);
  run->addHistogram(QStringLiteral("blocks.0"), 100, labEdges(), end);
  return run;
}

struct Lab {
  widgets::LabModel model;
  const widgets::RunData* adamw = nullptr;
  const widgets::RunData* horst = nullptr;
  std::unique_ptr<QMainWindow> window = std::make_unique<QMainWindow>();
  WeightGeometryView* view = nullptr;

  explicit Lab(bool fourRuns = false) {
    adamw = model.addRun(makeRun(QStringLiteral("vit-adamw-quick"), kAdamWEnd));
    horst = model.addRun(makeRun(QStringLiteral("vit-horst-quick"), kHorstEnd));
    if (fourRuns) {
      model.addRun(makeRun(QStringLiteral("vit-ham-quick"), kHamEnd));
      model.addRun(makeRun(QStringLiteral("vit-adamw-quick seed 2"), kAdamWEnd));  // the same curve as AdamW
    }
    view = new WeightGeometryView(&model);
    window->setCentralWidget(view);
  }
  void show(QSize size) {
    window->resize(size);
    window->show();
    QApplication::processEvents();
    view->refresh(true);
    QApplication::processEvents();
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
  }
  // Lets queued work (a redraw the table's choice asked for) run, then draws.
  void settle() {
    for (int i = 0; i < 3; ++i) QApplication::processEvents();
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
  }
  QCPGraph* graphOf(const QString& name) const {
    for (int i = 0; i < view->plot()->graphCount(); ++i) {
      if (view->plot()->graph(i)->name() == name) return view->plot()->graph(i);
    }
    return nullptr;
  }
  // The readout under the plot (whole, as its tooltip) after the mouse moved to (x, y) of `rect`.
  QString hover(QCPAxisRect* rect, double x, double y) const {
    const QPointF position(rect->axis(QCPAxis::atBottom)->coordToPixel(x),
                           rect->axis(QCPAxis::atLeft)->coordToPixel(y));
    QMouseEvent move(QEvent::MouseMove, position, view->plot()->mapToGlobal(position), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(view->plot(), &move);
    for (auto* label : view->findChildren<QLabel*>()) {
      if (label->property("elides").toBool()) return label->toolTip();
    }
    return {};
  }
  int drawnGraphs() const {
    int drawn = 0;
    for (int i = 0; i < view->plot()->graphCount(); ++i) drawn += view->plot()->graph(i)->visible() ? 1 : 0;
    return drawn;
  }
  QCPColorMap* heatMap() const {
    for (int i = 0; i < view->plot()->plottableCount(); ++i) {
      if (auto* map = qobject_cast<QCPColorMap*>(view->plot()->plottable(i))) return map;
    }
    return nullptr;
  }
};

TEST(WeightGeometryStatistics, MatchHandComputedValues) {
  // Five decades, bin 0 the zeros: 50 zeros and 100 kept, 10 in [1e-4, 1e-3), 20, 30 and 40 in the next decades.
  const QVector<double> edges = {1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
  const QVector<double> histogram = {50, 10, 20, 30, 40};
  const auto statistics = widgets::histogramStatistics(edges, histogram);
  EXPECT_DOUBLE_EQ(statistics.total, 150);
  EXPECT_DOUBLE_EQ(statistics.kept, 100);
  EXPECT_NEAR(statistics.zeroShare, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(statistics.keptBelow1e3, 0.10, 1e-12);  // the first kept decade
  EXPECT_NEAR(statistics.keptBelow1e2, 0.30, 1e-12);
  // Half way into [1e-3, 1e-2) in log |w|: 10 + 20 / 2 of 100.
  EXPECT_NEAR(widgets::keptShareBelow(edges, histogram, std::pow(10.0, -2.5)), 0.20, 1e-12);
  // The median: 30 below 1e-2, 30 more in [1e-2, 1e-1): 20 of them, 2/3 of that decade.
  EXPECT_NEAR(statistics.median, std::pow(10.0, -2.0 + 2.0 / 3.0), 1e-12);
  EXPECT_NEAR(statistics.median, 0.0464159, 1e-7);
  EXPECT_NEAR(statistics.p90, std::pow(10.0, -0.25), 1e-12);   // 60 below 1e-1, 30 of the last 40
  EXPECT_NEAR(statistics.p99, std::pow(10.0, -0.025), 1e-12);  // 39 of the last 40
  const auto cumulative = widgets::keptCumulative(edges, histogram);
  EXPECT_EQ(cumulative.edges, (QVector<double>{1e-4, 1e-3, 1e-2, 1e-1, 1.0}));
  EXPECT_EQ(cumulative.shares, (QVector<double>{0.0, 0.1, 0.3, 0.6, 1.0}));
  EXPECT_EQ(widgets::keptShares(histogram), (QVector<double>{0.1, 0.2, 0.3, 0.4}));
  // Nothing kept: the shares among kept weights are undefined, not zero.
  const auto pruned = widgets::histogramStatistics(edges, {80, 0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(pruned.zeroShare, 1.0);
  EXPECT_TRUE(std::isnan(pruned.keptBelow1e3));
  EXPECT_TRUE(std::isnan(pruned.median));
  EXPECT_TRUE(widgets::keptCumulative(edges, {80, 0, 0, 0, 0}).edges.isEmpty());
}

TEST(WeightGeometryView, TableGivesEachRunsSparsityKeptSharesAndQuantiles) {
  Lab lab;
  lab.show(QSize(1400, 500));
  QTableWidget* table = lab.view->statisticsTable();
  ASSERT_EQ(table->rowCount(), 2);
  const auto value = [&](int row, int column) { return table->item(row, column)->data(Qt::UserRole).toDouble(); };
  const auto text = [&](int row, int column) { return table->item(row, column)->text().toStdString(); };
  // AdamW (row 0): 900 zeros of 1000; its 100 kept weights 20 a bin over [1e-2, 1e-1).
  EXPECT_EQ(text(0, 0), "vit-adamw-quick");
  EXPECT_EQ(text(0, 1), "100");
  EXPECT_EQ(text(0, 2), "90.0 %");
  EXPECT_NEAR(value(0, 3), 0.0, 1e-9);
  EXPECT_NEAR(value(0, 4), 0.0, 1e-9);
  EXPECT_NEAR(value(0, 5), std::pow(10.0, -1.5), 1e-9);   // 40 below 10^-1.6, 10 of the next bin's 20
  EXPECT_NEAR(value(0, 6), std::pow(10.0, -1.1), 1e-9);   // 80 below 10^-1.2, 10 of the last 20
  EXPECT_NEAR(value(0, 7), std::pow(10.0, -1.01), 1e-9);  // 19 of the last 20
  EXPECT_EQ(text(0, 3), "0.0 %");
  EXPECT_EQ(text(0, 5), "3.16e-2");
  EXPECT_EQ(text(0, 6), "7.94e-2");
  EXPECT_EQ(text(0, 7), "9.77e-2");
  // HORST (row 1): as sparse, but 40 % of its kept weights are below 1e-3 and 60 % below 1e-2.
  EXPECT_EQ(text(1, 0), "vit-horst-quick");
  EXPECT_EQ(text(1, 2), "90.0 %");
  EXPECT_NEAR(value(1, 3), 0.4, 1e-9);
  EXPECT_NEAR(value(1, 4), 0.6, 1e-9);
  EXPECT_EQ(text(1, 3), "40.0 %");
  EXPECT_EQ(text(1, 4), "60.0 %");
  EXPECT_NEAR(value(1, 5), std::pow(10.0, -2.9), 1e-12);   // 40 below, 10 of the 20 in [1e-3, 10^-2.8)
  EXPECT_NEAR(value(1, 6), std::pow(10.0, -1.85), 1e-12);  // 60 below, 30 of the 40 in [1e-2, 10^-1.8)
  EXPECT_NEAR(value(1, 7), std::pow(10.0, -1.805), 1e-12);
  EXPECT_EQ(text(1, 5), "1.26e-3");
  EXPECT_EQ(text(1, 6), "1.41e-2");
  EXPECT_EQ(text(1, 7), "1.57e-2");
  // Every number whole in its column (the run names may elide, never the numbers).
  for (int row = 0; row < table->rowCount(); ++row) {
    for (int column = 1; column < table->columnCount(); ++column) {
      const int needed = table->fontMetrics().horizontalAdvance(table->item(row, column)->text());
      EXPECT_LE(needed, table->columnWidth(column)) << row << ", " << column;
    }
  }
  // A layer's histograms are a group of their own, with the same numbers here.
  lab.view->setGroup(QStringLiteral("blocks.0"));
  EXPECT_NEAR(table->item(1, 3)->data(Qt::UserRole).toDouble(), 0.4, 1e-9);
}

TEST(WeightGeometryView, CumulativeModeDrawsOneMonotoneCurvePerVisibleRunEndingAtOne) {
  Lab lab;
  lab.show(QSize(1400, 500));
  EXPECT_EQ(lab.view->mode(), WeightGeometryView::Mode::Cumulative);  // the default for two runs
  ASSERT_EQ(lab.view->plot()->graphCount(), 2);
  for (auto* run : {lab.adamw, lab.horst}) {
    QCPGraph* graph = lab.graphOf(run->name);
    ASSERT_NE(graph, nullptr);
    ASSERT_EQ(graph->dataCount(), 45);  // edges[1] .. edges[45]
    EXPECT_DOUBLE_EQ(graph->data()->at(0)->value, 0.0);
    for (int i = 1; i < graph->dataCount(); ++i) {
      EXPECT_GT(graph->data()->at(i)->key, graph->data()->at(i - 1)->key);
      EXPECT_GE(graph->data()->at(i)->value, graph->data()->at(i - 1)->value);
    }
    EXPECT_DOUBLE_EQ((graph->data()->constEnd() - 1)->value, 1.0);
    EXPECT_EQ(graph->pen().color(), run->colour);
  }
  // At a glance: at 1e-3 (edges[25], point 24) HORST's curve has risen to 0.4, AdamW's is still at 0.
  EXPECT_NEAR(lab.graphOf(lab.horst->name)->data()->at(24)->value, 0.4, 1e-12);
  EXPECT_NEAR(lab.graphOf(lab.adamw->name)->data()->at(24)->value, 0.0, 1e-12);
  // Hovering at |w| = 10^-3.5 reads each run's share below it.
  const QString readout = lab.hover(lab.view->plot()->axisRect(0), std::pow(10.0, -3.5), 0.5);
  EXPECT_TRUE(readout.startsWith(QStringLiteral("kept |w| < 3."))) << readout.toStdString();
  EXPECT_TRUE(readout.contains(QStringLiteral("vit-adamw-quick 0.0 %"))) << readout.toStdString();
  EXPECT_TRUE(readout.contains(QStringLiteral("vit-horst-quick 40.0 %"))) << readout.toStdString();

  // A hidden run is neither drawn nor in the table (its legend entry stays, struck out, to click it back on); one
  // run left, the default becomes the histogram.
  lab.model.setRunVisible(lab.horst->id, false);
  lab.view->refresh();
  EXPECT_EQ(lab.drawnGraphs(), 1);
  ASSERT_NE(lab.graphOf(lab.horst->name), nullptr);
  EXPECT_FALSE(lab.graphOf(lab.horst->name)->visible());
  EXPECT_EQ(lab.graphOf(lab.horst->name)->property("runId").toString(), lab.horst->id);
  EXPECT_TRUE(lab.view->plot()->legend->itemWithPlottable(lab.graphOf(lab.horst->name))->font().strikeOut());
  EXPECT_EQ(lab.view->statisticsTable()->rowCount(), 1);
  EXPECT_EQ(lab.view->mode(), WeightGeometryView::Mode::Histogram);
  QCPGraph* histogram = lab.graphOf(lab.adamw->name);
  ASSERT_NE(histogram, nullptr);
  ASSERT_EQ(histogram->dataCount(), 44);                                     // bins 1 .. 44, the zeros left out
  EXPECT_NEAR(histogram->data()->at(29)->value, 0.2, 1e-12);                 // bin 30: 20 of 100 kept
  EXPECT_NEAR(histogram->data()->at(29)->key, std::pow(10.0, -1.9), 1e-12);  // drawn at the bin's centre
  // A choice the user made stays when the number of runs changes.
  lab.view->setMode(WeightGeometryView::Mode::Cumulative);
  lab.model.setRunVisible(lab.horst->id, true);
  lab.view->refresh();
  lab.model.setRunVisible(lab.adamw->id, false);
  lab.view->refresh();
  EXPECT_EQ(lab.view->mode(), WeightGeometryView::Mode::Cumulative);
  EXPECT_EQ(lab.drawnGraphs(), 1);
  EXPECT_TRUE(lab.graphOf(lab.horst->name)->visible());
  EXPECT_FALSE(lab.graphOf(lab.adamw->name)->visible());
}

TEST(WeightGeometryView, IdenticalRunsStayDistinguishable) {
  Lab lab(/*fourRuns=*/true);
  lab.show(QSize(1400, 500));
  ASSERT_EQ(lab.view->plot()->graphCount(), 4);
  const QCPGraph* first = lab.graphOf(QStringLiteral("vit-adamw-quick"));
  const QCPGraph* copy = lab.graphOf(QStringLiteral("vit-adamw-quick seed 2"));
  ASSERT_TRUE(first && copy);
  EXPECT_EQ(first->pen().style(), Qt::SolidLine);
  EXPECT_NE(copy->pen().style(), Qt::SolidLine);  // drawn over the first, dashed: both visible
  EXPECT_EQ(lab.graphOf(QStringLiteral("vit-ham-quick"))->pen().style(), Qt::SolidLine);
}

TEST(WeightGeometryView, HeatMapRunSelectorSwitchesRuns) {
  Lab lab;
  lab.model.setFocusRun(lab.horst->id);
  lab.show(QSize(1400, 500));
  auto* selector = lab.view->findChild<QComboBox*>(QStringLiteral("heatMapRun"));
  ASSERT_NE(selector, nullptr);
  EXPECT_EQ(selector->count(), 2);
  EXPECT_EQ(lab.view->heatMapRun(), lab.horst->id);  // the focus run until one is chosen
  EXPECT_EQ(selector->currentText(), lab.horst->name);
  QCPColorMap* map = lab.heatMap();
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->data()->keySize(), 2);     // the two snapshots
  EXPECT_EQ(map->data()->valueSize(), 45);  // the bins, zeros included
  // HORST's last snapshot: 40 of 1000 weights in bin 20, none in bin 33.
  EXPECT_NEAR(map->data()->cell(1, 20), std::log10(0.04), 1e-12);
  EXPECT_TRUE(std::isnan(map->data()->cell(1, 33)));
  const auto title = [&] {
    for (auto* element : lab.view->plot()->plotLayout()->elements(true)) {
      if (auto* text = qobject_cast<QCPTextElement*>(element)) return text;
    }
    return static_cast<QCPTextElement*>(nullptr);
  };
  ASSERT_NE(title(), nullptr);
  EXPECT_TRUE(title()->text().contains(lab.horst->name));
  // The title is a row of the layout above the heat map, not over its data.
  auto* heatRect = map->keyAxis()->axisRect();
  EXPECT_LE(title()->outerRect().bottom(), heatRect->outerRect().top() + 1);

  // Hovering a cell reads the run, the step, the bin and its share; the first bin is the zeros.
  const double binCentre = std::log10(std::sqrt(labEdges()[20] * labEdges()[21]));
  EXPECT_EQ(lab.hover(heatRect, 100, binCentre).toStdString(),
            "vit-horst-quick · step 100 · |w| 1.00e-4 – 1.58e-4: 4.0 % of all weights");
  EXPECT_EQ(lab.hover(heatRect, 100, -8.05).toStdString(),
            "vit-horst-quick · step 100 · |w| < 1.58e-8 (zeros): 90.0 % of all weights");

  selector->setCurrentIndex(selector->findData(lab.adamw->id));  // as the user would
  EXPECT_EQ(lab.view->heatMapRun(), lab.adamw->id);
  map = lab.heatMap();
  ASSERT_NE(map, nullptr);
  EXPECT_NEAR(map->data()->cell(1, 33), std::log10(0.02), 1e-12);  // AdamW: 20 of 1000 in bin 33
  EXPECT_TRUE(title()->text().contains(lab.adamw->name));
  // The user's choice stays when the focus moves; a run the user never chose follows it.
  lab.model.setFocusRun(lab.horst->id);
  lab.model.setFocusRun(lab.adamw->id);
  lab.model.setFocusRun(lab.horst->id);
  lab.view->refresh();
  EXPECT_EQ(lab.view->heatMapRun(), lab.adamw->id);
  EXPECT_TRUE(lab.view->setHeatMapRun(lab.horst->id));
  EXPECT_EQ(lab.view->heatMapRun(), lab.horst->id);
  EXPECT_FALSE(lab.view->setHeatMapRun(QStringLiteral("no such run")));
  // A hidden run can still be chosen for the heat map.
  lab.model.setRunVisible(lab.adamw->id, false);
  lab.view->refresh();
  EXPECT_TRUE(lab.view->setHeatMapRun(lab.adamw->id));
  EXPECT_NEAR(lab.heatMap()->data()->cell(1, 33), std::log10(0.02), 1e-12);
}

// Rows of the CSV whose first field is `plot`, by run: (abs_w_high, share) pairs.
QMap<QString, QVector<QPair<double, double>>> csvRows(const QString& csv, const QString& plot) {
  QMap<QString, QVector<QPair<double, double>>> rows;
  const QStringList lines = csv.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  EXPECT_EQ(lines.front().toStdString(), "plot,run,group,step,abs_w_low,abs_w_high,share");
  for (int i = 1; i < lines.size(); ++i) {
    const QStringList fields = lines[i].split(QLatin1Char(','));
    EXPECT_EQ(fields.size(), 7) << lines[i].toStdString();
    if (fields.size() != 7 || fields[0] != plot) continue;
    rows[fields[1]].push_back({fields[5].toDouble(), fields[6].toDouble()});
  }
  return rows;
}

TEST(WeightGeometryView, CsvHoldsExactlyWhatIsDrawn) {
  Lab lab;
  lab.show(QSize(1400, 500));
  for (const auto mode : {WeightGeometryView::Mode::Cumulative, WeightGeometryView::Mode::Histogram}) {
    lab.view->setMode(mode);
    const QString csv = lab.view->csv();
    const bool cumulative = mode == WeightGeometryView::Mode::Cumulative;
    const auto rows = csvRows(csv, cumulative ? QStringLiteral("cumulative") : QStringLiteral("histogram"));
    EXPECT_TRUE(csvRows(csv, cumulative ? QStringLiteral("histogram") : QStringLiteral("cumulative")).isEmpty());
    ASSERT_EQ(rows.size(), lab.drawnGraphs());
    for (auto it = rows.cbegin(); it != rows.cend(); ++it) {
      QCPGraph* graph = lab.graphOf(it.key());
      ASSERT_NE(graph, nullptr) << it.key().toStdString();
      ASSERT_EQ(it->size(), graph->dataCount());
      for (int i = 0; i < it->size(); ++i) {
        const auto point = graph->data()->at(i);
        // Cumulative: the point itself. Histogram: the bin whose centre is drawn, by its upper edge.
        const double x = cumulative ? point->key : point->key * std::pow(10.0, 0.1);
        EXPECT_NEAR((*it)[i].first / x, 1.0, 1e-6);
        EXPECT_NEAR((*it)[i].second, point->value, 1e-7);
      }
    }
    // The heat map's cells: one row per snapshot and bin, the shares (the map draws their log10).
    const auto heat = csvRows(csv, QStringLiteral("heat map"));
    ASSERT_EQ(heat.size(), 1);
    EXPECT_EQ(heat.first().size(), 2 * 45);
  }
  // Hidden runs leave the CSV as they leave the plot.
  lab.model.setRunVisible(lab.horst->id, false);
  lab.view->refresh();
  EXPECT_FALSE(lab.view->csv().contains(QStringLiteral("histogram,vit-horst-quick")));
}

TEST(WeightGeometryView, HoldsTogetherFromTheDockToAWideWindow) {
  const QString shots = qEnvironmentVariable("DESCENTLAB_GEOMETRY_SHOTS");
  for (const bool fourRuns : {false, true}) {
    for (const QSize size : {QSize(700, 260), QSize(1400, 500), QSize(420, 600), QSize(960, 420)}) {
      const QString name = QStringLiteral("%1runs-%2x%3").arg(fourRuns ? 4 : 2).arg(size.width()).arg(size.height());
      SCOPED_TRACE(name.toStdString());
      Lab lab(fourRuns);
      lab.show(size);
      lab.settle();  // the table's choice redraws the legend after the event that made it
      EXPECT_EQ(lab.window->size(), size);
      const auto problems = testing::layoutProblems(*lab.window, QSize(220, 140));
      std::string text;
      for (const auto& problem : problems) text += "\n  " + problem;
      EXPECT_TRUE(problems.empty()) << problems.size() << " layout problems:" << text;
      QCustomPlot* plot = lab.view->plot();
      for (auto* rect : plot->axisRects()) EXPECT_GE(rect->height(), 40) << "an axis rect is a sliver";
      // Every run's row or no table: at 1024x700 the table showed its header over no row (issue 33).
      QTableWidget* table = lab.view->statisticsTable();
      const int runs = fourRuns ? 4 : 2;
      ASSERT_EQ(table->rowCount(), runs);
      if (lab.view->tableShown()) {
        EXPECT_TRUE(table->isVisible());
        EXPECT_GE(table->viewport()->height(), runs * table->verticalHeader()->defaultSectionSize());
        // The table, with each run's line sample, is the legend: none drawn over the plot's room.
        EXPECT_EQ(plot->legend->layout(), nullptr);
      } else {
        EXPECT_FALSE(table->isVisible());
        // The legend names each run with its share of kept weights below 1e-2.
        ASSERT_NE(plot->legend->layout(), nullptr);
        EXPECT_EQ(plot->legend->itemCount(), runs);
        for (int i = 0; i < plot->legend->itemCount(); ++i) {
          auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
          ASSERT_NE(item, nullptr);
          EXPECT_TRUE(item->plottable()->name().contains(QStringLiteral("% < 1e-2")))
              << item->plottable()->name().toStdString();
        }
        // The legend has room for every entry, inside the plot and over no axis rect.
        const QRect legend = plot->legend->outerRect();
        EXPECT_GE(legend.width() + 1, plot->legend->minimumOuterSizeHint().width());
        EXPECT_GE(legend.height() + 1, plot->legend->minimumOuterSizeHint().height());
        EXPECT_TRUE(plot->viewport().contains(legend));
        for (auto* rect : plot->axisRects())
          EXPECT_FALSE(rect->rect().intersects(legend)) << "legend over an axis rect";
      }
      if (!shots.isEmpty()) {
        lab.view->grab().save(QDir(shots).filePath(QStringLiteral("weight-geometry-%1.png").arg(name)));
      }
    }
  }
}

// The table lists each run with its line sample, so on screen no legend takes the plot's room; an exported picture
// has no table, so it gets the legend; a hidden run brings the legend back (its struck-out entry shows it again).
TEST(WeightGeometryView, TheTableIsTheLegendOnScreenAndAnExportHasOne) {
  Lab lab;
  lab.show(QSize(1000, 520));
  lab.settle();
  QCustomPlot* plot = lab.view->plot();
  ASSERT_TRUE(lab.view->tableShown());
  EXPECT_EQ(plot->legend->layout(), nullptr);
  bool legendInPicture = false;
  const auto connection = QObject::connect(plot, &QCustomPlot::afterLayout, [&] {
    legendInPicture = legendInPicture || (plot->legend->layout() && plot->legend->itemCount() == 2);
  });
  const QString path = QDir::temp().filePath(
      QStringLiteral("descentlab-geometry-export-%1.png").arg(QCoreApplication::applicationPid()));
  ASSERT_TRUE(lab.view->exportImage(path, 900, 500));
  QObject::disconnect(connection);
  QFile::remove(path);
  EXPECT_TRUE(legendInPicture);
  lab.settle();
  EXPECT_EQ(plot->legend->layout(), nullptr) << "the legend stays in the picture only";
  lab.model.setRunVisible(lab.horst->id, false);
  lab.view->refresh(true);
  lab.settle();
  ASSERT_NE(plot->legend->layout(), nullptr);
  EXPECT_EQ(plot->legend->itemCount(), 2);
}

// A few weights far below the rest no longer stretch the |w| axis: it starts at the 0.1 % quantile of the run that
// reaches lowest (a stray weight at 1e-7 left two-thirds of the plot empty at 1280x800, issue 33).
TEST(WeightGeometryView, TheWeightAxisStartsWhereTheRunsHaveWeights) {
  widgets::LabModel model;
  QVector<double> stray = kAdamWEnd;
  stray[2] = 0.05;  // 0.05 of 100.05 kept weights in the lab's third bin, far below the body at 1e-2..1e-1
  model.addRun(makeRun(QStringLiteral("adamw"), stray));
  model.addRun(makeRun(QStringLiteral("horst"), kHorstEnd));
  QMainWindow window;
  auto* view = new WeightGeometryView(&model);
  window.setCentralWidget(view);
  window.resize(1000, 520);
  window.show();
  QApplication::processEvents();
  view->refresh(true);
  QApplication::processEvents();
  const double horstTail = widgets::keptQuantile(labEdges(), kHorstEnd, 1e-3);
  EXPECT_NEAR(view->plot()->xAxis->range().lower, horstTail / 2, 1e-12);  // HORST reaches lowest: 1e-4
  EXPECT_GT(view->plot()->xAxis->range().lower, labEdges()[3]) << "the stray weight set the range";
  EXPECT_GE(view->plot()->xAxis->range().upper, 0.1);
}

// The committed screenshot (docs/screenshots/weight-geometry.png) from real run files: run with
// DESCENTLAB_GEOMETRY_RUNS=a.h5,b.h5 and DESCENTLAB_GEOMETRY_SHOTS=DIR (skipped otherwise).
TEST(WeightGeometryView, ScreenshotOfRealRuns) {
  const QStringList paths =
      qEnvironmentVariable("DESCENTLAB_GEOMETRY_RUNS").split(QLatin1Char(','), Qt::SkipEmptyParts);
  const QString shots = qEnvironmentVariable("DESCENTLAB_GEOMETRY_SHOTS");
  if (paths.isEmpty() || shots.isEmpty()) GTEST_SKIP() << "DESCENTLAB_GEOMETRY_RUNS and _SHOTS not set";
  widgets::LabModel model;
  for (const auto& path : paths) model.addRun(gui::load_run_file(path.toStdString()));
  if (model.count() > 1) model.setFocusRun(model.runAt(model.count() - 1)->id);
  for (const QSize size : {QSize(1400, 500), QSize(700, 260)}) {
    QMainWindow window;
    auto* view = new WeightGeometryView(&model);
    window.setCentralWidget(view);
    window.resize(size);
    window.show();
    QApplication::processEvents();
    view->refresh(true);
    QApplication::processEvents();
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
    const auto problems = testing::layoutProblems(window, QSize(220, 140));
    EXPECT_TRUE(problems.empty()) << problems.size() << " layout problems";
    view->grab().save(
        QDir(shots).filePath(QStringLiteral("weight-geometry-real-%1x%2.png").arg(size.width()).arg(size.height())));
    for (int row = 0; row < view->statisticsTable()->rowCount(); ++row) {
      QStringList cells;
      for (int column = 0; column < view->statisticsTable()->columnCount(); ++column) {
        cells << view->statisticsTable()->item(row, column)->text();
      }
      std::cout << cells.join(QStringLiteral(" | ")).toStdString() << "\n";
    }
  }
}

}  // namespace
}  // namespace descentlab
