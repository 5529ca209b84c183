//===- QkvRopeCacheTests.cpp - moss_qkv_rope_cache on the GPU -------------===//
//
// Every mode-5 key of the test whitelist (MOSS_TEST_WHITELIST, e.g.
// Inputs/qkv-rope-cache-whitelist.json built into MOSS_TEST_KERNELS_DIR) as
// a call of batch * length = M rows, through the generated kernel and the
// fallback: q and the cache rows against the FP64 reference, the slot table
// as RingKvCache.append leaves it (exactly), every cache slot the call must
// not write left bit for bit as it was, a batch row with bad positions
// writing nothing into the cache, and graph replays equal to eager calls.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/GemmMode.h"
#include "moss/Config/Whitelist.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <string>
#include <vector>

using namespace moss::runtime::test;

namespace {

constexpr int64_t kHeadDim = moss::config::kRopeHeadDim;

/// One call's sizes: m = batch * length rows of d = k.
struct Shape {
  int64_t batch, length, d, capacity;
  int64_t m() const { return batch * length; }
  int64_t heads() const { return d / kHeadDim; }
  int64_t cacheElements() const {
    return batch * heads() * capacity * kHeadDim;
  }
};

/// (batch, length) of M rows: one stream of M frames where it fits a
/// steady chunk, else 4 streams.
Shape shapeOfKey(const moss::config::GemmKey &key) {
  Shape s{1, key.m, key.k, 0};
  if (key.m % 4 == 0 && key.m > 16)
    s = {4, key.m / 4, key.k, 0};
  s.capacity = 2 * s.length + 3; // a chunk that wraps the ring below
  return s;
}

/// The call's host data and its device copies.
struct Case {
  Shape s;
  std::vector<uint16_t> x, w, gamma, beta;
  std::vector<int64_t> positions, table;
  std::vector<uint8_t> live;
  DeviceBuffer dx, dw, dgamma, dbeta, dpositions, dlive, dq, dk, dv, dtable;

  Case(const Shape &s, std::mt19937_64 &rng)
      : s(s), dx(s.m() * s.d * 2), dw(3 * s.d * s.d * 2), dgamma(s.d * 2),
        dbeta(s.d * 2), dpositions(s.m() * 8), dlive(s.m()),
        dq(s.m() * s.d * 2), dk(s.cacheElements() * 2),
        dv(s.cacheElements() * 2), dtable(s.batch * s.capacity * 8) {
    const double wRange = 2.0 / std::sqrt(static_cast<double>(s.d));
    x = randomBf16(s.m() * s.d, -1, 1, rng);
    w = randomBf16(3 * s.d * s.d, -wRange, wRange, rng);
    gamma = randomBf16(s.d, 0.5, 1.5, rng);
    beta = randomBf16(s.d, -0.5, 0.5, rng);
    // Row b starts at a position that wraps the ring inside the chunk;
    // the last frame of each row is padding.
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t t = 0; t < s.length; ++t) {
        positions.push_back(5 * s.capacity + 7 * b + s.capacity - 1 + t);
        live.push_back(t + 1 < s.length || s.length == 1 ? 1 : 0);
      }
    // The table before the call: some older frames, some empty slots.
    for (int64_t i = 0; i < s.batch * s.capacity; ++i)
      table.push_back(i % 3 == 0 ? -1 : i);
    upload(dx.data(), x);
    upload(dw.data(), w);
    upload(dgamma.data(), gamma);
    upload(dbeta.data(), beta);
    cudaMemcpy(dlive.data(), live.data(), live.size(), cudaMemcpyHostToDevice);
    uploadPositions();
  }
  void uploadPositions() {
    cudaMemcpy(dpositions.data(), positions.data(), positions.size() * 8,
               cudaMemcpyHostToDevice);
  }
  /// NaN in q and the caches, the starting table.
  void reset() {
    poison(dq.data(), s.m() * s.d);
    poison(dk.data(), s.cacheElements());
    poison(dv.data(), s.cacheElements());
    cudaMemcpy(dtable.data(), table.data(), table.size() * 8,
               cudaMemcpyHostToDevice);
  }
  moss_status_t call(moss_runtime_t rt, cudaStream_t stream) {
    moss_ring_cache cache{dk.data(), dv.data(),
                          reinterpret_cast<int64_t *>(dtable.data()),
                          s.capacity};
    return moss_qkv_rope_cache(
        rt, s.batch, s.length, s.d, dx.data(), dgamma.data(), dbeta.data(),
        kLayerNormEps, dw.data(),
        reinterpret_cast<const int64_t *>(dpositions.data()), dlive.data(),
        dq.data(), &cache, stream);
  }
  bool batchRowValid(int64_t b) const {
    for (int64_t t = 0; t < s.length; ++t)
      if (positions[b * s.length + t] < 0 ||
          positions[b * s.length + t] != positions[b * s.length] + t)
        return false;
    return true;
  }
};

