#include "app/gui/lab_backend.h"

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/data/data_file.h"
#include "core/runtime.h"
#include "core/session/branch_rules.h"
#include "core/store/run_reader.h"

#include <QFileInfo>

#include <algorithm>
#include <exception>
#include <map>
#include <vector>

namespace descentlab::gui {
namespace {

// The accepted values of the closed-choice keys (from the config's own field list), so the form offers a list.
const std::map<std::string, QStringList>& key_choices() {
  static const std::map<std::string, QStringList> choices = [] {
    std::map<std::string, QStringList> lists;
    for (const auto& [key, words] : config::choice_keys()) {
      QStringList list;
      for (const auto& word : words) list << QString::fromStdString(word);
      lists[key] = list;
    }
    return lists;
  }();
  return choices;
}

// The form's tooltip for a key: the schema's line, then its type, range and default.
QString key_about(const std::string& key) {
  static const std::map<std::string, QString> about = [] {
    std::map<std::string, QString> lines;
    for (const auto& info : config::config_schema()) {
      QString detail = QString::fromStdString(info.type);
      if (!info.range.empty()) detail += QStringLiteral(", ") + QString::fromStdString(info.range);
      const QString fallback = QString::fromStdString(
          info.default_value.is_string() ? info.default_value.get<std::string>() : info.default_value.dump());
      lines[info.key] =
          QString::fromStdString(info.about).toHtmlEscaped() +
          QStringLiteral("<br><i>%1; default %2</i>").arg(detail.toHtmlEscaped(), fallback.toHtmlEscaped());
    }
    return lines;
  }();
  const auto found = about.find(key);
  return found == about.end() ? QString() : found->second;
}

QVariant to_variant(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return QVariant(static_cast<qlonglong>(value.get<int64_t>()));
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

nlohmann::json::json_pointer pointer_of(const QString& key) {
  return nlohmann::json::json_pointer("/" + QString(key).replace(QLatin1Char('.'), QLatin1Char('/')).toStdString());
}

void collect(const nlohmann::json& node, const std::string& prefix, const nlohmann::json& shown,
             QList<widgets::ConfigField>& fields) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      collect(value, path, shown.contains(key) ? shown[key] : nlohmann::json(), fields);
      continue;
    }
    if (!shown.is_object() || !shown.contains(key)) continue;
    widgets::ConfigField field;
    field.key = QString::fromStdString(path);
    field.value = to_variant(value);
    field.about = key_about(path);
    const auto choices = key_choices().find(path);
    if (choices != key_choices().end()) field.choices = choices->second;
    fields.push_back(field);
  }
}

// The experiments of a user's own module and data (docs/your-model.md), by engine.
const QString kYourModel = QStringLiteral("your-model");
const QString kYourModelLayerwise = QStringLiteral("your-model-layerwise");

bool is_user_preset(const QString& preset) {
  return preset == kYourModel || preset == kYourModelLayerwise;
}

// A user's experiment before its files are chosen: every key at its default (not validated: the files are empty).
nlohmann::json user_document(const QString& preset) {
  config::ExperimentConfig config;
  config.name = preset.toStdString();
  config.task = preset == kYourModelLayerwise ? config::Task::torchscript_layerwise : config::Task::torchscript;
  return config.to_json();
}

// The fields' values written into `document`, each parsed as the key's type in `full` (the complete config).
void apply_fields(nlohmann::json& document, const nlohmann::json& full, const QList<widgets::ConfigField>& fields) {
  const std::string source = "experiment panel";
  for (const auto& field : fields) {
    const auto pointer = pointer_of(field.key);
    const nlohmann::json& original = full.contains(pointer) ? full[pointer] : nlohmann::json();
    nlohmann::json value;
    switch (field.value.typeId()) {
      case QMetaType::Bool: value = field.value.toBool(); break;
      case QMetaType::LongLong:
      case QMetaType::Int: value = static_cast<int64_t>(field.value.toLongLong()); break;
      case QMetaType::Double: value = field.value.toDouble(); break;
      default: {
        const std::string text = field.value.toString().toStdString();
        if (original.is_array() || original.is_object()) {
          value = nlohmann::json::parse(text, nullptr, false);
          if (value.is_discarded())
            throw config::ConfigError(source, field.key.toStdString(), "\"" + text + "\" is not valid JSON");
        } else {
          value = text;
        }
      }
    }
    document[pointer] = value;
  }
}

