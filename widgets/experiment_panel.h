#pragma once
// The experiment panel: pick a preset and size, edit its hyperparameters in a form generated from the config
// (a field per key, typed from its value), see validation messages as you type, choose the device, and
// Start / Pause / Resume / Stop. What the presets hold and what is valid comes from an ExperimentBackend (the
// app implements it with the engine's config parser), so the panel never duplicates the engine's rules.

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <QWidget>

class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;

namespace descentlab::widgets {

class ElidedLabel;

// One config key ("train.lr") with its value; the QVariant's type (bool, qlonglong, double, QString) picks the
// editor. `choices`, when not empty, are the accepted values of a string key.
struct ConfigField {
  QString key;
  QVariant value;
  QStringList choices;
  QString about;  // one line: what the key does, its type, range and default (the editor's tooltip)
};

// What a branch of a saved run starts from (issue 55; the Branch dialog, widgets/branch_dialog.h).
struct BranchSource {
  QString error;                 // why the run cannot be branched; "" when it can
  QList<ConfigField> fields;     // every setting of the run, with its values
  QMap<QString, QString> fixed;  // the settings that cannot change mid-run, each with why
  // The steps of the checkpoints the run file keeps, each with its label ("latest", "best", "step-120"), newest first.
  QList<QPair<qint64, QString>> kept;
};
// A branch's settings checked by the engine: the error naming the key ("" when valid), what changes
// ("constraints.alpha 0.4 -> 0.1"), and how the child takes the changes up, a sentence each.
struct BranchCheck {
  QString error;
  QString changes;
  QStringList notes;
};

class ExperimentBackend {
 public:
  virtual ~ExperimentBackend() = default;
  virtual QStringList presetNames() const = 0;
  // The experiments of a user's own model (a TorchScript module on an HDF5 data file; docs/your-model.md), one per
  // engine, which the panel lists when "Model" is "your own file…": their fields hold model.file and data.file.
  virtual QStringList userModelPresets() const { return {}; }
  // One line saying what a preset trains and shows ("" when unknown), stating the values of `fields` where given (the
  // form's: a tour's α 5 is not described as the preset's 50), else the preset's own.
  virtual QString presetDescription(const QString& preset, const QList<ConfigField>& fields = {}) const {
    Q_UNUSED(preset);
    Q_UNUSED(fields);
    return {};
  }
  virtual QList<ConfigField> presetFields(const QString& preset, const QString& size) const = 0;
  // Empty when the fields make a valid experiment; otherwise the engine's message, naming the key and value.
  virtual QString validate(const QString& preset, const QString& size, const QList<ConfigField>& fields) const = 0;
  // Empty when training on "cuda" can work; otherwise why not (a CPU-only LibTorch, no device seen), shown on the
  // device menu's greyed-out "cuda" entry.
  virtual QString cudaUnavailableReason() const { return {}; }
  // The dataset the experiment trains on when the data folder lacks it ("" when none is missing): the panel then
  // offers to fetch it instead of starting a run that would fail.
  virtual QString missingDataset(const QString& preset, const QString& size, const QList<ConfigField>& fields) const {
    Q_UNUSED(preset);
    Q_UNUSED(size);
    Q_UNUSED(fields);
    return {};
  }
  // A branch of the run file `runPath` (the engine's rules: core/train/branch_rules.h).
  virtual BranchSource branchSource(const QString& runPath) const {
    Q_UNUSED(runPath);
    return {QStringLiteral("branching is not offered here"), {}, {}, {}};
  }
  virtual BranchCheck checkBranch(const QString& runPath, const QList<ConfigField>& fields) const {
    Q_UNUSED(runPath);
    Q_UNUSED(fields);
    return {};
  }
};

struct ExperimentRequest {
  QString preset;
  QString size;
  QString device;
  QList<ConfigField> fields;
  // train.seed of each run to start (issue 35): empty, one run of the form's seed; more than one, a group of runs
  // that differ only by their seed.
  QVector<int> seeds;
};

// "0,1,2", "0-4" or "0..4" (and mixes: "0-2, 7") as seeds; `*error` says what cannot be read (then empty).
QVector<int> parseSeeds(const QString& text, QString* error);

class ExperimentPanel : public QWidget {
  Q_OBJECT

 public:
  ExperimentPanel(const ExperimentBackend& backend, QWidget* parent = nullptr);

  void setPreset(const QString& preset, const QString& size = QStringLiteral("quick"));
  // What the Start button does: validate the form, then ask for a run of it (Run > Start, F5).
  void start();
  QString preset() const;
  QList<ConfigField> fields() const;
  // Sets one field's text as if typed (tests and scripted demos).
  bool setFieldText(const QString& key, const QString& text);
  // The seeds field ("0,1,2": one run per seed, drawn as a group), as if typed.
  void setSeedsText(const QString& text);
  QString validationMessage() const;
  bool startEnabled() const;

  // What the buttons may do for the selected run: the app tells the panel after every state change.
  // Pause / Resume / Stop act on the selected run, named above the buttons ("" when there is none).
  // Branch… (issue 55) opens the Branch dialog for the selected run: one with a run file, paused, stopped, finished or
  // training (a live run keeps its state as it is when Start is pressed).
  void setRunControls(const QString& target, bool canPause, bool canResume, bool canStop, bool canBranch = false);
  QString runControlsTarget() const;

  // The fetch of a missing dataset the panel offered: what it is doing ("imdb: downloading 12.3 of 25.5 MB"), or
  // when done (`fetching` false) "" or why it failed. The panel checks the form again either way.
  void setFetchStatus(const QString& status, bool fetching);
  QPushButton* fetchButton() const { return fetch_; }

 signals:
  void startRequested(const ExperimentRequest& request);
  void pauseRequested();
  void resumeRequested();
  void stopRequested();
  void branchRequested();
  void fetchDatasetRequested(const QString& dataset);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void rebuildForm();
  // Start, Pause, Resume, Stop and Branch… in a row.
  QHBoxLayout* makeRunButtons();
  void validateNow();
  void showMissingDataset();

  const ExperimentBackend& backend_;
  // Which presets the Preset list holds: the built-in ones, or those of a user's own model file.
  void makeModelSource();
  void showModelSource(bool ownFile);
  // A "…" beside a file field (model.file, data.file) that picks the file.
  QWidget* withBrowseButton(QLineEdit* line, const QString& key);

  QComboBox* modelSource_ = nullptr;
  QComboBox* preset_ = nullptr;
  QLabel* presetAbout_ = nullptr;
  QComboBox* size_ = nullptr;
  QComboBox* device_ = nullptr;
  QLineEdit* seeds_ = nullptr;
  QFormLayout* form_ = nullptr;
  QWidget* formHost_ = nullptr;
  QLabel* message_ = nullptr;
  QPushButton* fetch_ = nullptr;
  QString missingDataset_;   // what the fetch button fetches
  QString fetchingDataset_;  // what is being fetched
  QString fetchStatus_;
  bool fetching_ = false;
  ElidedLabel* target_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* branch_ = nullptr;
  QList<ConfigField> base_;
  QMap<QString, QWidget*> editors_;
  QString lastMessage_;
};

}  // namespace descentlab::widgets
