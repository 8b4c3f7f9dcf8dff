#pragma once
// Helpers the live views share (their .cpp files only): the empty-plot hint, the legend row, and keeping a combo
// box's choice while its entries change.

#include <QColor>
#include <QSharedPointer>
#include <QString>
#include <QStringList>
#include <QVector>

class QComboBox;
class QCPAbstractPlottable;
class QCPAxis;
class QFontMetrics;
class QCPAxisRect;
class QCPAxisTicker;
class QCPGraph;
class QCPItemText;
class QCustomPlot;

namespace descentlab::widgets {

struct RunGroup;

class RunData;

// Ties a plottable to its run: a click on its legend entry hides or shows the run (PlotView), and a hidden run's
// curve is not drawn while its legend entry stays, greyed and struck out, to be clicked back on.
void bindToRun(QCustomPlot* plot, QCPAbstractPlottable* plottable, const RunData& run);
// Ties a group's mean line to the group: a click on its legend entry hides or shows the whole group (PlotView).
void bindToGroup(QCPAbstractPlottable* plottable, const RunGroup& group);
// A legend entry of something hidden from the plots: struck out and grey (black again when shown).
void styleLegendEntry(QCustomPlot* plot, QCPAbstractPlottable* plottable, bool hidden);

// A linear axis ticker whose labels always tell neighbouring ticks apart: with QCustomPlot's 6 significant digits,
// two runs' training losses 2e-6 apart (the first points of a tour's pair) were labelled 0.721279, 0.721279, 0.721278.
// It writes as many digits as the tick step needs.
QSharedPointer<QCPAxisTicker> distinctLabelTicker();

// A log axis over less than a decade has no power of ten to label: it gets evenly spaced ticks instead. Call after
// the axis range changed.
void fitLogTicks(QCPAxis* axis);

// `colour` moved towards white by `amount` (0: the colour; 1: white): older evaluations drawn behind the newest.
QColor towardsWhite(const QColor& colour, double amount);

// A group of runs (issue 35): its mean as a line of `colour` named `name` in the legend, over a translucent band from
// `low` to `high` (kept out of the legend). Returns the mean's graph. Few points (under 12) are marked, so a single
// evaluation still shows.
QCPGraph* addBand(QCustomPlot* plot, QCPAxis* x, QCPAxis* y, const QVector<double>& keys, const QVector<double>& mean,
                  const QVector<double>& low, const QVector<double>& high, const QColor& colour, const QString& name);

// A grey hint in the middle of an empty axis rect, its words wrapped to the rect's width.
void placeholder(QCustomPlot* plot, QCPAxisRect* rect, const QString& text);

// Each of `names` shortened to `width` where it is wider, around the part that tells it from the others (after
// the longest start and before the longest end it shares with another name), with "…" where it was cut: elided in
// the middle, a tour's two runs reopened from their files both read "horst-…164443" (issue 33).
QStringList distinctElide(const QStringList& names, const QFontMetrics& metrics, int width);

// `text` with its lines broken between words so that none is wider than `width` (a word wider stays whole).
QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width);

// A note in a corner of an axis rect (x, y as shares of the rect; `alignment` which corner of the text sits there),
// on a white backing so it stays readable over curves; grey unless `colour` is given.
QCPItemText* cornerNote(QCustomPlot* plot, QCPAxisRect* rect, double x, double y, Qt::Alignment alignment,
                        const QString& text, const QColor& colour = QColor(90, 90, 90));

// The legend in its own row above the plots, filled left to right: it never hides data, however small the dock.
void setupLegend(QCustomPlot* plot);

// The index of the step nearest `x` in increasing `steps`; -1 when there is none.
int nearestIndex(const QVector<double>& steps, double x);
// A value for a readout: 5 significant digits; "—" when not finite.
QString shortNumber(double value);
// A value for a CSV export: the shortest text that reads back as the same double; empty when not finite.
QString roundTripNumber(double value);

// The data of every entry of `box`, in order.
QStringList itemDataList(const QComboBox* box);

// Selects the entry whose data is `value`; returns false, leaving the selection as it was, when there is none.
bool selectData(QComboBox* box, const QString& value);

// Fills `box` with `items` (each its own data) unless it holds exactly those already; the choice stays (or becomes
// `fallback` when there was none), else the first entry.
QComboBox* keepChoice(QComboBox* box, const QStringList& items, const QString& fallback);

// The noise kinds a text (video = false) or video model takes (core/record/noise.h), for the noise menus.
QStringList noiseKinds(bool video);
class RunData;
// The kinds `run` takes: its own list (a user's model), else a video or text model's.
QStringList noiseKindsOf(const RunData* run);
// Whether a robustness sweep applies to `run`: a layerwise-descent run, or a run of a user's own model by the sparse
// engine (the torchscript task; swept through its readouts, or its prediction alone).
bool sweepable(const RunData* run);

}  // namespace descentlab::widgets
