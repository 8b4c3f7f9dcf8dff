#pragma once
// The window's docks: the experiment panel, the runs table, the log, each view and the study in a dock of its own
// (movable, floatable, closable; its object name keys the saved layout). They are arranged for the window's size
// (View > Reset layout), restored from the saved layout when it still fits, rearranged for a tour or a study, and
// the views of a kind of run not open give their room to the others.

#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>

#include <array>

class QDockWidget;
class QMainWindow;
class QWidget;

namespace descentlab::widgets {

class LabModel;

class DockLayout : public QObject {
  Q_OBJECT

 public:
  // Each dock's place; the View menu lists them in the order they are added.
  enum Place {
    Experiment,
    Runs,
    Log,
    Metric,
    LayerLoss,
    Lambda,
    Weights,
    Robustness,
    Frontier,
    Probe,
    Study,
    Playground,
    kPlaces
  };

  DockLayout(QMainWindow& window, const LabModel& model);

  // Docks `content` at `place`, titled `title`; its object name is "dock-" and `name` (default: the title in lower
  // case, dashes for spaces).
  QDockWidget* add(Place place, const QString& title, QWidget* content, const QString& name = QString());
  QDockWidget* dock(Place place) const { return docks_[place]; }
  // The docks of view ids (tests, tours); null for an unknown id or the central training-loss view.
  QDockWidget* dockOfView(const QString& id) const;
  // Docks the optimizer-geometry playground, tabbed with λ and robustness.
  QDockWidget* addPlayground(QWidget* playground);

  // The default layout for the window's size: two columns of views when wide, one column of two tab groups when
  // not; the log beside the runs when tall, behind them when not (View > Reset layout).
  void arrange();
  // The first show: the saved layout when it is of this version and still fits, else the default one.
  void layOutOnFirstShow();
  bool laidOut() const { return laidOut_; }
  // The layout, kept for the next start (the window closes).
  void save() const;
  // Hides the layerwise views while only sparse runs are open, and shows them again when a layerwise run opens.
  void showRelevantDocks();
  // A tour's views (ids as in tours' "views") in front, the others behind them as tabs, and the first view the
  // larger share of the height it shares with another of the tour's views.
  void arrangeForTour(const QStringList& views);
  // Brings the Study dock forward with the larger share of the window's height (a study was opened).
  void showStudy();

 private:
  QList<QDockWidget*> all() const;
  bool restoreSavedLayout();
  // Places each dock for the window's size (`wide`: two columns of views; `tall`: the log beside the runs).
  void place(bool wide, bool tall);
  void sizeDocks(bool wide, bool tall);
  // The views not in `shown` go behind one of them as a tab.
  void tabBehindTourViews(const QList<QDockWidget*>& shown);
  // On a short screen the runs table gives the views what its tour's runs do not need: its header and three rows.
  void fitRunsTableToTour();
  // The tour's first view 60 % of the height it shares with the view in front above or below it.
  void giveTourViewItsShare(QDockWidget* anchor);
  // The height the bottom area takes while a study is shown.
  int studyHeight() const;

  static constexpr int kLayoutVersion = 4;  // bump when the docks change: older saved layouts are dropped
  QMainWindow& window_;
  const LabModel& model_;
  std::array<QDockWidget*, kPlaces> docks_{};
  QSet<QDockWidget*> autoHidden_;
  int runKinds_ = -1;
  bool laidOut_ = false;
  bool studyShown_ = false;  // a study was opened: its dock comes forward with more height when the layout is reset
};

}  // namespace descentlab::widgets
