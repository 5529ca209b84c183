//===- GeneratedGemmTests.cpp - The moss-aot kernels through the runtime --===//
//
// Uses the real kernels dir (MOSS_TEST_KERNELS_DIR / kernels_generated) and
// the whitelist it was built from. Without a manifest these tests SKIP with
// that reason; the file checks below need no GPU.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

using namespace moss::runtime::test;
namespace fs = std::filesystem;

namespace {

#define MOSS_REQUIRE_MANIFEST(dir)                                             \
  do {                                                                         \
    std::string why_ = whyNoManifest(dir);                                     \
    if (!why_.empty())                                                         \
      GTEST_SKIP() << why_;                                                    \
  } while (0)

using GeneratedGemm = GeneratedAndFallback;

TEST_F(GeneratedGemm, EveryKeyMatchesReferenceAndFallback) {
  ASSERT_FALSE(whitelist.entries().empty());
  std::mt19937_64 rng(42);
  for (const moss::config::WhitelistEntry &e : whitelist.entries()) {
    if (!isPlainGemmMode(e.key.mode))
      continue; // QkvRopeCacheTests
    const int64_t m = e.key.m, n = e.key.n, k = e.key.k;
    SCOPED_TRACE("key " + e.keyText);
    EXPECT_EQ(gemmSelected(generated.rt, m, n, k, e.key.mode), 1);
    EXPECT_EQ(gemmSelected(fallback.rt, m, n, k, e.key.mode), 0);
    double wRange = 2.0 / std::sqrt(static_cast<double>(k));
    // x rows with a mean and spread of their own, as a LayerNorm sees them.
    std::vector<uint16_t> x = randomBf16(m * k, -1, 1, rng);
    for (int64_t row = 0; row < m; ++row)
      for (int64_t c = 0; c < k; ++c)
        x[row * k + c] =
            toBf16(fromBf16(x[row * k + c]) * (1 + row % 5) + 0.25 * (row % 3));
    std::vector<uint16_t> w = randomBf16(n * k, -wRange, wRange, rng);
    std::vector<uint16_t> scale = randomBf16(n, -0.5, 0.5, rng);
    std::vector<uint16_t> res = randomBf16(m * n, -2, 2, rng);
    std::vector<uint16_t> gamma = randomBf16(k, 0.5, 1.5, rng);
    std::vector<uint16_t> beta = randomBf16(k, -0.5, 0.5, rng);
    // One spare row after out catches writes past it.
    DeviceBuffer dx(m * k * 2), dw(n * k * 2), dscale(n * 2), dres(m * n * 2),
        dgamma(k * 2), dbeta(k * 2), dout((m + 1) * n * 2);
    upload(dx.data(), x);
    upload(dw.data(), w);
    upload(dscale.data(), scale);
    upload(dres.data(), res);
    upload(dgamma.data(), gamma);
    upload(dbeta.data(), beta);
    std::vector<double> ref =
        referenceOfKey(e.key, x, w, scale, res, gamma, beta);
    std::vector<uint16_t> outs[2];
    moss_runtime_t runtimes[2] = {generated.rt, fallback.rt};
    GemmOperands ops;
    ops.x = dx.data();
    ops.w = dw.data();
    ops.scale = dscale.data();
    ops.residual = dres.data();
    ops.gamma = dgamma.data();
    ops.beta = dbeta.data();
    ops.out = dout.data();
    for (int i = 0; i < 2; ++i) {
      SCOPED_TRACE(i == 0 ? "generated" : "fallback");
      poison(dout.data(), (m + 1) * n);
      ASSERT_EQ(callGemm(runtimes[i], m, n, k, e.key.mode, ops, stream),
                MOSS_OK)
          << moss_runtime_last_error(runtimes[i]);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      std::vector<uint16_t> all = download(dout.data(), (m + 1) * n);
      outs[i].assign(all.begin(), all.begin() + m * n);
      EXPECT_EQ(countNaN(outs[i]), 0u) << "elements of out left unwritten";
      EXPECT_EQ(countNaN(all), static_cast<size_t>(n))
          << "written past out[m, n]";
      EXPECT_LT(relativeL2(outs[i], ref), kRelativeL2Tolerance);
    }
    EXPECT_LT(relativeL2(outs[0], outs[1]), kRelativeL2Tolerance)
        << "generated and fallback disagree";
  }
}

/// Generated kernels keep no state between calls. Every key runs three times
/// on fresh poison (an element a kernel leaves unwritten stays poisoned), on
/// new data, and as a replayed CUDA graph, with the keys interleaved: equal
/// bit for bit to the first eager call, and to the FP64 reference.
TEST_F(GeneratedGemm, RepeatedCallsAndGraphReplaysEqualEager) {
  ASSERT_FALSE(whitelist.entries().empty());
  std::mt19937_64 rng(2026);
  struct KeyData {
    const moss::config::WhitelistEntry *entry;
    std::vector<uint16_t> x[2], w, scale, res, gamma, beta;
    std::unique_ptr<DeviceBuffer> dx[2], dw, dscale, dres, dgamma, dbeta, out;
    std::vector<uint16_t> first;
  };
  std::vector<std::unique_ptr<KeyData>> keys;
  for (const moss::config::WhitelistEntry &e : whitelist.entries()) {
    if (!isPlainGemmMode(e.key.mode))
      continue; // QkvRopeCacheTests
    auto d = std::make_unique<KeyData>();
    const int64_t m = e.key.m, n = e.key.n, k = e.key.k;
    double wRange = 2.0 / std::sqrt(static_cast<double>(k));
    d->entry = &e;
    for (int i = 0; i < 2; ++i) {
      d->x[i] = randomBf16(m * k, -1, 1, rng);
      d->dx[i] = std::make_unique<DeviceBuffer>(m * k * 2);
      upload(d->dx[i]->data(), d->x[i]);
    }
    d->w = randomBf16(n * k, -wRange, wRange, rng);
    d->scale = randomBf16(n, -0.5, 0.5, rng);
    d->res = randomBf16(m * n, -2, 2, rng);
    d->gamma = randomBf16(k, 0.5, 1.5, rng);
    d->beta = randomBf16(k, -0.5, 0.5, rng);
    d->dgamma = std::make_unique<DeviceBuffer>(k * 2);
    d->dbeta = std::make_unique<DeviceBuffer>(k * 2);
    upload(d->dgamma->data(), d->gamma);
    upload(d->dbeta->data(), d->beta);
    d->dw = std::make_unique<DeviceBuffer>(n * k * 2);
    d->dscale = std::make_unique<DeviceBuffer>(n * 2);
    d->dres = std::make_unique<DeviceBuffer>(m * n * 2);
    d->out = std::make_unique<DeviceBuffer>(m * n * 2);
    upload(d->dw->data(), d->w);
    upload(d->dscale->data(), d->scale);
    upload(d->dres->data(), d->res);
    keys.push_back(std::move(d));
  }
  auto run = [&](KeyData &d, int input) {
    const moss::config::GemmKey &key = d.entry->key;
    GemmOperands ops;
    ops.x = d.dx[input]->data();
    ops.w = d.dw->data();
    ops.scale = d.dscale->data();
    ops.residual = d.dres->data();
    ops.gamma = d.dgamma->data();
    ops.beta = d.dbeta->data();
    ops.out = d.out->data();
    return callGemm(generated.rt, key.m, key.n, key.k, key.mode, ops, stream);
  };
  auto check = [&](KeyData &d, int input, const std::string &what) {
    const moss::config::GemmKey &key = d.entry->key;
    SCOPED_TRACE("key " + d.entry->keyText + ", " + what);
    std::vector<uint16_t> got = download(d.out->data(), key.m * key.n);
    EXPECT_EQ(countNaN(got), 0u) << "elements of out left unwritten";
    if (input == 1) {
      std::vector<double> ref =
          referenceOfKey(key, d.x[1], d.w, d.scale, d.res, d.gamma, d.beta);
      EXPECT_LT(relativeL2(got, ref), kRelativeL2Tolerance);
    } else if (d.first.empty()) {
      std::vector<double> ref =
          referenceOfKey(key, d.x[0], d.w, d.scale, d.res, d.gamma, d.beta);
      EXPECT_LT(relativeL2(got, ref), kRelativeL2Tolerance);
      d.first = got;
    } else {
      EXPECT_TRUE(got == d.first) << "differs from the first call";
    }
  };

  for (int round = 0; round < 3; ++round)
    for (auto &d : keys) {
      poison(d->out->data(), d->entry->key.m * d->entry->key.n);
      ASSERT_EQ(run(*d, 0), MOSS_OK) << moss_runtime_last_error(generated.rt);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      check(*d, 0, "eager call " + std::to_string(round));
    }
  for (auto &d : keys) {
    poison(d->out->data(), d->entry->key.m * d->entry->key.n);
    ASSERT_EQ(run(*d, 1), MOSS_OK) << moss_runtime_last_error(generated.rt);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    check(*d, 1, "new input");
  }

  // One graph with every key twice: the second launch of a kernel inside the
  // same replay needs the counters the first one left.
  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(stream, [&] {
    for (int twice = 0; twice < 2; ++twice)
      for (auto &d : keys)
        EXPECT_EQ(run(*d, 0), MOSS_OK) << moss_runtime_last_error(generated.rt);
  }));
  for (int replay = 0; replay < 3; ++replay) {
    for (auto &d : keys)
      poison(d->out->data(), d->entry->key.m * d->entry->key.n);
    ASSERT_EQ(graph.launch(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    for (auto &d : keys)
      check(*d, 0, "graph replay " + std::to_string(replay));
  }
}

TEST_F(GeneratedGemm, MisalignedPointersTakeTheFallback) {
  // The first key of moss_ffn_gemm (LayerNormMisalignedGammaTakesTheFallback
  // covers moss_layernorm_gemm).
  auto it = std::find_if(
      whitelist.entries().begin(), whitelist.entries().end(),
      [](const moss::config::WhitelistEntry &entry) {
        return !moss::config::gemmModeInfo(entry.key.mode)->layerNorm;
      });
  ASSERT_NE(it, whitelist.entries().end());
  const moss::config::WhitelistEntry &e = *it;
  const int64_t m = e.key.m, n = e.key.n, k = e.key.k;
  auto ep = static_cast<moss_epilogue_t>(e.key.mode);
  std::mt19937_64 rng(7);
  double wRange = 2.0 / std::sqrt(static_cast<double>(k));
  std::vector<uint16_t> x = randomBf16(m * k, -1, 1, rng);
  std::vector<uint16_t> w = randomBf16(n * k, -wRange, wRange, rng);
  std::vector<uint16_t> scale = randomBf16(n, -0.5, 0.5, rng);
  std::vector<uint16_t> res = randomBf16(m * n, -2, 2, rng);
  DeviceBuffer dx(m * k * 2 + 16), dw(n * k * 2 + 16), dscale(n * 2 + 16),
      dres(m * n * 2 + 16), dout(m * n * 2 + 16);
  // Shift by one bf16: still valid bf16 pointers, not 16-byte aligned.
  upload(dx.data() + 2, x);
  upload(dw.data() + 2, w);
  upload(dscale.data() + 2, scale);
  upload(dres.data() + 2, res);
  poison(dout.data() + 2, m * n);
  ASSERT_EQ(moss_ffn_gemm(generated.rt, m, n, k, ep, dx.data() + 2,
                          dw.data() + 2, dscale.data() + 2, dres.data() + 2,
                          dout.data() + 2, stream),
            MOSS_OK)
      << moss_runtime_last_error(generated.rt);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<uint16_t> got = download(dout.data() + 2, m * n);
  EXPECT_EQ(countNaN(got), 0u);
  std::vector<double> ref = referenceOutput(
      referenceAccumulators(x, w, m, n, k), e.key.mode, scale, res, m, n);
  EXPECT_LT(relativeL2(got, ref), kRelativeL2Tolerance);
}

/// Copies the real kernels dir so a test can tamper with it.
bool copyKernelsDir(const std::string &from, const std::string &to) {
  std::error_code err;
  fs::copy(from, to, fs::copy_options::recursive, err);
  EXPECT_FALSE(err) << "copying " << from << ": " << err.message();
  return !err;
}

TEST(GeneratedGemmFiles, TamperedCubinIsRejectedByName) {
  std::string dir = testKernelsDir();
  MOSS_REQUIRE_MANIFEST(dir);
  moss::config::Manifest manifest;
  std::string err;
  ASSERT_TRUE(moss::config::readManifest(dir, manifest, err)) << err;
  if (manifest.gemmKernels.empty())
    GTEST_SKIP() << dir << " lists no GEMM kernels";
  ScratchDir scratch;
  std::string copy = scratch.file("kernels");
  ASSERT_TRUE(copyKernelsDir(dir, copy));
  std::string cubin = copy + "/" + manifest.gemmKernels[0].cubin;
  std::string bytes;
  {
    std::ifstream in(cubin, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(bytes.empty());
  bytes[bytes.size() / 2] ^= 0x5A; // One flipped byte.
  writeText(cubin, bytes);
  moss_runtime_t rt = nullptr;
  EXPECT_EQ(moss_runtime_create(copy.c_str(), testWhitelist().c_str(), &rt),
            MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(moss_runtime_last_error(nullptr), cubin);
  EXPECT_CONTAINS(moss_runtime_last_error(nullptr),
                  moss::config::sha256Hex(bytes));
  moss_runtime_destroy(rt);
}

TEST(GeneratedGemmFiles, OtherWhitelistIsACacheKeyMismatch) {
  std::string dir = testKernelsDir();
  MOSS_REQUIRE_MANIFEST(dir);
  ScratchDir scratch;
  std::string other = scratch.file("other.json");
  writeText(other, R"({"3,3072,768,1": [16, 64, 64, 1]})");
  moss_runtime_t rt = nullptr;
  EXPECT_EQ(moss_runtime_create(dir.c_str(), other.c_str(), &rt),
            MOSS_ERROR_CACHE_KEY_MISMATCH);
  EXPECT_CONTAINS(moss_runtime_last_error(nullptr), other);
  moss_runtime_destroy(rt);
}

} // namespace

namespace {
TEST_F(GeneratedGemm, LayerNormMisalignedGammaTakesTheFallback) {
  auto it = std::find_if(
      whitelist.entries().begin(), whitelist.entries().end(),
      [](const moss::config::WhitelistEntry &entry) {
        return moss::config::gemmModeInfo(entry.key.mode)->layerNorm;
      });
  if (it == whitelist.entries().end())
    GTEST_SKIP() << testWhitelist() << " names no LayerNorm key";
  const moss::config::GemmKey &key = it->key;
  std::mt19937_64 rng(11);
  std::vector<uint16_t> x = randomBf16(key.m * key.k, -2, 3, rng);
  std::vector<uint16_t> w = randomBf16(key.n * key.k, -0.05, 0.05, rng);
  std::vector<uint16_t> gamma = randomBf16(key.k, 0.5, 1.5, rng);
  std::vector<uint16_t> beta = randomBf16(key.k, -0.5, 0.5, rng);
  DeviceBuffer dx(key.m * key.k * 2), dw(key.n * key.k * 2),
      dgamma(key.k * 2 + 16), dbeta(key.k * 2), dout(key.m * key.n * 2);
  upload(dx.data(), x);
  upload(dw.data(), w);
  upload(dgamma.data() + 2, gamma); // 2-byte aligned only
  upload(dbeta.data(), beta);
  poison(dout.data(), key.m * key.n);
  GemmOperands ops;
  ops.x = dx.data();
  ops.w = dw.data();
  ops.gamma = dgamma.data() + 2;
  ops.beta = dbeta.data();
  ops.out = dout.data();
  ASSERT_EQ(callGemm(generated.rt, key.m, key.n, key.k, key.mode, ops, stream),
            MOSS_OK)
      << moss_runtime_last_error(generated.rt);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<uint16_t> got = download(dout.data(), key.m * key.n);
  EXPECT_EQ(countNaN(got), 0u);
  EXPECT_LT(relativeL2(got, referenceOfKey(key, x, w, {}, {}, gamma, beta)),
            kRelativeL2Tolerance);
}
} // namespace
