//===- RowLiveTests.cpp - moss_ffn_gemm_live's padding rows ---------------===//
//
// moss_ffn_gemm_live (layerscale_residual times each row's live byte): live
// rows bit-identical to moss_ffn_gemm, padding rows +-0 (y * 0), a NaN of
// a padding row kept (the reference's y * live keeps it), nothing written
// past out; for the generated kernel of every layerscale_residual key of
// the test whitelist and for the fallback, eager and replayed as a graph.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/GemmMode.h"
#include "moss/Config/Whitelist.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace moss::runtime::test;

namespace {

/// Row r is padding when r % 3 == 1; live bytes are 1 or 7 (any nonzero).
std::vector<uint8_t> liveRows(int64_t m) {
  std::vector<uint8_t> live(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r)
    live[r] = r % 3 == 1 ? 0 : (r % 2 ? 7 : 1);
  return live;
}

bool isZero(uint16_t bits) { return (bits & 0x7FFF) == 0; }
bool isNaN(uint16_t bits) {
  return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
}

/// Runs (m, n, k) through `rt` with and without live and checks the rows.
void checkRowLive(moss_runtime_t rt, int64_t m, int64_t n, int64_t k,
                  cudaStream_t stream) {
  std::mt19937_64 rng(static_cast<uint64_t>(m * 131 + n));
  std::vector<uint16_t> x = randomBf16(m * k, -1, 1, rng);
  std::vector<uint16_t> w = randomBf16(n * k, -0.05, 0.05, rng);
  std::vector<uint16_t> scale = randomBf16(n, -0.5, 0.5, rng);
  std::vector<uint16_t> res = randomBf16(m * n, -2, 2, rng);
  const std::vector<uint8_t> live = liveRows(m);
  // A NaN in a padding row's residual survives y * 0.
  const int64_t nanRow = m > 1 ? 1 : -1;
  if (nanRow >= 0)
    res[nanRow * n + 3] = 0x7FC0;
  DeviceBuffer dx(m * k * 2), dw(n * k * 2), dscale(n * 2), dres(m * n * 2),
      dlive(m), dplain((m + 1) * n * 2), dout((m + 1) * n * 2);
  upload(dx.data(), x);
  upload(dw.data(), w);
  upload(dscale.data(), scale);
  upload(dres.data(), res);
  ASSERT_EQ(cudaMemcpy(dlive.data(), live.data(), live.size(),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  const auto ep = MOSS_EPILOGUE_LAYERSCALE_RESIDUAL;
  poison(dplain.data(), (m + 1) * n);
  ASSERT_EQ(moss_ffn_gemm(rt, m, n, k, ep, dx.data(), dw.data(), dscale.data(),
                          dres.data(), dplain.data(), stream),
            MOSS_OK)
      << moss_runtime_last_error(rt);
  auto enqueue = [&] {
    ASSERT_EQ(moss_ffn_gemm_live(rt, m, n, k, ep, dx.data(), dw.data(),
                                 dscale.data(), dres.data(), dlive.data(),
                                 dout.data(), stream),
              MOSS_OK)
        << moss_runtime_last_error(rt);
  };
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<uint16_t> plain = download(dplain.data(), m * n);

  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(stream, enqueue));
  for (const char *how : {"eager", "graph"}) {
    SCOPED_TRACE(how);
    poison(dout.data(), (m + 1) * n);
    if (std::string(how) == "eager")
      enqueue();
    else
      ASSERT_EQ(graph.launch(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<uint16_t> out = download(dout.data(), (m + 1) * n);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const uint16_t got = out[r * n + c], want = plain[r * n + c];
        if (live[r])
          ASSERT_EQ(got, want) << "live row " << r << " column " << c;
        else if (r == nanRow && c == 3)
          ASSERT_TRUE(isNaN(got)) << "padding row's NaN lost: " << got;
        else
          ASSERT_TRUE(isZero(got))
              << "padding row " << r << " column " << c << " = " << got;
      }
    for (int64_t c = 0; c < n; ++c)
      ASSERT_TRUE(isNaN(out[m * n + c])) << "written past out[m, n]";
  }
}

TEST(RowLive, FallbackZeroesPaddingRows) {
  MOSS_REQUIRE_GPU();
  RuntimeHandle fallback;
  ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &fallback.rt), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 768, 3072},
                         {15, 768, 3072},
                         {61, 1280, 1280}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    checkRowLive(fallback.rt, m, n, k, stream);
  }
  cudaStreamDestroy(stream);
}

using RowLiveGenerated = GeneratedAndFallback;

TEST_F(RowLiveGenerated, KernelsZeroPaddingRows) {
  int keys = 0;
  for (const moss::config::WhitelistEntry &e : whitelist.entries()) {
    if (e.key.mode != moss::config::kGemmModeLayerScaleResidual)
      continue;
    SCOPED_TRACE("key " + e.keyText);
    ASSERT_EQ(moss_gemm_is_selected(generated.rt, e.key.m, e.key.n, e.key.k,
                                    MOSS_EPILOGUE_LAYERSCALE_RESIDUAL),
              1);
    checkRowLive(generated.rt, e.key.m, e.key.n, e.key.k, stream);
    ++keys;
  }
  if (keys == 0)
    GTEST_SKIP() << testWhitelist() << " names no layerscale_residual key";
}

} // namespace
