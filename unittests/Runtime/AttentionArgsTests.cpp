//===- AttentionArgsTests.cpp - moss_streaming_attention's contract -------===//
//
// The generated attention kernel is a later issue; until then every bad
// argument is rejected by name and a valid call reports that there is no
// kernel (there is no hand-written fallback).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <cmath>
#include <string>

using namespace moss::runtime::test;

namespace {

constexpr int64_t B = 1, H = 12, T = 4, S = 64, D = 64;

class AttentionArgs : public ::testing::Test {
protected:
  void SetUp() override {
    MOSS_REQUIRE_GPU();
    ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &h.rt), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    q = std::make_unique<DeviceBuffer>(B * H * T * D * 2);
    kv = std::make_unique<DeviceBuffer>(2 * B * H * S * D * 2);
    mask = std::make_unique<DeviceBuffer>(B * T * S);
    out = std::make_unique<DeviceBuffer>(B * T * H * D * 2);
    args = {};
    args.B = B, args.H = H, args.T = T, args.S = S, args.D = D;
    args.q = q->data();
    setStrides(args.q_stride, H * T * D, T * D, D, 1);
    args.k = kv->data();
    setStrides(args.k_stride, H * S * D, S * D, D, 1);
    args.v = kv->data() + B * H * S * D * 2;
    setStrides(args.v_stride, H * S * D, S * D, D, 1);
    args.mask = mask->data();
    args.mask_stride[0] = T * S, args.mask_stride[1] = S,
    args.mask_stride[2] = 1;
    args.out = out->data();
    args.layout = MOSS_LAYOUT_BTHD;
    args.scale = 0.f;
  }

  static void setStrides(int64_t *s, int64_t a, int64_t b, int64_t c,
                         int64_t d) {
    s[0] = a, s[1] = b, s[2] = c, s[3] = d;
  }

  void expectInvalid(const moss_attention_args &bad, const char *what) {
    EXPECT_EQ(moss_streaming_attention(h.rt, &bad, nullptr),
              MOSS_ERROR_INVALID_ARGUMENT)
        << what;
    EXPECT_CONTAINS(moss_runtime_last_error(h.rt), what);
  }

  RuntimeHandle h;
  std::unique_ptr<DeviceBuffer> q, kv, mask, out;
  moss_attention_args args;
};

TEST_F(AttentionArgs, ValidCallWithoutKernelIsUnsupported) {
  EXPECT_EQ(moss_streaming_attention(h.rt, &args, nullptr),
            MOSS_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(moss_runtime_last_error(h.rt),
                  "no generated attention kernel");
}

TEST_F(AttentionArgs, ManifestWithoutAttentionKernelsSaysSo) {
  std::string dir = testKernelsDir(), why;
  if (!whyNoManifest(dir).empty())
    GTEST_SKIP() << whyNoManifest(dir);
  RuntimeHandle withDir;
  // No whitelist: only attention kernels would load.
  ASSERT_EQ(moss_runtime_create(dir.c_str(), "", &withDir.rt), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  moss_status_t status = moss_streaming_attention(withDir.rt, &args, nullptr);
  EXPECT_EQ(status, MOSS_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(moss_runtime_last_error(withDir.rt), dir);
}

TEST_F(AttentionArgs, NullArgumentsAndPointers) {
  EXPECT_EQ(moss_streaming_attention(h.rt, nullptr, nullptr),
            MOSS_ERROR_INVALID_ARGUMENT);
  moss_attention_args bad = args;
  bad.q = nullptr;
  expectInvalid(bad, "q is NULL");
  bad = args;
  bad.mask = nullptr;
  expectInvalid(bad, "mask is NULL");
  bad = args;
  bad.out = nullptr;
  expectInvalid(bad, "out is NULL");
}

TEST_F(AttentionArgs, SizesHeadDimLayoutScale) {
  moss_attention_args bad = args;
  bad.D = 128;
  expectInvalid(bad, "D must be 64");
  bad = args;
  bad.T = 0;
  expectInvalid(bad, "must be in [1");
  bad = args;
  bad.B = -2;
  expectInvalid(bad, "must be in [1");
  bad = args;
  bad.layout = static_cast<moss_layout_t>(7);
  expectInvalid(bad, "layout 7");
  bad = args;
  bad.scale = -1.f;
  expectInvalid(bad, "scale");
  bad.scale = NAN;
  expectInvalid(bad, "scale");
}

TEST_F(AttentionArgs, StridesAndAliasing) {
  moss_attention_args bad = args;
  bad.k_stride[3] = 2;
  expectInvalid(bad, "contiguous in D");
  bad = args;
  bad.mask_stride[1] = -1;
  expectInvalid(bad, "negative");
  bad = args;
  bad.out = const_cast<void *>(args.q);
  expectInvalid(bad, "out overlaps q");
  bad = args;
  bad.out = const_cast<void *>(args.v);
  expectInvalid(bad, "out overlaps v");
  bad = args;
  bad.q = static_cast<const char *>(args.q) + 1;
  expectInvalid(bad, "2-byte aligned");
}

} // namespace
