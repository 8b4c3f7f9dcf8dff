#pragma once
// A branch's parent, checked against what the child recorded of it (issue 55, item 8): the file at the recorded path
// must be the same run (its run id) and, where it still keeps a checkpoint at the branch step, that checkpoint must
// be the one branched from (its SHA-256). A parent that trained on since keeps a newer "latest": that is no change.

#include <string>

#include "core/store/run_file.h"

namespace descentlab::store {

// "" when the parent at lineage.parent_file is the one branched from; otherwise what is wrong, naming the file, the
// step and both identities or hashes: moved or deleted, another run at that path, or a changed checkpoint.
std::string parent_problem(const RunLineage& lineage);

}  // namespace descentlab::store
