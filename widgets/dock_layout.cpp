#include "widgets/dock_layout.h"

#include <algorithm>

#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLayout>
#include <QMainWindow>
#include <QScreen>
#include <QSettings>
#include <QTableView>
#include <QTimer>

#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"

namespace descentlab::widgets {

DockLayout::DockLayout(QMainWindow& window, const LabModel& model) : QObject(&window), window_(window), model_(model) {}

QDockWidget* DockLayout::add(Place place, const QString& title, QWidget* content, const QString& name) {
  auto* widget = new QDockWidget(title, &window_);
  // The object name keys the saved layout: it stays when a title is reworded.
  widget->setObjectName(QStringLiteral("dock-") +
                        (name.isEmpty() ? title.toLower().replace(QLatin1Char(' '), QLatin1Char('-')) : name));
  widget->setWidget(content);
  widget->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
  window_.addDockWidget(Qt::RightDockWidgetArea, widget);
  docks_[place] = widget;
  return widget;
}

QDockWidget* DockLayout::addPlayground(QWidget* playground) {
  QDockWidget* added = add(Playground, QStringLiteral("Playground"), playground, QStringLiteral("geometry-playground"));
  window_.tabifyDockWidget(dock(Lambda), added);
  dock(Lambda)->raise();
  return added;
}

QDockWidget* DockLayout::dockOfView(const QString& id) const {
  if (id == QLatin1String("test_metric")) return dock(Metric);
  if (id == QLatin1String("layer_loss")) return dock(LayerLoss);
  if (id == QLatin1String("lambda")) return dock(Lambda);
  if (id == QLatin1String("weight_geometry")) return dock(Weights);
  if (id == QLatin1String("robustness")) return dock(Robustness);
  if (id == QLatin1String("frontier")) return dock(Frontier);
  if (id == QLatin1String("layer_probe")) return dock(Probe);
  if (id == QLatin1String("playground")) return dock(Playground);
  return nullptr;
}

QList<QDockWidget*> DockLayout::all() const {
  QList<QDockWidget*> docks;
  for (auto* placed : docks_) {
    if (placed) docks.push_back(placed);  // the playground's only where it was added
  }
  return docks;
}

void DockLayout::arrange() {
  const QSize area = window_.size();
  const bool wide = area.width() >= 1700;  // room for two columns of views beside the loss
  const bool tall = area.height() >= 900;  // room for the log beside the runs table
  place(wide, tall);
  for (auto* placed : all()) placed->show();
  autoHidden_.clear();
  runKinds_ = -1;
  showRelevantDocks();
  if (studyShown_) dock(Study)->lower();  // see showStudy()
  (studyShown_ ? dock(Study) : dock(Runs))->raise();
  sizeDocks(wide, tall);
}

void DockLayout::place(bool wide, bool tall) {
  for (auto* placed : all()) {
    placed->setFloating(false);
    window_.removeDockWidget(placed);
  }
  // Left: the experiment. Bottom: the runs (and the log, beside them or behind them). Right: the views.
  window_.addDockWidget(Qt::LeftDockWidgetArea, dock(Experiment));
  window_.addDockWidget(Qt::BottomDockWidgetArea, dock(Runs));
  window_.addDockWidget(Qt::BottomDockWidgetArea, dock(Log));
  if (tall) {
    window_.splitDockWidget(dock(Runs), dock(Log), Qt::Horizontal);
  } else {
    window_.tabifyDockWidget(dock(Runs), dock(Log));
  }
  window_.tabifyDockWidget(dock(Runs), dock(Study));
  window_.addDockWidget(Qt::RightDockWidgetArea, dock(LayerLoss));
  window_.addDockWidget(Qt::RightDockWidgetArea, dock(Lambda));
  window_.splitDockWidget(dock(LayerLoss), dock(Lambda), Qt::Vertical);
  if (wide) {  // two columns: per-layer loss | test metric over λ | weight geometry
    window_.addDockWidget(Qt::RightDockWidgetArea, dock(Metric));
    window_.addDockWidget(Qt::RightDockWidgetArea, dock(Weights));
    window_.splitDockWidget(dock(LayerLoss), dock(Metric), Qt::Horizontal);
    window_.splitDockWidget(dock(Lambda), dock(Weights), Qt::Horizontal);
  } else {  // one column of two tab groups
    window_.tabifyDockWidget(dock(LayerLoss), dock(Metric));
    window_.tabifyDockWidget(dock(LayerLoss), dock(Weights));
  }
  window_.tabifyDockWidget(dock(LayerLoss), dock(Probe));
  window_.tabifyDockWidget(dock(Lambda), dock(Robustness));
  window_.tabifyDockWidget(dock(Lambda), dock(Frontier));
  if (dock(Playground)) window_.tabifyDockWidget(dock(Lambda), dock(Playground));
}

void DockLayout::sizeDocks(bool wide, bool tall) {
  const QSize area = window_.size();
  const int experimentWidth = std::clamp(area.width() / 5, 250, 330);
  const int viewsWidth = (area.width() - experimentWidth) * (wide ? 58 : 50) / 100;
  window_.resizeDocks({dock(Experiment)}, {experimentWidth}, Qt::Horizontal);
  window_.resizeDocks({dock(LayerLoss)}, {wide ? viewsWidth / 2 : viewsWidth}, Qt::Horizontal);
  if (wide) window_.resizeDocks({dock(Metric)}, {viewsWidth / 2}, Qt::Horizontal);
  // A study open needs rows: the bottom area then takes 45 % of the height or more (studyHeight).
  window_.resizeDocks({dock(Runs)}, {studyShown_ ? studyHeight() : tall ? 200 : 150}, Qt::Vertical);
  // The per-layer loss (two plots) gets the larger share of the views' height.
  window_.resizeDocks({dock(LayerLoss), dock(Lambda)}, {area.height() * 55 / 100, area.height() * 45 / 100},
                      Qt::Vertical);
  // The Log beside the runs: a third of the width, a sixth beside a study (empty until a run trains).
  if (tall) {
    const int log = studyShown_ ? area.width() / 6 : area.width() / 3;
    window_.resizeDocks({dock(Runs), dock(Log)}, {area.width() - log, log}, Qt::Horizontal);
  }
}

void DockLayout::showRelevantDocks() {
  // 1: a layerwise run is open, 2: a sparse one, 4: a sparse run of a user's model (which sweeps apply to); 0: none
  // (every view shows its hint).
  int kinds = 0;
  for (const auto* run : model_.runs()) {
    kinds |= run->kind == RunKind::Layerwise ? 1 : run->kind == RunKind::Sparse ? 2 : 0;
    if (run->kind == RunKind::Sparse && sweepable(run)) kinds |= 4;
  }
  if (kinds == runKinds_) return;  // only on a change, so a view the user shows again stays shown
  runKinds_ = kinds;
  // Per-layer loss, λ and robustness sweeps belong to layerwise descent, the sparsity frontier to sparse training:
  // with only one kind of run open, the other kind's views give their space to those that have something to show.
  // A sparse run of a user's model keeps the robustness view: it can be swept.
  const bool sparseOnly = (kinds & 3) == 2;
  const bool layerwiseOnly = kinds == 1;
  for (auto* view : {dock(LayerLoss), dock(Lambda), dock(Robustness), dock(Frontier), dock(Probe)}) {
    const bool irrelevant = view == dock(Frontier)     ? layerwiseOnly
                            : view == dock(Robustness) ? sparseOnly && !(kinds & 4)
                                                       : sparseOnly;
    if (irrelevant && view->isVisible()) {
      view->hide();
      autoHidden_.insert(view);
    } else if (!irrelevant && autoHidden_.contains(view)) {
      view->show();
      autoHidden_.remove(view);
    }
  }
  // Raised once the dock area has applied the hides above (it picks its own current tab when a tab is hidden).
  if (sparseOnly) {
    QTimer::singleShot(0, dock(Weights), &QDockWidget::raise);
    QTimer::singleShot(0, dock(Frontier), &QDockWidget::raise);
  } else if (kinds & 1) {
    QTimer::singleShot(0, dock(LayerLoss), &QDockWidget::raise);
    QTimer::singleShot(0, dock(Lambda), &QDockWidget::raise);
  }
}

void DockLayout::layOutOnFirstShow() {
  if (laidOut_) return;
  laidOut_ = true;
  const QSize wanted = window_.size();
  if (!restoreSavedLayout()) {
    arrange();
    window_.resize(wanted);  // re-adding the docks of a shown window lets it grow to their preferred size
  }
  if (studyShown_) showStudy();  // a study opened before the window was shown (`descentlab DIR`)
}

bool DockLayout::restoreSavedLayout() {
  QSettings settings;
  const QByteArray state = settings.value(QStringLiteral("window/state")).toByteArray();
  // A layout of another version, or one that no longer fits (a smaller screen, a squashed table), is dropped.
  if (state.isEmpty() || !window_.restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()) ||
      !window_.restoreState(state, kLayoutVersion)) {
    return false;
  }
  if (auto* screen = QGuiApplication::primaryScreen()) {
    const QRect available = screen->availableGeometry();
    if (window_.width() > available.width() || window_.height() > available.height()) {
      window_.resize(std::min(window_.width(), available.width()), std::min(window_.height(), available.height()));
      return false;
    }
  }
  window_.layout()->activate();
  for (auto* placed : window_.findChildren<QDockWidget*>()) {
    if (placed->isVisible() && !placed->isFloating() && (placed->width() < 150 || placed->height() < 90)) return false;
  }
  return true;
}

