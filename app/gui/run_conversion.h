#pragma once
// Copies the engine's data into the views' plain Qt types: live events from a staging buffer, a whole run file,
// and configs flattened into "section.key" -> text. Core headers here are torch-free; no torch is included.

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "core/record/events.h"
#include "core/session/staging_buffer.h"
#include "core/store/run_batch.h"

#include <QMap>
#include <QString>

#include "widgets/run_data.h"

namespace descentlab {
namespace config {
struct ExperimentConfig;
}
namespace store {
class RunReader;
}
namespace gui {

// Flattens a config document: {"train": {"lr": 0.001}} -> "train.lr" = "0.001". Arrays stay JSON text.
QMap<QString, QString> flatten_config(const nlohmann::json& document);

// The config's facts a view needs: flattened keys, which engine (kind), constrained or not.
void describe_config(widgets::RunData& run, const config::ExperimentConfig& config);

void apply_batch(widgets::RunData& run, const session::MetricBatch& batch);
void apply_sweep(widgets::RunData& run, const record::SweepResult& sweep);

// Reads a run file (metrics, histograms, sweeps, config) into a new RunData; throws the store's RunFileError (or a
// config error) naming the file and object when it is not a readable DescentLab run file.
std::unique_ptr<widgets::RunData> load_run_file(const std::string& path);
std::unique_ptr<widgets::RunData> load_run_file(const store::RunReader& reader);
// The run file's annotation (a person's name, tags and note) into the run's fields; LabModel::setAnnotation names it.
void set_annotation(widgets::RunData& run, const store::RunAnnotation& annotation);
// Adds the rows, snapshots and sweeps a followed run's log gained (store::RunFollower) to the run as read so far.
void apply_logged(widgets::RunData& run, const store::RunBatch& batch);

}  // namespace gui
}  // namespace descentlab
