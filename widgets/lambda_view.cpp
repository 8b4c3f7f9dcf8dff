#include "widgets/lambda_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QTextStream>

#include <algorithm>

#include "core/record/metrics.h"
#include "widgets/flow_layout.h"
#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {

namespace {

// Why nothing is drawn for the series `name`: `selected` (the focus run) has no multipliers (ERM, or a sparse run),
// or has not recorded any yet.
QString noMultipliersReason(const RunData* selected, const QString& name) {
  QString reason;
  if (name == QLatin1String(record::metric::kResilientSlack)) {
    reason = QStringLiteral("No resilient constrained run\n(constraints.resilient = true)");
  } else if (selected && selected->constrained) {
    reason =
        QStringLiteral("Not recorded yet: %1\n(λ and the slack come with each metric interval)").arg(selected->name);
  } else if (selected && selected->config.value(QStringLiteral("task")) == QLatin1String("torchscript")) {
    reason = QStringLiteral(
                 "%1: sparse training has no layer constraints.\nλ needs constrained layerwise descent:\n"
                 "your-model-layerwise")
                 .arg(selected->name);
  } else if (selected && selected->kind == RunKind::Layerwise) {
    reason = QStringLiteral(
                 "%1 trains without constraints (ERM): it has no multipliers.\nSelect a constrained "
                 "run (text-constrained, video-constrained).")
                 .arg(selected->name);
  } else {
    reason = QStringLiteral("No constrained layerwise run open\n(text-constrained, video-constrained)");
  }
  return reason;
}

}  // namespace

LambdaView::LambdaView(LabModel* model, QWidget* parent)
    : PlotView(model, QStringLiteral("Lagrange multipliers"), parent) {
  series_ = new QComboBox(this);
  series_->addItem(QStringLiteral("λₗ (multipliers)"), QLatin1String(record::metric::kLambda));
  series_->addItem(QStringLiteral("gₗ (training slack)"), QLatin1String(record::metric::kSlack));
  series_->addItem(QStringLiteral("uₗ (resilient relaxation)"), QLatin1String(record::metric::kResilientSlack));
  tools()->addWidget(series_);
  addExportButton();
  styleAxisRect(plot()->axisRect(), QStringLiteral("step"), QStringLiteral("λₗ"));
  setupLegend(plot());
  // Whose multipliers these are, in a strip above the data (the axis rect's top margin): drawn in the plot's
  // corner, the run's name sat on the curves (issue 54).
  plot()->axisRect()->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msBottom);
  plot()->axisRect()->setMargins(QMargins(0, QFontMetrics(plot()->font()).height() + 4, 0, 0));
  connect(series_, &QComboBox::currentIndexChanged, this, [this] { refresh(true); });
}

void LambdaView::setSeries(const QString& name) {
  selectData(series_, name);
}

void LambdaView::rebuild() {
  plot()->clearPlottables();
  plot()->clearItems();
  runTitle_.clear();
  const QString name = series_->currentData().toString();
  plot()->yAxis->setLabel(series_->currentText());
  const RunData* focus = drawnRun();
  if (!focus) {
    // The real reason: the selected run has no multipliers (ERM, or a sparse run), or has not recorded any yet.
    const RunData* selected = model()->focusRun();
    const QString reason = noMultipliersReason(selected, name);
    placeholder(plot(), plot()->axisRect(), reason);
    return;
  }
  QCPColorGradient gradient(QCPColorGradient::gpSpectrum);
  if (const GroupBand band = focusGroupBand(); band.group != nullptr) {
    drawGroupBand(band, gradient);
    return;
  }
  const auto& track = focus->vectors[name];
  for (int layer = 0; layer < track.width; ++layer) {
    QVector<double> values;
    values.reserve(track.rows.size());
    for (const auto& row : track.rows) values.push_back(layer < row.size() ? row[layer] : qQNaN());
    auto* graph = plot()->addGraph();
    graph->setData(track.steps, values, true);
    const double position = track.width > 1 ? static_cast<double>(layer) / (track.width - 1) : 0.0;
    graph->setPen(QPen(QColor(gradient.color(position * 0.85, QCPRange(0, 1))), 1.8));
    graph->setName(QStringLiteral("layer %1").arg(layer + 1));
  }
  if (name == QLatin1String(record::metric::kSlack)) {
    auto* zero = new QCPItemStraightLine(plot());
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
  }
  showRunTitle(focus->name, focus->colour);
  // λ at 0 all along is no plot at all (the window's default video-constrained quick run, issue 17): say why.
  flatAtZero_ = false;
  if (name == QLatin1String(record::metric::kLambda)) {
    double largest = 0.0;
    for (const auto& row : track.rows) {
      for (double value : row) largest = std::max(largest, value);
    }
    flatAtZero_ = !track.rows.isEmpty() && largest == 0.0;
  }
  if (flatAtZero_) explainFlatAtZero(*focus);
}

void LambdaView::drawGroupBand(const GroupBand& band, QCPColorGradient& gradient) {
  // The focus run's group: each layer's mean over the members with its band, over the steps all reached.
  for (int layer = 0; layer < band.width; ++layer) {
    QVector<double> mean, low, high;
    for (int row = 0; row < band.steps.size(); ++row) {
      mean.push_back(band.mean[row * band.width + layer]);
      low.push_back(band.low[row * band.width + layer]);
      high.push_back(band.high[row * band.width + layer]);
    }
    const double position = band.width > 1 ? static_cast<double>(layer) / (band.width - 1) : 0.0;
    addBand(plot(), plot()->xAxis, plot()->yAxis, band.steps, mean, low, high,
            QColor(gradient.color(position * 0.85, QCPRange(0, 1))), QStringLiteral("layer %1").arg(layer + 1));
  }
  QString caption = QStringLiteral("%1: mean, %2 band").arg(band.group->label, bandKindName(model()->bandKind()));
  if (!bandNote(band).isEmpty()) caption += QStringLiteral("; ") + bandNote(band);
  showRunTitle(caption, band.group->colour);
  flatAtZero_ = false;
}

