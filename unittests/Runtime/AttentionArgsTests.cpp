//===- AttentionArgsTests.cpp - moss_streaming_attention's contract -------===//
//
// Every bad argument is rejected by name before anything is launched, with
// the generated kernel's real requirements (16-byte aligned q/k/v/out, q/k/v
// strides multiples of 8 elements); a runtime without an attention kernel
// reports MOSS_ERROR_UNSUPPORTED (there is no hand-written fallback). Needs a
// GPU only because creating a runtime does.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Version.h"

#include <cmath>
#include <cstdlib>
#include <memory>
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
  // A manifest with no kernels at all: create loads nothing.
  ScratchDir dir;
  moss::config::Manifest manifest;
  manifest.mossVersion = MOSS_VERSION;
  manifest.chip = "sm_90a";
  manifest.whitelistSha256 = std::string(64, '0');
  manifest.cacheKey = std::string(64, '0');
  std::string err;
  ASSERT_TRUE(moss::config::writeManifestAtomic(dir.path, manifest, err))
      << err;
  RuntimeHandle withDir;
  // No whitelist: "" falls back to $MOSS_CODEC_GEMM_CONFIG, so hide it.
  const char *env = std::getenv("MOSS_CODEC_GEMM_CONFIG");
  std::string saved = env ? env : "";
  unsetenv("MOSS_CODEC_GEMM_CONFIG");
  moss_status_t created =
      moss_runtime_create(dir.path.c_str(), "", &withDir.rt);
  if (env)
    setenv("MOSS_CODEC_GEMM_CONFIG", saved.c_str(), 1);
  ASSERT_EQ(created, MOSS_OK) << moss_runtime_last_error(nullptr);
  moss_status_t status = moss_streaming_attention(withDir.rt, &args, nullptr);
  EXPECT_EQ(status, MOSS_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(moss_runtime_last_error(withDir.rt), "manifest lists none");
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
  expectInvalid(bad, "q = ");
  bad = args;
  bad.q = static_cast<const char *>(args.q) + 2;
  expectInvalid(bad, "16-byte aligned");
  bad = args;
  bad.out = static_cast<char *>(args.out) + 8;
  expectInvalid(bad, "out = ");
  bad = args;
  bad.v = static_cast<const char *>(args.v) + 4;
  expectInvalid(bad, "16-byte aligned");
}

TEST_F(AttentionArgs, StridesMustKeepRowsAligned) {
  moss_attention_args bad = args;
  bad.q_stride[2] = 68; // t stride not a multiple of 8 elements
  expectInvalid(bad, "q stride 2 = 68 is not a multiple of 8");
  bad = args;
  bad.k_stride[1] = S * D + 4;
  expectInvalid(bad, "k stride 1");
  bad = args;
  bad.v_stride[0] = 3;
  expectInvalid(bad, "v stride 0");
}

TEST_F(AttentionArgs, MaskTakesAnyStridesAndAlignment) {
  // Arguments are valid; without a kernel the call gets as far as "no
  // generated attention kernel", never INVALID_ARGUMENT.
  moss_attention_args ok = args;
  ok.mask = static_cast<const char *>(args.mask) + 1;
  ok.mask_stride[0] = 0, ok.mask_stride[1] = 1, ok.mask_stride[2] = T;
  EXPECT_EQ(moss_streaming_attention(h.rt, &ok, nullptr),
            MOSS_ERROR_UNSUPPORTED)
      << moss_runtime_last_error(h.rt);
  ok = args;
  ok.q_stride[0] = 0; // broadcast q over the batch: still valid
  EXPECT_EQ(moss_streaming_attention(h.rt, &ok, nullptr),
            MOSS_ERROR_UNSUPPORTED)
      << moss_runtime_last_error(h.rt);
}

} // namespace
