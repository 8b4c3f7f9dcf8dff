#pragma once
// pack_run: a run written as one file, the form to share or archive, which h5py reads whole. (Declared through
// core/store/run_writer.h too, for the callers that write runs and pack them.)

#include <cstddef>
#include <string>

namespace descentlab::store {

// Writes the run `source` as a reader sees it now (the run file and the records of the log beside it) to `target` as
// one run file with every record folded in and every checkpoint's tensors in the file itself. Works while a writer is
// adding to `source`. Written to a temporary name and renamed; throws RunFileError naming the file.
struct PackResult {
  size_t bytes = 0;        // the packed file's size
  size_t log_records = 0;  // records of the log folded in
  std::string warning;     // "" when all went well (else, e.g., the folder sync failed after the rename)
};
PackResult pack_run(const std::string& source, const std::string& target);

}  // namespace descentlab::store
