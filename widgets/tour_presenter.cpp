#include "widgets/tour_presenter.h"

#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QTimer>

#include "widgets/dismissable_bar.h"
#include "widgets/dock_layout.h"
#include "widgets/layer_loss_view.h"
#include "widgets/training_curves_view.h"

namespace descentlab::widgets {

TourPresenter::TourPresenter(DockLayout& docks, QWidget* barParent) : QObject(barParent), docks_(docks) {
  // A tour's caption: what to watch and what it means, until dismissed.
  box_ = makeDismissableBar(barParent, caption_, QStringLiteral("Hide the tour's caption (its runs go on)"));
  box_->setObjectName(QStringLiteral("tour-caption"));
  box_->setStyleSheet(QStringLiteral("background: #e4f0fb; color: #10324f;"));
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  // One sentence until the user asks for more: at 1024x700 the whole caption filled the middle column.
  connect(caption_, &QLabel::linkActivated, this,
          [this](const QString& link) { setTourCaptionExpanded(link == QLatin1String("#more")); });
}

void TourPresenter::setMenu(QMenu* menu) {
  menu_ = menu;
  menu_->setEnabled(false);
}

void TourPresenter::setViews(TrainingCurvesView* curves, LayerLossView* layerLoss) {
  curves_ = curves;
  layerLoss_ = layerLoss;
}

void TourPresenter::setTours(const QVector<TourInfo>& tours) {
  menu_->clear();
  for (const auto& tour : tours) {
    const QString runs = tour.runs == 0   ? QStringLiteral("the playground")
                         : tour.runs == 1 ? QStringLiteral("1 run")
                                          : QStringLiteral("%1 runs side by side").arg(tour.runs);
    QAction* action = menu_->addAction(QStringLiteral("%1 (%2)").arg(tour.title, runs));
    action->setToolTip(tour.caption);
    action->setStatusTip(tour.caption);
    action->setData(tour.name);
    const QString name = tour.name;
    connect(action, &QAction::triggered, this, [this, name] { emit tourRequested(name); });
  }
  menu_->addSeparator();
  const bool withSeeds = toursWithSeeds();
  withSeeds_ = menu_->addAction(QStringLiteral("Run each tour with its measured seeds"));
  withSeeds_->setCheckable(true);
  withSeeds_->setChecked(withSeeds);
  withSeeds_->setToolTip(
      QStringLiteral("A tour then trains each of its runs once per seed its effect was measured over (docs/tours.md), "
                     "two at a time, and the views draw each run's seeds as a group: its mean with a band"));
  menu_->setToolTipsVisible(true);
  menu_->setEnabled(!tours.isEmpty());
}

bool TourPresenter::toursWithSeeds() const {
  return withSeeds_ && withSeeds_->isChecked();
}

void TourPresenter::setToursWithSeeds(bool on) {
  if (withSeeds_) withSeeds_->setChecked(on);
}

void TourPresenter::setTourCaptionExpanded(bool expanded) {
  const TourInfo& tour = shown_;
  const QString title = QStringLiteral("<b>Tour: %1.</b> ").arg(tour.title.toHtmlEscaped());
  if (tour.watch.isEmpty()) {
    caption_->setText(title + tour.caption.toHtmlEscaped());
  } else if (expanded) {
    // "Less" first: in a 1024x700 window the whole caption is taller than the bar and its end is cut off.
    caption_->setText(title + QStringLiteral("<a href=\"#less\">Less</a> ") + tour.caption.toHtmlEscaped());
  } else {
    caption_->setText(title + tour.watch.toHtmlEscaped() +
                      QStringLiteral(" <a href=\"#more\">More: what it means</a>"));
  }
  caption_->setToolTip(expanded || tour.watch.isEmpty() ? QString() : tour.caption);
}

void TourPresenter::showTour(const TourInfo& tour) {
  shown_ = tour;
  setTourCaptionExpanded(false);
  box_->show();
  if (!tour.curves.isEmpty()) curves_->setMetric(tour.curves);
  if (!tour.layerLoss.isEmpty()) layerLoss_->setMode(tour.layerLoss);
  // Its views in front, after the dock area has applied showRelevantDocks' hides for the runs just added.
  const QStringList views = tour.views;
  QTimer::singleShot(0, &docks_, [docks = &docks_, views] { docks->arrangeForTour(views); });
}

QString TourPresenter::tourCaption() const {
  return box_->isHidden() ? QString() : caption_->text();
}

}  // namespace descentlab::widgets
