#pragma once
// The experiment panel's backend: the engine's presets and its config validation, turned into form fields.

#include <nlohmann/json.hpp>

#include <map>

#include "core/config/experiment_config.h"

#include "widgets/experiment_panel.h"

namespace descentlab::store {
class RunReader;
}

namespace descentlab::gui {

class LabBackend : public widgets::ExperimentBackend {
 public:
  QStringList presetNames() const override;
  // "your-model" (the sparse engine: AdamW, HAM, HORST) and "your-model-layerwise" (layerwise descent).
  QStringList userModelPresets() const override;
  QString presetDescription(const QString& preset, const QList<widgets::ConfigField>& fields = {}) const override;
  QList<widgets::ConfigField> presetFields(const QString& preset, const QString& size) const override;
  QString validate(const QString& preset, const QString& size,
                   const QList<widgets::ConfigField>& fields) const override;
  QString cudaUnavailableReason() const override;
  QString missingDataset(const QString& preset, const QString& size,
                         const QList<widgets::ConfigField>& fields) const override;

  // Issue 55: a branch of a saved run, by the engine's rules (core/session/branch_rules.h). The form shows the settings
  // of the run's engine (layerwise descent: train and constraints; sparse training: train, optimizer and sparsity) and
  // the model's and data's, fixed.
  widgets::BranchSource branchSource(const QString& runPath) const override;
  widgets::BranchCheck checkBranch(const QString& runPath, const QList<widgets::ConfigField>& fields) const override;
  // The branch's configuration: the run's own with the fields applied; throws ConfigError naming a bad value.
  config::ExperimentConfig branchConfig(const QString& runPath, const QList<widgets::ConfigField>& fields) const;

  // The full config document for the preset with the fields applied; throws ConfigError on a bad value.
  nlohmann::json document(const QString& preset, const QString& size, const QList<widgets::ConfigField>& fields) const;

 private:
  // The configuration documents of runs being branched, by path: the form checks every keystroke against one.
  const nlohmann::json& storedDocument(const QString& runPath) const;
  // Reads the configuration document of `reader`'s run (at `runPath`) into the remembered ones.
  const nlohmann::json& rememberDocument(const QString& runPath, const store::RunReader& reader) const;
  mutable std::map<QString, nlohmann::json> storedDocuments_;
};

}  // namespace descentlab::gui
