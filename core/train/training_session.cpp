#include "core/session/training_session.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>

#include "core/config/footprint.h"
#include "core/data/catalog.h"
#include "core/dist/process_group.h"
#include "core/runtime.h"
#include "core/session/failure.h"
#include "core/store/checkpoint_bytes.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/branch_session.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/random_stream.h"
#include "core/train/sparse_trainer.h"
#include "core/train/user_files.h"
#include "core/util/error.h"
#include "core/util/system_memory.h"

namespace descentlab::session {

store::RunHeader new_run_header(const config::ExperimentConfig& config, const torch::Device& device) {
  const auto info = runtime_info();
  store::RunHeader header;
  header.app_version = info.descentlab_version;
  header.torch_version = info.torch_version;
  header.device = device.str();
  header.config_json = config.to_json().dump();
  return header;
}

store::RunWriterOptions writer_options_of(const SessionOptions& options, const std::string& purpose) {
  store::RunWriterOptions writer_options;
  writer_options.overwrite = options.overwrite;
  writer_options.flush_interval_seconds = options.flush_interval_seconds;
  writer_options.purpose = purpose;
  writer_options.notice = options.notice;
  return writer_options;
}

namespace {

// A new run file, or the resumed one cut back to the checkpoint's step once the trainer has restored it.
// `who` follows the lock's purpose ("training, rank 0 of 2"): a window watching the file names its writer with it.
// `new_files`: a new torchscript run's module and data file, which the run file keeps (nullptr for other runs).
std::unique_ptr<store::RunWriter> open_run(train::Trainer& trainer, const config::ExperimentConfig& config,
                                           const SessionOptions& options, bool resuming, const torch::Device& device,
                                           const train::UserFiles* new_files, const std::string& who = "") {
  const store::RunWriterOptions writer_options =
      writer_options_of(options, (resuming ? "resuming training" : "training") + who);
  if (resuming) {
    // The lock first, then the checkpoint: no other writer can replace "latest" between the two.
    auto writer = store::RunWriter::open(options.run_path, writer_options);
    const store::RunReader reader(options.run_path);
    const record::CheckpointData state = reader.checkpoint(record::checkpoint_label::kLatest);
    trainer.resume_from(state, options.run_path, record::checkpoint_label::kLatest);
    std::vector<int64_t> kept;  // the kept steps, counted against the limits from here on
    for (const auto& checkpoint : reader.checkpoints()) {
      if (checkpoint.label.rfind("step-", 0) == 0) kept.push_back(checkpoint.step);
    }
    trainer.set_kept_steps(std::move(kept));
    writer->truncate_after(state.step);
    return writer;
  }
  store::RunHeader header = new_run_header(config, device);
  if (new_files) train::record_user_files(*new_files, header);
  return store::RunWriter::create(options.run_path, header, writer_options);
}

// A data-parallel rank on a machine with several GPUs takes the one of its LOCAL_RANK (round robin).
torch::Device device_of_rank(const torch::Device& device, int local_rank) {
  if (!device.is_cuda() || device.has_index() || local_rank == 0) return device;
  const auto count = static_cast<int>(torch::cuda::device_count());
  return count > 0 ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % count)) : device;
}

// The engine a config asks for, with its task (data read, model made).
struct Engine {
  std::unique_ptr<tasks::LayerwiseTask> layerwise_task;
  std::unique_ptr<tasks::SparseTask> sparse_task;
  std::unique_ptr<train::Trainer> trainer;
  std::string description;
};

Engine make_engine(const config::ExperimentConfig& config, const torch::Device& device,
                   const tasks::ScriptSources* sources) {
  Engine engine;
  if (config.is_layerwise()) {
    engine.layerwise_task = tasks::make_task(config, data::default_data_root(), device, sources);
    engine.trainer = std::make_unique<train::LayerwiseTrainer>(config, *engine.layerwise_task, device);
    engine.description = config.name + ": " + engine.layerwise_task->describe();
    return engine;
  }
  engine.sparse_task = tasks::make_sparse_task(config, data::default_data_root(), device, sources);
  engine.trainer = std::make_unique<train::SparseTrainer>(config, *engine.sparse_task, device);
  const std::string sparsity =
      config.sparsity.method == config::SparsityMethod::none
          ? "none (dense)"
          : config::word(config.sparsity.method) + " to " + std::to_string(config.sparsity.target);
  engine.description = config.name + ": " + engine.sparse_task->describe() + "; optimizer " +
                       config::word(config.optimizer.name) + ", sparsity " + sparsity;
  return engine;
}

