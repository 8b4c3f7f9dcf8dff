// The character corpus (core/data/corpus): UTF-8 decoding with its round trip, the split and the character
// vocabulary; and the chapter-folder reader, with files described by the input (NUL-separated parts, each a file
// name on its first line, then its text).

#include <filesystem>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/util/error.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

namespace fs = std::filesystem;

namespace {

void check_text(const std::u32string& text) {
  const auto split = data::split_corpus(text, 0.1);
  if (split.train.size() + split.validation.size() != text.size()) finding("the corpus split lost characters");
  const auto vocabulary = data::CharVocabulary::build(split.train);
  const auto ids = vocabulary.encode(split.train);
  if (vocabulary.decode(ids) != split.train) finding("the vocabulary does not decode what it encoded");
  for (const auto id : vocabulary.encode(split.validation)) {
    if (id < 0 || id >= vocabulary.size()) finding("a character id outside the vocabulary");
  }
}

bool safe_name(const std::string& name) {
  if (name.empty() || name.size() > 40 || name == "." || name == "..") return false;
  for (const char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  }
  return true;
}

}  // namespace

int corpus(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const std::u32string text = data::decode_utf8(bytes, "fuzz");
    // A leading byte-order mark is skipped by design; everything else must encode back to the same bytes.
    const bool bom = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0;
    if (data::encode_utf8(text) != bytes.substr(bom ? 3 : 0)) {
      finding("decode_utf8 accepted bytes that do not encode back to themselves");
    }
    check_text(text);
  } catch (const Error&) {
  }
  if (bytes.find('\0') == std::string::npos) return 0;
  static const std::string folder = scratch_path("corpus");
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  fs::create_directories(folder);
  size_t start = 0;
  while (start <= bytes.size()) {
    size_t end = bytes.find('\0', start);
    if (end == std::string::npos) end = bytes.size();
    const std::string part = bytes.substr(start, end - start);
    const size_t newline = part.find('\n');
    const std::string name = part.substr(0, newline);
    if (safe_name(name)) {
      const std::string content = newline == std::string::npos ? "" : part.substr(newline + 1);
      write_file(folder + "/" + name, reinterpret_cast<const uint8_t*>(content.data()), content.size());
    }
    start = end + 1;
  }
  try {
    const auto corpus = data::read_chapter_corpus(folder);
    if (corpus.files.empty()) finding("a chapter corpus of no files was accepted");
    check_text(corpus.text);
  } catch (const Error&) {
  }
  fs::remove_all(folder, ignored);
  return 0;
}

}  // namespace descentlab::fuzz
