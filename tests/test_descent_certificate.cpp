// The descent certificate (core/record/descent_certificate.h): Wilson's interval per layer, the bootstrap over
// samples for all pairs, and the mean curve's monotonicity, on counts whose answers are known.
#include <gtest/gtest.h>

#include <cmath>

#include "core/record/descent_certificate.h"

namespace descentlab::record {
namespace {

TEST(DescentCertificate, WilsonIntervalMatchesKnownValues) {
  // 8 of 10: the textbook Wilson 95 % interval is [0.4902, 0.9433].
  const ShareInterval eight = wilson_interval(8, 10);
  EXPECT_DOUBLE_EQ(eight.share, 0.8);
  EXPECT_NEAR(eight.low, 0.4902, 5e-5);
  EXPECT_NEAR(eight.high, 0.9433, 5e-5);
  // All or none: the interval stays inside [0, 1] and is not empty (Wilson's advantage over the normal one).
  const ShareInterval all = wilson_interval(50, 50);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
  EXPECT_NEAR(all.low, 0.9287, 5e-5);
  EXPECT_DOUBLE_EQ(wilson_interval(0, 50).low, 0.0);
  EXPECT_NEAR(wilson_interval(0, 50).high, 0.0713, 5e-5);
}

TEST(DescentCertificate, BootstrapOverSamplesAgreesWithTheSamplesSpread) {
  // Two layers; 10 samples descend at neither, 90 at both: per sample the share is 0 or 1 with p = 0.9, so over
  // 100 samples the standard error is 0.03 and the 95 % interval about [0.84, 0.96] — wider than Wilson's over 200
  // pairs would claim, because a sample's two pairs go together.
  const ShareInterval spread = bootstrap_overall({10, 0, 90});
  EXPECT_DOUBLE_EQ(spread.share, 0.9);
  EXPECT_EQ(spread.count, 180);
  EXPECT_EQ(spread.total, 200);
  EXPECT_NEAR(spread.low, 0.9 - 1.96 * 0.03, 0.015);
  EXPECT_NEAR(spread.high, 0.9 + 1.96 * 0.03, 0.015);
  const ShareInterval pairs = wilson_interval(180, 200);
  EXPECT_GT(spread.high - spread.low, pairs.high - pairs.low);
  // Every sample descends everywhere: no spread at all.
  const ShareInterval sure = bootstrap_overall({0, 0, 0, 40});
  EXPECT_DOUBLE_EQ(sure.low, 1.0);
  EXPECT_DOUBLE_EQ(sure.high, 1.0);
  // The same counts give the same interval (a fixed seed), so the CLI and the window agree.
  EXPECT_EQ(bootstrap_overall({3, 5, 7}).low, bootstrap_overall({3, 5, 7}).low);
}

TEST(DescentCertificate, PerLayerSharesOverallShareAndTheMeanCurve) {
  // 3 layers, 20 samples; the mean curve falls, rises at layer 2, falls: monotone it is not.
  const DescentCertificate certificate = descent_certificate({0.9, 0.25, 0.6}, {2, 6, 9, 3}, {1.0, 0.8, 0.85, 0.7});
  ASSERT_TRUE(certificate.valid());
  EXPECT_EQ(certificate.samples, 20);
  ASSERT_EQ(certificate.per_layer.size(), 3u);
  EXPECT_EQ(certificate.per_layer[0].count, 18);
  EXPECT_EQ(certificate.per_layer[1].count, 5);
  EXPECT_EQ(certificate.per_layer[2].count, 12);
  EXPECT_EQ(certificate.overall.count, 6 + 18 + 9);  // sum of k n_k
  EXPECT_EQ(certificate.overall.total, 60);
  EXPECT_FALSE(certificate.mean_monotone);
  EXPECT_EQ(certificate.mean_rises, std::vector<int>{2});
  EXPECT_TRUE(descent_certificate({0.5}, {1, 1}, {0.7, 0.6}).mean_monotone);
  // Counts that do not fit the layers (a run recorded before the counts existed) give no certificate.
  EXPECT_FALSE(descent_certificate({0.5, 0.5}, {}).valid());
  EXPECT_FALSE(descent_certificate({0.5, 0.5}, {1, 2}).valid());
}

}  // namespace
}  // namespace descentlab::record
