#pragma once
// The DescentLab main window: every view in a dockable panel (layout kept with QSettings), the run table, the
// experiment panel and a log. It draws from the LabModel and asks the app (through signals) to start, control,
// open and save runs; it never waits on training.

#include <QMainWindow>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>

#include "widgets/experiment_panel.h"
#include "widgets/run_data.h"

class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QTableWidget;
class QToolButton;

namespace descentlab::widgets {

class LabModel;
class PlotView;
class TrainingCurvesView;
class LayerLossView;
class LambdaView;
class WeightGeometryView;
class RobustnessView;
class FrontierView;
class LayerProbeView;
class LayerProbeBackend;
class StudyBrowser;
class StudyBackend;

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

struct EnvironmentSummary {
  QString version;
  QString device;  // "CPU" or "CUDA (N devices)"
  int threads = 1;
  QString blas;
  QString torch_version;
  QStringList datasets;  // one line per dataset: name, present, splits
};

// Help > Getting started: what each view shows, what to try first, and the keyboard shortcuts.
QString gettingStartedHtml();

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  MainWindow(const EnvironmentSummary& summary, const ExperimentBackend& backend, QWidget* parent = nullptr);

  LabModel* model() const { return model_; }
  ExperimentPanel* experimentPanel() const { return experiment_; }
  QVector<PlotView*> views() const;
  TrainingCurvesView* lossView() const { return loss_; }
  TrainingCurvesView* metricView() const { return metric_; }
  LayerLossView* layerLossView() const { return layerLoss_; }
  LambdaView* lambdaView() const { return lambda_; }
  WeightGeometryView* weightView() const { return weights_; }
  RobustnessView* robustnessView() const { return robustness_; }
  FrontierView* frontierView() const { return frontier_; }
  LayerProbeView* layerProbeView() const { return probe_; }
  // The layer probe's evaluator (the app's worker thread); the view shows a hint until it is set.
  void setProbeBackend(LayerProbeBackend* backend);
  // The Study dock (a folder of run files as a study) and the engine's grouping behind it.
  StudyBrowser* studyBrowser() const { return study_; }
  // `groupBackend` groups the lab's runs for the views (its own instance: it keeps what it converted, as the Study
  // dock's does for the study's rows).
  void setStudyBackend(const StudyBackend* backend, const StudyBackend* groupBackend);
  // Brings the Study dock forward with the larger share of the window's height (a study was opened).
  void showStudy();
  // Draws runs that differ only by their seeds as groups (each its mean with a band) in every view, grouped by `keys`
  // (empty: every differing key but the seeds); off draws every run on its own. View > Groups does the same.
  void setGrouping(bool on, const QStringList& keys = {});

  // Redraws the run table and every visible view whose data changed (the app's coalescing timer calls this).
  void refreshViews();
  // A message in the window (a bar above the views, not a modal box) and in the run's log.
  void showError(const QString& message, const QString& runId = QString());
  void showInfo(const QString& message);
  // Hides the banner if it still shows an error of `runId` (the run has since started or resumed successfully).
  void clearErrorOf(const QString& runId);
  bool bannerShown() const;
  QString lastMessage() const { return lastMessage_; }
  // Writes every view as PNG, SVG, PDF and CSV into `directory`, and the whole window as dashboard.png; returns the
  // files written.
  QStringList exportAll(const QString& directory);
  void addRecentFile(const QString& path);
  void addRecentFiles(const QStringList& paths);  // one settings write and menu rebuild for a batch
  // Docks the optimizer-geometry playground (tabbed with λ and robustness), then re-applies the saved layout.
  void addPlayground(QWidget* playground);
  // The selected run's controls follow its state (the app calls this after changing a state).
  void updateRunControls();
  // Hides a run from every multi-run view, or shows it again (the runs table's menu, a legend click).
  void setRunVisible(const QString& runId, bool visible);
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
  // The docks of view ids (tests, tours); null for an unknown id or the central training-loss view.
  QDockWidget* dockOfView(const QString& id) const;
  // The runs of the last session (every run file open when it ended, however it ended) that still exist: the
  // banner offers to reopen them ("Reopen them" opens them all). Returns how many were offered.
  int offerLastSession();
  QStringList lastSessionRuns() const;
  // Hides the banner if it still shows `message` (a notice that no longer holds, e.g. a cancelled sweep's).
  void clearMessage(const QString& message);
  // The runs table's menu while it is open (for tests); null otherwise.
  QMenu* runMenu() const { return lastRunMenu_; }

 signals:
  void startRequested(const ExperimentRequest& request);
  void tourRequested(const QString& name);
  void pauseRequested(const QString& runId);
  void resumeRequested(const QString& runId);
  void stopRequested(const QString& runId);
  void openRequested(const QStringList& paths);
  // Many run files at once (a study's Draw groups): opened without holding up the window.
  // `names` name the runs in the views (a study's runs by their path below its folder: "vit-horst/seed0").
  void openInBackgroundRequested(const QStringList& paths, const QStringList& names);
  // A folder to open as a study (File > Open folder as a study, a dropped folder).
  void openFolderRequested(const QString& folder);
  void saveRequested(const QString& runId, const QString& path);
  void closeRunRequested(const QString& runId);
  void revealRequested(const QString& path);  // show the run file in the desktop's file manager
  void sweepRequested(const QString& runId, const SweepChoice& choice);
  void cancelSweepRequested();

