#include "widgets/experiment_panel.h"

#include "widgets/config_editors.h"
#include "widgets/elided_label.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

namespace descentlab::widgets {

ExperimentPanel::ExperimentPanel(const ExperimentBackend& backend, QWidget* parent)
    : QWidget(parent), backend_(backend) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* top = new QFormLayout();
  makeModelSource();
  preset_ = new QComboBox(this);
  showModelSource(false);
  preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  preset_->setMinimumContentsLength(16);
  presetAbout_ = new QLabel(this);
  presetAbout_->setWordWrap(true);
  presetAbout_->setMinimumWidth(200);  // a wrapped label measured at no width would ask for the whole screen
  presetAbout_->setObjectName(QStringLiteral("preset-description"));
  presetAbout_->setStyleSheet(QStringLiteral("color: palette(mid);"));
  size_ = new QComboBox(this);
  size_->addItems({QStringLiteral("quick"), QStringLiteral("full"), QStringLiteral("large")});
  device_ = new QComboBox(this);
  device_->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
  const QString noCuda = backend_.cudaUnavailableReason();
  if (auto* items = qobject_cast<QStandardItemModel*>(device_->model()); items && !noCuda.isEmpty()) {
    QStandardItem* cuda = items->item(2);
    cuda->setEnabled(false);
    cuda->setToolTip(noCuda);
  }
  device_->setToolTip(noCuda.isEmpty() ? QStringLiteral("auto: CUDA when LibTorch sees a GPU, the CPU otherwise")
                                       : QStringLiteral("auto: the CPU here, since ") + noCuda);
  top->addRow(QStringLiteral("Model"), modelSource_);
  top->addRow(QStringLiteral("Preset"), preset_);
  top->addRow(presetAbout_);
  top->addRow(QStringLiteral("Size"), size_);
  top->addRow(QStringLiteral("Device"), device_);
  seeds_ = new QLineEdit(this);
  seeds_->setObjectName(QStringLiteral("experiment-seeds"));
  seeds_->setPlaceholderText(QStringLiteral("one run, the form's seed"));
  seeds_->setToolTip(
      QStringLiteral("Seeds to train, one run each (0,1,2 or 0-4): the views draw them as a group, their mean with "
                     "a band; two train at a time, the others start as those end"));
  seeds_->setClearButtonEnabled(true);
  top->addRow(QStringLiteral("Seeds"), seeds_);
  connect(seeds_, &QLineEdit::textChanged, this, [this] { validateNow(); });
  layout->addLayout(top);

  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::StyledPanel);
  formHost_ = new QWidget(scroll);
  form_ = new QFormLayout(formHost_);
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  // A long key ("exclude embeddings and readout") puts its editor on the next line instead of pushing it out of
  // a narrow dock; the form never scrolls sideways.
  form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(formHost_);
  layout->addWidget(scroll, 1);

  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);
  fetch_ = new QPushButton(this);
  fetch_->setObjectName(QStringLiteral("fetch-dataset"));
  fetch_->setVisible(false);
  connect(fetch_, &QPushButton::clicked, this, [this] {
    if (missingDataset_.isEmpty() || fetching_) return;
    fetchingDataset_ = missingDataset_;
    emit fetchDatasetRequested(missingDataset_);
  });
  layout->addWidget(fetch_);

  target_ = new ElidedLabel(this, Qt::ElideMiddle);
  target_->setObjectName(QStringLiteral("run-controls-target"));
  layout->addWidget(target_);
  layout->addLayout(makeRunButtons());
  setRunControls(QString(), false, false, false, false);

  connect(modelSource_, &QComboBox::currentIndexChanged, this, [this](int index) {
    showModelSource(index == 1);
    rebuildForm();
  });
  connect(preset_, &QComboBox::currentTextChanged, this, [this] { rebuildForm(); });
  connect(size_, &QComboBox::currentTextChanged, this, [this] { rebuildForm(); });
  connect(start_, &QPushButton::clicked, this, &ExperimentPanel::start);
  connect(pause_, &QPushButton::clicked, this, &ExperimentPanel::pauseRequested);
  connect(resume_, &QPushButton::clicked, this, &ExperimentPanel::resumeRequested);
  connect(stop_, &QPushButton::clicked, this, &ExperimentPanel::stopRequested);
  connect(branch_, &QPushButton::clicked, this, &ExperimentPanel::branchRequested);
  rebuildForm();
}

