#pragma once
// A checkpoint as one byte string and back: how rank 0 of a data-parallel run hands the checkpoint it resumes from
// to the other ranks, which need not see the run file (they may be on other machines). Little-endian lengths,
// then the fields in order; reading checks every length against what is left and names what does not fit.

#include <cstdint>
#include <string>
#include <vector>

#include "core/record/checkpoint.h"

namespace descentlab::store {

std::vector<uint8_t> checkpoint_to_bytes(const record::CheckpointData& checkpoint);
// Throws descentlab::Error naming `source` and the field when the bytes are cut short or malformed.
record::CheckpointData checkpoint_from_bytes(const std::vector<uint8_t>& bytes, const std::string& source);

}  // namespace descentlab::store