/// What the call leaves: q, both caches and the table.
struct State {
  std::vector<uint16_t> q, k, v;
  std::vector<int64_t> table;
  bool operator==(const State &o) const {
    return q == o.q && k == o.k && v == o.v && table == o.table;
  }
};

State readState(const Case &c) {
  State st;
  st.q = download(c.dq.data(), c.s.m() * c.s.d);
  st.k = download(c.dk.data(), c.s.cacheElements());
  st.v = download(c.dv.data(), c.s.cacheElements());
  st.table.resize(c.s.batch * c.s.capacity);
  cudaMemcpy(st.table.data(), c.dtable.data(), st.table.size() * 8,
             cudaMemcpyDeviceToHost);
  return st;
}

/// Checks `got` against the FP64 reference: q and the written cache rows
/// within tolerance, unwritten slots still NaN, the table exact.
void checkAgainstReference(const Case &c, const State &got) {
  const Shape &s = c.s;
  std::vector<uint16_t> normalised =
      layerNormReference(c.x, c.gamma, c.beta, kLayerNormEps, s.m(), s.d);
  std::vector<double> acc =
      referenceAccumulators(normalised, c.w, s.m(), 3 * s.d, s.d);
  std::vector<double> refQ(s.m() * s.d);
  std::vector<uint16_t> gotQ = got.q;
  // Cache rows the call writes, gathered with their reference.
  std::vector<uint16_t> gotCache;
  std::vector<double> refCache;
  std::vector<int64_t> table = c.table;
  std::vector<bool> written(s.cacheElements(), false);
  for (int64_t row = 0; row < s.m(); ++row) {
    const int64_t b = row / s.length, p = c.positions[row];
    const bool valid = c.batchRowValid(b);
    const int64_t slot = valid ? p % s.capacity : 0;
    if (valid)
      table[b * s.capacity + slot] = c.live[row] ? p : -1;
    for (int64_t part = 0; part < 3; ++part)
      for (int64_t h = 0; h < s.heads(); ++h)
        for (int64_t i = 0; i < kHeadDim / 2; ++i) {
          const int64_t col = part * s.d + h * kHeadDim + 2 * i;
          double e = roundBf16(acc[row * 3 * s.d + col]);
          double o = roundBf16(acc[row * 3 * s.d + col + 1]);
          if (part < 2) {
            const double angle =
                static_cast<double>(p) *
                static_cast<double>(moss::config::ropeInverseFrequency(i));
            const double turnedE = e * std::cos(angle) - o * std::sin(angle);
            const double turnedO = e * std::sin(angle) + o * std::cos(angle);
            e = roundBf16(turnedE);
            o = roundBf16(turnedO);
          }
          if (part == 0) {
            refQ[row * s.d + h * kHeadDim + 2 * i] = e;
            refQ[row * s.d + h * kHeadDim + 2 * i + 1] = o;
            continue;
          }
          if (!valid)
            continue;
          const std::vector<uint16_t> &cache = part == 1 ? got.k : got.v;
          const int64_t at =
              ((b * s.heads() + h) * s.capacity + slot) * kHeadDim + 2 * i;
          gotCache.push_back(cache[at]);
          gotCache.push_back(cache[at + 1]);
          refCache.push_back(e);
          refCache.push_back(o);
          if (part == 1) {
            written[at] = written[at + 1] = true;
          }
        }
  }
  EXPECT_EQ(countNaN(gotQ), 0u) << "elements of q left unwritten";
  EXPECT_LT(relativeL2(gotQ, refQ), kRelativeL2Tolerance) << "q";
  EXPECT_EQ(countNaN(gotCache), 0u) << "cache rows left unwritten";
  if (!refCache.empty())
    EXPECT_LT(relativeL2(gotCache, refCache), kRelativeL2Tolerance)
        << "cache rows";
  size_t touched = 0;
  for (int64_t i = 0; i < s.cacheElements(); ++i)
    if (!written[i] && (got.k[i] != 0x7FC0 || got.v[i] != 0x7FC0))
      ++touched;
  EXPECT_EQ(touched, 0u) << "cache elements written outside the chunk's slots";
  EXPECT_EQ(got.table, table) << "the slot table";
}

/// The generated and fallback runtimes of GeneratedAndFallback, and the
/// whitelist's mode-5 keys (skips without any).
class QkvRopeCache : public GeneratedAndFallback {
protected:
  void SetUp() override {
    GeneratedAndFallback::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    for (const moss::config::WhitelistEntry &e : whitelist.entries())
      if (e.key.mode == moss::config::kGemmModeLayerNormRopeCache)
        keys.push_back(e.key);
    if (keys.empty())
      GTEST_SKIP() << testWhitelist() << " names no mode-5 key";
  }

