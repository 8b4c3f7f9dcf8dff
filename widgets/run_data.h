#pragma once
// What the views draw for one run: plain Qt data, filled from live events (app/ translates the engine's events) or
// from a run file. No LibTorch and no core headers: the app copies into these types.

#include <QColor>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>

#include "core/record/descent_certificate.h"
#include "core/record/metrics.h"

namespace descentlab::widgets {

struct ScalarTrack {
  QVector<double> steps;
  QVector<double> values;
  QVector<double> wallTimes;  // seconds since the Unix epoch of each row (0 where unknown)
};

// One value per layer at each row (layer losses, λ, slack, descending frequency, near-zero shares).
struct VectorTrack {
  int width = 0;
  QVector<double> steps;
  QVector<QVector<double>> rows;
};

// Weight-magnitude histograms of one name ("global", a layer, a tensor) over time, on fixed |w| bins.
struct HistogramTrack {
  QVector<double> edges;  // bins + 1
  QVector<double> steps;
  QVector<QVector<double>> counts;  // per snapshot, bins
};

// A robustness sweep: metric[g * seeds + s] for strength gamma[g] and seed s.
struct SweepTrack {
  QString noise;
  QString metric;
  QVector<double> gamma;
  int seeds = 0;
  QVector<double> values;
};

// Which paper's engine a run belongs to: set by the app from the config (core/config's is_layerwise), so views
// know what a run will show before its first evaluation.
enum class RunKind { Unknown, Layerwise, Sparse };

// What the user chose for a robustness sweep before starting it (the robustness view's controls).
struct SweepChoice {
  QString noise;                               // gaussian | uniform | discrete (text runs); video (video runs)
  QString gamma = QStringLiteral("0:2:0.25");  // start:stop:step or a,b,c
  int seeds = 3;
};

// A robustness sweep under way on a run, as the runs table shows it.
struct SweepActivity {
  bool running = false;
  QString noise;
  int done = 0;  // cells (γ, seed) finished, of `cells`
  int cells = 0;
  int gammaIndex = 0;  // the cell under way: γ gammaIndex + 1 of gammas, seed `seed`
  int gammas = 0;
  int seed = 0;
  double etaSeconds = -1.0;
};

// Watching: an opened run file that another process (a CLI run, rank 0 of a data-parallel run) is writing; the window
// re-reads each commit and cannot pause, stop or resume it.
enum class RunState { Loaded, Starting, Running, Paused, Stopping, Finished, Stopped, Failed, Watching };
QString runStateName(RunState state);

class RunData {
 public:
  QString id;    // stable for the life of the app
  QString name;  // shown in legends: the experiment name, made unique
  // A run read from its file is named by its config (LabModel::addRun): its experiment and seed, then, where other
  // runs of that experiment are open, the keys in which they differ ("vit-quick seed 0, optimizer horst"). False for
  // a run the lab started or a tour named, whose name is kept as given.
  bool nameFromConfig = false;
  // What a person said of the run (Run > Name, tags and note; kept in its run file): a name that replaces the
  // automatic one while it is set, tags and a note. `automaticName` is the name the run had before it was named.
  QString ownName;
  QStringList tags;
  QString note;
  QString automaticName;
  // A branch of another run (issue 55): the settings it changed ("constraints.alpha 0.4 -> 0.1; ...") and the step it
  // branched at (-1: not a branch). Its name by config reads "video-erm seed 0 › alpha 0.1 @ step 200".
  QString branchChanges;
  int64_t branchStep = -1;
  QString branchParent;  // the parent's run file, as the child recorded it (absolute)
  // What is wrong with that parent when the run was opened ("" when it is the one branched from): moved, another run
  // at its path, or a changed checkpoint, naming the hashes (core/store/parent_check.h).
  QString branchParentProblem;
  QString path;  // its run file
  QColor colour;
  bool visible = true;            // the user can hide a run from every multi-run view (legend click, runs table)
  QMap<QString, QString> config;  // flattened config keys ("train.lr") to their JSON text
  // The noise kinds a sweep or the probe can draw on this run's inputs, set by the app for a user's model (by its
  // data file: gaussian and uniform on floats, discrete on tokens); empty: the task's (text or video) kinds.
  QStringList noiseKinds;
  QString metric;  // "accuracy", "rmse" or "perplexity" (empty until known)
  RunKind kind = RunKind::Unknown;
  bool constrained = false;  // a layerwise run with constraints on (it has λ)
  QString description;
  QString device;

