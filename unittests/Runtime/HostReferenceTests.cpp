//===- HostReferenceTests.cpp - the host references, checked on the CPU ---===//
//
// The GPU tests and moss-bench judge the kernels by these references, so they
// are checked here by hand-computed cases, with no GPU needed.
//
//===----------------------------------------------------------------------===//
#include "moss/Support/HostAttentionReference.h"
#include "moss/Support/HostBf16.h"

#include <gtest/gtest.h>

using namespace moss::host;

namespace {
constexpr int64_t kD = 2;

/// One batch, one head, T = 2 queries, S = 3 keys, D = 2.
struct Tiny {
  std::vector<uint16_t> qkv, k, v;
  std::vector<uint8_t> mask;
  Tiny() {
    // q, k, v of [B,T,3,H,D]: slot 0 is q; slots 1 and 2 are not read.
    qkv = {toBf16(1), toBf16(0), 0, 0, 0, 0,  // t = 0: q = (1, 0)
           toBf16(0), toBf16(1), 0, 0, 0, 0}; // t = 1: q = (0, 1)
    k = {toBf16(1), toBf16(0), toBf16(0), toBf16(1), toBf16(1), toBf16(0)};
    v = {toBf16(2), toBf16(4), toBf16(8), toBf16(16), toBf16(-2), toBf16(1)};
    mask = {1, 0, 1,  // t = 0 sees keys 0 and 2
            0, 0, 0}; // t = 1 sees nothing
  }
  AttentionProblemView view() const {
    return {1, 1, 2, 3, kD, qkv.data(), k.data(), v.data(), mask.data(), 1.0};
  }
};
} // namespace

TEST(HostReference, AttentionAveragesEqualScoresOfAllowedKeysOnly) {
  Tiny p;
  std::vector<double> out = referenceAttention(p.view());
  ASSERT_EQ(out.size(), 4u);
  // Keys 0 and 2 both score 1 against q = (1, 0): the mean of their values;
  // key 1 (score 0, value (8, 16)) is masked out.
  EXPECT_DOUBLE_EQ(out[0], 0.0);
  EXPECT_DOUBLE_EQ(out[1], 2.5);
}

TEST(HostReference, AttentionRowWithoutAllowedKeyIsExactlyZero) {
  Tiny p;
  std::vector<double> out = referenceAttention(p.view());
  EXPECT_EQ(out[2], 0.0);
  EXPECT_EQ(out[3], 0.0);
  EXPECT_FALSE(std::signbit(out[2]));
}

TEST(HostReference, AttentionWeighsByScaledSoftmax) {
  Tiny p;
  p.mask = {1, 1, 0, 0, 0, 0}; // t = 0 sees keys 0 (score 1) and 1 (score 0)
  AttentionProblemView view = p.view();
  view.scale = 2.0;
  std::vector<double> out = referenceAttention(view);
  double w0 = std::exp(2.0) / (std::exp(2.0) + 1.0), w1 = 1.0 - w0;
  EXPECT_NEAR(out[0], w0 * 2 + w1 * 8, 1e-12);
  EXPECT_NEAR(out[1], w0 * 4 + w1 * 16, 1e-12);
}

TEST(HostReference, RelativeL2MeasuresAndCatchesUnwrittenOutput) {
  std::vector<double> ref = {3, 4};
  EXPECT_EQ(relativeL2({toBf16(3), toBf16(4)}, ref), 0.0);
  EXPECT_NEAR(relativeL2({toBf16(3), toBf16(5)}, ref), 1.0 / 5.0, 1e-12);
  EXPECT_TRUE(std::isinf(relativeL2({toBf16(3), 0x7FC0}, ref)));
}

TEST(HostReference, Bf16RoundsToNearestEven) {
  EXPECT_EQ(toBf16(1.0), 0x3F80);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(toBf16(1.0 + 1.0 / 256), 0x3F80);
  EXPECT_EQ(toBf16(1.0 + 3.0 / 256), 0x3F82);
  EXPECT_EQ(fromBf16(0xC000), -2.0);
}