// The dataset a config trains on ("" for the generated video), verified against datasets/SHA256SUMS before it is
// read: a changed or damaged file would otherwise train silently (an image label of 200 made a 201-class model).
void verify_training_data(const config::ExperimentConfig& config) {
  const std::string dataset = config::dataset_of(config);
  if (!dataset.empty()) data::verify_dataset(data::default_data_root(), dataset);
}

// Refuses, before anything is allocated, a run whose estimated footprint exceeds the memory there is
// (DESCENTLAB_MEMORY_CHECK=0 turns the check off).
void check_memory(const config::ExperimentConfig& config, const torch::Device& device) {
  const char* setting = std::getenv("DESCENTLAB_MEMORY_CHECK");
  if (setting && std::string(setting) == "0") return;
  const auto available = available_memory();
  if (!available) return;
  config::require_fits(config, config::estimate_footprint(config), device.is_cpu(), *available);
}

// A user's module and data (the torchscript tasks): read and hashed when the run begins; when it resumes
// (`from_run_file`), the module from the run's own copy and the data file checked against its recorded hash
// (core/train/user_files.h). Nothing for the other tasks.
struct UserSources {
  std::optional<train::UserFiles> new_files;
  std::optional<tasks::ScriptSources> sources;
};
// A branch (`branch_parent` not empty) takes them from its parent's file as a resume does, and keeps them in its own.
UserSources user_sources(const config::ExperimentConfig& config, const SessionOptions& options, bool from_run_file,
                         const std::string& branch_parent) {
  UserSources user;
  if (!config::is_user_model(config.task)) return user;
  if (from_run_file || !branch_parent.empty()) {
    const store::RunReader reader(branch_parent.empty() ? options.run_path : branch_parent);
    user.sources = train::saved_user_files(reader, config, {options.model_file, options.data_file});
    if (!branch_parent.empty()) user.new_files = train::kept_user_files(reader, *user.sources);
    return user;
  }
  config::ExperimentConfig where = config;
  if (!options.model_file.empty()) where.model.file = options.model_file;
  if (!options.data_file.empty()) where.data.file = options.data_file;
  user.new_files = train::read_user_files(where);
  user.sources = user.new_files->sources;
  return user;
}

// ---- data parallel: what rank 0 knows, every rank learns

// Runs `work` on rank 0 and tells every rank how it went: the others throw a DistributedError with rank 0's message
// when it failed, rank 0 rethrows its own error (its type gives the CLI's exit code).
void on_rank_zero(dist::Group& group, const std::string& what, const std::function<void()>& work) {
  std::string failure;
  std::exception_ptr error;
  if (group.rank() == 0) {
    try {
      work();
    } catch (const std::exception& e) {
      failure = error_text(e);
      error = std::current_exception();
    }
  }
  const std::vector<uint8_t> told =
      group.broadcast_bytes(std::vector<uint8_t>(failure.begin(), failure.end()), 0, "hearing how rank 0 " + what);
  if (error) std::rethrow_exception(error);
  if (!told.empty()) {
    throw dist::DistributedError("rank " + std::to_string(group.rank()) + ": rank 0 failed while it " + what + ": " +
                                 std::string(told.begin(), told.end()));
  }
}

// The first key (a/b/c) where two JSON values differ, for the message of ranks that disagree.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "") {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string here = path.empty() ? key : path + "." + key;
      if (!b.contains(key)) return here + " (missing on one rank)";
      const std::string inner = first_difference(value, b.at(key), here);
      if (!inner.empty()) return inner;
    }
    for (const auto& [key, value] : b.items()) {
      (void)value;
      if (!a.contains(key)) return (path.empty() ? key : path + "." + key) + " (missing on one rank)";
    }
    return "";
  }
  if (a != b) return (path.empty() ? "(the whole value)" : path) + " (" + a.dump() + " against " + b.dump() + ")";
  return "";
}

