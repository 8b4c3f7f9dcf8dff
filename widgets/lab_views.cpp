#include "widgets/lab_views.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QMainWindow>
#include <QScrollArea>
#include <QVBoxLayout>

#include "widgets/dock_layout.h"
#include "widgets/elided_label.h"
#include "widgets/experiment_panel.h"
#include "widgets/run_log_view.h"
#include "widgets/runs_table.h"
#include "widgets/study_browser.h"
#include "widgets/views.h"

namespace descentlab::widgets {
namespace {

// The Runs dock's content: the filter's row over the table. The row gives way where the dock is too short for it and
// two rows of the table (a tour at 1024x700 keeps the runs table to its header and three rows), unless a filter is
// typed; it never raises the dock's minimum height.
class RunsPanel : public QWidget {
 public:
  RunsPanel(RunsTable* table, QWidget* parent) : QWidget(parent), table_(table) {}
  void setFilterRow(QWidget* row) { filterRow_ = row; }
  QSize minimumSizeHint() const override { return table_->minimumSizeHint(); }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QWidget::resizeEvent(event);
    const int needed = filterRow_->sizeHint().height() + table_->horizontalHeader()->sizeHint().height() +
                       2 * table_->verticalHeader()->defaultSectionSize() + 6;
    filterRow_->setVisible(height() >= needed || !table_->filterText().isEmpty());
  }

 private:
  RunsTable* table_;
  QWidget* filterRow_ = nullptr;
};

// The runs table under a filter field, as the study's: the field turns red and says why when it cannot read a term
// or names a key no run has; beside it, how many runs it shows.
QWidget* withFilterField(RunsTable* table, QWidget* parent) {
  auto* panel = new RunsPanel(table, parent);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* rowWidget = new QWidget(panel);
  auto* row = new QHBoxLayout(rowWidget);
  row->setContentsMargins(0, 0, 0, 0);
  panel->setFilterRow(rowWidget);
  auto* filter = new QLineEdit(panel);
  filter->setObjectName(QStringLiteral("runs-filter"));
  filter->setClearButtonEnabled(true);
  filter->setPlaceholderText(
      QStringLiteral("Filter: text, optimizer.name=horst, test_accuracy>0.7, train.lr=1e-4..1e-2"));
  const QString help = QStringLiteral(
      "Terms all of which a run must match: text in its name or path, key=value, key!=value, key>v, key<=v, "
      "key=a..b; a key is a config key (optimizer.alpha) or a final value (test_accuracy)");
  filter->setToolTip(help);
  auto* said = new ElidedLabel(panel);
  said->setObjectName(QStringLiteral("runs-filter-said"));
  row->addWidget(filter, 2);
  row->addWidget(said, 1);
  layout->addWidget(rowWidget);
  layout->addWidget(table, 1);
  QObject::connect(filter, &QLineEdit::textChanged, table, &RunsTable::setFilterText);
  QObject::connect(
      table, &RunsTable::filtered, panel, [table, filter, said, help](int shown, int total, const QString& message) {
        filter->setStyleSheet(message.isEmpty() ? QString() : QStringLiteral("QLineEdit { color: #b00020; }"));
        filter->setToolTip(message.isEmpty() ? help : message);
        QString text;
        if (!table->filterText().isEmpty()) text = QStringLiteral("%1 of %2 shown").arg(shown).arg(total);
        if (!message.isEmpty()) text += QStringLiteral(" — ") + message;
        said->setFullText(text);
      });
  return panel;
}

}  // namespace

QVector<PlotView*> LabViews::plots() const {
  return {loss, metric, layerLoss, lambda, weights, robustness, frontier};
}

void makeDockedViews(LabViews& views, LabModel* model, ExperimentPanel* experiment, QMainWindow* window,
                     DockLayout& docks) {
  docks.add(DockLayout::Experiment, QStringLiteral("Experiment"), experiment);
  views.runs = new RunsTable(*model, window);
  docks.add(DockLayout::Runs, QStringLiteral("Runs"), withFilterField(views.runs, window));
  views.log = new RunLogView(*model, window);
  docks.add(DockLayout::Log, QStringLiteral("Log"), views.log);
  views.metric = new TrainingCurvesView(model, QStringLiteral("Test metric"), QStringLiteral("@test"), window);
  views.layerLoss = new LayerLossView(model, window);
  views.lambda = new LambdaView(model, window);
  views.weights = new WeightGeometryView(model, window);
  views.robustness = new RobustnessView(model, window);
  views.frontier = new FrontierView(model, window);
  docks.add(DockLayout::Metric, QStringLiteral("Test metric"), views.metric);
  docks.add(DockLayout::LayerLoss, QStringLiteral("Per-layer loss"), views.layerLoss);
  // Short titles: three tabs share a dock's width in a laptop-size window.
  docks.add(DockLayout::Lambda, QStringLiteral("Multipliers λ"), views.lambda, QStringLiteral("lagrange-multipliers"));
  docks.add(DockLayout::Weights, QStringLiteral("Weight geometry"), views.weights);
  docks.add(DockLayout::Robustness, QStringLiteral("Robustness"), views.robustness);
  docks.add(DockLayout::Frontier, QStringLiteral("Sparsity frontier"), views.frontier);
  views.probe = new LayerProbeView(model, window);
  docks.add(DockLayout::Probe, QStringLiteral("Layer probe"), views.probe);
  views.study = new StudyBrowser(window);
  // In a scroll area: the browser needs about 190 px of height, and the Runs and Log docks it shares a tab group
  // with may get less (a tour at 1024x700 shrinks the group to the runs table's header and 3 rows).
  auto* studyScroll = new QScrollArea(window);
  studyScroll->setWidget(views.study);
  studyScroll->setWidgetResizable(true);
  studyScroll->setFrameShape(QFrame::NoFrame);
  docks.add(DockLayout::Study, QStringLiteral("Study"), studyScroll);
}

}  // namespace descentlab::widgets