void DockLayout::save() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), window_.saveGeometry());
  settings.setValue(QStringLiteral("window/state"), window_.saveState(kLayoutVersion));
}

int DockLayout::studyHeight() const {
  // 45 % of the height; 65 % while no run is open in the views, which then hold only their placeholders.
  return window_.height() * (model_.count() == 0 ? 65 : 45) / 100;
}

void DockLayout::showStudy() {
  studyShown_ = true;
  if (!laidOut_) return;  // the first show lays the docks out, and then calls this again
  QDockWidget* study = dock(Study);
  study->show();
  // raise() selects a tabbed dock only when it changes the dock's stacking order, and the Study dock, made last, is
  // already on top of its siblings: lowered first, its raise always brings its tab forward.
  study->lower();
  study->raise();
  // The runs of a study need rows: the bottom area takes 45 % of the height (the views keep the rest), and 65 % while
  // no run is open in the views, which then show only their placeholders (at 1280x800 the paired tab had room for 2
  // seeds). (Once the dock area has applied the raise: sized before, the tab group keeps its old height.)
  QTimer::singleShot(0, this, [this, study] {
    window_.resizeDocks({study}, {studyHeight()}, Qt::Vertical);
    // Beside a study the Log (empty until a run trains) takes a sixth of the width, not a third.
    if (!dock(Log)->isFloating() && dock(Log)->isVisible() && !window_.tabifiedDockWidgets(dock(Log)).contains(study)) {
      window_.resizeDocks({study, dock(Log)}, {window_.width() * 5 / 6, window_.width() / 6}, Qt::Horizontal);
    }
  });
}

