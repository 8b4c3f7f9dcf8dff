// The IMDb reviews reader (core/data/reviews: a JSON array of {"t": text, "s": 0|1}), then what the text task does
// with the reviews: normalize, tokenize, split, build a vocabulary, encode.

#include <string>

#include "core/data/reviews.h"
#include "core/util/error.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

int reviews(const uint8_t* data, size_t size) {
  static const std::string path = scratch_path("reviews.json");
  write_file(path, data, size);
  try {
    const auto reviews = data::read_reviews(path);
    for (const auto& review : reviews) {
      if (review.label != 0 && review.label != 1) finding("a review with label " + std::to_string(review.label));
      for (const auto& token : data::tokenize_review(data::normalize_review(review.text))) {
        if (token.empty()) finding("an empty token");
      }
    }
    const auto split = data::split_reviews(reviews);
    if (split.train.size() + split.test.size() != reviews.size()) finding("the split lost or duplicated reviews");
    const auto vocabulary = data::WordVocabulary::build(split.train, 64, 1);
    const int64_t max_length = 8;
    const auto encoded = data::encode_reviews(reviews, vocabulary, max_length);
    if (encoded.count != static_cast<int64_t>(reviews.size()) ||
        encoded.token_ids.size() != static_cast<size_t>(encoded.count * max_length) ||
        encoded.lengths.size() != reviews.size() || encoded.labels.size() != reviews.size()) {
      finding("encoded reviews of the wrong size");
    }
    for (size_t i = 0; i < encoded.lengths.size(); ++i) {
      if (encoded.lengths[i] < 1 || encoded.lengths[i] > max_length) finding("an encoded length out of range");
    }
    for (const auto id : encoded.token_ids) {
      if (id < 0 || id >= vocabulary.size()) finding("a token id outside the vocabulary");
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace descentlab::fuzz