// Every rank must train the same experiment with the same build: a new run compares each rank's configuration and
// versions with rank 0's (a mismatch names the rank and the first key that differs); a resumed run takes rank 0's
// configuration, read from its run file.
config::ExperimentConfig agree_on_config(dist::Group& group, const config::ExperimentConfig* own,
                                         const std::string& run_path) {
  const auto info = runtime_info();
  nlohmann::json mine = {{"versions", {{"descentlab", info.descentlab_version}, {"torch", info.torch_version}}}};
  if (own) mine["config"] = own->to_json();
  const std::vector<std::string> all = group.all_gather_text(mine.dump(), "comparing the ranks' configurations");
  const nlohmann::json root = nlohmann::json::parse(all.front());
  if (!root.contains("config")) throw dist::DistributedError("rank 0 has no configuration to share");
  for (size_t r = 1; r < all.size(); ++r) {
    nlohmann::json other = nlohmann::json::parse(all[r]);
    if (!other.contains("config")) other["config"] = root["config"];  // a resuming rank takes rank 0's
    const std::string difference = first_difference(root, other);
    if (!difference.empty()) {
      throw dist::DistributedError("rank " + std::to_string(r) + " does not train what rank 0 trains: " + difference +
                                   "; every rank must run the same command with the same build");
    }
  }
  if (own) return *own;
  return config::stored_config(root["config"].dump(), run_path + " (as rank 0 read it)");
}

std::unique_ptr<dist::Group> connect(const DataParallelOptions& options) {
  dist::LaunchEnvironment launch;
  launch.rank = options.rank;
  launch.world_size = options.world_size;
  launch.local_rank = options.local_rank;
  launch.master_addr = options.master_addr;
  launch.master_port = options.master_port;
  return std::make_unique<dist::Group>(
      launch, dist::choose_backend(options.backend, false),
      std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000.0)));
}

// A data-parallel run's file: rank 0 creates it (or opens it to resume, the lock first, then the checkpoint), and a
// resumed state goes from rank 0 to every rank; the other ranks get no writer (nullptr).
std::unique_ptr<store::RunWriter> open_run_data_parallel(train::Trainer& trainer, dist::Group& group,
                                                         const config::ExperimentConfig& config,
                                                         const SessionOptions& options, bool resuming,
                                                         const torch::Device& device,
                                                         const train::UserFiles* new_files) {
  trainer.set_data_parallel(&group);
  std::unique_ptr<store::RunWriter> writer;
  record::CheckpointData state;
  const std::string who = ", rank 0 of " + std::to_string(group.size()) + " data-parallel processes";
  on_rank_zero(group, resuming ? "resumed the run file" : "created the run file", [&] {
    if (!resuming) {
      writer = open_run(trainer, config, options, false, device, new_files, who);
      return;
    }
    store::RunWriterOptions writer_options;
    writer_options.flush_interval_seconds = options.flush_interval_seconds;
    writer_options.purpose = "resuming training" + who;
    writer = store::RunWriter::open(options.run_path, writer_options);
    state = store::RunReader(options.run_path).checkpoint(record::checkpoint_label::kLatest);
  });
  if (resuming) {
    const std::vector<uint8_t> bytes =
        group.broadcast_bytes(group.rank() == 0 ? store::checkpoint_to_bytes(state) : std::vector<uint8_t>{}, 0,
                              "receiving the checkpoint to resume from");
    if (group.rank() > 0) state = store::checkpoint_from_bytes(bytes, options.run_path + " (from rank 0)");
    trainer.resume_from(state, options.run_path, record::checkpoint_label::kLatest);
    if (writer) writer->truncate_after(state.step);
  }
  return writer;
}

}  // namespace

