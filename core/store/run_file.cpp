#include "core/store/run_file.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>

namespace descentlab::store {

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string new_run_id() {
  std::random_device entropy;  // the kernel's random source on Linux
  std::string id;
  for (int word = 0; word < 4; ++word) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(entropy()));
    id += hex;
  }
  return id;
}

bool is_run_id(const std::string& text) {
  if (text.size() != 32) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Characters, not bytes, of UTF-8 text (continuation bytes are not counted).
size_t characters(const std::string& text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& why) {
  throw RunFileError(RunFileError::Kind::InvalidArgument, path, what, why);
}

}  // namespace

RunAnnotation checked_annotation(const RunAnnotation& annotation, const std::string& path) {
  RunAnnotation checked;
  checked.name = trimmed(annotation.name);
  if (checked.name.find_first_of("\r\n") != std::string::npos) refuse(path, "name", "a run's name is one line");
  if (characters(checked.name) > kMaxRunNameChars) {
    refuse(path, "name",
           "'" + checked.name.substr(0, 40) + "...' is " + std::to_string(characters(checked.name)) +
               " characters long; a run's name may have at most " + std::to_string(kMaxRunNameChars));
  }
  for (const auto& given : annotation.tags) {
    const std::string tag = trimmed(given);
    if (tag.empty()) continue;
    if (tag.find_first_of(",\r\n") != std::string::npos) {
      refuse(path, "tags", "the tag '" + tag + "' holds a comma or a line break; tags are separated by commas");
    }
    if (characters(tag) > kMaxTagChars) {
      refuse(path, "tags",
             "the tag '" + tag.substr(0, 40) + "...' is longer than " + std::to_string(kMaxTagChars) + " characters");
    }
    if (std::find(checked.tags.begin(), checked.tags.end(), tag) == checked.tags.end()) checked.tags.push_back(tag);
  }
  if (checked.tags.size() > kMaxTags) {
    refuse(path, "tags",
           std::to_string(checked.tags.size()) + " tags; a run may have at most " + std::to_string(kMaxTags));
  }
  checked.note = annotation.note;
  if (checked.note.size() > kMaxNoteBytes) {
    refuse(path, "note",
           std::to_string(checked.note.size()) + " bytes; a note may have at most " + std::to_string(kMaxNoteBytes));
  }
  if (trimmed(checked.note).empty()) checked.note.clear();
  return checked;
}

std::string tags_text(const std::vector<std::string>& tags) {
  std::string text;
  for (const auto& tag : tags) text += (text.empty() ? "" : ", ") + tag;
  return text;
}

std::vector<std::string> tags_from_text(const std::string& text) {
  std::vector<std::string> tags;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string tag = trimmed(text.substr(from, comma - from));
    if (!tag.empty()) tags.push_back(tag);
    from = comma + 1;
  }
  return tags;
}

}  // namespace descentlab::store
