#pragma once
// Help > Tours and a started tour as the window shows it: the menu's entries (choosing one asks the app for the
// tour), "Run each tour with its measured seeds", the bar above the views with the tour's title and one sentence of
// what to watch ("More: what it means" for the whole caption, "Less" and ✕ to close it), and the tour's views in
// front.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

class QAction;
class QLabel;
class QMenu;
class QWidget;

namespace descentlab::widgets {

class DockLayout;
class LayerLossView;
class TrainingCurvesView;

// A tour as the window shows it (core/config/tours.h, through the app): Help > Tours lists them, and a started
// one's caption shows above the views.
struct TourInfo {
  QString name;
  QString title;
  QString watch;      // one sentence: what to watch (the caption bar shows it; "" shows the whole caption)
  QString caption;    // the whole caption, behind the bar's "More"
  QStringList views;  // view ids: training_curves, test_metric, layer_loss, lambda, weight_geometry, robustness,
                      // frontier, playground
  QString curves;     // the series the central training-curves view shows; "" keeps its choice
  QString layerLoss;  // the per-layer view's mode: "value", "change" (f_l - f_(l-1)); "" keeps its choice
  int runs = 0;
  QVector<int> seeds;  // the seeds its effect was measured over
};

class TourPresenter : public QObject {
  Q_OBJECT

 public:
  // The caption's bar is made in `barParent` (the central widget above the views), hidden until a tour starts.
  TourPresenter(DockLayout& docks, QWidget* barParent);
  QWidget* bar() const { return box_; }
  // Help > Tours, disabled until setTours lists tours in it.
  void setMenu(QMenu* menu);
  // The views a tour chooses a series or a mode of.
  void setViews(TrainingCurvesView* curves, LayerLossView* layerLoss);

  // Help > Tours: one entry per tour; choosing one emits tourRequested.
  void setTours(const QVector<TourInfo>& tours);
  // Help > Tours > "Run each tour with its measured seeds": a tour then starts every run once per seed, drawn as
  // groups.
  bool toursWithSeeds() const;
  void setToursWithSeeds(bool on);
  // A started tour: its caption above the views (until dismissed or another tour starts) and its views in front.
  void showTour(const TourInfo& tour);
  QString tourCaption() const;  // the caption's text as shown, "" when none (tests)
  // Shows the tour's whole caption (true) or only its watch sentence (false), as the bar's More/Less link does.
  void setTourCaptionExpanded(bool expanded);

 signals:
  void tourRequested(const QString& name);

 private:
  DockLayout& docks_;
  TrainingCurvesView* curves_ = nullptr;
  LayerLossView* layerLoss_ = nullptr;
  QMenu* menu_ = nullptr;
  QAction* withSeeds_ = nullptr;
  QWidget* box_ = nullptr;
  QLabel* caption_ = nullptr;
  TourInfo shown_;  // the tour whose caption the bar shows
};

}  // namespace descentlab::widgets