DataParallelOptions data_parallel_from_environment() {
  DataParallelOptions options;
  if (const auto launch = dist::launch_environment()) {
    options.rank = launch->rank;
    options.world_size = launch->world_size;
    options.local_rank = launch->local_rank;
    options.master_addr = launch->master_addr;
    options.master_port = launch->master_port;
  }
  return options;
}

std::string data_parallel_backend(const DataParallelOptions& options) {
  return dist::word(dist::choose_backend(options.backend, false));
}

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options)
    : TrainingSession(std::move(config), std::move(options), false) {}

TrainingSession::TrainingSession(config::ExperimentConfig config, SessionOptions options, bool resuming)
    : config_(std::move(config)), options_(std::move(options)), resuming_(resuming) {}

std::unique_ptr<TrainingSession> TrainingSession::resume(const std::string& run_path,
                                                         const DataParallelOptions& data_parallel,
                                                         const ResumeFiles& files) {
  if (data_parallel.world_size > 1 && data_parallel.rank > 0) {
    // This rank learns the configuration and the checkpoint from rank 0 in run().
    SessionOptions options;
    options.run_path = run_path;
    options.model_file = files.model;
    options.data_file = files.data;
    auto session =
        std::unique_ptr<TrainingSession>(new TrainingSession(config::ExperimentConfig{}, std::move(options), true));
    session->config_from_rank_zero_ = true;
    session->data_parallel_ = data_parallel;
    return session;
  }
  // A run another process writes is refused naming it before its content is judged (before its first checkpoint
  // it has none to resume from, which would be the wrong reason), and a killed writer's temporaries go even when
  // the resume is then refused.
  store::RunWriterOptions purpose;
  purpose.purpose = "checking a resume";
  store::RunWriter::take_over_abandoned(run_path, purpose);
  const store::RunReader reader(run_path);
  auto config = config::stored_config(reader.header().config_json, run_path);
  if (!reader.has_checkpoint(record::checkpoint_label::kLatest)) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, run_path,
                              record::checkpoint_object(record::checkpoint_label::kLatest),
                              "no checkpoint to resume from");
  }
  SessionOptions options;
  options.run_path = run_path;
  options.model_file = files.model;
  options.data_file = files.data;
  auto session = std::unique_ptr<TrainingSession>(new TrainingSession(std::move(config), std::move(options), true));
  session->data_parallel_ = data_parallel;
  return session;
}

TrainingSession::~TrainingSession() {
  control_.stop();
  join();
}

std::string TrainingSession::device_name() const {
  std::lock_guard<std::mutex> lock(device_name_mutex_);
  return device_name_;
}

TrainingResult TrainingSession::run() {
  try {
    return train_into_run_file();
  } catch (const std::exception& failure) {
    // LibTorch's allocator says "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate
    // memory: ..." (a limit such as ulimit -v that the memory check does not see, or memory other programs took):
    // said as out of memory, with what was asked for and the run's estimate.
    const std::string failed = failed_allocation(failure);
    if (failed.empty()) throw;
    throw MemoryError(
        config::out_of_memory_message(config_, config::estimate_footprint(config_), failed, device_name()));
  }
}

