#include "core/session/layer_probe_session.h"

#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <list>
#include <optional>

#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/data/data_order.h"
#include "core/data/reviews.h"
#include "core/eval/layer_probe.h"
#include "core/store/run_reader.h"
#include "core/tasks/layerwise_task.h"
#include "core/train/random_stream.h"
#include "core/train/saved_run.h"
#include "core/train/trainer.h"
#include "core/train/user_files.h"

namespace descentlab::session {
namespace {

// When and how big the run file was: a writer replaces it by rename, so a change of either means new content.
struct FileStamp {
  std::filesystem::file_time_type written{};
  uintmax_t size = 0;
  bool operator==(const FileStamp& other) const { return written == other.written && size == other.size; }
};

FileStamp stamp_of(const std::string& path) {
  std::error_code error;
  FileStamp stamp;
  stamp.written = std::filesystem::last_write_time(path, error);
  stamp.size = error ? 0 : std::filesystem::file_size(path, error);
  return stamp;
}

// One run's loaded task and the checkpoint in it.
struct LoadedRun {
  std::string path, device, data_root;
  std::string config_json;
  config::ExperimentConfig config;
  std::unique_ptr<tasks::LayerwiseTask> task;
  std::unique_ptr<eval::LayerProber> prober;
  std::vector<std::string> words;       // the vocabulary (text)
  std::vector<std::string> test_texts;  // the test reviews in the task's test order (text)
  FileStamp stamp;
  std::string label;  // the checkpoint loaded: label, step, creation time
  int64_t step = -1, epoch = 0;
  std::string created;
};

// Builds the task of a stored layerwise config: the same data and model as the sweeps build (make_task), with the
// text task's vocabulary and test reviews kept to show the sample in words.
void build_task(LoadedRun& run, const store::RunReader& reader) {
  const torch::Device device = train::resolve_device(run.config.train.device);
  run.words.clear();
  run.test_texts.clear();
  if (run.config.task == config::Task::text) {
    const auto reviews = data::load_imdb_reviews(run.data_root);
    const auto& data = run.config.data;
    const auto split =
        data::split_reviews(reviews, data::ReviewSplitOptions{data.train_limit, data.test_limit, data.split_seed});
    run.words = data::WordVocabulary::build(split.train, data.vocabulary_size, data.min_count).words();
    // The test order of TextTask: a fixed shuffle of the split's test reviews.
    const auto order = data::epoch_permutation(data.split_seed, /*epoch=*/-1, static_cast<int64_t>(split.test.size()));
    for (int64_t index : order) run.test_texts.push_back(split.test[static_cast<size_t>(index)].text);
    // Building the model draws its (then overwritten) weights: under the generator lock, never inside a training
    // run's draws (random_stream.h).
    std::lock_guard<std::recursive_mutex> lock(train::default_generator_lock());
    run.task = std::make_unique<tasks::TextTask>(run.config, reviews, device);
  } else {
    // A user's module from the run's own copy, its data file checked (core/train/user_files.h).
    std::optional<tasks::ScriptSources> sources;
    if (config::is_user_model(run.config.task)) sources = train::saved_user_files(reader, run.config);
    std::lock_guard<std::recursive_mutex> lock(train::default_generator_lock());
    run.task = tasks::make_task(run.config, run.data_root, device, sources ? &*sources : nullptr);
  }
  run.prober = std::make_unique<eval::LayerProber>(*run.task);
}

// Brings `run` up to date with its file: the task when the config changed, the checkpoint when it did.
bool refresh(LoadedRun& run, const std::string& label) {
  const FileStamp stamp = stamp_of(run.path);
  if (run.task && stamp == run.stamp && run.label == label) return false;
  const store::RunReader reader(run.path);
  const bool rebuild = !run.task || reader.header().config_json != run.config_json;
  config::ExperimentConfig config;
  if (rebuild) {
    config = config::stored_config(reader.header().config_json, run.path);
    if (!config.is_layerwise()) {
      throw config::ConfigError(
          run.path, "task",
          "the layer probe applies to layerwise-descent runs (text, video, torchscript-layerwise); this "
          "run is \"" +
              config::word(config.task) + "\" (a sparse-training run)");
    }
  }
  // A run without the checkpoint (one just started) is refused before its data is read.
  if (!reader.has_checkpoint(label)) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, run.path, record::checkpoint_object(label),
                              "no checkpoint \"" + label + "\" yet (a run saves one at the end of each epoch)");
  }
  if (rebuild) {
    run.task.reset();
    run.prober.reset();
    run.label.clear();
    config.train.device = config::require_choice<config::Device>(run.device, "device");
    run.config = std::move(config);
    run.config_json = reader.header().config_json;
    build_task(run, reader);
  }
  bool loaded = false;
  for (const auto& info : reader.checkpoints()) {
    if (info.label != label) continue;
    if (info.step != run.step || info.created != run.created || run.label != label) {
      train::SavedRun saved;
      saved.config = run.config;
      saved.checkpoint = reader.checkpoint(label);
      run.label.clear();  // until the load succeeds
      train::load_saved_model(saved, *run.task->module(), run.path, label);
      run.step = saved.checkpoint.step;
      run.epoch = saved.checkpoint.epoch;
      run.created = info.created;
      run.label = label;
      loaded = true;
    }
  }
  run.stamp = stamp;
  return loaded;
}

