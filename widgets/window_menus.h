#pragma once
// The window's menu bar and what its entries open: File (open run files or a folder as a study, Open recent, Save run
// as, Export all views, Quit), Run (start, the selected run's pause / resume / stop, next / previous run, hide, close),
// View (each dock, Groups, Reset layout) and Help (Tours, Getting started, Environment). The Run menu's entries follow
// the selected run's state.

#include <QObject>
#include <QStringList>
#include <QVector>

#include "widgets/help_pages.h"

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;

namespace descentlab::widgets {

class DockLayout;
class ExperimentPanel;
class LabModel;
class MessageBar;
class PlotView;

// Writes every view as PNG, SVG, PDF and CSV into `directory`, and the whole `window` as dashboard.png; returns the
// files written (File > Export all views).
QStringList exportViews(const QVector<PlotView*>& views, QWidget& window, const QString& directory);

class WindowMenus : public QObject {
  Q_OBJECT

 public:
  // Builds the menu bar of `window`, whose docks are all made (View lists them).
  WindowMenus(QMainWindow& window, LabModel& model, ExperimentPanel& experiment, DockLayout& docks,
              MessageBar& messages, const EnvironmentSummary& summary);
  QMenu* recentMenu() const { return recentMenu_; }  // File > Open recent (SessionMemory fills it)
  QMenu* toursMenu() const { return toursMenu_; }    // Help > Tours (TourPresenter fills it)
  // A dock made later (the playground's), first in the View menu.
  void addDockToggle(QDockWidget* dock);
  // The selected run's controls, in the Run menu and the experiment panel, follow its state.
  void updateRunControls();
  // Help > Environment and datasets: the datasets' lines, once read.
  void setDatasetLines(const QStringList& lines) { summary_.datasets = lines; }
  // Draws runs that differ only by their seeds as groups, by `keys` (empty: every differing key but the seeds), or
  // every run on its own; View > Groups > Draw seeds as groups shows which.
  void setGrouping(bool on, const QStringList& keys);

 signals:
  void pauseRequested(const QString& runId);
  void resumeRequested(const QString& runId);
  void stopRequested(const QString& runId);
  void closeRunRequested(const QString& runId);
  void annotateRequested(const QString& runId);  // Name, tags and note… of the selected run
  void branchRequested(const QString& runId);    // Branch… of the selected run
  void openRequested(const QStringList& paths);
  void openFolderRequested(const QString& folder);
  void saveRequested(const QString& runId, const QString& path);
  void exportRequested(const QString& directory);  // File > Export all views, into this folder

 private:
  void buildFileMenu();
  void buildRunMenu();
  void buildViewMenu();
  void buildGroupMenu(QMenu* menu);
  void buildHelpMenu();
  // Selects the run `offset` rows after the selected one (Run > Next / Previous run).
  void selectNeighbourRun(int offset);
  void openWithDialog();
  void openFolderWithDialog();
  void saveWithDialog();
  void exportAllWithDialog();

  QMainWindow& window_;
  LabModel& model_;
  ExperimentPanel& experiment_;
  DockLayout& docks_;
  MessageBar& messages_;
  EnvironmentSummary summary_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QMenu* toursMenu_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* resumeAction_ = nullptr;
  QAction* stopAction_ = nullptr;
  QAction* closeAction_ = nullptr;
  QAction* nextAction_ = nullptr;
  QAction* previousAction_ = nullptr;
  QAction* hideAction_ = nullptr;
  QAction* annotateAction_ = nullptr;
  QAction* branchAction_ = nullptr;
  QAction* groupAction_ = nullptr;
};

}  // namespace descentlab::widgets
