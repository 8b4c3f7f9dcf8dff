#include "widgets/plot_helpers.h"

#include <qcustomplot.h>
#include <QComboBox>

#include <algorithm>
#include <cmath>

#include "core/record/noise.h"
#include "widgets/lab_model.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace {

class DistinctLabelTicker : public QCPAxisTicker {
 protected:
  QVector<QString> createLabelVector(const QVector<double>& ticks, const QLocale& locale, QChar formatChar,
                                     int precision) override {
    if (ticks.size() >= 2 && formatChar.toLower() == QLatin1Char('g')) {
      const double step = std::abs(ticks[1] - ticks[0]);
      double largest = 0.0;
      for (double tick : ticks) largest = std::max(largest, std::abs(tick));
      if (step > 0.0 && largest > step) {
        // Significant digits from the largest tick's leading digit down to the step's, and one more for steps
        // such as 2.5.
        const int needed = static_cast<int>(std::floor(std::log10(largest)) - std::floor(std::log10(step))) + 2;
        precision = std::clamp(std::max(precision, needed), 1, 15);
      }
    }
    return QCPAxisTicker::createLabelVector(ticks, locale, formatChar, precision);
  }
};

}  // namespace

QSharedPointer<QCPAxisTicker> distinctLabelTicker() {
  return QSharedPointer<QCPAxisTicker>(new DistinctLabelTicker);
}

QColor towardsWhite(const QColor& colour, double amount) {
  return QColor::fromRgbF(colour.redF() + (1 - colour.redF()) * amount,
                          colour.greenF() + (1 - colour.greenF()) * amount,
                          colour.blueF() + (1 - colour.blueF()) * amount);
}

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width) {
  QStringList lines;
  for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
    QString line;
    for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
      const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
        lines << line;
        line = word;
      } else {
        line = longer;
      }
    }
    lines << line;
  }
  return lines.join(QLatin1Char('\n'));
}

QStringList distinctElide(const QStringList& names, const QFontMetrics& metrics, int width) {
  const QString ellipsis(QChar(0x2026));
  QStringList shortened;
  for (int i = 0; i < names.size(); ++i) {
    const QString& name = names[i];
    if (metrics.horizontalAdvance(name) <= width) {
      shortened << name;
      continue;
    }
    int prefix = 0;
    int suffix = 0;
    for (int j = 0; j < names.size(); ++j) {
      if (j == i || names[j] == name) continue;
      const QString& other = names[j];
      int start = 0;
      while (start < name.size() && start < other.size() && name[start] == other[start]) ++start;
      int end = 0;
      while (end < name.size() - start && end < other.size() &&
             name[name.size() - 1 - end] == other[other.size() - 1 - end]) {
        ++end;
      }
      prefix = std::max(prefix, start);
      suffix = std::max(suffix, end);
    }
    int begin = prefix;
    int end = static_cast<int>(name.size()) - suffix;
    if (begin >= end || (begin == 0 && end == name.size())) {  // nothing tells it apart: the usual middle elision
      shortened << metrics.elidedText(name, Qt::ElideMiddle, width);
      continue;
    }
    // A closing count ("(3 seeds)", "(5 runs, 3 seeds)") says what a group's band is made of: it is kept after the
    // part that tells the name apart, where both fit (a group legend read "…horst…", without its count).
    const int paren = static_cast<int>(name.lastIndexOf(QStringLiteral(" (")));
    const QString tail = name.endsWith(QLatin1Char(')')) && paren >= end ? name.mid(paren) : QString();
    const int tailStart = tail.isEmpty() ? static_cast<int>(name.size()) : paren;
    const auto shown = [&](int from, int to) {  // `to` never passes tailStart
      QString text = (from > 0 ? ellipsis : QString()) + name.mid(from, to - from);
      if (to < tailStart) text += ellipsis;
      return text + tail;
    };
    const auto fits = [&](int from, int to) { return metrics.horizontalAdvance(shown(from, to)) <= width; };
    if (!fits(begin, end)) {
      // Without the count, if the distinct part alone fits.
      const QString plain = (begin > 0 ? ellipsis : QString()) + name.mid(begin, end - begin) +
                            (end < name.size() ? ellipsis : QString());
      shortened << metrics.elidedText(plain, Qt::ElideRight, width);
      continue;
    }
    // Context on both sides, a character at a time, the start first, while it fits.
    for (bool grew = true; grew;) {
      grew = false;
      if (begin > 0 && fits(begin - 1, end)) {
        --begin;
        grew = true;
      }
      if (end < tailStart && fits(begin, end + 1)) {
        ++end;
        grew = true;
      }
    }
    shortened << shown(begin, end);
  }
  return shortened;
}

void placeholder(QCustomPlot* plot, QCPAxisRect* rect, const QString& text) {
  auto* item = new QCPItemText(plot);
  item->setClipToAxisRect(false);
  item->position->setType(QCPItemPosition::ptAxisRectRatio);
  item->position->setAxisRect(rect);
  item->position->setCoords(0.5, 0.5);
  // Wrapped to the plot's width: a λ view at 1024x700 cut "… trains without constraints (ERM) …" at both ends.
  // Views redraw when their width changes, so the lines follow it.
  const int width = rect->width() > 60 ? rect->width() - 16 : std::max(plot->width() - 96, 120);
  item->setText(wrapToWidth(text, QFontMetrics(item->font()), width));
  item->setColor(QColor(120, 120, 120));
  item->setTextAlignment(Qt::AlignCenter);
}

