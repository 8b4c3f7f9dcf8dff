#pragma once
// The DescentLab main window, a shell: the training loss under the message and tour bars, and the wiring of its parts,
// each a class of its own: the views and their docks (lab_views.h, dock_layout.h), the runs table and the log
// (runs_table.h, run_log_view.h), the menus (window_menus.h), tours (tour_presenter.h), what is kept between starts
// (session_memory.h) and dropped run files (run_file_drop.h). It draws from the LabModel, through which every change to
// a run goes, and asks the app (by signals) to start, control, open and save runs; it never waits on training.

#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include "widgets/branch_dialog.h"
#include "widgets/experiment_panel.h"
#include "widgets/help_pages.h"
#include "widgets/lab_views.h"
#include "widgets/message_bar.h"
#include "widgets/run_annotation_dialog.h"
#include "widgets/run_data.h"
#include "widgets/tour_presenter.h"

namespace descentlab::widgets {

class LayerProbeBackend;
class SessionMemory;
class StudyBackend;
class WindowMenus;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  MainWindow(const EnvironmentSummary& summary, const ExperimentBackend& backend, QWidget* parent = nullptr);

  LabModel* model() const { return model_; }
  ExperimentPanel* experimentPanel() const { return experiment_; }
  QVector<PlotView*> views() const { return views_.plots(); }
  TrainingCurvesView* lossView() const { return views_.loss; }
  TrainingCurvesView* metricView() const { return views_.metric; }
  LayerLossView* layerLossView() const { return views_.layerLoss; }
  LambdaView* lambdaView() const { return views_.lambda; }
  WeightGeometryView* weightView() const { return views_.weights; }
  RobustnessView* robustnessView() const { return views_.robustness; }
  FrontierView* frontierView() const { return views_.frontier; }
  LayerProbeView* layerProbeView() const { return views_.probe; }
  StudyBrowser* studyBrowser() const { return views_.study; }
  RunsTable* runsTable() const { return views_.runs; }
  DockLayout* docks() const { return docks_; }
  TourPresenter* tours() const { return tours_; }
  SessionMemory* session() const { return session_; }

  // The layer probe's evaluator (the app's worker thread); the view shows a hint until it is set.
  void setProbeBackend(LayerProbeBackend* backend);
  // The Study dock's engine, and `groupBackend` that groups the lab's runs for the views (its own instance: it keeps
  // what it converted, as the Study dock's does for the study's rows).
  void setStudyBackend(const StudyBackend* backend, const StudyBackend* groupBackend);
  // Draws runs that differ only by their seeds as groups (each its mean with a band) in every view, grouped by `keys`
  // (empty: every differing key but the seeds); off draws every run on its own. View > Groups does the same.
  void setGrouping(bool on, const QStringList& keys = {});
  // Docks the optimizer-geometry playground (tabbed with λ and robustness).
  void addPlayground(QWidget* playground);
  // Redraws the run table, the log and every visible view whose data changed; every change of the model calls it at
  // the next turn of the event loop, once for all the changes made before it.
  void refreshViews();
  // A message in the bar above the views (not a modal box) and, for an error of a run, in its log (message_bar.h).
  void showError(const QString& message, const QString& runId = QString()) { messages_->showError(message, runId); }
  // The datasets' lines of Help > Environment and datasets, read after the window showed.
  void setDatasetLines(const QStringList& lines);
  void showInfo(const QString& message, const QString& runId = QString()) { messages_->showInfo(message, runId); }
  void clearErrorOf(const QString& runId) { messages_->clearErrorOf(runId); }
  void clearMessage(const QString& message) { messages_->clearMessage(message); }
  bool bannerShown() const { return messages_->shown(); }
  QString lastMessage() const { return messages_->lastMessage(); }
  // Opens the run's Name, tags and note dialog (Run menu, runs table); OK emits annotationChosen.
  void askAnnotation(const QString& runId);
  // Opens the Branch dialog for the run (Run > Branch…, Branch… beside Pause; `nearStep` >= 0 from a curve's "Branch
  // from here"); Start emits branchChosen. A run that cannot be branched is said in the message bar.
  void askBranch(const QString& runId, int64_t nearStep = -1);
  // Every view as PNG, SVG, PDF and CSV in `directory`, and the window as dashboard.png; returns the files written.
  QStringList exportAll(const QString& directory);

 signals:
  void startRequested(const ExperimentRequest& request);
  void tourRequested(const QString& name);
  void pauseRequested(const QString& runId);
  void resumeRequested(const QString& runId);
  void stopRequested(const QString& runId);
  void openRequested(const QStringList& paths);
  // Many run files at once (a study's Draw groups): opened without holding up the window.
  void openInBackgroundRequested(const QStringList& paths);
  // A folder to open as a study (File > Open folder as a study, a dropped folder).
  void openFolderRequested(const QString& folder);
  void saveRequested(const QString& runId, const QString& path);
  void closeRunRequested(const QString& runId);
  // A person's name, tags and note for a run, chosen in the dialog (Run > Name, tags and note…).
  void annotationChosen(const QString& runId, const RunAnnotationEdit& edit);
  // A branch of the run, as the Branch dialog's Start asks for it.
  void branchChosen(const QString& runId, const BranchChoice& choice);
  void revealRequested(const QString& path);  // show the run file in the desktop's file manager
  void sweepRequested(const QString& runId, const SweepChoice& choice);
  void cancelSweepRequested();

 protected:
  // A tab bar the dock area makes (tabbed views) keeps whole titles and scrolls when they do not all fit: elided
  // titles ("Per-l…", "Te…") were unreadable where a tour put several views behind one.
  bool event(QEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  void connectRequests();
  void connectRedraws();

  const ExperimentBackend& backend_;
  LabModel* model_ = nullptr;
  ExperimentPanel* experiment_ = nullptr;
  MessageBar* messages_ = nullptr;
  DockLayout* docks_ = nullptr;
  TourPresenter* tours_ = nullptr;
  WindowMenus* menus_ = nullptr;
  SessionMemory* session_ = nullptr;
  LabViews views_;
  QTimer refreshSoon_;  // a redraw at the next turn of the event loop, for every change of the model before it
};

}  // namespace descentlab::widgets