// A user's experiment as the CLI makes it (train --model --data): the files' absolute paths, the run named after
// the module, and data.target read from the data file (when it can be read; else the run says why).
void complete_user_document(nlohmann::json& document) {
  for (const char* section : {"model", "data"}) {
    const QString file = QString::fromStdString(document[section]["file"].get<std::string>());
    if (!file.isEmpty()) document[section]["file"] = QFileInfo(file).absoluteFilePath().toStdString();
  }
  const std::string model = document["model"]["file"].get<std::string>();
  if (!model.empty()) document["name"] = QFileInfo(QString::fromStdString(model)).completeBaseName().toStdString();
  try {
    const std::string data = document["data"]["file"].get<std::string>();
    if (!data.empty()) document["data"]["target"] = data::data_task_word(data::read_data_task(data));
  } catch (const std::exception&) {
    // validate() and the run name the file and what is wrong with it
  }
}

}  // namespace

QStringList LabBackend::userModelPresets() const {
  return {kYourModel, kYourModelLayerwise};
}

QString LabBackend::cudaUnavailableReason() const {
  static const RuntimeInfo info = runtime_info();
  if (info.cuda_available) return {};
  if (info.cuda_runtime.empty()) {
    return QStringLiteral("this LibTorch (%1) is a CPU-only build (docs/build.md: GPU builds)")
        .arg(QString::fromStdString(info.torch_version));
  }
  return QStringLiteral("LibTorch %1 (CUDA %2) sees no CUDA device")
      .arg(QString::fromStdString(info.torch_version), QString::fromStdString(info.cuda_runtime));
}

QStringList LabBackend::presetNames() const {
  QStringList names;
  for (const auto& name : config::preset_names()) names << QString::fromStdString(name);
  return names;
}

QString LabBackend::presetDescription(const QString& preset, const QList<widgets::ConfigField>& fields) const {
  if (preset == kYourModel) {
    return QStringLiteral(
        "Your own TorchScript module on your own HDF5 data, trained like the vit and gpt presets: AdamW, HAM or "
        "HORST, dense or AC/DC, with the weight views and the sparsity frontier (docs/your-model.md; "
        "examples/cnn_fashion_mnist.py writes one)");
  }
  if (preset == kYourModelLayerwise) {
    return QStringLiteral(
        "Your own module by layerwise descent, ERM or constrained (constraints.enabled): its layer_outputs(x) "
        "gives the per-layer loss, λ, the certificate, the sweeps and the layer probe (docs/your-model.md)");
  }
  if (fields.isEmpty()) return QString::fromStdString(config::preset_description(preset.toStdString()));
  const std::string text = config::fill_description(
      config::preset_description_template(preset.toStdString()), [&](const std::string& key) -> std::string {
        for (const auto& field : fields) {
          if (field.key.toStdString() != key) continue;
          return (field.value.typeId() == QMetaType::Double ? QString::number(field.value.toDouble(), 'g', 10)
                                                            : field.value.toString())
              .toStdString();
        }
        return "";
      });
  return QString::fromStdString(text);
}

QList<widgets::ConfigField> LabBackend::presetFields(const QString& preset, const QString& size) const {
  QList<widgets::ConfigField> fields;
  if (is_user_preset(preset)) {
    // The two files first, then what trains them: the engine's own section and the training keys.
    const nlohmann::json full = user_document(preset);
    // data.memory_mb: a data file larger than it trains chunk by chunk (docs/your-model.md), and the memory check's
    // refusal names it, so it is one the form must offer.
    nlohmann::json shown = {
        {"model", {{"file", ""}}}, {"data", {{"file", ""}, {"memory_mb", 0}}}, {"train", full["train"]}};
    for (const char* section : preset == kYourModelLayerwise ? std::vector<const char*>{"constraints"}
                                                             : std::vector<const char*>{"optimizer", "sparsity"}) {
      shown[section] = full[section];
    }
    collect(full, "", shown, fields);
    std::stable_partition(fields.begin(), fields.end(),
                          [](const widgets::ConfigField& field) { return field.key.endsWith(".file"); });
    return fields;
  }
  nlohmann::json document;
  try {
    document = config::preset_document(preset.toStdString(), size.toStdString());
  } catch (const std::exception&) {
    return fields;
  }
  const auto config = config::ExperimentConfig::from_json(document, "preset " + preset.toStdString());
  const nlohmann::json full = config.to_json();
  // Shown: the keys the preset sets, every training key, and the engine's own section (constraints for layerwise
  // descent; optimizer and sparsity for sparse training). The rest keeps its default and stays out of the way.
  nlohmann::json shown = document;
  shown.erase("name");
  shown.erase("task");
  shown["train"] = full["train"];
  if (config.is_layerwise()) {
    shown["constraints"] = full["constraints"];
  } else {
    shown["optimizer"] = full["optimizer"];
    shown["sparsity"] = full["sparsity"];
  }
  collect(full, "", shown, fields);
  return fields;
}

