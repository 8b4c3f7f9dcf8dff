#include "core/data/reviews.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "core/util/error.h"
#include "core/util/random.h"

namespace descentlab::data {
namespace {

bool is_word_byte(unsigned char c) {
  return std::isalnum(c) || c == '\'' || c >= 0x80;
}

// UTF-8 punctuation that separates words: U+0080..U+00BF (no-break space, guillemets, ...) and the General
// Punctuation block U+2000..U+206F (dashes, curly quotes, ellipsis). Returns the sequence length, 0 otherwise.
size_t utf8_separator_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0; };
  if (byte(i) == 0xC2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0xBF) return 2;
  if (byte(i) == 0xE2 && (byte(i + 1) == 0x80 || byte(i + 1) == 0x81) && byte(i + 2) >= 0x80) return 3;
  return 0;
}

std::vector<Review> balanced_subsample(const std::vector<Review>& split, int64_t limit, uint64_t seed,
                                       const char* split_name) {
  if (limit <= 0 || limit >= static_cast<int64_t>(split.size())) return split;
  std::vector<size_t> by_label[2];
  for (size_t i = 0; i < split.size(); ++i) by_label[split[i].label].push_back(i);
  std::vector<size_t> keep;
  for (int label = 0; label < 2; ++label) {
    const int64_t want = label == 0 ? limit / 2 : limit - limit / 2;
    if (want > static_cast<int64_t>(by_label[label].size())) {
      throw Error(std::string("review split '") + split_name + "': a balanced subsample of " + std::to_string(limit) +
                  " needs " + std::to_string(want) + " reviews of label " + std::to_string(label) + ", only " +
                  std::to_string(by_label[label].size()) + " exist");
    }
    deterministic_shuffle(by_label[label], derive_seed(seed, static_cast<uint64_t>(label)));
    keep.insert(keep.end(), by_label[label].begin(), by_label[label].begin() + want);
  }
  std::sort(keep.begin(), keep.end());
  std::vector<Review> subsample;
  subsample.reserve(keep.size());
  for (size_t index : keep) subsample.push_back(split[index]);
  return subsample;
}

}  // namespace

std::vector<Review> read_reviews(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MissingDataError(path, "cannot open the reviews file");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and out_of_range for 1e99999
    throw DataError(path, std::string("not valid JSON: ") + error.what());
  }
  if (!document.is_array()) throw DataError(path, "expected a JSON array of {\"t\": text, \"s\": 0|1} records");
  std::vector<Review> reviews;
  reviews.reserve(document.size());
  for (size_t i = 0; i < document.size(); ++i) {
    const auto& record = document[i];
    const std::string where = "record " + std::to_string(i);
    if (!record.is_object()) throw DataError(path, where + " is not an object");
    const auto text = record.find("t");
    const auto label = record.find("s");
    if (text == record.end() || !text->is_string()) throw DataError(path, where + ": key \"t\" must be a string");
    if (label == record.end() || !label->is_number_integer() || (*label != 0 && *label != 1)) {
      throw DataError(path, where + ": key \"s\" must be 0 or 1");
    }
    reviews.push_back(Review{text->get<std::string>(), label->get<int>()});
  }
  return reviews;
}

std::string normalize_review(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '<' &&
        (text.compare(i, 6, "<br />") == 0 || text.compare(i, 5, "<br/>") == 0 || text.compare(i, 4, "<br>") == 0)) {
      out.push_back(' ');
      i = text.find('>', i) + 1;
      continue;
    }
    if (text.compare(i, 3, "\xE2\x80\x99") == 0) {  // U+2019, the curly apostrophe of "don’t"
      out.push_back('\'');
      i += 3;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c < 0x80 ? static_cast<char>(std::tolower(c)) : text[i]);
    ++i;
  }
  return out;
}