RunProbe probe_loaded(LoadedRun& run, const LayerProbeRequest& request, bool reloaded) {
  RunProbe result;
  result.probe = run.prober->probe(request.settings);
  result.checkpoint = run.label;
  result.step = run.step;
  result.epoch = run.epoch;
  result.metric = run.task->metric_name();
  result.reloaded = reloaded;
  auto& probe = result.probe;
  if (!run.words.empty()) {
    for (int64_t id : probe.token_ids) {
      probe.words.push_back(id >= 0 && id < static_cast<int64_t>(run.words.size()) ? run.words[static_cast<size_t>(id)]
                                                                                   : std::to_string(id));
    }
  }
  if (probe.sample < static_cast<int64_t>(run.test_texts.size())) {
    probe.text = run.test_texts[static_cast<size_t>(probe.sample)];
  }
  return result;
}

}  // namespace

struct LayerProbeSession::Cache {
  size_t kept = 4;
  std::list<LoadedRun> runs;  // most recently used first
};

LayerProbeSession::LayerProbeSession(size_t runs_kept) : cache_(std::make_unique<Cache>()) {
  cache_->kept = std::max<size_t>(1, runs_kept);
}

LayerProbeSession::~LayerProbeSession() = default;

RunProbe LayerProbeSession::probe(const LayerProbeRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  // OpenMP's thread count is per calling thread: a worker thread's first probe takes the count set at start-up
  // (as TrainingSession::start does), not every core.
  static thread_local bool threads_set = false;
  if (!threads_set) {
    at::init_num_threads();
    threads_set = true;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string data_root = request.data_root.empty() ? data::default_data_root() : request.data_root;
  auto& runs = cache_->runs;
  auto found = runs.begin();
  while (found != runs.end() &&
         (found->path != request.run_path || found->device != request.device || found->data_root != data_root)) {
    ++found;
  }
  if (found == runs.end()) {
    LoadedRun fresh;
    fresh.path = request.run_path;
    fresh.device = request.device;
    fresh.data_root = data_root;
    runs.push_front(std::move(fresh));
    found = runs.begin();
  } else {
    runs.splice(runs.begin(), runs, found);
    found = runs.begin();
  }
  while (runs.size() > cache_->kept) runs.pop_back();
  torch::NoGradGuard no_grad;
  bool reloaded = false;
  try {
    reloaded = refresh(*found, request.checkpoint);
  } catch (...) {
    if (!found->task) runs.pop_front();  // a run whose task could not be built is not kept
    throw;
  }
  RunProbe result = probe_loaded(*found, request, reloaded);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

void LayerProbeSession::forget(const std::string& run_path) {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_->runs.remove_if([&](const LoadedRun& run) { return run.path == run_path; });
}

RunProbe probe_run(const LayerProbeRequest& request) {
  LayerProbeSession session(1);
  return session.probe(request);
}

}  // namespace descentlab::session
