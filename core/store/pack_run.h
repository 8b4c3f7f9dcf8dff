#pragma once
// pack_run: a run written as one file, the form to share or archive, which h5py reads whole. (Declared through
// core/store/run_writer.h too, for the callers that write runs and pack them.)

#include <cstddef>
#include <string>

namespace descentlab::store {

// Writes the run `source` as a reader sees it now (the run file and the records of the log beside it) to `target` as
// one run file with every record folded in and every checkpoint's tensors in the file itself. Works while a writer is
// adding to `source`. Written to a temporary name and renamed; throws RunFileError naming the file.
//
// It never writes over what belongs to a run: a `target` that is `source` itself, or a companion of `source` or of
// any other run (its log RUN.h5.log, its lock RUN.h5.lock, a file in its folder of checkpoint data RUN.h5.checkpoints)
// is refused naming the run; so is an existing `target` unless `overwrite`. Overwriting another run takes that run's
// lock first (refused while a writer holds it) and removes its log and its checkpoint data folder with it, so nothing
// of the old run is read as the packed one's.
struct PackOptions {
  bool overwrite = false;
};

struct PackResult {
  size_t bytes = 0;        // the packed file's size
  size_t log_records = 0;  // records of the log folded in
  std::string warning;     // "" when all went well (else, e.g., the folder sync failed after the rename)
};
PackResult pack_run(const std::string& source, const std::string& target, const PackOptions& options = {});

}  // namespace descentlab::store
