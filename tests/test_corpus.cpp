#include <gtest/gtest.h>

#include "core/data/corpus.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab::data {
namespace {

using descentlab::testing::fixture;
using descentlab::testing::ScratchFolder;
using descentlab::testing::write_bytes;

TEST(Corpus, ReadsChaptersInOrderThenTheEpilogue) {
  const auto corpus = read_chapter_corpus(fixture("corpus").string());
  ASSERT_EQ(corpus.files.size(), 4u);
  EXPECT_NE(corpus.files[0].find("chapter_1.txt"), std::string::npos);
  EXPECT_NE(corpus.files[2].find("chapter_3.txt"), std::string::npos);
  EXPECT_NE(corpus.files[3].find("epilogue.txt"), std::string::npos);
  const std::string text = encode_utf8(corpus.text);
  EXPECT_EQ(text.rfind("CHAPTER 1. Loomings.", 0), 0u);
  EXPECT_LT(text.find("CHAPTER 2."), text.find("CHAPTER 3."));
  EXPECT_NE(text.find("sail about a little.\n\nCHAPTER 2. The Carpet-Bag."), std::string::npos);
  EXPECT_NE(text.find("ago—never"), std::string::npos);  // em dash decoded and re-encoded intact
}

TEST(Corpus, NumericChapterOrderNotLexicographic) {
  ScratchFolder scratch;
  for (int k = 1; k <= 11; ++k)
    write_bytes(scratch / ("chapter_" + std::to_string(k) + ".txt"), std::to_string(k) + "\n");
  const auto corpus = read_chapter_corpus(scratch.path().string());
  EXPECT_EQ(encode_utf8(corpus.text), "1\n\n2\n\n3\n\n4\n\n5\n\n6\n\n7\n\n8\n\n9\n\n10\n\n11\n");
}

TEST(Corpus, AGapInTheChaptersIsAnError) {
  ScratchFolder scratch;
  write_bytes(scratch / "chapter_1.txt", "one\n");
  write_bytes(scratch / "chapter_3.txt", "three\n");
  try {
    read_chapter_corpus(scratch.path().string());
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find("chapter_2.txt is missing"), std::string::npos) << error.what();
  }
  EXPECT_THROW(read_chapter_corpus((scratch / "absent").string()), MissingDataError);
}

TEST(Corpus, Utf8DecodesCodePointsAndRejectsBadBytes) {
  EXPECT_EQ(decode_utf8("a—“b”", "x"), std::u32string(U"a\u2014\u201Cb\u201D"));
  EXPECT_EQ(encode_utf8(U"\U0001F40B whale"), "\xF0\x9F\x90\x8B whale");
  try {
    decode_utf8(std::string("ok\xFF"), "chapter_9.txt");
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find("chapter_9.txt"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("byte offset 2"), std::string::npos);
  }
  EXPECT_THROW(decode_utf8(std::string("\xE2\x80"), "cut"), DataError);       // sequence cut short
  EXPECT_THROW(decode_utf8(std::string("\xC0\xAF"), "overlong"), DataError);  // overlong '/'
}

TEST(Corpus, SplitIsContiguousAndComplete) {
  const std::u32string text = U"abcdefghij";
  const auto split = split_corpus(text, 0.3);
  EXPECT_EQ(split.train, U"abcdefg");
  EXPECT_EQ(split.validation, U"hij");
  EXPECT_EQ(split_corpus(text, 0.0).validation, U"");
  EXPECT_THROW(split_corpus(text, 1.0), Error);
  EXPECT_THROW(split_corpus(text, -0.1), Error);
}

TEST(Corpus, VocabularyFromTrainingTextMapsUnseenToUnknown) {
  const auto corpus = read_chapter_corpus(fixture("corpus").string());
  const auto split = split_corpus(corpus.text, 0.2);
  EXPECT_EQ(split.train.size() + split.validation.size(), corpus.text.size());
  const auto vocabulary = CharVocabulary::build(split.train);
  // Every training character round-trips; the vocabulary is sorted by code point after <unk>.
  EXPECT_EQ(vocabulary.decode(vocabulary.encode(split.train)), split.train);
  EXPECT_EQ(vocabulary.character(1), U'\n');
  EXPECT_EQ(vocabulary.id_of(U'\u2019'), CharVocabulary::kUnknown);  // the epilogue's ’ is validation-only
  EXPECT_EQ(vocabulary.character(CharVocabulary::kUnknown), U'\uFFFD');
}

}  // namespace
}  // namespace descentlab::data