nlohmann::json LabBackend::document(const QString& preset, const QString& size,
                                    const QList<widgets::ConfigField>& fields) const {
  if (is_user_preset(preset)) {
    nlohmann::json document = user_document(preset);
    apply_fields(document, nlohmann::json(document), fields);
    complete_user_document(document);
    return document;
  }
  nlohmann::json document = config::preset_document(preset.toStdString(), size.toStdString());
  const nlohmann::json full = config::ExperimentConfig::from_json(document, "preset " + preset.toStdString()).to_json();
  apply_fields(document, full, fields);
  return document;
}

QString LabBackend::validate(const QString& preset, const QString& size,
                             const QList<widgets::ConfigField>& fields) const {
  try {
    config::ExperimentConfig::from_json(document(preset, size, fields), "experiment panel");
    return {};
  } catch (const std::exception& error) {
    return QString::fromUtf8(error.what());
  }
}

QString LabBackend::missingDataset(const QString& preset, const QString& size,
                                   const QList<widgets::ConfigField>& fields) const {
  try {
    const auto config = config::ExperimentConfig::from_json(document(preset, size, fields), "experiment panel");
    const std::string dataset = config::dataset_of(config);
    if (dataset.empty() || data::dataset_files_present(data::default_data_root(), dataset)) return {};
    return QString::fromStdString(dataset);
  } catch (const std::exception&) {
    return {};  // an invalid form: validate() says why
  }
}

const nlohmann::json& LabBackend::storedDocument(const QString& runPath) const {
  const auto found = storedDocuments_.find(runPath);
  if (found != storedDocuments_.end()) return found->second;
  return rememberDocument(runPath, store::RunReader(runPath.toStdString()));
}

const nlohmann::json& LabBackend::rememberDocument(const QString& runPath, const store::RunReader& reader) const {
  return storedDocuments_[runPath] =
             config::stored_config(reader.header().config_json, runPath.toStdString()).to_json();
}

widgets::BranchSource LabBackend::branchSource(const QString& runPath) const {
  widgets::BranchSource source;
  try {
    const store::RunReader reader(runPath.toStdString());
    const nlohmann::json& full = rememberDocument(runPath, reader);  // afresh: the run may have changed since
    const auto config = config::ExperimentConfig::from_json(full, runPath.toStdString());
    nlohmann::json shown = {{"train", full["train"]}, {"model", full["model"]}, {"data", full["data"]}};
    for (const char* section : config.is_layerwise() ? std::vector<const char*>{"constraints"}
                                                     : std::vector<const char*>{"optimizer", "sparsity"}) {
      shown[section] = full[section];
    }
    collect(full, "", shown, source.fields);
    // The settings that may change first, in the engine's order; then the fixed ones.
    std::stable_partition(source.fields.begin(), source.fields.end(), [](const widgets::ConfigField& field) {
      return session::why_fixed_in_branch(field.key.toStdString()).empty();
    });
    for (const auto& field : source.fields) {
      const std::string why = session::why_fixed_in_branch(field.key.toStdString());
      if (!why.empty()) source.fixed.insert(field.key, QString::fromStdString(why));
    }
    auto kept = reader.checkpoints();
    // Newest first, "latest" before the others; one entry per step ("step 64 (latest, best)").
    std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.step != b.step ? a.step > b.step : (a.label == "latest") > (b.label == "latest");
    });
    for (const auto& checkpoint : kept) {
      const QString label = QString::fromStdString(checkpoint.label);
      if (!source.kept.isEmpty() && source.kept.back().first == checkpoint.step) {
        source.kept.back().second += QStringLiteral(", ") + label;
      } else {
        source.kept.push_back({checkpoint.step, label});
      }
    }
  } catch (const std::exception& error) {
    source.error = QString::fromUtf8(error.what());
  }
  return source;
}

config::ExperimentConfig LabBackend::branchConfig(const QString& runPath,
                                                  const QList<widgets::ConfigField>& fields) const {
  const nlohmann::json& full = storedDocument(runPath);
  nlohmann::json document = full;
  apply_fields(document, full, fields);
  return config::ExperimentConfig::from_json(document, "the branch of " + runPath.toStdString());
}

widgets::BranchCheck LabBackend::checkBranch(const QString& runPath, const QList<widgets::ConfigField>& fields) const {
  widgets::BranchCheck check;
  try {
    const nlohmann::json child = branchConfig(runPath, fields).to_json();
    const nlohmann::json& parent = storedDocument(runPath);
    check.changes = QString::fromStdString(session::branch_changes(parent, child, "the branch form"));
    for (const auto& note : session::branch_notes(parent, child)) check.notes << QString::fromStdString(note);
  } catch (const std::exception& error) {
    check.error = QString::fromUtf8(error.what());
  }
  return check;
}

}  // namespace descentlab::gui
