//===- AttentionPositionsTests.cpp - The mask from positions on the GPU ---===//
//
// moss_streaming_attention with slot_positions and query_positions against
// the same call with the bool mask those positions make (the ring cache's
// rule): the outputs agree bit for bit in every launch the rule and the
// tuning variables pick (one pass, split-KV, 1, 2 and 4 key groups,
// cp.async and TMA copies), padding queries (negative positions) are exact
// zeros, and both are within 3e-3 of the FP64 reference. Skipped without an
// sm_90 GPU or an attention kernel.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "moss/Support/HostAttentionReference.h"

#include <cuda_runtime_api.h>

#include <random>
#include <sstream>

using namespace moss::runtime::test;

namespace {

constexpr int64_t D = 64;

/// A ring cache's state: every slot holds one of the stream's last
/// positions or nothing (-1), the query frames are consecutive positions
/// after them and some are padding (-1).
struct Problem {
  int64_t B, H, T, S;
  std::vector<uint16_t> qkv, k, v; // q as slot 0 of a fused [B,T,3,H,D]
  std::vector<int64_t> slots;      // [B,S]
  std::vector<int64_t> queries;    // [B,T]
  std::vector<uint8_t> mask;       // [B,T,S], from the positions

  Problem(int64_t B, int64_t H, int64_t T, int64_t S, uint64_t seed)
      : B(B), H(H), T(T), S(S) {
    std::mt19937_64 rng(seed);
    qkv = randomBf16(size_t(B * T * 3 * H * D), -2, 2, rng);
    k = randomBf16(size_t(B * H * S * D), -2, 2, rng);
    v = randomBf16(size_t(B * H * S * D), -2, 2, rng);
    slots.assign(size_t(B * S), -1);
    queries.assign(size_t(B * T), -1);
    for (int64_t b = 0; b < B; ++b) {
      // b == 0: a fresh stream; the others have wrapped the ring.
      int64_t first = b == 0 ? 0 : int64_t(rng() % uint64_t(3 * S));
      for (int64_t t = 0; t < T; ++t)
        queries[size_t(b * T + t)] = rng() % 8 == 0 && t ? -1 : first + t;
      // The frames written so far: positions < first + T, the newest S.
      for (int64_t p = std::max<int64_t>(0, first + T - S); p < first + T; ++p)
        if (rng() % 16) // a few slots emptied by padding frames
          slots[size_t(b * S + p % S)] = p;
    }
    mask.assign(size_t(B * T * S), 0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t s = 0; s < S; ++s) {
          int64_t key = slots[size_t(b * S + s)];
          int64_t query = queries[size_t(b * T + t)];
          mask[size_t((b * T + t) * S + s)] =
              key >= 0 && key <= query && query - key < S;
        }
  }
  size_t outElems() const { return size_t(B * H * T * D); }
};

void uploadRaw(void *device, const void *host, size_t bytes) {
  ASSERT_EQ(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice),
            cudaSuccess);
}

struct DeviceProblem {
  const Problem &p;
  DeviceBuffer qkv, k, v, mask, slots, queries, out;
  moss_attention_args withMask{}, withPositions{};

  explicit DeviceProblem(const Problem &p)
      : p(p), qkv(p.qkv.size() * 2), k(p.k.size() * 2), v(p.v.size() * 2),
        mask(p.mask.size()), slots(p.slots.size() * 8),
        queries(p.queries.size() * 8), out(p.outElems() * 2) {
    upload(qkv.data(), p.qkv);
    upload(k.data(), p.k);
    upload(v.data(), p.v);
    uploadRaw(mask.data(), p.mask.data(), p.mask.size());
    uploadRaw(slots.data(), p.slots.data(), p.slots.size() * 8);
    uploadRaw(queries.data(), p.queries.data(), p.queries.size() * 8);
    moss_attention_args &a = withMask;
    a.B = p.B, a.H = p.H, a.T = p.T, a.S = p.S, a.D = D;
    a.q = qkv.data();
    const int64_t q[4] = {p.T * 3 * p.H * D, D, 3 * p.H * D, 1};
    const int64_t kv[4] = {p.H * p.S * D, p.S * D, D, 1};
    for (int i = 0; i < 4; ++i)
      a.q_stride[i] = q[i], a.k_stride[i] = kv[i], a.v_stride[i] = kv[i];
    a.k = k.data(), a.v = v.data(), a.out = out.data();
    a.mask = mask.data();
    a.mask_stride[0] = p.T * p.S, a.mask_stride[1] = p.S, a.mask_stride[2] = 1;
    a.layout = MOSS_LAYOUT_BTHD;
    withPositions = withMask;
    withPositions.mask = nullptr;
    withPositions.slot_positions =
        reinterpret_cast<const int64_t *>(slots.data());
    withPositions.slot_positions_stride_b = p.S;
    withPositions.query_positions =
        reinterpret_cast<const int64_t *>(queries.data());
    withPositions.query_positions_stride_b = p.T;
  }

