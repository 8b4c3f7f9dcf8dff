#pragma once
// RunReader: reads a run file (written by RunWriter) for the GUI, the CLI and the tests. Opening validates the file
// (exists, HDF5, a DescentLab run file, a format version this build reads) and every read checks shapes, so a
// damaged or foreign file gives a RunFileError naming the file and object instead of a crash.
// A run file's rows not yet folded in are in its run log (RUN.h5.log, core/store/run_log.h): the reader reads the
// log once when it opens and shows its rows after the file's own, so it sees every commit up to that moment. The
// writer replaces the file by rename and appends whole records to the log, so an open reader keeps a consistent
// snapshot; reopen to see more.

#include <memory>
#include <string>
#include <vector>

#include "core/record/events.h"
#include "core/store/run_file.h"

namespace descentlab::store {

// What tells one version of a run file from the next: its device, inode, size and modification time (a writer
// replaces the file by rename and never changes it in place); "missing" when there is no such file.
std::string run_file_version(const std::string& path);

class RunReader {
 public:
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;

  const std::string& path() const { return path_; }
  const RunHeader& header() const { return header_; }

  std::vector<std::string> metric_names() const;
  MetricSeries metric(const std::string& name) const;
  // Only the series' last row (one row, or none) without its wall time: what a runs table shows, read without the
  // series.
  // With `scalars_only`, a series of more than one column (per-layer rows, a frontier) comes back with its width
  // and no row, read from its shape alone.
  MetricSeries last_metric_row(const std::string& name, bool scalars_only = false) const;

  std::vector<std::string> histogram_names() const;
  HistogramSeries histogram(const std::string& name) const;

  std::vector<std::string> sweep_names() const;
  record::SweepResult sweep(const std::string& name) const;

  std::vector<CheckpointInfo> checkpoints() const;
  bool has_checkpoint(const std::string& label) const;
  record::CheckpointData checkpoint(const std::string& label) const;
  // Where the checkpoints' tensors are on disk besides the run file (RUN.h5.checkpoints/<n>.bin; empty for a file
  // that holds them itself: a packed run, or one written before format 5).
  std::vector<std::string> checkpoint_data_files() const;
  // The copy of a user's module the run keeps (issue 53; header().model_file says its name, size and SHA-256),
  // checked against that SHA-256. RunFileError MissingObject when the run keeps none, Corrupt when it is damaged.
  std::string module_copy() const;

  // What this reader took from the run log: where its last whole record ends and its sequence (the run file's
  // log_sequence when the log had none), for a follower that reads only what comes after (core/store/run_follower.h).
  struct LogPosition {
    bool exists = false;
    int64_t base_sequence = 0;
    int64_t last_sequence = 0;
    uint64_t valid_length = 0;
  };
  const LogPosition& log_position() const;

 private:
  struct File;
  MetricSeries metric_in_file(const std::string& name) const;
  HistogramSeries histogram_in_file(const std::string& name) const;
  std::string path_;
  RunHeader header_;
  std::unique_ptr<File> file_;
};

}  // namespace descentlab::store
