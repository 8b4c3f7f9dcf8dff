#pragma once
// The editor of one config key (ConfigField), as the experiment panel and the Branch dialog show it: a check box
// for a bool, a drop-down for a key with choices, else a line (numbers as typed). Plain Qt.

#include <QString>
#include <QVariant>
#include <QWidget>

#include <functional>

#include "widgets/experiment_panel.h"

namespace descentlab::widgets {

// An editor holding `field`'s value, named by its key, its tooltip the key's description; `changed` is called on
// every edit.
QWidget* makeConfigEditor(const ConfigField& field, QWidget* parent, const std::function<void()>& changed);
// The editor's value, typed as `field`'s (text that is not a number stays text, for the form to name).
QVariant configEditorValue(const ConfigField& field, const QWidget* editor);
// Sets the editor's value from text as if typed; false when `editor` is not one of these.
bool setConfigEditorText(QWidget* editor, const QString& text);
// "ff width": the key's last part, as a form's label says it.
QString configLabelText(const QString& key);

}  // namespace descentlab::widgets
