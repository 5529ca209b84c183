//===- GemmArgsTests.cpp - moss_ffn_gemm rejects bad input cleanly --------===//
//
// Each bad argument gets a status and a message naming it, and no GPU work:
// the output keeps its poison.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <string>

using namespace moss::runtime::test;

namespace {

constexpr int64_t M = 8, N = 768, K = 3072;

class GemmArgs : public ::testing::Test {
protected:
  void SetUp() override {
    MOSS_REQUIRE_GPU();
    ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &h.rt), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    x = std::make_unique<DeviceBuffer>(M * K * 2 + 64);
    w = std::make_unique<DeviceBuffer>(N * K * 2 + 64);
    scale = std::make_unique<DeviceBuffer>(N * 2 + 64);
    res = std::make_unique<DeviceBuffer>(M * N * 2 + 64);
    out = std::make_unique<DeviceBuffer>(M * N * 2 + 64);
    poison(out->data(), out->size() / 2);
  }

  moss_status_t call(int64_t m, int64_t n, int64_t k, int ep, const void *xp,
                     const void *wp, const void *sp, const void *rp, void *op) {
    return moss_ffn_gemm(h.rt, m, n, k, static_cast<moss_epilogue_t>(ep), xp,
                         wp, sp, rp, op, nullptr);
  }
  moss_status_t callDefault(int ep) {
    return call(M, N, K, ep, x->data(), w->data(), scale->data(), res->data(),
                out->data());
  }
  std::string error() const { return moss_runtime_last_error(h.rt); }
  void expectOutUntouched() {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> all = download(out->data(), out->size() / 2);
    EXPECT_EQ(countNaN(all), all.size()) << "a rejected call wrote out";
  }

  RuntimeHandle h;
  std::unique_ptr<DeviceBuffer> x, w, scale, res, out;
};

TEST_F(GemmArgs, NullPointers) {
  EXPECT_EQ(call(M, N, K, 0, nullptr, w->data(), nullptr, nullptr, out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "x is NULL");
  EXPECT_EQ(call(M, N, K, 1, x->data(), nullptr, nullptr, nullptr, out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "w is NULL");
  EXPECT_EQ(call(M, N, K, 1, x->data(), w->data(), nullptr, nullptr, nullptr),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "out is NULL");
  expectOutUntouched();
}

TEST_F(GemmArgs, LayerScaleNeedsScaleAndResidual) {
  EXPECT_EQ(
      call(M, N, K, 2, x->data(), w->data(), nullptr, res->data(), out->data()),
      MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "scale is NULL");
  EXPECT_EQ(call(M, N, K, 2, x->data(), w->data(), scale->data(), nullptr,
                 out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "residual is NULL");
  expectOutUntouched();
}

TEST_F(GemmArgs, BadSizesAndEpilogue) {
  EXPECT_EQ(
      call(-1, N, K, 0, x->data(), w->data(), nullptr, nullptr, out->data()),
      MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "m must be");
  EXPECT_EQ(
      call(M, 0, K, 0, x->data(), w->data(), nullptr, nullptr, out->data()),
      MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      call(M, N, -5, 0, x->data(), w->data(), nullptr, nullptr, out->data()),
      MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call(int64_t(1) << 32, N, K, 0, x->data(), w->data(), nullptr,
                 nullptr, out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(callDefault(3), MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "epilogue 3");
  EXPECT_EQ(callDefault(-1), MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(moss_gemm_is_selected(h.rt, M, N, K, (moss_epilogue_t)3), 0);
  expectOutUntouched();
}

TEST_F(GemmArgs, ZeroRowsIsANoOp) {
  EXPECT_EQ(call(0, N, K, 2, nullptr, nullptr, nullptr, nullptr, nullptr),
            MOSS_OK);
  EXPECT_EQ(
      call(0, N, K, 1, x->data(), w->data(), nullptr, nullptr, out->data()),
      MOSS_OK);
  EXPECT_EQ(moss_gemm_is_selected(h.rt, 0, N, K, MOSS_EPILOGUE_GELU), 0);
  expectOutUntouched();
}

TEST_F(GemmArgs, OddPointersAreRejected) {
  EXPECT_EQ(
      call(M, N, K, 0, x->data() + 1, w->data(), nullptr, nullptr, out->data()),
      MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "2-byte aligned");
  EXPECT_EQ(call(M, N, K, 2, x->data(), w->data(), scale->data() + 1,
                 res->data(), out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  expectOutUntouched();
}

TEST_F(GemmArgs, OutMustNotOverlapInputs) {
  EXPECT_EQ(call(M, N, K, 2, x->data(), w->data(), scale->data(),
                 out->data() + 16, out->data()),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "out overlaps residual");
  EXPECT_EQ(call(M, N, K, 0, out->data(), w->data(), nullptr, nullptr,
                 out->data() + 2),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error(), "out overlaps x");
}

TEST_F(GemmArgs, TwoByteAlignedPointersWorkThroughTheFallback) {
  std::mt19937_64 rng(11);
  double wRange = 2.0 / std::sqrt(double(K));
  std::vector<uint16_t> hx = randomBf16(M * K, -1, 1, rng);
  std::vector<uint16_t> hw = randomBf16(N * K, -wRange, wRange, rng);
  std::vector<uint16_t> hs = randomBf16(N, -0.5, 0.5, rng);
  std::vector<uint16_t> hr = randomBf16(M * N, -2, 2, rng);
  upload(x->data() + 2, hx);
  upload(w->data() + 6, hw);
  upload(scale->data() + 10, hs);
  upload(res->data() + 14, hr);
  ASSERT_EQ(call(M, N, K, 2, x->data() + 2, w->data() + 6, scale->data() + 10,
                 res->data() + 14, out->data() + 2),
            MOSS_OK)
      << error();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint16_t> got = download(out->data() + 2, M * N);
  EXPECT_EQ(countNaN(got), 0u);
  std::vector<double> ref =
      referenceOutput(referenceAccumulators(hx, hw, M, N, K), 2, hs, hr, M, N);
  EXPECT_LT(relativeL2(got, ref), kRelativeL2Tolerance);
}

} // namespace
