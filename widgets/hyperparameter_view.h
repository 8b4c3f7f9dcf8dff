#pragma once
// The Study dock's hyper-parameter view (issue 35 item 5): a final metric against a config key, one point per run
// coloured by its group (a log x axis for rates and keys spanning two decades or more; a key whose values are words
// gets one column per word), or parallel coordinates over chosen keys and the metric, one line per run. Reads the
// study's rows only (each run's config and final values): nothing is read from the run files. Plain Qt; no LibTorch.

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "widgets/study_rows.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLineEdit;

namespace descentlab::widgets {

class HyperparameterView : public QWidget {
  Q_OBJECT

 public:
  explicit HyperparameterView(QWidget* parent = nullptr);

  // The study as the browser shows it: its runs, those the filter keeps, their groups, the keys that vary and the
  // metric compared.
  void setStudy(const QVector<StudyRunRow>& runs, const QVector<bool>& kept, const QVector<StudyGroupRow>& groups,
                const QStringList& varyingKeys, const QString& metric);

  enum class Mode { MetricAgainstKey, ParallelCoordinates };
  void setMode(Mode mode);
  Mode mode() const;
  // The x key of the metric-against-key plot (one of the varying keys).
  void setKey(const QString& key);
  QString key() const;
  bool logX() const;
  void setLogX(bool on);
  // The keys of the parallel coordinates (empty: every varying key but the seeds), the metric last.
  void setParallelKeys(const QStringList& keys);
  QStringList parallelAxes() const { return parallelAxes_; }

  // One run as drawn: x the key's value (a word's column index), y the metric; `group` an index into the groups.
  struct Point {
    QString run;
    int group = -1;
    double x = 0, y = 0;
  };
  const QVector<Point>& points() const { return points_; }
  // Parallel coordinates: per run drawn, its value on each axis scaled to [0, 1] between the axis' least and largest
  // (by the logarithm where the axis spans two decades or more).
  const QVector<QVector<double>>& lines() const { return lines_; }
  QCustomPlot* plot() const { return plot_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void redraw();
  // The metric axis' tick count and label for the plot's height.
  void fitYAxisToHeight();
  // The runs drawn (in a group, with the metric), and each one's group index.
  QVector<const StudyRunRow*> drawnRuns(QVector<int>& groupOf) const;
  void drawMetricAgainstKey();
  void drawParallelCoordinates();

  QVector<StudyRunRow> runs_;
  QVector<bool> kept_;
  QVector<StudyGroupRow> groups_;
  QStringList varyingKeys_;
  QString metric_;
  QStringList parallelKeys_;
  QStringList parallelAxes_;
  QVector<Point> points_;
  QVector<QVector<double>> lines_;
  bool logXChosen_ = false;  // by the user: the automatic choice no longer applies

  QComboBox* mode_ = nullptr;
  QComboBox* key_ = nullptr;
  QCheckBox* logX_ = nullptr;
  QLineEdit* parallel_ = nullptr;
  QCustomPlot* plot_ = nullptr;
};

}  // namespace descentlab::widgets