QString LambdaView::runTitle() const {
  return runTitle_;
}

void LambdaView::showRunTitle(const QString& text, const QColor& colour) {
  runTitle_ = text;
  auto* title = new QCPItemText(plot());
  title->position->setType(QCPItemPosition::ptAxisRectRatio);
  title->position->setCoords(1.0, 0.0);
  title->setPositionAlignment(Qt::AlignBottom | Qt::AlignRight);
  title->setClipToAxisRect(false);
  title->setPadding(QMargins(0, 0, 2, 2));
  title->setText(plot()->fontMetrics().elidedText(text, Qt::ElideMiddle, std::max(plot()->axisRect()->width(), 60)));
  title->setColor(colour);
}

void LambdaView::explainFlatAtZero(const RunData& focus) {
  QString slack;
  const auto slacks = focus.vectors.constFind(QLatin1String(record::metric::kSlack));
  if (slacks != focus.vectors.cend() && !slacks->rows.isEmpty() && !slacks->rows.back().isEmpty()) {
    const auto& newest = slacks->rows.back();
    slack = QStringLiteral("; largest slack %1").arg(*std::max_element(newest.begin(), newest.end()), 0, 'g', 2);
  }
  const QString alpha = focus.config.value(QStringLiteral("constraints.alpha"), QStringLiteral("α"));
  auto* why = new QCPItemText(plot());
  why->position->setType(QCPItemPosition::ptAxisRectRatio);
  why->position->setCoords(0.5, 0.4);
  const QString asked = alpha == QLatin1String("α") ? alpha : QStringLiteral("α = %1").arg(alpha);
  // Four lines where the plot has room, two in a squeezed dock (1024x700), so it stays inside the plot.
  why->setText(plot()->axisRect()->rect().height() >= 110
                   ? QStringLiteral("%1: λ = 0, the constraints do not bind\n(each layer already beats the one "
                                    "before\nby the %2 asked%3),\nso this run trains as ERM. A larger α binds.")
                         .arg(focus.name, asked, slack)
                   : QStringLiteral("λ = 0: the constraints do not bind\n(%1 met%2),\nso %3 trains as ERM.")
                         .arg(asked, slack, focus.name));
  why->setColor(QColor(70, 70, 70));
  why->setBrush(QColor(255, 255, 255, 225));
  why->setPadding(QMargins(4, 2, 4, 2));
  why->setClipToAxisRect(false);
}

void LambdaView::resetRanges() {
  PlotView::resetRanges();
  // A flat λ = 0 reads as 0 on a 0-to-1 axis, not as a line among ticks of 1e-6.
  if (flatAtZero_) plot()->yAxis->setRange(-0.05, 1.0);
}

GroupBand LambdaView::focusGroupBand() const {
  const QString name = series_->currentData().toString();
  const RunGroup* group = model()->groupOf(model()->focusRun());
  if (!group) return {};
  QVector<const VectorTrack*> members;
  for (auto* run : group->members) {
    const auto it = run->vectors.constFind(name);
    if (it != run->vectors.cend() && !it->rows.isEmpty()) members.push_back(&*it);
  }
  if (members.isEmpty()) return {};
  GroupBand band = vectorBand(members, model()->bandKind());
  band.group = group;
  band.series = name;
  return band;
}

const RunData* LambdaView::drawnRun() const {
  const QString name = series_->currentData().toString();
  // A run hidden from the plots stays hidden here too, even when it is the focus run.
  const RunData* focus = model()->focusRun();
  if (focus && focus->visible && focus->vectors.contains(name)) return focus;
  for (auto* run : model()->runs()) {
    if (run->visible && run->vectors.contains(name)) return run;
  }
  return nullptr;
}

CsvTable LambdaView::table() const {
  const QString name = series_->currentData().toString();
  if (const GroupBand band = focusGroupBand(); band.group != nullptr) {
    CsvTable table(CsvTable::bandColumns({QStringLiteral("series"), QStringLiteral("step"), QStringLiteral("layer")}));
    table.addBand(band, {name}, [&band](int row, int layer) {
      return QStringList{QString::number(static_cast<qint64>(band.steps[row])), QString::number(layer + 1)};
    });
    return table;
  }
  CsvTable table({QStringLiteral("run"), QStringLiteral("series"), QStringLiteral("step"), QStringLiteral("layer"),
                  QStringLiteral("value")});
  // The one run drawn (the focus run, else the first with the series).
  const RunData* run = drawnRun();
  if (!run) return table;
  const auto it = run->vectors.constFind(name);
  if (it == run->vectors.cend()) return table;
  for (int row = 0; row < it->rows.size(); ++row) {
    for (int layer = 0; layer < it->rows[row].size(); ++layer) {
      table.add({run->name, name, QString::number(static_cast<qint64>(it->steps[row])), QString::number(layer + 1),
                 QString::number(it->rows[row][layer], 'g', 9)});
    }
  }
  return table;
}

}  // namespace descentlab::widgets
