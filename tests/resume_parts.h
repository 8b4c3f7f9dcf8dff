#pragma once
// One part of a run, trained into a run file as one CLI process would: the first part makes the file, each later part
// resumes from its "latest" checkpoint in a new engine. Used by the engines' stop-and-resume tests.

#include <memory>
#include <string>

#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/trainer.h"
#include "run_file_samples.h"
#include "test_sinks.h"

namespace descentlab::testing {

enum class Part { First, Resumed };

// Runs `trainer` with the run file at `path` as its sink and checkpoint store until `stop_at` steps (0: to the end).
// The trainer keeps pointers to this part's sinks: one part per trainer.
inline session::TrainingResult run_part(train::Trainer& trainer, const std::string& path, Part part, int64_t stop_at) {
  std::unique_ptr<store::RunWriter> writer;
  if (part == Part::First) {
    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    writer = store::RunWriter::create(path, sample_header(), options);
  } else {
    const store::RunReader reader(path);
    trainer.resume_from(reader.checkpoint("latest"), path, "latest");
    writer = store::RunWriter::open(path);
  }
  session::TrainingControl control;
  StopAfter stopper(control, stop_at);
  trainer.add_sink(writer.get());
  trainer.add_sink(&stopper);
  trainer.set_checkpoint_store(writer.get());
  trainer.set_control(&control);
  return trainer.run();
}

}  // namespace descentlab::testing
