#include "widgets/branch_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QStringList>
#include <QVBoxLayout>

#include "widgets/config_editors.h"
#include "widgets/run_data.h"

namespace descentlab::widgets {
namespace {

QLabel* wrappedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  return label;
}

// "step 40 (latest, kept)" for a checkpoint: its labels, a kept step's ("step-40") said as "kept".
QString keptText(qint64 step, const QString& labels) {
  QStringList words;
  for (const QString& label : labels.split(QStringLiteral(", "))) {
    words << (label.startsWith(QStringLiteral("step-")) ? QStringLiteral("kept") : label);
  }
  return QStringLiteral("step %1 (%2)").arg(step).arg(words.join(QStringLiteral(", ")));
}

}  // namespace

BranchDialog::BranchDialog(const RunData& run, const BranchSource& source, const ExperimentBackend& backend, bool live,
                           int64_t nearStep, QWidget* parent)
    : QDialog(parent), backend_(backend), runPath_(run.path), source_(source) {
  setObjectName(QStringLiteral("branch-dialog"));
  setWindowTitle(QStringLiteral("Branch %1").arg(run.name));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(wrappedLabel(
      QStringLiteral("A new run that continues %1 exactly (its weights, optimizer state, λ, data order and random "
                     "generators) from the step chosen, with the settings you change below. %1 stays as it is.")
          .arg(run.name),
      this));

  auto* fromRow = new QFormLayout();
  from_ = new QComboBox(this);
  from_->setObjectName(QStringLiteral("branch-from"));
  if (live) {
    from_->addItem(
        QStringLiteral("its state now (step %1 or just after: kept when you press Start)").arg(run.currentStep),
        QVariant::fromValue<qlonglong>(BranchChoice::kBranchNow));
  }
  for (const auto& [step, label] : source.kept) {
    from_->addItem(keptText(step, label), QVariant::fromValue<qlonglong>(step));
  }
  fromRow->addRow(QStringLiteral("From"), from_);
  layout->addLayout(fromRow);
  fromNote_ = wrappedLabel(QString(), this);
  fromNote_->setObjectName(QStringLiteral("branch-from-note"));
  if (nearStep >= 0) {
    // The newest kept step at or before the one asked for (the kept list is newest first).
    int nearest = -1;
    for (int index = 0; index < from_->count() && nearest < 0; ++index) {
      const qlonglong step = from_->itemData(index).toLongLong();
      if (step >= 0 && step <= nearStep) nearest = index;
    }
    if (nearest >= 0) {
      from_->setCurrentIndex(nearest);
      fromNote_->setText(
          QStringLiteral("You asked for step %1: the nearest kept checkpoint at or before it is step %2.")
              .arg(nearStep)
              .arg(from_->itemData(nearest).toLongLong()));
    } else {
      fromNote_->setText(
          QStringLiteral("No checkpoint is kept at or before step %1: choose one of those kept.").arg(nearStep));
    }
  }
  fromNote_->setVisible(!fromNote_->text().isEmpty());
  layout->addWidget(fromNote_);

  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  auto* host = new QWidget(scroll);
  auto* columns = new QVBoxLayout(host);
  auto* changeable = new QGroupBox(QStringLiteral("May change from the branch on"), host);
  auto* fixed = new QGroupBox(QStringLiteral("Fixed: the state it continues is made of them"), host);
  auto* changeableForm = new QFormLayout(changeable);
  auto* fixedForm = new QFormLayout(fixed);
  for (const ConfigField& field : source.fields) {
    const bool isFixed = source.fixed.contains(field.key);
    QWidget* editor = makeConfigEditor(field, isFixed ? fixed : changeable, [this] { check(); });
    auto* label = new QLabel(field.key, isFixed ? fixed : changeable);
    if (isFixed) {
      editor->setEnabled(false);
      editor->setToolTip(QStringLiteral("<b>%1</b> cannot change in a branch: %2")
                             .arg(field.key, source.fixed.value(field.key).toHtmlEscaped()));
      fixedForm->addRow(label, editor);
    } else {
      editors_.insert(field.key, editor);
      changeableForm->addRow(label, editor);
    }
    label->setToolTip(editor->toolTip());
    label->setBuddy(editor);
  }
  columns->addWidget(changeable);
  columns->addWidget(fixed);
  columns->addStretch();
  scroll->setWidget(host);
  layout->addWidget(scroll, 1);

  verdict_ = wrappedLabel(QString(), this);
  verdict_->setObjectName(QStringLiteral("branch-verdict"));
  layout->addWidget(verdict_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  start_ = buttons->addButton(QStringLiteral("Start the branch"), QDialogButtonBox::AcceptRole);
  start_->setObjectName(QStringLiteral("branch-start"));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  if (from_->count() == 0) from_->addItem(QStringLiteral("no checkpoint is kept yet"), QVariant());
  resize(620, 640);
  check();
}

BranchChoice BranchDialog::choice() const {
  BranchChoice choice;
  choice.step = from_->currentData().isValid() ? from_->currentData().toLongLong() : BranchChoice::kBranchNow;
  for (const ConfigField& field : source_.fields) {
    if (source_.fixed.contains(field.key)) continue;
    ConfigField value = field;
    value.value = configEditorValue(field, editors_.value(field.key));
    choice.fields.push_back(value);
  }
  choice.changes = last_.changes;
  return choice;
}

bool BranchDialog::setFieldText(const QString& key, const QString& text) {
  if (!editors_.contains(key)) return false;
  return setConfigEditorText(editors_.value(key), text);
}

QString BranchDialog::verdictText() const {
  return verdict_->text();
}

bool BranchDialog::startEnabled() const {
  return start_->isEnabled();
}

void BranchDialog::check() {
  if (!verdict_) return;  // editors made before the verdict line exists
  last_ = backend_.checkBranch(runPath_, choice().fields);
  const bool fromSomewhere = from_->currentData().isValid();
  if (!last_.error.isEmpty()) {
    verdict_->setStyleSheet(QStringLiteral("color: #b00020;"));
    verdict_->setText(last_.error);
  } else {
    verdict_->setStyleSheet(QString());
    QString text = last_.changes.isEmpty()
                       ? QStringLiteral("Nothing changed yet: the branch would continue as the run itself does.")
                       : QStringLiteral("Changes: ") +
                             QString(last_.changes).replace(QStringLiteral(" -> "), QStringLiteral(" → "));
    for (const QString& note : last_.notes) text += QStringLiteral("\n• ") + note;
    if (!fromSomewhere) text += QStringLiteral("\nThis run keeps no checkpoint to branch from yet.");
    verdict_->setText(text);
  }
  start_->setEnabled(last_.error.isEmpty() && fromSomewhere);
}

}  // namespace descentlab::widgets
