#include "widgets/run_annotation_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "widgets/run_data.h"

namespace descentlab::widgets {

QStringList tagsFromText(const QString& text) {
  QStringList tags;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString tag = part.trimmed();
    if (!tag.isEmpty() && !tags.contains(tag)) tags << tag;
  }
  return tags;
}

RunAnnotationDialog::RunAnnotationDialog(const RunData& run, QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("runAnnotationDialog"));
  setWindowTitle(QStringLiteral("Name, tags and note"));
  auto* layout = new QVBoxLayout(this);
  auto* about = new QLabel(
      QStringLiteral("Kept in the run file %1. The views show the name in place of the automatic one; the Runs and "
                     "Study filters find the tags (tag=baseline) and any word of the name or the note.")
          .arg(QFileInfo(run.path).fileName()),
      this);
  about->setWordWrap(true);
  layout->addWidget(about);
  auto* form = new QFormLayout;
  name_ = new QLineEdit(run.ownName, this);
  name_->setObjectName(QStringLiteral("runOwnName"));
  name_->setPlaceholderText(run.ownName.isEmpty() ? run.name : run.automaticName);
  name_->setToolTip(QStringLiteral("Empty: the automatic name, from the run's configuration"));
  form->addRow(QStringLiteral("&Name"), name_);
  tags_ = new QLineEdit(run.tags.join(QStringLiteral(", ")), this);
  tags_->setObjectName(QStringLiteral("runTags"));
  tags_->setPlaceholderText(QStringLiteral("baseline, lr sweep (separated by commas)"));
  form->addRow(QStringLiteral("&Tags"), tags_);
  note_ = new QPlainTextEdit(run.note, this);
  note_->setObjectName(QStringLiteral("runNote"));
  note_->setPlaceholderText(QStringLiteral("What this run is for, what you saw in it"));
  note_->setMinimumHeight(fontMetrics().lineSpacing() * 5);
  form->addRow(QStringLiteral("N&ote"), note_);
  layout->addLayout(form);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(fontMetrics().averageCharWidth() * 60, sizeHint().height());
}

RunAnnotationEdit RunAnnotationDialog::edit() const {
  return {name_->text().trimmed(), tagsFromText(tags_->text()), note_->toPlainText()};
}

}  // namespace descentlab::widgets
