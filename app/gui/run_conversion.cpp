#include "app/gui/run_conversion.h"

#include <algorithm>
#include <cmath>

#include "core/config/experiment_config.h"
#include "core/data/data_file.h"
#include "core/record/checkpoint.h"
#include "core/record/metrics.h"
#include "core/record/noise.h"
#include "core/store/parent_check.h"
#include "core/store/run_reader.h"
#include "core/study/study.h"

#include <QFileInfo>

namespace descentlab::gui {
namespace {

void flatten_into(const nlohmann::json& node, const std::string& prefix, QMap<QString, QString>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) flatten_into(value, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out.insert(QString::fromStdString(prefix),
             node.is_string() ? QString::fromStdString(node.get<std::string>()) : QString::fromStdString(node.dump()));
}

QVector<double> to_qvector(const std::vector<double>& values) {
  return QVector<double>(values.begin(), values.end());
}

}  // namespace

QMap<QString, QString> flatten_config(const nlohmann::json& document) {
  QMap<QString, QString> out;
  flatten_into(document, "", out);
  return out;
}

void apply_sweep(widgets::RunData& run, const record::SweepResult& sweep) {
  widgets::SweepTrack track;
  track.noise = QString::fromStdString(sweep.noise);
  track.metric = QString::fromStdString(sweep.metric_name);
  track.gamma = to_qvector(sweep.gamma);
  track.seeds = static_cast<int>(sweep.seeds.size());
  track.values = to_qvector(sweep.metric);
  run.setSweep(QString::fromStdString(sweep.name), track);
}

void apply_batch(widgets::RunData& run, const session::MetricBatch& batch) {
  for (const auto& event : batch.scalars) {
    run.addScalar(QString::fromStdString(event.name), event.step, event.wall_time, event.value);
  }
  for (const auto& event : batch.vectors) {
    run.addVector(QString::fromStdString(event.name), event.step, to_qvector(event.values));
  }
  for (const auto& snapshot : batch.histograms) {
    QVector<double> counts(snapshot.counts.begin(), snapshot.counts.end());
    run.addHistogram(QString::fromStdString(snapshot.name), snapshot.step, to_qvector(snapshot.bin_edges), counts);
  }
  for (const auto& sweep : batch.sweeps) apply_sweep(run, sweep);
}

void describe_config(widgets::RunData& run, const config::ExperimentConfig& config) {
  run.config = flatten_config(config.to_json());
  run.kind = config::is_layerwise(config.task) ? widgets::RunKind::Layerwise : widgets::RunKind::Sparse;
  run.constrained = config::is_layerwise(config.task) && config.constraints.enabled;
  run.noiseKinds.clear();
  if (config::is_user_model(config.task)) {
    // What the module's inputs take (core/tasks/script_layerwise_task.h), read from the data file's description.
    try {
      run.noiseKinds = data::has_integer_inputs(config.data.file)
                           ? QStringList{QString::fromLatin1(record::noise::kDiscrete)}
                           : QStringList{QString::fromLatin1(record::noise::kGaussian),
                                         QString::fromLatin1(record::noise::kUniform)};
    } catch (const std::exception&) {
      // a data file that moved: the sweep or the probe names it
    }
  }
}

void apply_logged(widgets::RunData& run, const store::RunBatch& batch) {
  for (const auto& [name, rows] : batch.metrics) {
    const QString qname = QString::fromStdString(name);
    const auto width = static_cast<size_t>(std::max<int64_t>(rows.width, 1));
    for (size_t row = 0; row < rows.steps.size(); ++row) {
      const auto begin = rows.values.begin() + static_cast<std::ptrdiff_t>(row * width);
      if (rows.shape == record::SeriesShape::Scalar) {
        run.addScalar(qname, rows.steps[row], rows.wall_times[row], *begin);
      } else {
        run.addVector(qname, rows.steps[row], QVector<double>(begin, begin + static_cast<std::ptrdiff_t>(width)));
      }
    }
  }
  for (const auto& [name, snapshots] : batch.histograms) {
    const QString group = QString::fromStdString(name);
    const QVector<double> edges = to_qvector(snapshots.edges);
    const size_t bins = snapshots.edges.empty() ? 0 : snapshots.edges.size() - 1;
    for (size_t row = 0; row < snapshots.steps.size(); ++row) {
      const auto begin = snapshots.counts.begin() + static_cast<std::ptrdiff_t>(row * bins);
      run.addHistogram(group, snapshots.steps[row], edges,
                       QVector<double>(begin, begin + static_cast<std::ptrdiff_t>(bins)));
    }
  }
  for (const auto& [name, sweep] : batch.sweeps) apply_sweep(run, sweep);
}

namespace {

// The run's checkpoints as log lines, and where Resume continues.
void take_checkpoints(widgets::RunData& run, const store::RunReader& reader) {
  for (const auto& checkpoint : reader.checkpoints()) {
    run.appendLog(QStringLiteral("checkpoint \"%1\" at step %2")
                      .arg(QString::fromStdString(checkpoint.label))
                      .arg(static_cast<qint64>(checkpoint.step)));
    // A run stopped between metric rows has done the steps of its "latest" checkpoint (where Resume continues),
    // which may be after its last row.
    if (checkpoint.label == record::checkpoint_label::kLatest) {
      run.currentStep = std::max(run.currentStep, checkpoint.step);
      run.latestCheckpointStep = checkpoint.step;
    }
  }
}

}  // namespace

void set_annotation(widgets::RunData& run, const store::RunAnnotation& annotation) {
  run.ownName = QString::fromStdString(annotation.name);
  run.tags.clear();
  for (const auto& tag : annotation.tags) run.tags << QString::fromStdString(tag);
  run.note = QString::fromStdString(annotation.note);
}

std::unique_ptr<widgets::RunData> load_run_file(const std::string& path) {
  return load_run_file(store::RunReader(path));
}

std::unique_ptr<widgets::RunData> load_run_file(const store::RunReader& reader) {
  const std::string& path = reader.path();
  auto run = std::make_unique<widgets::RunData>();
  run->path = QFileInfo(QString::fromStdString(path)).absoluteFilePath();
  const auto document = nlohmann::json::parse(reader.header().config_json, nullptr, false);
  if (document.is_discarded()) {
    throw store::RunFileError(store::RunFileError::Kind::Corrupt, path, "/header/config_json", "is not valid JSON");
  }
  const auto config = config::ExperimentConfig::from_json(document, path + " (config)");
  describe_config(*run, config);
  // A user's module and data by name and SHA-256, as the study knows them (core/study/study.h).
  std::map<std::string, std::string> inputs;
  study::add_input_keys(reader.header(), inputs);
  for (const auto& [key, value] : inputs) run->config[QString::fromStdString(key)] = QString::fromStdString(value);
  run->name = QFileInfo(run->path).completeBaseName();  // until the model names it by its config
  run->nameFromConfig = true;
  set_annotation(*run, reader.header().annotation);
  if (reader.header().lineage) {
    run->branchChanges = QString::fromStdString(reader.header().lineage->changes);
    run->branchStep = reader.header().lineage->branch_step;
    run->branchParent = QString::fromStdString(reader.header().lineage->parent_file);
    run->branchParentProblem = QString::fromStdString(store::parent_problem(*reader.header().lineage));
  }
  run->device = QString::fromStdString(reader.header().device);
  run->metric = QString::fromLatin1(config::metric_of(config));
  for (const auto& name : reader.metric_names()) {
    const store::MetricSeries series = reader.metric(name);
    const QString qname = QString::fromStdString(name);
    for (size_t row = 0; row < series.rows(); ++row) {
      const auto begin = series.values.begin() + static_cast<std::ptrdiff_t>(row * series.width);
      if (series.shape == record::SeriesShape::Scalar) {
        run->addScalar(qname, series.steps[row], series.wall_times[row], *begin);
      } else {
        run->addVector(qname, series.steps[row], QVector<double>(begin, begin + series.width));
      }
    }
  }
  for (const auto& name : reader.histogram_names()) {
    const store::HistogramSeries series = reader.histogram(name);
    const auto bins = series.bins();
    const QString group = QString::fromStdString(name);
    const QVector<double> edges = to_qvector(series.bin_edges);  // the same edges for every row of a group
    for (size_t row = 0; row < series.steps.size(); ++row) {
      const auto begin = series.counts.begin() + static_cast<std::ptrdiff_t>(row * bins);
      run->addHistogram(group, series.steps[row], edges,
                        QVector<double>(begin, begin + static_cast<std::ptrdiff_t>(bins)));
    }
  }
  for (const auto& name : reader.sweep_names()) apply_sweep(*run, reader.sweep(name));
  take_checkpoints(*run, reader);
  // A file whose epochs are all done is finished; one that stopped early with a "latest" checkpoint can be resumed,
  // and its planned length follows from the epochs it has done.
  run->hasLatestCheckpoint = reader.has_checkpoint(record::checkpoint_label::kLatest);
  const auto& epochs = run->scalars.value(QString::fromLatin1(record::metric::kEpoch));
  const double epochsDone = epochs.values.isEmpty() ? 0.0 : epochs.values.back();
  const auto epochsPlanned = static_cast<double>(config.train.epochs);
  // The epoch is recorded as a fraction at every metric row, so the planned length is known mid-epoch too: a run
  // another process is still writing shows how far it has to go.
  const int64_t plannedSteps =
      epochsDone > 0 ? static_cast<int64_t>(std::llround(epochs.steps.back() * epochsPlanned / epochsDone)) : 0;
  if (epochsDone >= epochsPlanned - 1e-9 && epochsDone > 0) {
    run->state = widgets::RunState::Finished;
    run->totalSteps = run->currentStep;
  } else if (run->hasLatestCheckpoint) {
    run->state = widgets::RunState::Stopped;
    run->totalSteps = plannedSteps;
  } else {
    run->state = widgets::RunState::Loaded;
    run->totalSteps = std::max(plannedSteps, run->currentStep);
  }
  run->appendLog(QStringLiteral("opened %1 (%2 metrics, %3 histogram groups, %4 sweeps)")
                     .arg(run->path)
                     .arg(reader.metric_names().size())
                     .arg(reader.histogram_names().size())
                     .arg(reader.sweep_names().size()));
  return run;
}

}  // namespace descentlab::gui