void DockLayout::arrangeForTour(const QStringList& views) {
  QList<QDockWidget*> shown;
  for (const auto& id : views) {
    QDockWidget* view = dockOfView(id);
    if (!view) continue;
    autoHidden_.remove(view);
    view->show();
    shown << view;
  }
  const auto docked = std::find_if(shown.begin(), shown.end(), [](QDockWidget* view) { return !view->isFloating(); });
  if (docked == shown.end()) {
    for (auto* view : shown) view->raise();
    return;
  }
  tabBehindTourViews(shown);
  for (auto* view : shown) view->raise();
  // The tour's first view is what it is about: 60 % of the height it shares with the view in front below or above
  // it (another of the tour's, or one whose tab had no room to move; at 1024x700 the per-layer losses had about
  // 50 px), as far as that one's minimum allows. Measured once the dock area has laid out the moves above.
  QDockWidget* anchor = *docked;
  QTimer::singleShot(0, this, [this, anchor] {
    if (!anchor->isVisible()) return;
    fitRunsTableToTour();
    QTimer::singleShot(0, this, [this, anchor] {
      if (anchor->isVisible()) giveTourViewItsShare(anchor);
    });
  });
}

void DockLayout::tabBehindTourViews(const QList<QDockWidget*>& shown) {
  // The other views give way: one that has a place of its own, or shares it with no view of the tour, goes behind
  // a view of the tour as a tab, one click away (at 1920x1080 an empty Test metric took half the views' height and
  // the tour's frontier a quarter, issue 33), into the tab group with the most room for its title (tab bars scroll
  // where titles do not fit). View > Reset layout brings the usual places back.
  const QFontMetrics metrics(window_.font());
  const auto tabWidth = [&](QDockWidget* dock) { return metrics.horizontalAdvance(dock->windowTitle()) + 32; };
  const auto spareWidth = [&](QDockWidget* group) {
    int used = group->isVisible() ? tabWidth(group) : 0;
    for (auto* mate : window_.tabifiedDockWidgets(group)) used += mate->isHidden() ? 0 : tabWidth(mate);
    return group->width() - used;
  };
  for (auto* view : {dock(LayerLoss), dock(Metric), dock(Lambda), dock(Weights), dock(Robustness), dock(Frontier),
                     dock(Probe), dock(Playground)}) {
    if (!view || shown.contains(view) || view->isHidden() || view->isFloating()) continue;
    const QList<QDockWidget*> mates = window_.tabifiedDockWidgets(view);
    if (std::any_of(mates.begin(), mates.end(), [&](QDockWidget* mate) { return shown.contains(mate); })) continue;
    QDockWidget* target = nullptr;
    for (auto* candidate : shown) {
      if (!candidate->isFloating() && (!target || spareWidth(candidate) > spareWidth(target))) target = candidate;
    }
    if (target) window_.tabifyDockWidget(target, view);
  }
}