 protected:
  // A tab bar the dock area makes (tabbed views) keeps whole titles and scrolls when they do not all fit: elided
  // titles ("Per-l…", "Te…") were unreadable where a tour put several views behind one.
  bool event(QEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void buildRunMenu();
  void buildGroupMenu(QMenu* menu);
  void showGettingStarted();
  // Selects the run `offset` rows after the selected one (Run > Next / Previous run).
  void selectNeighbourRun(int offset);
  void buildDocks();
  QDockWidget* makeDock(const QString& title, QWidget* content, const QString& name = QString());
  // The default layout for the window's size: two columns of views when wide, one column of two tab groups when
  // not; the log beside the runs when tall, behind them when not (View > Reset layout).
  void arrangeDocks();
  // A tour's views (ids as in tours' "views") in front, the others behind them as tabs, and the first view the
  // larger share of the height it shares with another of the tour's views.
  void arrangeForTour(const QStringList& views);
  // The tour's first view 60 % of the height it shares with the view in front above or below it.
  void giveTourViewItsShare(QDockWidget* anchor);
  // The saved layout when it is of this version and still fits; false (nothing applied) otherwise.
  bool restoreSavedLayout();
  // Hides the layerwise views while only sparse runs are open, and shows them again when a layerwise run opens.
  void showRelevantDocks();
  void updateRunTable();
  QVector<RunData*> runsInTableOrder(const QStringList& keys, int firstKey, bool anyLayerwise) const;
  void fillProgressCell(int row, const RunData& run);
  void updateLog();
  void updateRecentMenu();
  void openWithDialog();
  void openFolderWithDialog();
  void saveWithDialog();
  void exportAllWithDialog();
  QString selectedRunId() const;
  // The runs table's menu for the run in `row`: show/hide, colour, pause/resume/stop, reveal its file, close.
  void showRunMenu(const QPoint& position);

  EnvironmentSummary summary_;
  LabModel* model_ = nullptr;
  ExperimentPanel* experiment_ = nullptr;
  TrainingCurvesView* loss_ = nullptr;
  TrainingCurvesView* metric_ = nullptr;
  LayerLossView* layerLoss_ = nullptr;
  LambdaView* lambda_ = nullptr;
  WeightGeometryView* weights_ = nullptr;
  RobustnessView* robustness_ = nullptr;
  FrontierView* frontier_ = nullptr;
  LayerProbeView* probe_ = nullptr;
  QTableWidget* runTable_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QLabel* banner_ = nullptr;
  QWidget* bannerBox_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* toursMenu_ = nullptr;
  QLabel* tourCaption_ = nullptr;
  TourInfo shownTour_;  // the tour whose caption the bar shows
  QWidget* tourBox_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* resumeAction_ = nullptr;
  QAction* stopAction_ = nullptr;
  QAction* closeAction_ = nullptr;
  QAction* hideAction_ = nullptr;
  QAction* groupAction_ = nullptr;
  QAction* toursWithSeeds_ = nullptr;
  static constexpr int kLayoutVersion = 4;  // bump when the docks change: older saved layouts are dropped
  QDockWidget* experimentDock_ = nullptr;
  QDockWidget* runsDock_ = nullptr;
  QDockWidget* logDock_ = nullptr;
  QDockWidget* metricDock_ = nullptr;
  QDockWidget* layerDock_ = nullptr;
  QDockWidget* lambdaDock_ = nullptr;
  QDockWidget* weightDock_ = nullptr;
  QDockWidget* robustDock_ = nullptr;
  QDockWidget* frontierDock_ = nullptr;
  QDockWidget* probeDock_ = nullptr;
  QDockWidget* playgroundDock_ = nullptr;
  QDockWidget* studyDock_ = nullptr;
  StudyBrowser* study_ = nullptr;
  bool studyShown_ = false;  // a study was opened: its dock comes forward with more height when the layout is reset
  QSet<QDockWidget*> autoHidden_;
  int runKinds_ = -1;
  bool laidOut_ = false;
  QString lastMessage_;
  QString bannerRunId_;  // the run whose error the banner shows, empty for other messages
  int64_t tableRevision_ = -1;
  int64_t logRevision_ = -1;
  QString loggedRun_;
  QTimer refreshSoon_;
  QMenu* lastRunMenu_ = nullptr;  // a redraw after a change made in the window (selection, colour, visibility)
  QStringList offeredSession_;    // the run files the banner's "Reopen them" opens
  int sortColumn_ = -1;           // the runs table's sort (a header click), -1: the order runs were added
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
  // Keeps the open runs' files as the session's (QSettings), so the next start can offer them even after a crash.
  void rememberSessionRuns();
  QTimer sessionSave_;  // coalesces rememberSessionRuns over the runs a single open or tour adds
};

}  // namespace descentlab::widgets
