#pragma once
// The checksums a checkpoint is stored with (internal to core/store): a SHA-256 per section, over its tensors' names,
// dtypes, shapes and bytes, and one over the whole checkpoint, over its step, epoch, created, extra and the sections'
// sums. The run file keeps them as the attributes "sha256" of the section and checkpoint groups
// (core/store/run_file_format.h); a checkpoint's sections are summed while its data file is written
// (core/store/checkpoint_files.h).

#include <cstdint>
#include <map>
#include <string>

#include "core/record/checkpoint.h"

namespace descentlab::store::format {

std::string section_checksum(const std::map<std::string, record::TensorBlob>& tensors);
std::string checkpoint_checksum(int64_t step, int64_t epoch, const std::string& created, const std::string& extra,
                                const std::map<std::string, std::string>& section_sums);

}  // namespace descentlab::store::format
