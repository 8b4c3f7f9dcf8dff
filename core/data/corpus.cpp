#include "core/data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "core/util/error.h"

namespace descentlab::data {
namespace fs = std::filesystem;

namespace {

std::string read_file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path.string(), "cannot open");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::u32string decode_utf8(const std::string& bytes, const std::string& source) {
  std::u32string out;
  out.reserve(bytes.size());
  size_t i = 0;
  // Skip a byte-order mark.
  if (bytes.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  while (i < bytes.size()) {
    const unsigned char lead = static_cast<unsigned char>(bytes[i]);
    int extra = 0;
    char32_t code = 0;
    if (lead < 0x80) {
      code = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      extra = 1;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      extra = 2;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      extra = 3;
      code = lead & 0x07;
    } else {
      throw DataError(source, "invalid UTF-8 lead byte at byte offset " + std::to_string(i));
    }
    if (i + static_cast<size_t>(extra) >= bytes.size()) {
      throw DataError(source, "UTF-8 sequence cut short at byte offset " + std::to_string(i));
    }
    for (int k = 1; k <= extra; ++k) {
      const unsigned char next = static_cast<unsigned char>(bytes[i + static_cast<size_t>(k)]);
      if ((next & 0xC0) != 0x80) {
        throw DataError(source, "invalid UTF-8 continuation byte at byte offset " + std::to_string(i + k));
      }
      code = (code << 6) | (next & 0x3F);
    }
    static const char32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      throw DataError(source, "invalid UTF-8 code point at byte offset " + std::to_string(i));
    }
    out.push_back(code);
    i += 1 + static_cast<size_t>(extra);
  }
  return out;
}

std::string encode_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

ChapterCorpus read_chapter_corpus(const std::string& directory) {
  const fs::path folder(directory);
  if (!fs::is_directory(folder)) throw MissingDataError(directory, "corpus folder not found");
  // Find the highest chapter number present, to tell a gap from the end.
  int highest = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("chapter_", 0) == 0 && entry.path().extension() == ".txt") {
      try {
        highest = std::max(highest, std::stoi(name.substr(8)));
      } catch (const std::exception&) {
        // chapter_x.txt with no number: not part of the book
      }
    }
  }
  if (highest == 0) throw MissingDataError(directory, "no chapter_1.txt in the corpus folder");
  ChapterCorpus corpus;
  std::vector<fs::path> paths;
  for (int k = 1; k <= highest; ++k) {
    const fs::path chapter = folder / ("chapter_" + std::to_string(k) + ".txt");
    if (!fs::exists(chapter)) {
      throw DataError(directory, "chapter_" + std::to_string(k) + ".txt is missing but chapter_" +
                                     std::to_string(highest) + ".txt exists");
    }
    paths.push_back(chapter);
  }
  if (fs::exists(folder / "epilogue.txt")) paths.push_back(folder / "epilogue.txt");
  for (const auto& path : paths) {
    std::u32string chapter = decode_utf8(read_file_bytes(path), path.string());
    if (!corpus.text.empty()) {
      while (!corpus.text.empty() && corpus.text.back() == U'\n') corpus.text.pop_back();
      corpus.text += U"\n\n";
    }
    corpus.text += chapter;
    corpus.files.push_back(path.string());
  }
  return corpus;
}

CharVocabulary CharVocabulary::build(const std::u32string& train_text) {
  const std::set<char32_t> seen(train_text.begin(), train_text.end());
  CharVocabulary vocabulary;
  vocabulary.characters_.assign(seen.begin(), seen.end());
  for (size_t i = 0; i < vocabulary.characters_.size(); ++i) {
    vocabulary.ids_[vocabulary.characters_[i]] = static_cast<int32_t>(i + 1);
  }
  return vocabulary;
}

int32_t CharVocabulary::id_of(char32_t character) const {
  const auto found = ids_.find(character);
  return found == ids_.end() ? kUnknown : found->second;
}

char32_t CharVocabulary::character(int32_t id) const {
  if (id <= 0 || id > static_cast<int32_t>(characters_.size())) return U'\uFFFD';
  return characters_[static_cast<size_t>(id - 1)];
}

std::vector<int32_t> CharVocabulary::encode(const std::u32string& text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (char32_t c : text) ids.push_back(id_of(c));
  return ids;
}

std::u32string CharVocabulary::decode(const std::vector<int32_t>& ids) const {
  std::u32string text;
  text.reserve(ids.size());
  for (int32_t id : ids) text.push_back(character(id));
  return text;
}

CharSplit split_corpus(const std::u32string& text, double validation_fraction) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
    throw Error("split_corpus: validation_fraction must be in [0, 1), got " + std::to_string(validation_fraction));
  }
  const auto train_size = static_cast<size_t>(static_cast<double>(text.size()) * (1.0 - validation_fraction));
  return CharSplit{text.substr(0, train_size), text.substr(train_size)};
}

}  // namespace descentlab::data
