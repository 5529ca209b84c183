//===- ProgrammaticLaunchTests.cpp - MOSS_CODEC_GEMM_PDL=1 ----------------===//
//
// With programmatic dependent launch a generated GEMM starts while the
// previous kernel still runs and fetches W before griddepcontrol.wait. It
// must still read x and residual only after that kernel's writes, and write
// out only after that kernel's reads: a previous kernel that lets dependents
// start at once, spins, then rewrites x and residual and reads out would
// expose either. Eager and in a CUDA graph, for every whitelist key.
//
//===----------------------------------------------------------------------===//

#include "DelayedCopy.h"
#include "ProgrammaticLaunchCheck.h"
#include "RuntimeTestSupport.h"

#include "moss/Config/Whitelist.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

using namespace moss::runtime::test;

namespace {

/// About 100 us at the H200's clock: far longer than any GEMM of the codec.
constexpr long long kSpinCycles = 200000;

/// One whitelist key's buffers: the stale inputs the GEMM must not see, the
/// fresh ones the delayed copy writes, and the outputs.
struct Problem {
  int64_t m, n, k;
  int mode;
  std::unique_ptr<DeviceBuffer> x, xStale, xFresh, w, scale, res, resStale,
      resFresh, gamma, beta, out, seen, expected;

  Problem(const moss::config::GemmKey &key, std::mt19937_64 &rng)
      : m(key.m), n(key.n), k(key.k), mode(key.mode) {
    double wRange = 2.0 / std::sqrt(static_cast<double>(k));
    auto filled = [&](const std::vector<uint16_t> &values) {
      auto buffer = std::make_unique<DeviceBuffer>(values.size() * 2);
      upload(buffer->data(), values);
      return buffer;
    };
    xStale = filled(randomBf16(m * k, -1, 1, rng));
    xFresh = filled(randomBf16(m * k, -1, 1, rng));
    x = std::make_unique<DeviceBuffer>(m * k * 2);
    w = filled(randomBf16(n * k, -wRange, wRange, rng));
    scale = filled(randomBf16(n, -0.5, 0.5, rng));
    gamma = filled(randomBf16(k, 0.5, 1.5, rng));
    beta = filled(randomBf16(k, -0.5, 0.5, rng));
    resStale = filled(randomBf16(m * n, -2, 2, rng));
    resFresh = filled(randomBf16(m * n, -2, 2, rng));
    res = std::make_unique<DeviceBuffer>(m * n * 2);
    out = std::make_unique<DeviceBuffer>(m * n * 2);
    seen = std::make_unique<DeviceBuffer>(m * n * 2);
    expected = std::make_unique<DeviceBuffer>(m * n * 2);
  }

  std::string name() const {
    return std::to_string(m) + "," + std::to_string(n) + "," +
           std::to_string(k) + "," + std::to_string(mode);
  }

  moss_status_t gemm(moss_runtime_t rt, const DeviceBuffer &in,
                     const DeviceBuffer &residual, DeviceBuffer &to,
                     cudaStream_t stream) const {
    GemmOperands ops;
    ops.x = in.data();
    ops.w = w->data();
    ops.scale = scale->data();
    ops.residual = residual.data();
    ops.gamma = gamma->data();
    ops.beta = beta->data();
    ops.out = to.data();
    return callGemm(rt, m, n, k, mode, ops, stream);
  }

  /// Stale inputs in place, out poisoned (NaN), then the delayed copy:
  /// everything the GEMM that follows depends on.
  void enqueuePrologue(cudaStream_t stream) const {
    size_t xBytes = m * k * 2, outBytes = m * n * 2;
    ASSERT_EQ(cudaMemcpyAsync(x->data(), xStale->data(), xBytes,
                              cudaMemcpyDeviceToDevice, stream),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(res->data(), resStale->data(), outBytes,
                              cudaMemcpyDeviceToDevice, stream),
              cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(out->data(), 0xFF, outBytes, stream),
              cudaSuccess);
    DelayedCopy copy;
    copy.src[0] = xFresh->data();
    copy.dst[0] = x->data();
    copy.src[1] = resFresh->data();
    copy.dst[1] = res->data();
    copy.watch = out->data();
    copy.seen = seen->data();
    copy.spinCycles = kSpinCycles;
    // Generated GEMMs have k and n multiples of 8: whole 16-byte pieces.
    copy.bytes[0] = xBytes;
    copy.bytes[1] = outBytes;
    copy.watchBytes = outBytes;
    ASSERT_EQ(launchDelayedCopy(copy, stream), cudaSuccess);
  }

  void check(const std::string &how) const {
    SCOPED_TRACE(name() + " " + how);
    size_t elements = m * n;
    std::vector<uint16_t> got = download(out->data(), elements);
    EXPECT_EQ(countNaN(got), 0u) << "outputs left unwritten";
    EXPECT_TRUE(got == download(expected->data(), elements))
        << "the GEMM read x or residual before the previous kernel wrote them";
    std::vector<uint16_t> seenOut = download(seen->data(), elements);
    EXPECT_EQ(countNaN(seenOut), elements)
        << "the GEMM wrote out before the previous kernel read it";
  }
};

class ProgrammaticLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    std::string dir = testKernelsDir(), err;
    MOSS_REQUIRE_GENERATED_KERNELS(dir);
    ASSERT_TRUE(moss::config::Whitelist::load(testWhitelist(), whitelist, err))
        << err;
    ASSERT_EQ(createWithEnv(dir, "MOSS_CODEC_GEMM_PDL", "1", pdl), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    ASSERT_EQ(createWithEnv(dir, "MOSS_CODEC_GEMM_PDL", "0", plain), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    std::mt19937_64 rng(2026);
    for (const auto &entry : whitelist.entries()) {
      if (!isPlainGemmMode(entry.key.mode))
        continue; // QkvRopeCacheTests
      problems.push_back(std::make_unique<Problem>(entry.key, rng));
      const Problem &p = *problems.back();
      ASSERT_TRUE(p.n % 8 == 0 && p.k % 8 == 0) << p.name();
      ASSERT_TRUE(gemmSelected(pdl.rt, p.m, p.n, p.k, p.mode)) << p.name();
      // The reference: the same kernel, launched plainly on the fresh data.
      ASSERT_EQ(p.gemm(plain.rt, *p.xFresh, *p.resFresh, *p.expected, stream),
                MOSS_OK)
          << moss_runtime_last_error(plain.rt);
    }
    ASSERT_FALSE(problems.empty()) << testWhitelist() << " names no keys";
  }
  void TearDown() override {
    if (stream)
      cudaStreamDestroy(stream);
  }

  moss::config::Whitelist whitelist;
  RuntimeHandle pdl, plain;
  cudaStream_t stream = nullptr;
  std::vector<std::unique_ptr<Problem>> problems;
};

TEST_F(ProgrammaticLaunch, WaitsForThePreviousKernelEagerly) {
  checkEagerly(problems, stream, pdl.rt, [&](const Problem &p) {
    return p.gemm(pdl.rt, *p.x, *p.res, *p.out, stream);
  });
}

TEST_F(ProgrammaticLaunch, WaitsForThePreviousKernelInAGraph) {
  checkGraphReplays(problems, stream, pdl.rt, [&](const Problem &p) {
    return p.gemm(pdl.rt, *p.x, *p.res, *p.out, stream);
  });
}

} // namespace
