#include "core/store/annotate_run.h"

#include <algorithm>

#include "core/store/run_batch.h"
#include "core/store/run_file_format.h"
#include "core/store/run_lock.h"
#include "core/store/run_log.h"

namespace descentlab::store {

RunAnnotation annotate_run(const std::string& path, const RunAnnotation& annotation) {
  RunBatch batch;
  batch.annotation = checked_annotation(annotation, path);
  const auto lock = RunFileLock::acquire(path, "naming the run");
  check_log_free(path);
  RunHeader header;
  int64_t folded = 0;
  {
    const H5::H5File file = format::open_validated(path, H5F_ACC_RDONLY);
    try {
      header = format::read_header(file, path);
      folded = format::log_sequence(file);
    } catch (const H5::Exception& error) {
      throw format::to_run_file_error(error, RunFileError::Kind::Corrupt, path, "/");
    }
  }
  const RunLog log = read_run_log(path, folded);
  check_log_follows(log, folded, header.run_id, path);
  RunLogAppender appender(path);
  appender.continue_after(log);
  const int64_t last = std::max(folded, log.last_sequence);
  if (!appender.is_open()) {
    // No log (or one that holds no whole record past the file's): a new one continuing the file. A log that holds
    // records the file does not, and cannot be appended to, is never replaced: they would be lost.
    if (log.exists && log.last_sequence > folded) {
      throw RunFileError(RunFileError::Kind::WriteFailed, path, log_path_for(path),
                         "cannot be opened for appending, and it holds records the run file does not: nothing "
                         "was changed");
    }
    appender.start_new(folded, header.run_id);
  }
  appender.append(last + 1, batch);
  return *batch.annotation;
}

}  // namespace descentlab::store