TrainingResult TrainingSession::train_into_run_file() {
  std::unique_ptr<dist::Group> group;
  if (data_parallel_.world_size > 1) {
    group = connect(data_parallel_);
    config_ = agree_on_config(*group, config_from_rank_zero_ ? nullptr : &config_, options_.run_path);
  }
  const torch::Device device = device_of_rank(train::resolve_device(config_.train.device), data_parallel_.local_rank);
  {
    std::lock_guard<std::mutex> lock(device_name_mutex_);
    device_name_ = device.str();
  }
  // This run's own stream of the CPU generator (random_stream.h): runs side by side in one process draw what each
  // draws alone. Seeded before the model is built, so the same config gives the same run.
  train::RandomStream random_stream;
  const train::CurrentRandomStream current_stream(&random_stream);
  verify_training_data(config_);
  check_memory(config_, device);
  const UserSources user = user_sources(config_, options_, resuming_ && !config_from_rank_zero_, branch_parent_);
  const tasks::ScriptSources* given_sources = user.sources ? &*user.sources : nullptr;
  const train::UserFiles* files_to_keep = resuming_ || !user.new_files ? nullptr : &*user.new_files;
  Engine engine;
  random_stream.seed_and_initialise(config_.train.seed, [&] { engine = make_engine(config_, device, given_sources); });
  train::Trainer& trainer = *engine.trainer;
  std::unique_ptr<store::RunWriter> writer =
      !branch_parent_.empty() ? open_branch(trainer, config_, options_, device,
                                            {branch_parent_, branch_label_, branch_changes_}, files_to_keep)
      : group ? open_run_data_parallel(trainer, *group, config_, options_, resuming_, device, files_to_keep)
              : open_run(trainer, config_, options_, resuming_, device, files_to_keep);
  if (writer) {
    trainer.add_sink(writer.get());
    for (auto* sink : extra_sinks_) trainer.add_sink(sink);
    trainer.set_checkpoint_store(writer.get());
  }
  // annotate() reaches the writer while it is open; the guard lets go of it before the writer closes, on every path.
  struct WriterShared {
    TrainingSession& session;
    ~WriterShared() { session.share_writer(nullptr); }
  } writer_shared{*this};
  share_writer(writer.get());
  trainer.set_control(&control_);
  // --max-steps: exactly the batches left to that step, however the metric interval and the epochs fall.
  if (step_limit_ >= 0) control_.limit_batches(std::max<int64_t>(0, step_limit_ - trainer.step()));
  if (on_start_ && (!group || group->rank() == 0)) {
    on_start_({trainer.total_steps(), trainer.step(), engine.description, device.str(), trainer.metric_name()});
  }
  TrainingResult result = trainer.run();
  if (writer) {
    writer->flush();
    // The run file's share of the run: commits run on the writer's thread, checkpoints wait for theirs.
    const double seconds = writer->append_seconds() + writer->fold_seconds();
    result.extra["run_file"] = {{"commits", writer->commits()},
                                {"log_append_seconds", writer->append_seconds()},
                                {"folds", writer->folds()},
                                {"fold_seconds", writer->fold_seconds()},
                                {"share_of_run", result.seconds > 0 ? seconds / result.seconds : 0.0}};
  }
  if (group) communication_seconds_ = group->communication_seconds();
  return result;
}

bool TrainingSession::annotate(const record::RunAnnotation& annotation) {
  const record::RunAnnotation checked = store::checked_annotation(annotation, options_.run_path);
  std::lock_guard<std::mutex> lock(writer_mutex_);
  if (writer_closed_) return false;
  if (writer_) {
    writer_->annotate(checked);
  } else {
    pending_annotation_ = checked;
  }
  return true;
}

void TrainingSession::share_writer(store::RunWriter* writer) {
  std::lock_guard<std::mutex> lock(writer_mutex_);
  if (writer && pending_annotation_) {
    writer->annotate(*pending_annotation_);
    pending_annotation_.reset();
  }
  writer_closed_ = writer == nullptr;  // closed, or never opened on this rank
  writer_ = writer;
}

void TrainingSession::start(std::function<void(const TrainingResult&, const std::string& error)> done) {
  join();
  running_.store(true);
  worker_ = std::thread([this, done = std::move(done)] {
    // OpenMP's thread count is per calling thread: a new thread would use every core, not the count set once at
    // start-up (measured: the GUI's runs went 20 % faster than headless ones on 2 threads instead of 1).
    at::init_num_threads();
    TrainingResult result;
    std::string error;
    try {
      result = run();
    } catch (const std::exception& failure) {
      error = error_text(failure);
    } catch (...) {
      error = "unknown error in the training thread";
    }
    share_writer(nullptr);  // also after a failure before the writer opened
    running_.store(false);  // before the refusal: a keep_state after it sees the run is not training
    control_.refuse_keep_requests("the run ended before its state was kept");  // also one that failed to start
    if (done) done(result, error);
  });
}

void TrainingSession::join() {
  if (worker_.joinable()) worker_.join();
}

}  // namespace descentlab::session
