#pragma once
// The experiment panel's backend: the engine's presets and its config validation, turned into form fields.

#include <nlohmann/json.hpp>

#include "widgets/experiment_panel.h"

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

  // The full config document for the preset with the fields applied; throws ConfigError on a bad value.
  nlohmann::json document(const QString& preset, const QString& size, const QList<widgets::ConfigField>& fields) const;
};

}  // namespace descentlab::gui
