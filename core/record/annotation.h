#pragma once
// What a person says about a run (issue 54): a name of their choosing, tags and a note. Plain data, shared by the run
// file (core/store/run_file.h: root attributes "name", "tags", "note", changed through the run log, and
// checked_annotation, which enforces the limits below) and the training session that passes it to its writer.

#include <cstddef>
#include <string>
#include <vector>

namespace descentlab::record {

struct RunAnnotation {
  std::string name;               // "" for the name the run's configuration gives it
  std::vector<std::string> tags;  // each trimmed, without commas or line breaks, none twice, in the order given
  std::string note;               // any text
  bool empty() const { return name.empty() && tags.empty() && note.empty(); }
  bool operator==(const RunAnnotation& other) const {
    return name == other.name && tags == other.tags && note == other.note;
  }
  bool operator!=(const RunAnnotation& other) const { return !(*this == other); }
};

inline constexpr size_t kMaxRunNameChars = 200, kMaxTagChars = 64, kMaxTags = 32, kMaxNoteBytes = 64 * 1024;

}  // namespace descentlab::record