QHBoxLayout* ExperimentPanel::makeRunButtons() {
  auto* buttons = new QHBoxLayout();
  start_ = new QPushButton(QStringLiteral("Start"), this);
  pause_ = new QPushButton(QStringLiteral("Pause"), this);
  resume_ = new QPushButton(QStringLiteral("Resume"), this);
  stop_ = new QPushButton(QStringLiteral("Stop"), this);
  branch_ = new QPushButton(QStringLiteral("Branch…"), this);
  branch_->setObjectName(QStringLiteral("branch-run"));
  branch_->setToolTip(
      QStringLiteral("Branch the selected run: a new run that continues its exact state (weights, optimizer, λ, data "
                     "order) with the settings you change; the run itself stays as it is"));
  start_->setToolTip(QStringLiteral("Start a new run of this experiment (it joins the runs side by side)"));
  pause_->setToolTip(QStringLiteral("Pause the selected run after its current batch"));
  stop_->setToolTip(
      QStringLiteral("Stop the selected run after its current batch; its state is kept, so it can be "
                     "resumed from the run file"));
  for (auto* button : {start_, pause_, resume_, stop_, branch_}) buttons->addWidget(button);
  return buttons;
}

void ExperimentPanel::setPreset(const QString& preset, const QString& size) {
  size_->setCurrentText(size);
  const bool ownFile = backend_.userModelPresets().contains(preset);
  if ((modelSource_->currentIndex() == 1) != ownFile) {
    const QSignalBlocker quiet(modelSource_);
    modelSource_->setCurrentIndex(ownFile ? 1 : 0);
    showModelSource(ownFile);
  }
  preset_->setCurrentText(preset);
  rebuildForm();
}

void ExperimentPanel::makeModelSource() {
  modelSource_ = new QComboBox(this);
  modelSource_->setObjectName(QStringLiteral("model-source"));
  modelSource_->addItem(QStringLiteral("built-in preset"));
  if (!backend_.userModelPresets().isEmpty()) modelSource_->addItem(QStringLiteral("your own file…"));
  modelSource_->setToolTip(
      QStringLiteral("built-in preset: the lab's own models and data; your own file: a TorchScript module (.pt) on "
                     "an HDF5 data file (.h5), trained like the presets (docs/your-model.md)"));
}

void ExperimentPanel::showModelSource(bool ownFile) {
  const QSignalBlocker quiet(preset_);
  preset_->clear();
  for (const auto& name : ownFile ? backend_.userModelPresets() : backend_.presetNames()) {
    preset_->addItem(name);
    preset_->setItemData(preset_->count() - 1, backend_.presetDescription(name), Qt::ToolTipRole);
  }
  if (size_) size_->setEnabled(!ownFile);  // a user's module has one size: its own
}

QWidget* ExperimentPanel::withBrowseButton(QLineEdit* line, const QString& key) {
  const bool model = key.startsWith(QStringLiteral("model."));
  line->setPlaceholderText(model ? QStringLiteral("a TorchScript module, e.g. cnn.pt")
                                 : QStringLiteral("an HDF5 data file, e.g. fashion-mnist.h5"));
  // A path wants room: in a narrow dock the field goes below its label rather than show a few letters.
  line->setMinimumWidth(220);
  auto* host = new QWidget(formHost_);
  auto* row = new QHBoxLayout(host);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(line, 1);
  auto* browse = new QToolButton(host);
  browse->setText(QStringLiteral("…"));
  browse->setObjectName(key + QStringLiteral(".browse"));
  browse->setToolTip(model ? QStringLiteral("Choose the module file") : QStringLiteral("Choose the data file"));
  connect(browse, &QToolButton::clicked, this, [this, line, model] {
    const QString chosen = QFileDialog::getOpenFileName(
        this, model ? QStringLiteral("Your model: a TorchScript module") : QStringLiteral("Your data: an HDF5 file"),
        QFileInfo(line->text()).absolutePath(),
        model ? QStringLiteral("TorchScript modules (*.pt *.pth);;All files (*)")
              : QStringLiteral("HDF5 files (*.h5 *.hdf5);;All files (*)"));
    if (!chosen.isEmpty()) line->setText(chosen);
  });
  row->addWidget(browse);
  return host;
}