void DockLayout::fitRunsTableToTour() {
  // At 1024x700 the per-layer plot was squeezed below its minimum, its axis title under the hint line.
  QDockWidget* runs = dock(Runs);
  auto* table = runs->findChild<QTableView*>();
  if (!table || window_.height() >= 800 || runs->isFloating() || !runs->isVisible()) return;
  const int rows = table->horizontalHeader()->sizeHint().height() + 3 * table->verticalHeader()->defaultSectionSize();
  const int chrome = runs->height() - table->height();
  if (runs->height() > rows + chrome) window_.resizeDocks({runs}, {rows + chrome}, Qt::Vertical);
}

void DockLayout::giveTourViewItsShare(QDockWidget* anchor) {
  const QRect first = anchor->geometry();
  for (auto* view : window_.findChildren<QDockWidget*>()) {
    const QRect other = view->geometry();
    if (view == anchor || !view->isVisible() || view->isFloating() || view->visibleRegion().isEmpty() ||
        window_.dockWidgetArea(view) != window_.dockWidgetArea(anchor) || other.top() == first.top() ||
        other.right() < first.left() || other.left() > first.right()) {
      continue;
    }
    const int column = first.height() + other.height();
    window_.resizeDocks({anchor, view}, {column * 60 / 100, column * 40 / 100}, Qt::Vertical);
    return;
  }
}

}  // namespace descentlab::widgets