std::vector<std::string> tokenize_review(const std::string& text) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&]() {
    const size_t first = current.find_first_not_of('\'');
    const size_t last = current.find_last_not_of('\'');
    if (first != std::string::npos) tokens.push_back(current.substr(first, last - first + 1));
    current.clear();
  };
  for (size_t i = 0; i < text.size();) {
    const size_t separator = utf8_separator_length(text, i);
    if (separator > 0) {
      flush();
      i += separator;
      continue;
    }
    const char ch = text[i++];
    if (is_word_byte(static_cast<unsigned char>(ch))) {
      current.push_back(ch);
    } else {
      flush();
      if (ch == '!' || ch == '?') tokens.emplace_back(1, ch);
    }
  }
  flush();
  return tokens;
}

ReviewSplit split_reviews(const std::vector<Review>& reviews, const ReviewSplitOptions& options) {
  std::vector<size_t> by_label[2];
  for (size_t i = 0; i < reviews.size(); ++i) by_label[reviews[i].label].push_back(i);
  std::vector<char> is_test(reviews.size(), 0);
  for (const auto& indices : by_label) {
    for (size_t k = 0; k < indices.size() / 2; ++k) is_test[indices[k]] = 1;
  }
  ReviewSplit split;
  for (size_t i = 0; i < reviews.size(); ++i) (is_test[i] ? split.test : split.train).push_back(reviews[i]);
  split.train = balanced_subsample(split.train, options.train_limit, derive_seed(options.seed, 1), "train");
  split.test = balanced_subsample(split.test, options.test_limit, derive_seed(options.seed, 2), "test");
  return split;
}

WordVocabulary WordVocabulary::build(const std::vector<Review>& train, int64_t max_size, int64_t min_count) {
  std::unordered_map<std::string, int64_t> counts;
  for (const auto& review : train) {
    for (auto& token : tokenize_review(normalize_review(review.text))) ++counts[token];
  }
  std::vector<std::pair<std::string, int64_t>> ranked;
  for (auto& [word, count] : counts) {
    if (count >= min_count) ranked.emplace_back(word, count);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  WordVocabulary vocabulary;
  vocabulary.words_ = {"<pad>", "<unk>"};
  for (auto& [word, count] : ranked) {
    if (max_size > 0 && static_cast<int64_t>(vocabulary.words_.size()) >= max_size) break;
    vocabulary.words_.push_back(word);
  }
  for (size_t i = 0; i < vocabulary.words_.size(); ++i) vocabulary.ids_[vocabulary.words_[i]] = static_cast<int64_t>(i);
  return vocabulary;
}

int64_t WordVocabulary::id_of(const std::string& word) const {
  const auto found = ids_.find(word);
  return found == ids_.end() ? kUnknown : found->second;
}

EncodedReviews encode_reviews(const std::vector<Review>& reviews, const WordVocabulary& vocabulary,
                              int64_t max_length) {
  if (max_length <= 0) throw Error("encode_reviews: max_length must be positive, got " + std::to_string(max_length));
  EncodedReviews encoded;
  encoded.count = static_cast<int64_t>(reviews.size());
  encoded.max_length = max_length;
  encoded.token_ids.assign(reviews.size() * static_cast<size_t>(max_length), WordVocabulary::kPad);
  for (size_t i = 0; i < reviews.size(); ++i) {
    const auto tokens = tokenize_review(normalize_review(reviews[i].text));
    const int64_t kept = std::min<int64_t>(max_length, static_cast<int64_t>(tokens.size()));
    int64_t* row = encoded.token_ids.data() + i * static_cast<size_t>(max_length);
    for (int64_t t = 0; t < kept; ++t) row[t] = vocabulary.id_of(tokens[static_cast<size_t>(t)]);
    if (kept == 0) row[0] = WordVocabulary::kUnknown;
    encoded.lengths.push_back(std::max<int64_t>(kept, 1));
    encoded.labels.push_back(reviews[i].label);
  }
  return encoded;
}

}  // namespace descentlab::data
