#pragma once
// The files a run of a user's module is made from (issue 53 item 5; docs/your-model.md): when the run begins, the
// module file is read whole and hashed, and the data file hashed; the run file keeps both names, sizes and SHA-256s
// and a copy of the module (core/store/run_file.h). Every later use of the run (a resume, a robustness sweep, a
// prune, a layer probe) takes the module from that copy, so it works after the original moved or changed, and
// checks the data file against its recorded SHA-256, refusing another one naming both hashes.

#include <string>

#include "core/config/experiment_config.h"
#include "core/store/run_file.h"
#include "core/tasks/script_task.h"

namespace descentlab::store {
class RunReader;
}

namespace descentlab::train {

// A new run's files, read now.
struct UserFiles {
  tasks::ScriptSources sources;
  store::RunInputFile model, data;
};

// Reads config.model.file whole and hashes it, and hashes config.data.file. Throws DataError naming a file that is
// missing or unreadable.
UserFiles read_user_files(const config::ExperimentConfig& config);

// Puts what the run file keeps of `files` into `header`: model_file, data_file and the module's bytes to copy.
void record_user_files(const UserFiles& files, store::RunHeader& header);

// Where a saved run's files are now, when the user says (train --resume RUN --model M.pt --data D.h5).
struct GivenFiles {
  std::string model, data;
};

// The sources of the saved run `reader`'s torchscript task: the module from the run's own copy, and the data file
// (given.data, else config.data.file) after checking its SHA-256 against the recorded one. A given model must be the
// module the run trained (its SHA-256 the recorded one). Throws DataError naming the file and both hashes when they
// differ, and the file and the recorded hash when it is missing. A run from before the run file kept them (no
// /inputs) reads its files as config names them, or as given.
tasks::ScriptSources saved_user_files(const store::RunReader& reader, const config::ExperimentConfig& config,
                                      const GivenFiles& given = {});

// What a branch of the saved run `reader` keeps of its files (issue 55): the parent's record of the module and the
// data file (the data's path where `sources` reads it now) and the module's bytes from `sources` (the parent's copy),
// so that the child resumes, sweeps and prunes as its parent does. A parent from before the run file kept them
// records the files as `sources` read them.
UserFiles kept_user_files(const store::RunReader& reader, const tasks::ScriptSources& sources);

}  // namespace descentlab::train
