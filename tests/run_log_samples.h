#pragma once
// The run log's sample runs, shared by test_run_log.cpp and test_run_identity.cpp.

#include <signal.h>
#include <sys/wait.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "core/store/run_writer.h"
#include "run_file_samples.h"

namespace descentlab::testing {

inline std::vector<int64_t> one_to(int64_t last) {
  std::vector<int64_t> steps;
  for (int64_t step = 1; step <= last; ++step) steps.push_back(step);
  return steps;
}

// A run with loss rows 1..3 and "latest" at step 3 folded into the run file, then rows 4 and 5 in two log records.
inline std::unique_ptr<store::RunWriter> run_with_log(const std::string& path) {
  auto writer = store::RunWriter::create(path, sample_header(), manual_flush());
  for (int64_t step = 1; step <= 3; ++step) writer->scalar("loss", step, 0.0, 1.0 / static_cast<double>(step));
  writer->save_checkpoint("latest", sample_checkpoint(3));
  for (int64_t step = 4; step <= 5; ++step) {
    writer->scalar("loss", step, 0.0, 1.0 / static_cast<double>(step));
    writer->flush();
  }
  return writer;
}

// run_with_log's files as a writer killed before its end leaves them: rows 4 and 5 only in the log.
inline bool killed_with_its_log(const std::string& path) {
  const int status = in_child([&] {
    auto writer = run_with_log(path);
    ::raise(SIGKILL);
    return 0;
  });
  return WIFSIGNALED(status);
}

}  // namespace descentlab::testing