  RunState state = RunState::Loaded;
  int64_t totalSteps = 0;
  int64_t firstStep = 0;
  int64_t currentStep = 0;
  double stepsPerSecond = 0.0;       // live, over the last seconds
  double finalStepsPerSecond = 0.0;  // the engine's figure for the whole run, once it has ended
  QStringList log;
  QString error;
  SweepActivity sweep;  // a robustness sweep of this run under way
  // Its run file holds a "latest" checkpoint that Resume can continue from (a stopped, failed or opened run).
  bool hasLatestCheckpoint = false;
  int64_t latestCheckpointStep = -1;  // where Resume continues (read from the run file; -1 when none)

  QMap<QString, ScalarTrack> scalars;
  QMap<QString, VectorTrack> vectors;
  QMap<QString, HistogramTrack> histograms;
  QMap<QString, SweepTrack> sweeps;

  void addScalar(const QString& name, int64_t step, double wallTime, double value);
  void addVector(const QString& name, int64_t step, const QVector<double>& values);
  void addHistogram(const QString& name, int64_t step, const QVector<double>& edges, const QVector<double>& counts);
  void setSweep(const QString& name, const SweepTrack& sweep);
  void appendLog(const QString& line);
  // Takes what `reread` (the same run file read again) recorded: every track, the steps, the speed and the checkpoint
  // flag. This run keeps its identity (id, name, colour, visibility), its state and its log.
  void replaceRecord(RunData&& reread);
  // Drops every row after `step` (a run resumed from an earlier checkpoint rewrites what came after it).
  void truncateAfter(int64_t step);

  // Forgets the speed samples: after a pause the speed is measured afresh, over running time only.
  void restartSpeed() { speedSamples_.clear(); }
  // Seconds left at the current speed; negative when unknown.
  double etaSeconds() const;
  double progress() const;  // 0..1
  bool isLayerwise() const { return vectors.contains(QLatin1String(record::metric::kTestLayerLoss)); }
  bool isActive() const {
    return state == RunState::Starting || state == RunState::Running || state == RunState::Paused ||
           state == RunState::Stopping;
  }
  // Counts every change, so views redraw only what changed.
  int64_t revision() const { return revision_; }
  void touch() { ++revision_; }

 private:
  friend record::DescentCertificate descentCertificate(const RunData& run);
  // The descent certificate of the newest evaluation (its bootstrap is not free), kept until a new evaluation or a
  // truncation changes the rows it was computed from.
  struct CertificateCache {
    qsizetype counts = -1, losses = -1;
    double step = -1;
    record::DescentCertificate value;
  };
  mutable CertificateCache certificate_;
  int64_t revision_ = 0;
  // Steps per second over a sliding window of (wall time, step) samples.
  QVector<QPair<double, int64_t>> speedSamples_;
};

// What the user can do with a run in its state: the run controls and the runs table's menu both ask this.
struct RunActions {
  bool pause = false;
  bool resume = false;  // a paused run, or a stopped / failed / opened one from its "latest" checkpoint
  bool stop = false;
  bool close = false;  // not while it trains: its thread writes the run file
  // A branch (issue 55): any run with a run file but one starting or stopping (a live one keeps its state as it is
  // then; a watched one, another process's, branches from its latest committed checkpoint).
  bool branch = false;
};
RunActions availableActions(const RunData& run);

// What the run's training loss is measured in: "squared error" for a regression run (its metric RMSE: the video
// tasks, a user's regression), "cross-entropy, nats" for a classification or next-token run, "" while unknown.
QString lossUnit(const RunData& run);
// Whether a scalar series is measured in the run's loss unit (lossUnit): the training loss, the test loss, the
// Lagrangian.
bool isLossSeries(const QString& series);

// The descent certificate of a layerwise run's newest evaluation (core/record/descent_certificate.h), computed once
// per evaluation (the views and the runs table ask at every refresh); invalid when the run has none (a sparse run, no
// evaluation yet, or a run recorded before the per-sample counts existed).
record::DescentCertificate descentCertificate(const RunData& run);
// "72.3 % [70.1, 74.4]" (the overall share and its 95 % interval), and the mean curve: "mean monotone" or
// "mean rises at 4"; empty when invalid.
QString certificateText(const record::DescentCertificate& certificate);
// Every layer's share and interval, and how the intervals are computed: the runs table's tooltip.
QString certificateDetails(const record::DescentCertificate& certificate);

// TensorBoard's smoothing: an exponential moving average with the start-up bias removed.
QVector<double> smoothExponential(const QVector<double>& values, double weight);

// "h:mm:ss" or "m:ss"; "--:--" when unknown.
QString clockText(double seconds);

}  // namespace descentlab::widgets