QVector<int> parseSeeds(const QString& text, QString* error) {
  QVector<int> seeds;
  const auto fail = [&](const QString& part) {
    if (error) *error = QStringLiteral("\"%1\" is not a seed or a range such as 0-4").arg(part);
    return QVector<int>();
  };
  for (QString part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    part = part.trimmed();
    if (part.isEmpty()) continue;
    const QString range = part.contains(QStringLiteral("..")) ? QStringLiteral("..") : QStringLiteral("-");
    const QStringList ends = part.split(range);
    bool first = false, last = false;
    const int from = ends.value(0).trimmed().toInt(&first);
    const int to = ends.size() == 2 ? ends.value(1).trimmed().toInt(&last) : from;
    if (!first || (ends.size() == 2 && !last) || ends.size() > 2 || from < 0 || to < from) return fail(part);
    if (to - from > 99) {
      if (error) *error = QStringLiteral("%1 are more than 100 runs").arg(part);
      return {};
    }
    for (int seed = from; seed <= to; ++seed) {
      if (!seeds.contains(seed)) seeds << seed;
    }
  }
  return seeds;
}

void ExperimentPanel::setSeedsText(const QString& text) {
  seeds_->setText(text);
}

QString ExperimentPanel::preset() const {
  return preset_->currentText();
}

void ExperimentPanel::start() {
  validateNow();
  if (!start_->isEnabled()) return;
  emit startRequested({preset_->currentText(), size_->currentText(), device_->currentText(), fields(),
                       parseSeeds(seeds_->text(), nullptr)});
}

void ExperimentPanel::setRunControls(const QString& target, bool canPause, bool canResume, bool canStop,
                                     bool canBranch) {
  branch_->setEnabled(canBranch);
  pause_->setEnabled(canPause);
  resume_->setEnabled(canResume);
  stop_->setEnabled(canStop);
  const QString text = target.isEmpty() ? QStringLiteral("No run selected") : QStringLiteral("Selected: ") + target;
  target_->setFullText(text);
  resume_->setToolTip(target.isEmpty() ? QStringLiteral("Resume the selected run")
                                       : QStringLiteral("Resume %1: a paused run goes on; a stopped or opened one "
                                                        "continues from its run file's latest checkpoint")
                                             .arg(target));
}

QString ExperimentPanel::runControlsTarget() const {
  return target_->fullText();
}

void ExperimentPanel::rebuildForm() {
  while (form_->rowCount() > 0) form_->removeRow(0);
  editors_.clear();
  base_ = backend_.presetFields(preset_->currentText(), size_->currentText());
  QString section;
  for (const auto& field : base_) {
    const QString fieldSection = field.key.section(QLatin1Char('.'), 0, 0);
    if (fieldSection != section && field.key.contains(QLatin1Char('.'))) {
      section = fieldSection;
      auto* header = new QLabel(QStringLiteral("<b>%1</b>").arg(section), formHost_);
      form_->addRow(header);
    }
    QWidget* editor = makeConfigEditor(field, formHost_, [this] { validateNow(); });
    editors_.insert(field.key, editor);
    auto* label = new QLabel(configLabelText(field.key), formHost_);
    label->setToolTip(editor->toolTip());
    label->setBuddy(editor);
    auto* line = qobject_cast<QLineEdit*>(editor);
    form_->addRow(label,
                  line && field.key.endsWith(QStringLiteral(".file")) ? withBrowseButton(line, field.key) : editor);
  }
  validateNow();
}

QList<ConfigField> ExperimentPanel::fields() const {
  QList<ConfigField> current;
  for (const auto& field : base_) {
    ConfigField value = field;
    value.value = configEditorValue(field, editors_.value(field.key));
    current.push_back(value);
  }
  return current;
}

bool ExperimentPanel::setFieldText(const QString& key, const QString& text) {
  if (!setConfigEditorText(editors_.value(key), text)) return false;
  validateNow();
  return true;
}