  std::vector<moss::config::GemmKey> keys;
};

TEST_F(QkvRopeCache, EveryKeyMatchesReferenceAndFallback) {
  std::mt19937_64 rng(43);
  for (const moss::config::GemmKey &key : keys) {
    Case c(shapeOfKey(key), rng);
    SCOPED_TRACE("M=" + std::to_string(key.m) + " d=" + std::to_string(key.k) +
                 " batch=" + std::to_string(c.s.batch));
    EXPECT_EQ(moss_qkv_rope_cache_is_selected(generated.rt, c.s.batch,
                                              c.s.length, c.s.d),
              1);
    EXPECT_EQ(moss_qkv_rope_cache_is_selected(fallback.rt, c.s.batch,
                                              c.s.length, c.s.d),
              0);
    State states[2];
    moss_runtime_t runtimes[2] = {generated.rt, fallback.rt};
    for (int i = 0; i < 2; ++i) {
      SCOPED_TRACE(i == 0 ? "generated" : "fallback");
      c.reset();
      ASSERT_EQ(c.call(runtimes[i], stream), MOSS_OK)
          << moss_runtime_last_error(runtimes[i]);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      states[i] = readState(c);
      checkAgainstReference(c, states[i]);
    }
    EXPECT_EQ(states[0].table, states[1].table);
  }
}

TEST_F(QkvRopeCache, BadPositionsWriteNothingIntoTheirBatchRow) {
  std::mt19937_64 rng(44);
  for (const moss::config::GemmKey &key : keys) {
    Case c(shapeOfKey(key), rng);
    SCOPED_TRACE("M=" + std::to_string(key.m));
    // The last batch row: a gap (when it has two frames), else negative.
    const int64_t last = c.s.m() - 1;
    c.positions[last] = c.s.length > 1 ? c.positions[last] + 2 : -3;
    c.uploadPositions();
    for (moss_runtime_t rt : {generated.rt, fallback.rt}) {
      c.reset();
      ASSERT_EQ(c.call(rt, stream), MOSS_OK) << moss_runtime_last_error(rt);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      checkAgainstReference(c, readState(c));
    }
  }
}

TEST_F(QkvRopeCache, GraphReplaysEqualEagerCalls) {
  std::mt19937_64 rng(45);
  for (const moss::config::GemmKey &key : keys) {
    Case c(shapeOfKey(key), rng);
    SCOPED_TRACE("M=" + std::to_string(key.m));
    c.reset();
    ASSERT_EQ(c.call(generated.rt, stream), MOSS_OK);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const State eager = readState(c);
    CapturedGraph graph;
    ASSERT_NO_FATAL_FAILURE(graph.capture(stream, [&] {
      EXPECT_EQ(c.call(generated.rt, stream), MOSS_OK)
          << moss_runtime_last_error(generated.rt);
    }));
    for (int replay = 0; replay < 2; ++replay) {
      c.reset();
      ASSERT_EQ(graph.launch(stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      EXPECT_TRUE(readState(c) == eager) << "replay " << replay;
    }
  }
}

TEST_F(QkvRopeCache, RefusedCallsWriteNothing) {
  std::mt19937_64 rng(46);
  Case c(shapeOfKey(keys.front()), rng);
  c.reset();
  const State before = readState(c);
  moss_ring_cache cache{c.dk.data(), c.dv.data(),
                        reinterpret_cast<int64_t *>(c.dtable.data()),
                        c.s.length - 1}; // smaller than the chunk
  EXPECT_EQ(moss_qkv_rope_cache(
                generated.rt, c.s.batch, c.s.length, c.s.d, c.dx.data(),
                c.dgamma.data(), c.dbeta.data(), kLayerNormEps, c.dw.data(),
                reinterpret_cast<const int64_t *>(c.dpositions.data()),
                c.dlive.data(), c.dq.data(), &cache, stream),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(moss_runtime_last_error(generated.rt),
                  c.s.length > 1 ? "exceeds the cache's capacity"
                                 : "capacity must be in");
  EXPECT_EQ(moss_qkv_rope_cache(
                generated.rt, c.s.batch, c.s.length, c.s.d, c.dx.data(),
                nullptr, c.dbeta.data(), kLayerNormEps, c.dw.data(),
                reinterpret_cast<const int64_t *>(c.dpositions.data()),
                c.dlive.data(), c.dq.data(), nullptr, stream),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(moss_runtime_last_error(generated.rt), "cache is NULL");
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(readState(c) == before);
}

} // namespace
