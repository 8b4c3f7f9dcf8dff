#include "widgets/config_editors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>

namespace descentlab::widgets {

QWidget* makeConfigEditor(const ConfigField& field, QWidget* parent, const std::function<void()>& changed) {
  QWidget* editor = nullptr;
  if (field.value.typeId() == QMetaType::Bool) {
    auto* box = new QCheckBox(parent);
    box->setChecked(field.value.toBool());
    QObject::connect(box, &QCheckBox::toggled, parent, [changed] { changed(); });
    editor = box;
  } else if (!field.choices.isEmpty()) {
    auto* box = new QComboBox(parent);
    box->addItems(field.choices);
    box->setCurrentText(field.value.toString());
    QObject::connect(box, &QComboBox::currentTextChanged, parent, [changed] { changed(); });
    editor = box;
  } else {
    auto* line = new QLineEdit(parent);
    line->setText(field.value.typeId() == QMetaType::Double ? QString::number(field.value.toDouble(), 'g', 10)
                                                            : field.value.toString());
    QObject::connect(line, &QLineEdit::textChanged, parent, [changed] { changed(); });
    editor = line;
  }
  editor->setObjectName(field.key);
  editor->setToolTip(field.about.isEmpty() ? field.key : QStringLiteral("<b>%1</b><br>%2").arg(field.key, field.about));
  editor->setMinimumWidth(60);
  return editor;
}

QVariant configEditorValue(const ConfigField& field, const QWidget* editor) {
  if (const auto* box = qobject_cast<const QCheckBox*>(editor)) return box->isChecked();
  if (const auto* combo = qobject_cast<const QComboBox*>(editor)) return combo->currentText();
  const auto* line = qobject_cast<const QLineEdit*>(editor);
  if (!line) return field.value;
  const QString text = line->text().trimmed();
  bool ok = false;
  if (field.value.typeId() == QMetaType::LongLong || field.value.typeId() == QMetaType::Int) {
    const qlonglong number = text.toLongLong(&ok);
    return ok ? QVariant(number) : QVariant(text);
  }
  if (field.value.typeId() == QMetaType::Double) {
    const double number = text.toDouble(&ok);
    return ok ? QVariant(number) : QVariant(text);
  }
  return text;
}

bool setConfigEditorText(QWidget* editor, const QString& text) {
  if (auto* line = qobject_cast<QLineEdit*>(editor)) {
    line->setText(text);
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    combo->setCurrentText(text);
  } else if (auto* box = qobject_cast<QCheckBox*>(editor)) {
    box->setChecked(text == QStringLiteral("true"));
  } else {
    return false;
  }
  return true;
}

QString configLabelText(const QString& key) {
  return key.section(QLatin1Char('.'), 1).replace(QLatin1Char('_'), QLatin1Char(' '));
}

}  // namespace descentlab::widgets