void ExperimentPanel::validateNow() {
  QString problem;
  // A number field with text that is not a number: said here, before the engine sees it.
  const auto current = fields();
  for (int i = 0; i < current.size() && problem.isEmpty(); ++i) {
    const QMetaType::Type wanted = static_cast<QMetaType::Type>(base_[i].value.typeId());
    const QMetaType::Type got = static_cast<QMetaType::Type>(current[i].value.typeId());
    if ((wanted == QMetaType::LongLong || wanted == QMetaType::Double) && got == QMetaType::QString) {
      problem = QStringLiteral("%1: \"%2\" is not %3")
                    .arg(current[i].key, current[i].value.toString(),
                         wanted == QMetaType::LongLong ? QStringLiteral("a whole number") : QStringLiteral("a number"));
    }
  }
  if (problem.isEmpty() && seeds_) {
    QString seedsProblem;
    parseSeeds(seeds_->text(), &seedsProblem);
    if (!seedsProblem.isEmpty()) problem = QStringLiteral("seeds: ") + seedsProblem;
    seeds_->setStyleSheet(seedsProblem.isEmpty() ? QString() : QStringLiteral("background: #fde2e2;"));
  }
  if (problem.isEmpty()) problem = backend_.validate(preset_->currentText(), size_->currentText(), current);
  // The description states the values the form holds, never the preset's own.
  presetAbout_->setText(backend_.presetDescription(preset_->currentText(), current));
  presetAbout_->setVisible(!presetAbout_->text().isEmpty());
  lastMessage_ = problem;
  for (auto it = editors_.cbegin(); it != editors_.cend(); ++it) {
    const bool named = !problem.isEmpty() && problem.contains(it.key());
    it.value()->setStyleSheet(named ? QStringLiteral("background: #fde2e2;") : QString());
  }
  const QString missing =
      problem.isEmpty() ? backend_.missingDataset(preset_->currentText(), size_->currentText(), current) : QString();
  if (missing != missingDataset_ && !fetching_) fetchStatus_.clear();  // an old failure was about another dataset
  missingDataset_ = missing;
  if (!missingDataset_.isEmpty())
    showMissingDataset();
  else if (problem.isEmpty()) {
    message_->setText(QStringLiteral("<span style='color:#1a7f37'>&#10003; valid experiment</span>"));
  } else {
    message_->setText(QStringLiteral("<span style='color:#b00020'>%1</span>").arg(problem.toHtmlEscaped()));
  }
  fetch_->setVisible(!missingDataset_.isEmpty());
  start_->setEnabled(problem.isEmpty() && missingDataset_.isEmpty());
}

// The experiment is valid but its dataset is not in the data folder: say so, and offer the fetch (or show it going).
void ExperimentPanel::showMissingDataset() {
  QString text = fetching_ ? fetchStatus_
                           : QStringLiteral(
                                 "%1 is not fetched yet: fetch it to train this experiment (downloaded "
                                 "once, each file's SHA-256 checked)")
                                 .arg(missingDataset_);
  if (!fetching_ && !fetchStatus_.isEmpty()) text = fetchStatus_;  // why the last try failed; the button says again
  message_->setText(QStringLiteral("<span style='color:%1'>%2</span>")
                        .arg(fetching_ ? QStringLiteral("#444444") : QStringLiteral("#b00020"),
                             text.toHtmlEscaped().replace(QStringLiteral("\n"), QStringLiteral("<br>"))));
  const QString full = fetching_                ? QStringLiteral("Fetching %1…").arg(fetchingDataset_)
                       : fetchStatus_.isEmpty() ? QStringLiteral("Fetch %1").arg(missingDataset_)
                                                : QStringLiteral("Try fetching %1 again").arg(missingDataset_);
  // A button does not elide: in the 250 px panel of a 1024x700 window "Try fetching fashion-mnist again" was cut
  // to "…fashion-mni". Where the whole text does not fit, the button says less (the line above names the dataset).
  const QString brief = fetching_                ? QStringLiteral("Fetching…")
                        : fetchStatus_.isEmpty() ? QStringLiteral("Fetch")
                                                 : QStringLiteral("Try again");
  const int room = width() - 24;
  const bool fits = room > 0 && fetch_->fontMetrics().horizontalAdvance(full) + 32 <= room;
  fetch_->setText(fits ? full : brief);
  fetch_->setToolTip(full);
  fetch_->setEnabled(!fetching_);
}

void ExperimentPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (!missingDataset_.isEmpty()) showMissingDataset();  // the fetch button's text for the new width
}

void ExperimentPanel::setFetchStatus(const QString& status, bool fetching) {
  fetchStatus_ = status;
  fetching_ = fetching;
  validateNow();
}

QString ExperimentPanel::validationMessage() const {
  return lastMessage_;
}
bool ExperimentPanel::startEnabled() const {
  return start_->isEnabled();
}

}  // namespace descentlab::widgets