  std::vector<uint16_t> run(moss_runtime_t rt, const moss_attention_args &a) {
    poison(out.data(), p.outElems());
    EXPECT_EQ(moss_streaming_attention(rt, &a, nullptr), MOSS_OK)
        << moss_runtime_last_error(rt);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return download(out.data(), p.outElems());
  }
};

class AttentionPositions : public ::testing::Test {
protected:
  void SetUp() override {
    dir = testKernelsDir();
    MOSS_REQUIRE_ATTENTION_KERNEL(dir);
  }
  std::string dir;
};

TEST_F(AttentionPositions, EqualTheMaskTheyMakeInEveryLaunch) {
  struct Tuning {
    const char *name, *value;
  };
  // The rule's own launches first (no variable set).
  const Tuning tunings[] = {{"the rule", nullptr},
                            {"MOSS_ATTENTION_SPLITS", "1"},
                            {"MOSS_ATTENTION_KV_GROUPS", "1"},
                            {"MOSS_ATTENTION_KV_GROUPS", "2"},
                            {"MOSS_ATTENTION_KV_GROUPS", "4"},
                            {"MOSS_ATTENTION_TMA", "0"},
                            {"MOSS_ATTENTION_TMA", "2"}};
  struct Shape {
    int64_t B, H, T, S;
  };
  const Shape shapes[] = {{1, 12, 1, 400},   {8, 12, 2, 400},
                          {2, 20, 15, 125},  {4, 12, 30, 250},
                          {2, 12, 120, 400}, {64, 12, 1, 400}};
  for (const Tuning &tuning : tunings) {
    RuntimeHandle rt;
    moss_status_t created =
        tuning.value
            ? createWithEnv(dir, tuning.name, tuning.value, rt)
            : moss_runtime_create(dir.c_str(), testWhitelist().c_str(), &rt.rt);
    ASSERT_EQ(created, MOSS_OK) << moss_runtime_last_error(nullptr);
    for (const Shape &s : shapes) {
      std::ostringstream label;
      label << tuning.name << "=" << (tuning.value ? tuning.value : "")
            << " B=" << s.B << " H=" << s.H << " T=" << s.T << " S=" << s.S;
      SCOPED_TRACE(label.str());
      Problem p(s.B, s.H, s.T, s.S, uint64_t(s.B * 131 + s.T));
      DeviceProblem dev(p);
      std::vector<uint16_t> fromMask = dev.run(rt.rt, dev.withMask);
      std::vector<uint16_t> fromPositions = dev.run(rt.rt, dev.withPositions);
      EXPECT_EQ(fromMask, fromPositions);
      EXPECT_EQ(countNaN(fromPositions), 0u);
      std::vector<double> ref = moss::host::referenceAttention(
          {p.B, p.H, p.T, p.S, D, p.qkv.data(), p.k.data(), p.v.data(),
           p.mask.data(), 0.125});
      EXPECT_LE(relativeL2(fromPositions, ref), 3e-3);
      // Padding queries: every element of their rows exactly +0.0.
      for (int64_t b = 0; b < p.B; ++b)
        for (int64_t t = 0; t < p.T; ++t)
          if (p.queries[size_t(b * p.T + t)] < 0)
            for (int64_t i = 0; i < p.H * D; ++i)
              ASSERT_EQ(fromPositions[size_t((b * p.T + t) * p.H * D + i)], 0u);
    }
  }
}

} // namespace
