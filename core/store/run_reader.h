#pragma once
// RunReader: reads a run file (written by RunWriter) for the GUI, the CLI and the tests. Opening validates the file
// (exists, HDF5, a DescentLab run file, a format version this build reads) and every read checks shapes, so a
// damaged or foreign file gives a RunFileError naming the file and object instead of a crash.
// The writer replaces the file by rename, so an open reader keeps a consistent snapshot; reopen to see more.

#include <memory>
#include <string>
#include <vector>

#include "core/record/events.h"
#include "core/store/run_file.h"

namespace descentlab::store {

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

  std::vector<std::string> histogram_names() const;
  HistogramSeries histogram(const std::string& name) const;

  std::vector<std::string> sweep_names() const;
  record::SweepResult sweep(const std::string& name) const;

  std::vector<CheckpointInfo> checkpoints() const;
  bool has_checkpoint(const std::string& label) const;
  record::CheckpointData checkpoint(const std::string& label) const;

 private:
  struct File;
  std::string path_;
  RunHeader header_;
  std::unique_ptr<File> file_;
};

}  // namespace descentlab::store
