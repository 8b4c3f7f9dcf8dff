#pragma once
// A person's name, tags and note for a run (issue 54, item 3), set on a run no writer holds: a finished, stopped or
// interrupted run. The annotation goes into the run's log (RUN.h5.log) as one record, so setting it costs the
// annotation's bytes and an fsync, whatever the run holds; readers show it at once, and the run's next writer (a
// resume) or a pack folds it into the file's root attributes "name", "tags" and "note" (docs/run-file.md). A run a
// writer holds is annotated through that writer (RunWriter::annotate). Torch-free and Qt-free.

#include <string>

#include "core/store/run_file.h"

namespace descentlab::store {

// Replaces the annotation of the run file at `path` by `annotation` (checked_annotation) and returns it as stored.
// Takes the run's lock for the moment it appends, so a run another writer holds is refused (RunFileError Busy naming
// the holder); a missing, foreign or damaged run file, a log of another run, or a bad name or tag is refused naming
// it; a failed write leaves the log as it was (RunFileError WriteFailed naming the run).
RunAnnotation annotate_run(const std::string& path, const RunAnnotation& annotation);

}  // namespace descentlab::store