QCPItemText* cornerNote(QCustomPlot* plot, QCPAxisRect* rect, double x, double y, Qt::Alignment alignment,
                        const QString& text, const QColor& colour) {
  auto* note = new QCPItemText(plot);
  note->setClipAxisRect(rect);
  note->position->setAxisRect(rect);
  note->position->setType(QCPItemPosition::ptAxisRectRatio);
  note->position->setCoords(x, y);
  note->setPositionAlignment(alignment);
  note->setText(text);
  note->setColor(colour);
  note->setBrush(QColor(255, 255, 255, 210));
  note->setPadding(QMargins(3, 1, 3, 1));
  return note;
}

void setupLegend(QCustomPlot* plot) {
  plot->legend->setVisible(true);
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setBorderPen(Qt::NoPen);
  QFont legendFont = plot->font();
  legendFont.setPointSizeF(legendFont.pointSizeF() * 0.9);
  plot->legend->setFont(legendFont);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->legend->setWrap(2);
  plot->legend->setMargins(QMargins(4, 3, 4, 0));
  plot->axisRect(0)->insetLayout()->take(plot->legend);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);
  plot->plotLayout()->setRowSpacing(0);
}

int nearestIndex(const QVector<double>& steps, double x) {
  if (steps.isEmpty()) return -1;
  const auto after = std::lower_bound(steps.begin(), steps.end(), x);
  if (after == steps.begin()) return 0;
  if (after == steps.end()) return static_cast<int>(steps.size()) - 1;
  const auto index = static_cast<int>(after - steps.begin());
  return x - steps[index - 1] <= steps[index] - x ? index - 1 : index;
}

QString shortNumber(double value) {
  return std::isfinite(value) ? QString::number(value, 'g', 5) : QStringLiteral("—");
}

QString roundTripNumber(double value) {
  return std::isfinite(value) ? QString::number(value, 'g', QLocale::FloatingPointShortest) : QString();
}

QCPGraph* addBand(QCustomPlot* plot, QCPAxis* x, QCPAxis* y, const QVector<double>& keys, const QVector<double>& mean,
                  const QVector<double>& low, const QVector<double>& high, const QColor& colour, const QString& name) {
  QColor edge = colour;
  edge.setAlpha(90);
  QColor fill = colour;
  fill.setAlpha(45);
  auto* lower = plot->addGraph(x, y);
  lower->setData(keys, low, true);
  lower->setPen(QPen(edge, 1));
  lower->removeFromLegend();
  auto* upper = plot->addGraph(x, y);
  upper->setData(keys, high, true);
  upper->setPen(QPen(edge, 1));
  upper->setBrush(fill);
  upper->setChannelFillGraph(lower);
  upper->removeFromLegend();
  auto* line = plot->addGraph(x, y);
  line->setData(keys, mean, true);
  line->setPen(QPen(colour, 2));
  if (keys.size() < 12) line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colour, Qt::white, 6));
  line->setName(name);
  return line;
}

void bindToRun(QCustomPlot* plot, QCPAbstractPlottable* plottable, const RunData& run) {
  plottable->setProperty("runId", run.id);
  plottable->setVisible(run.visible);
  styleLegendEntry(plot, plottable, !run.visible);
}

void bindToGroup(QCPAbstractPlottable* plottable, const RunGroup& group) {
  plottable->setProperty("groupLabel", group.label);
}

void styleLegendEntry(QCustomPlot* plot, QCPAbstractPlottable* plottable, bool hidden) {
  if (auto* item = plot->legend->itemWithPlottable(plottable)) {
    QFont font = plot->legend->font();
    font.setStrikeOut(hidden);
    item->setFont(font);
    item->setTextColor(hidden ? QColor(150, 150, 150) : QColor(Qt::black));
  }
}

void fitLogTicks(QCPAxis* axis) {
  if (axis->scaleType() != QCPAxis::stLogarithmic) return;
  const QCPRange range = axis->range();
  const bool underDecade = range.lower > 0 && range.upper / range.lower < 10.0;
  const bool hasLogTicker = !axis->ticker().dynamicCast<QCPAxisTickerLog>().isNull();
  if (underDecade && hasLogTicker) {
    axis->setTicker(distinctLabelTicker());
  } else if (!underDecade && !hasLogTicker) {
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
  }
  axis->setNumberFormat(QStringLiteral("g"));
}

QStringList itemDataList(const QComboBox* box) {
  QStringList data;
  for (int i = 0; i < box->count(); ++i) data << box->itemData(i).toString();
  return data;
}

bool selectData(QComboBox* box, const QString& value) {
  const int index = box->findData(value);
  if (index < 0) return false;
  box->setCurrentIndex(index);
  return true;
}

QComboBox* keepChoice(QComboBox* box, const QStringList& items, const QString& fallback) {
  const QString current = box->currentData().toString().isEmpty() ? fallback : box->currentData().toString();
  if (itemDataList(box) == items) return box;
  const QSignalBlocker blocker(box);
  box->clear();
  for (const auto& item : items) box->addItem(item, item);
  if (!selectData(box, current)) box->setCurrentIndex(0);
  return box;
}

QStringList noiseKinds(bool video) {
  QStringList kinds;
  for (const auto& kind : record::noise_kinds(video)) kinds << QString::fromStdString(kind);
  return kinds;
}

bool sweepable(const RunData* run) {
  return run &&
         (run->kind == RunKind::Layerwise || run->config.value(QStringLiteral("task")) == QLatin1String("torchscript"));
}

QStringList noiseKindsOf(const RunData* run) {
  if (run && !run->noiseKinds.isEmpty()) return run->noiseKinds;
  return noiseKinds(run && run->config.value(QStringLiteral("task")) == QLatin1String("video"));
}

}  // namespace descentlab::widgets
