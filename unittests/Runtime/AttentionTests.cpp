//===- AttentionTests.cpp - moss_streaming_attention on the GPU -----------===//
//
// The generated attention kernel through the C API, against an FP64
// reference of masked softmax attention on fresh random data:
//   - relative L2 <= 3e-3 for the decoder's cases, q a strided view of a
//     fused QKV [B,T,3,H,D] buffer, ring masks with rolled key slots;
//   - rows without an allowed key are exactly +0.0 (never NaN);
//   - BTHD writes [B,T,H,D] storage (a guard band after it stays untouched);
//   - BHTD and BTHD, skip_empty_tiles on and off, a contiguous q, a
//     transposed mask storage, mask bytes 1..255 for "allowed" and a mask
//     one byte off 16-byte alignment all agree bit for bit;
//   - one pass (MOSS_ATTENTION_SPLITS=1) agrees with split-KV up to FP32
//     rounding, and so do 1, 2, 3 or 4 key groups
//     (MOSS_ATTENTION_KV_GROUPS), each bit-identical with skip on and off;
//   - split-KV clusters of every size 2..8 (and a forced split of a
//     1280-cluster grid) agree with one pass;
//   - CUDA-graph replay equals eager bit for bit.
// Skipped without an sm_90 GPU or without an attention kernel in the
// kernels dir.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "moss/Support/HostAttentionReference.h"

#include "moss/Config/AttentionLaunch.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>

using namespace moss::runtime::test;

namespace {

constexpr int64_t D = 64;
constexpr double kAttentionTolerance = 3e-3;
constexpr uint16_t kPoisonBits = 0x7FC1; // a NaN the kernel never writes
constexpr size_t kGuard = 256;           // elements after the output

enum class MaskKind { Ring, SparseHistory, Random };

struct Problem {
  int64_t B, H, T, S;
  std::vector<uint16_t> qkv;  // fused [B,T,3,H,D]; q is slot 0
  std::vector<uint16_t> k, v; // [B,H,S,D]
  std::vector<uint8_t> mask;  // [B,T,S]

  size_t outElems() const { return size_t(B * H * T * D); }
  uint16_t qAt(int64_t b, int64_t h, int64_t t, int64_t d) const {
    return qkv[size_t((((b * T + t) * 3 + 0) * H + h) * D + d)];
  }
};

/// Ring mask of batch b: `hist` earlier positions; query t sits at position
/// hist + t and sees positions (pos - S, pos]; position p lives in ring slot
/// (p + roll) % S, and only the newest S positions are in the ring.
void fillRingMask(Problem &p, int64_t b, int64_t hist, int64_t roll) {
  int64_t newest = hist + p.T - 1;
  for (int64_t t = 0; t < p.T; ++t) {
    int64_t pos = hist + t;
    for (int64_t slot = 0; slot < p.S; ++slot) {
      int64_t base = ((slot - roll) % p.S + p.S) % p.S;
      int64_t stored = newest - (((newest - base) % p.S) + p.S) % p.S;
      bool ok = stored >= 0 && stored <= pos && stored > pos - p.S;
      p.mask[size_t((b * p.T + t) * p.S + slot)] = ok ? 1 : 0;
    }
  }
}

Problem makeProblem(int64_t B, int64_t H, int64_t T, int64_t S, MaskKind kind,
                    uint64_t seed, bool emptyRows = true) {
  Problem p{B, H, T, S, {}, {}, {}, {}};
  std::mt19937_64 rng(seed);
  p.qkv = randomBf16(size_t(B * T * 3 * H * D), -2, 2, rng);
  p.k = randomBf16(size_t(B * H * S * D), -2, 2, rng);
  p.v = randomBf16(size_t(B * H * S * D), -2, 2, rng);
  p.mask.assign(size_t(B * T * S), 0);
  for (int64_t b = 0; b < B; ++b) {
    int64_t roll = int64_t(rng() % uint64_t(S));
    switch (kind) {
    case MaskKind::Ring: {
      int64_t maxHist = std::max<int64_t>(S - T, 0) + S / 2;
      fillRingMask(p, b, int64_t(rng() % uint64_t(maxHist + 1)), roll);
      break;
    }
    case MaskKind::SparseHistory:
      fillRingMask(p, b, int64_t(rng() % 8), roll);
      break;
    case MaskKind::Random:
      for (int64_t i = 0; i < T * S; ++i)
        p.mask[size_t(b * T * S + i)] = (rng() % 4) == 0;
      break;
    }
  }
  // Some rows with no allowed key at all (not the only row of a problem).
  for (int64_t b = 0; emptyRows && b < B && B * T > 1; b += 2)
    std::fill_n(&p.mask[size_t((b * T + (b * 7) % T) * S)], S, 0);
  return p;
}

/// FP64 reference in [B,T,H,D] order; rows without an allowed key are 0.
std::vector<double> reference(const Problem &p) {
  return moss::host::referenceAttention({p.B, p.H, p.T, p.S, D, p.qkv.data(),
                                         p.k.data(), p.v.data(), p.mask.data(),
                                         1.0 / std::sqrt(double(D))});
}

void uploadBytes(void *device, const std::vector<uint8_t> &host) {
  ASSERT_EQ(
      cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice),
      cudaSuccess);
}

/// Device copies of a problem and the arguments of its calls.
struct DeviceProblem {
  const Problem &p;
  DeviceBuffer qkv, qc, k, v, mask, maskT, maskWide, maskShifted, out;
  moss_attention_args base{};

  explicit DeviceProblem(const Problem &p)
      : p(p), qkv(p.qkv.size() * 2), qc(p.outElems() * 2), k(p.k.size() * 2),
        v(p.v.size() * 2), mask(p.mask.size()), maskT(p.mask.size()),
        maskWide(p.mask.size()), maskShifted(p.mask.size() + 1),
        out((p.outElems() + kGuard) * 2) {
    upload(qkv.data(), p.qkv);
    upload(k.data(), p.k);
    upload(v.data(), p.v);
    uploadBytes(mask.data(), p.mask);
    // A contiguous q [B,H,T,D] and the mask stored as [B,S,T].
    std::vector<uint16_t> q(p.outElems());
    std::vector<uint8_t> mt(p.mask.size());
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t h = 0; h < p.H; ++h)
        for (int64_t t = 0; t < p.T; ++t)
          for (int64_t d = 0; d < D; ++d)
            q[size_t(((b * p.H + h) * p.T + t) * D + d)] = p.qAt(b, h, t, d);
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t t = 0; t < p.T; ++t)
        for (int64_t s = 0; s < p.S; ++s)
          mt[size_t((b * p.S + s) * p.T + t)] =
              p.mask[size_t((b * p.T + t) * p.S + s)];
    upload(qc.data(), q);
    uploadBytes(maskT.data(), mt);
    // Any nonzero byte allows its key (1..255), and the same 0/1 mask one
    // byte past an aligned address (no 16-byte vector loads of its rows).
    std::vector<uint8_t> wide(p.mask.size()), shifted(p.mask.size() + 1, 0);
    for (size_t i = 0; i < wide.size(); ++i) {
      wide[i] = p.mask[i] ? uint8_t(1 + (i * 37) % 255) : 0;
      shifted[i + 1] = p.mask[i];
    }
    uploadBytes(maskWide.data(), wide);
    uploadBytes(maskShifted.data(), shifted);

    int64_t H = p.H, T = p.T, S = p.S;
    base.B = p.B, base.H = H, base.T = T, base.S = S, base.D = D;
    base.q = qkv.data();
    set4(base.q_stride, T * 3 * H * D, D, 3 * H * D, 1);
    base.k = k.data();
    set4(base.k_stride, H * S * D, S * D, D, 1);
    base.v = v.data();
    set4(base.v_stride, H * S * D, S * D, D, 1);
    base.mask = mask.data();
    base.mask_stride[0] = T * S, base.mask_stride[1] = S;
    base.mask_stride[2] = 1;
    base.out = out.data();
    base.layout = MOSS_LAYOUT_BTHD;
    base.scale = 0.f; // D^-0.5
  }

  static void set4(int64_t *s, int64_t a, int64_t b, int64_t c, int64_t d) {
    s[0] = a, s[1] = b, s[2] = c, s[3] = d;
  }

  moss_attention_args contiguousQ() const {
    moss_attention_args a = base;
    a.q = qc.data();
    set4(a.q_stride, p.H * p.T * D, p.T * D, D, 1);
    return a;
  }
  moss_attention_args wideMask() const {
    moss_attention_args a = base;
    a.mask = maskWide.data();
    return a;
  }
  moss_attention_args shiftedMask() const {
    moss_attention_args a = base;
    a.mask = maskShifted.data() + 1;
    return a;
  }
  moss_attention_args transposedMask() const {
    moss_attention_args a = base;
    a.mask = maskT.data();
    a.mask_stride[0] = p.S * p.T, a.mask_stride[1] = 1;
    a.mask_stride[2] = p.T;
    return a;
  }

  /// Poisons out and its guard band, runs one call, returns everything.
  std::vector<uint16_t> run(moss_runtime_t rt, const moss_attention_args &a,
                            cudaStream_t stream = nullptr) {
    upload(out.data(),
           std::vector<uint16_t>(p.outElems() + kGuard, kPoisonBits));
    moss_status_t status = moss_streaming_attention(rt, &a, stream);
    EXPECT_EQ(status, MOSS_OK) << moss_runtime_last_error(rt);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return download(out.data(), p.outElems() + kGuard);
  }
};

/// [B,H,T,D] storage reordered to [B,T,H,D].
std::vector<uint16_t> bhtdToBthd(const Problem &p,
                                 const std::vector<uint16_t> &bhtd) {
  std::vector<uint16_t> out(p.outElems());
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t t = 0; t < p.T; ++t)
        std::memcpy(&out[size_t(((b * p.T + t) * p.H + h) * D)],
                    &bhtd[size_t(((b * p.H + h) * p.T + t) * D)], D * 2);
  return out;
}

std::vector<uint16_t> head(const std::vector<uint16_t> &v, size_t n) {
  return std::vector<uint16_t>(v.begin(), v.begin() + n);
}

bool guardIntact(const std::vector<uint16_t> &out, size_t n) {
  for (size_t i = n; i < out.size(); ++i)
    if (out[i] != kPoisonBits)
      return false;
  return true;
}

/// Rows of the reference without an allowed key must be +0.0 bit for bit.
size_t emptyRowsNotZero(const Problem &p, const std::vector<uint16_t> &out,
                        size_t &emptyRows) {
  size_t bad = 0;
  emptyRows = 0;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t t = 0; t < p.T; ++t) {
      const uint8_t *m = &p.mask[size_t((b * p.T + t) * p.S)];
      if (std::any_of(m, m + p.S, [](uint8_t x) { return x != 0; }))
        continue;
      ++emptyRows;
      for (int64_t h = 0; h < p.H; ++h)
        for (int64_t d = 0; d < D; ++d)
          bad += out[size_t(((b * p.T + t) * p.H + h) * D + d)] != 0;
    }
  return bad;
}

std::string caseName(const Problem &p) {
  std::ostringstream os;
  os << "H=" << p.H << " S=" << p.S << " T=" << p.T << " B=" << p.B;
  return os.str();
}

class Attention : public ::testing::Test {
protected:
  void SetUp() override {
    dir = testKernelsDir();
    MOSS_REQUIRE_ATTENTION_KERNEL(dir);
    ASSERT_EQ(moss_runtime_create(dir.c_str(), testWhitelist().c_str(), &h.rt),
              MOSS_OK)
        << moss_runtime_last_error(nullptr);
  }

  /// The full set of checks on one problem.
  void checkProblem(const Problem &p) {
    SCOPED_TRACE(caseName(p));
    DeviceProblem dev(p);
    std::vector<double> ref = reference(p);
    size_t n = p.outElems();

    std::vector<uint16_t> bthd = dev.run(h.rt, dev.base);
    double err = relativeL2(head(bthd, n), ref);
    RecordProperty(caseName(p), std::to_string(err));
    EXPECT_LE(err, kAttentionTolerance);
    EXPECT_EQ(countNaN(head(bthd, n)), 0u);
    EXPECT_TRUE(guardIntact(bthd, n)) << "BTHD wrote past [B,T,H,D]";
    size_t emptyRows = 0;
    EXPECT_EQ(emptyRowsNotZero(p, bthd, emptyRows), 0u)
        << "rows without an allowed key must be exactly +0.0";

    moss_attention_args a = dev.base;
    a.layout = MOSS_LAYOUT_BHTD;
    std::vector<uint16_t> bhtd = dev.run(h.rt, a);
    EXPECT_TRUE(guardIntact(bhtd, n));
    EXPECT_EQ(bhtdToBthd(p, bhtd), head(bthd, n)) << "BHTD vs BTHD";

    a = dev.base;
    a.skip_empty_tiles = 1;
    EXPECT_EQ(head(dev.run(h.rt, a), n), head(bthd, n)) << "skip on vs off";
    EXPECT_EQ(head(dev.run(h.rt, dev.contiguousQ()), n), head(bthd, n))
        << "contiguous q vs fused-QKV view";
    EXPECT_EQ(head(dev.run(h.rt, dev.transposedMask()), n), head(bthd, n))
        << "[B,S,T] mask storage vs [B,T,S]";
    EXPECT_EQ(head(dev.run(h.rt, dev.wideMask()), n), head(bthd, n))
        << "mask bytes 1..255 vs 0/1";
    EXPECT_EQ(head(dev.run(h.rt, dev.shiftedMask()), n), head(bthd, n))
        << "mask one byte off 16-byte alignment vs aligned";
    a = dev.base;
    a.scale = static_cast<float>(1.0 / std::sqrt(double(D)));
    EXPECT_EQ(head(dev.run(h.rt, a), n), head(bthd, n))
        << "scale 0 must mean D^-0.5";
  }

  std::string dir;
  RuntimeHandle h;
};

TEST_F(Attention, DecoderCasesMatchReference) {
  uint64_t seed = 1;
  for (int64_t B : {1, 4})
    for (int64_t T : {1, 32, 240})
      checkProblem(makeProblem(B, 12, T, 400, MaskKind::Ring, seed++));
  checkProblem(makeProblem(16, 20, 1, 125, MaskKind::Ring, seed++));
  checkProblem(makeProblem(2, 12, 15, 250, MaskKind::Ring, seed++));
}

TEST_F(Attention, SparseRandomAndOddSizes) {
  checkProblem(makeProblem(3, 12, 30, 400, MaskKind::SparseHistory, 21));
  checkProblem(makeProblem(2, 20, 60, 125, MaskKind::Random, 22));
  checkProblem(makeProblem(2, 3, 17, 1, MaskKind::Random, 23));
  checkProblem(makeProblem(1, 2, 70, 1100, MaskKind::Ring, 24));
}

TEST_F(Attention, RingWrapWithRolledSlots) {
  // Long histories: the newest key sits mid-ring and older keys wrap around.
  Problem p = makeProblem(4, 12, 32, 400, MaskKind::Ring, 31, false);
  for (int64_t b = 0; b < p.B; ++b)
    fillRingMask(p, b, p.S + 37 * (b + 1), (p.S / 3 + 53 * b) % p.S);
  checkProblem(p);
}

TEST_F(Attention, FullyMaskedProblemIsExactlyZero) {
  Problem p = makeProblem(2, 12, 32, 250, MaskKind::Random, 41);
  std::fill(p.mask.begin(), p.mask.end(), 0);
  DeviceProblem dev(p);
  for (int skip : {0, 1}) {
    moss_attention_args a = dev.base;
    a.skip_empty_tiles = skip;
    std::vector<uint16_t> out = dev.run(h.rt, a);
    EXPECT_EQ(head(out, p.outElems()), std::vector<uint16_t>(p.outElems(), 0))
        << "skip " << skip;
  }
}

TEST_F(Attention, SinglePassAgreesWithSplitKv) {
  // The rule's split-KV launch (clusters merging in shared memory) against
  // a runtime that runs every call in one pass over the keys.
  RuntimeHandle one;
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_SPLITS", "1", one), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  struct Shape {
    int64_t B, H, T, S;
  };
  for (Shape s : {Shape{1, 12, 1, 400}, Shape{4, 12, 32, 400},
                  Shape{1, 12, 32, 400}, Shape{1, 20, 16, 1100}}) {
    moss::config::AttentionLaunch launch;
    std::string err;
    ASSERT_TRUE(moss::config::deriveAttentionLaunch(s.B, s.H, s.T, s.S, 0, 0,
                                                    launch, err));
    Problem p = makeProblem(s.B, s.H, s.T, s.S, MaskKind::Ring, 50 + s.T);
    SCOPED_TRACE(caseName(p) + " splits " + std::to_string(launch.splits));
    EXPECT_GT(launch.splits, 1) << "the case should exercise split-KV";
    DeviceProblem dev(p);
    std::vector<uint16_t> split = head(dev.run(h.rt, dev.base), p.outElems());
    std::vector<uint16_t> single =
        head(dev.run(one.rt, dev.base), p.outElems());
    size_t differing = 0;
    for (size_t i = 0; i < split.size(); ++i)
      differing += split[i] != single[i];
    EXPECT_LE(differing, split.size() / 500 + 4);
    EXPECT_LE(relativeL2(single, split), 1e-4);
    EXPECT_LE(relativeL2(single, reference(p)), kAttentionTolerance);
    EXPECT_LE(relativeL2(split, reference(p)), kAttentionTolerance);
  }
}

TEST_F(Attention, BackToBackSplitLaunchesKeepTheirBits) {
  // Split-KV launches merge in their clusters' shared memory and keep no
  // state between calls: back-to-back calls of shapes with different grids
  // and split counts on one stream (no sync in between) must each give the
  // first call's bits, and every output element must be written.
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::vector<std::unique_ptr<Problem>> problems;
  problems.push_back(std::make_unique<Problem>(
      makeProblem(1, 12, 1, 400, MaskKind::Ring, 71))); // 2 splits
  problems.push_back(std::make_unique<Problem>(
      makeProblem(4, 12, 32, 400, MaskKind::SparseHistory, 72)));
  problems.push_back(std::make_unique<Problem>(
      makeProblem(1, 20, 16, 1100, MaskKind::Ring, 73))); // 4 splits
  std::vector<std::unique_ptr<DeviceProblem>> devs;
  std::vector<std::vector<uint16_t>> first;
  for (auto &p : problems) {
    moss::config::AttentionLaunch launch;
    std::string err;
    ASSERT_TRUE(moss::config::deriveAttentionLaunch(p->B, p->H, p->T, p->S, 0,
                                                    0, launch, err));
    EXPECT_GT(launch.splits, 1) << caseName(*p);
    devs.push_back(std::make_unique<DeviceProblem>(*p));
    first.push_back(
        head(devs.back()->run(h.rt, devs.back()->base, stream), p->outElems()));
    EXPECT_LE(relativeL2(first.back(), reference(*p)), kAttentionTolerance)
        << caseName(*p);
  }
  // Nine rounds back to back, then a tenth on poisoned outputs: an element
  // left unmerged or merged from another call's partials would show.
  auto round = [&] {
    for (size_t i = 0; i < devs.size(); ++i)
      ASSERT_EQ(moss_streaming_attention(h.rt, &devs[i]->base, stream), MOSS_OK)
          << moss_runtime_last_error(h.rt);
  };
  for (int r = 0; r < 9; ++r)
    round();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (size_t i = 0; i < devs.size(); ++i)
    poison(devs[i]->out.data(), problems[i]->outElems());
  round();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (size_t i = 0; i < devs.size(); ++i)
    EXPECT_EQ(download(devs[i]->out.data(), problems[i]->outElems()), first[i])
        << caseName(*problems[i]);
  cudaStreamDestroy(stream);
}

TEST_F(Attention, EveryClusterSizeAgreesWithOnePass) {
  // Splits are the CTAs of one cluster (1, 1, splits): every size up to the
  // portable 8, powers of two or not, and a forced split of a grid far
  // larger than the rule would split (1280 clusters), merge to the one-pass
  // result up to FP32 rounding, bit-identical with skip on and off.
  RuntimeHandle one;
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_SPLITS", "1", one), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  struct Case {
    int64_t B, H, T, S, splits;
  };
  for (Case c : {Case{1, 12, 16, 1100, 2}, Case{1, 12, 16, 1100, 3},
                 Case{1, 12, 16, 1100, 5}, Case{1, 12, 16, 1100, 6},
                 Case{1, 12, 16, 1024, 8}, Case{2, 12, 40, 896, 7},
                 // Eight CTAs of four key groups (the most shared memory
                 // and registers a cluster of this kernel can hold).
                 Case{1, 12, 1, 2048, 8}, Case{64, 20, 1, 400, 2}}) {
    moss::config::AttentionLaunch launch;
    std::string err;
    ASSERT_TRUE(moss::config::deriveAttentionLaunch(c.B, c.H, c.T, c.S,
                                                    c.splits, 0, launch, err));
    Problem p = makeProblem(c.B, c.H, c.T, c.S, MaskKind::Ring, 90 + c.splits);
    SCOPED_TRACE(caseName(p) + " forced " + std::to_string(c.splits) +
                 " -> splits " + std::to_string(launch.splits) + " x " +
                 std::to_string(launch.kvGroups) + " groups");
    EXPECT_EQ(launch.splits, c.splits); // the cluster size launched
    if (c.S == 2048)
      EXPECT_EQ(launch.kvGroups, 4);
    RuntimeHandle forced;
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_SPLITS",
                            std::to_string(c.splits), forced),
              MOSS_OK)
        << moss_runtime_last_error(nullptr);
    DeviceProblem dev(p);
    size_t n = p.outElems();
    std::vector<uint16_t> single = head(dev.run(one.rt, dev.base), n);
    std::vector<uint16_t> split = head(dev.run(forced.rt, dev.base), n);
    EXPECT_LE(relativeL2(split, single), 1e-4);
    EXPECT_LE(relativeL2(split, reference(p)), kAttentionTolerance);
    size_t emptyRows = 0;
    EXPECT_EQ(emptyRowsNotZero(p, split, emptyRows), 0u);
    moss_attention_args a = dev.base;
    a.skip_empty_tiles = 1;
    EXPECT_EQ(head(dev.run(forced.rt, a), n), split) << "skip on vs off";
  }
}

TEST_F(Attention, KeyGroupsAgreeWithOneGroup) {
  // Key groups split a row block's key tiles between warps of one CTA and
  // merge in shared memory: any group count gives the one-group result up
  // to FP32 summation order, and skip on/off stays bit-identical for each.
  RuntimeHandle byGroups[5];
  for (int g = 1; g <= 4; ++g)
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_KV_GROUPS", std::to_string(g),
                            byGroups[g]),
              MOSS_OK)
        << moss_runtime_last_error(nullptr);
  struct Case {
    int64_t B, H, T, S;
    MaskKind kind;
  };
  for (Case c : {Case{1, 12, 1, 400, MaskKind::Ring},
                 Case{2, 20, 7, 125, MaskKind::Random},
                 Case{3, 12, 30, 250, MaskKind::SparseHistory},
                 Case{1, 4, 16, 700, MaskKind::Ring},
                 // T = 20: row warp 0 has rows g + 8, row warp 1 does not
                 // and skips their hand-over and merges (in one pass and
                 // with two splits at two groups).
                 Case{2, 12, 20, 250, MaskKind::Random},
                 Case{1, 12, 20, 400, MaskKind::Ring}}) {
    Problem p = makeProblem(c.B, c.H, c.T, c.S, c.kind, 80 + c.T);
    DeviceProblem dev(p);
    std::vector<double> ref = reference(p);
    size_t n = p.outElems();
    std::vector<uint16_t> one = head(dev.run(byGroups[1].rt, dev.base), n);
    for (int g = 1; g <= 4; ++g) {
      moss::config::AttentionLaunch launch;
      std::string err;
      ASSERT_TRUE(moss::config::deriveAttentionLaunch(p.B, p.H, p.T, p.S, 0, g,
                                                      launch, err));
      SCOPED_TRACE(caseName(p) + " groups " + std::to_string(g) + " -> " +
                   std::to_string(launch.kvGroups) + ", splits " +
                   std::to_string(launch.splits));
      std::vector<uint16_t> out = head(dev.run(byGroups[g].rt, dev.base), n);
      EXPECT_LE(relativeL2(out, ref), kAttentionTolerance);
      EXPECT_LE(relativeL2(out, one), 1e-4);
      size_t emptyRows = 0;
      EXPECT_EQ(emptyRowsNotZero(p, out, emptyRows), 0u);
      moss_attention_args a = dev.base;
      a.skip_empty_tiles = 1;
      EXPECT_EQ(head(dev.run(byGroups[g].rt, a), n), out) << "skip on vs off";
    }
  }
  // The cases above must reach 2, 3 and 4 groups.
  std::string err;
  moss::config::AttentionLaunch l2, l3, l4;
  ASSERT_TRUE(
      moss::config::deriveAttentionLaunch(2, 20, 7, 125, 0, 2, l2, err));
  ASSERT_TRUE(
      moss::config::deriveAttentionLaunch(1, 12, 1, 400, 1, 0, l4, err));
  ASSERT_TRUE(
      moss::config::deriveAttentionLaunch(1, 4, 16, 700, 4, 0, l3, err));
  EXPECT_EQ(l2.kvGroups, 2);
  EXPECT_EQ(l4.kvGroups, 4);
  EXPECT_EQ(l3.kvGroups, 3); // 11 tiles in 4 splits of 3
  moss::config::AttentionLaunch mixed;
  ASSERT_TRUE(
      moss::config::deriveAttentionLaunch(1, 12, 20, 400, 0, 2, mixed, err));
  EXPECT_EQ(mixed.rowWarps, 2);
  EXPECT_EQ(mixed.kvGroups, 2);
  EXPECT_GT(mixed.splits, 1);
}

TEST_F(Attention, CopyWarpsChangeNothing) {
  // Copy warps only share a CTA's K/V copies by cp.async: with none, with
  // the rule's and with as many as fit, every output bit is the same, with
  // skip on and off and in both layouts. (K and V by cp.async everywhere:
  // the TMA functions' launches have no copy warps.)
  RuntimeHandle none, most, rule;
  {
    ScopedEnv cpAsync("MOSS_ATTENTION_TMA", "0");
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_COPY_WARPS", "0", none),
              MOSS_OK)
        << moss_runtime_last_error(nullptr);
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_COPY_WARPS", "3", most),
              MOSS_OK)
        << moss_runtime_last_error(nullptr);
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_PDL", "0", rule), MOSS_OK)
        << moss_runtime_last_error(nullptr);
  }
  struct Case {
    int64_t B, H, T, S;
    MaskKind kind;
    int64_t ruleCopyWarps; // what the rule launches
  };
  for (Case c : {Case{1, 20, 1, 125, MaskKind::Ring, 2},    // two groups
                 Case{1, 12, 1, 400, MaskKind::Ring, 2},    // 4 splits x 2
                 Case{1, 1, 1, 190, MaskKind::Random, 1},   // three groups
                 Case{2, 20, 16, 125, MaskKind::Random, 2}, // rows g + 8
                 Case{3, 12, 8, 250, MaskKind::SparseHistory, 0},
                 Case{8, 20, 1, 125, MaskKind::Ring, 0}}) { // 160 CTAs
    moss::config::AttentionLaunch launch;
    std::string err;
    ASSERT_TRUE(moss::config::deriveAttentionLaunch(
        c.B, c.H, c.T, c.S, 0, 0, launch, err, -1,
        moss::config::AttentionTmaMode::off));
    Problem p = makeProblem(c.B, c.H, c.T, c.S, c.kind, 70 + c.T);
    SCOPED_TRACE(caseName(p) + " -> splits " + std::to_string(launch.splits) +
                 " x " + std::to_string(launch.kvGroups) + " groups, " +
                 std::to_string(launch.copyWarps) + " copy warps");
    EXPECT_EQ(launch.copyWarps, c.ruleCopyWarps);
    DeviceProblem dev(p);
    size_t n = p.outElems();
    std::vector<uint16_t> without = head(dev.run(none.rt, dev.base), n);
    EXPECT_LE(relativeL2(without, reference(p)), kAttentionTolerance);
    EXPECT_EQ(head(dev.run(rule.rt, dev.base), n), without) << "rule";
    EXPECT_EQ(head(dev.run(most.rt, dev.base), n), without) << "forced 3";
    moss_attention_args a = dev.base;
    a.skip_empty_tiles = 1;
    EXPECT_EQ(head(dev.run(most.rt, a), n), without) << "forced 3, skip on";
    a.skip_empty_tiles = 0;
    a.layout = MOSS_LAYOUT_BHTD;
    std::vector<uint16_t> bhtdNone = head(dev.run(none.rt, a), n);
    EXPECT_EQ(head(dev.run(most.rt, a), n), bhtdNone) << "bhtd";
  }
}

TEST_F(Attention, TmaCopiesChangeNothing) {
  // K and V by the TMA engine (g4_tma, g2_tma and g1_tma: the default for
  // one-trip four- and two-group launches and for the two- and one-group
  // walks the rule marks, where the two stages alternate; with
  // MOSS_ATTENTION_TMA=2 also for the others: g4_tma's one stage's mbarrier
  // completes twice, and with skip on a trip of fewer tiles expects fewer
  // bytes) or by every thread's cp.async (MOSS_ATTENTION_TMA=0, which gives
  // g2 its copy warps back): only how the tiles reach shared memory differs,
  // so every output bit is the same, with tail tiles, skip on, the bhtd
  // layout and a strided mask. Likewise g4_tma_kv (K and V on mbarriers of
  // their own) against g4_tma, each forced by MOSS_ATTENTION_SPLIT_KV.
  RuntimeHandle cp, forced, allKv, noKv;
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_TMA", "0", cp), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_TMA", "2", forced), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_SPLIT_KV", "2", allKv), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_SPLIT_KV", "0", noKv), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  struct Case {
    int64_t B, H, T, S;
    MaskKind kind;
    bool byRule; // else two trips, only with MOSS_ATTENTION_TMA=2
    int64_t groups = 4;
  };
  int oneBarrier = 0, splitKv = 0; // g4_tma launches by the rule
  for (Case c : {Case{1, 12, 1, 250, MaskKind::Ring, true}, // 58-key tail
                 Case{2, 12, 1, 250, MaskKind::Ring, true}, // 24 CTAs
                 Case{3, 12, 8, 250, MaskKind::SparseHistory, true},
                 Case{2, 5, 16, 200, MaskKind::Random, true}, // 8-key tail
                 Case{1, 3, 1, 256, MaskKind::Random, true},  // no tail
                 Case{11, 12, 1, 250, MaskKind::Ring, true},  // 132, K|V
                 Case{16, 12, 8, 400, MaskKind::SparseHistory, false},
                 Case{8, 12, 1, 400, MaskKind::Random, false}, // 96 CTAs
                 // Two groups: a 61-key tail, rows g + 8, 320 CTAs, two
                 // row warps, a 36-key tail; two trips (320 CTAs).
                 Case{1, 20, 1, 125, MaskKind::Ring, true, 2},
                 Case{4, 20, 16, 125, MaskKind::Random, true, 2},
                 Case{16, 20, 1, 125, MaskKind::Ring, true, 2},
                 Case{1, 20, 32, 125, MaskKind::SparseHistory, true, 2},
                 Case{2, 7, 1, 100, MaskKind::Random, true, 2},
                 Case{16, 20, 1, 250, MaskKind::Ring, false, 2},
                 // By the rule over several trips: the decode pairs (192
                 // CTAs; S = 250 two trips, S = 400 four) and four trips of
                 // two row warps, their 16-key tails.
                 Case{16, 12, 1, 250, MaskKind::Ring, true, 2},
                 Case{16, 12, 1, 400, MaskKind::Random, true, 2},
                 Case{16, 12, 4, 250, MaskKind::SparseHistory, true, 2},
                 Case{8, 12, 32, 400, MaskKind::SparseHistory, true, 2},
                 Case{8, 12, 30, 400, MaskKind::Ring, true, 2},
                 // One group of four row warps (g1_tma) over seven or six
                 // trips past 264 CTAs: a second row block of 36 rows (384
                 // CTAs), a 10-key tail (288); T = 60 (rows g + 8 in part,
                 // 96 CTAs) only when forced; one row warp past 396 CTAs (a
                 // decode step of 34 streams, four trips, an 8-key tail);
                 // two trips only when forced.
                 Case{16, 12, 100, 400, MaskKind::SparseHistory, true, 1},
                 Case{8, 12, 60, 400, MaskKind::Ring, false, 1},
                 Case{6, 12, 200, 330, MaskKind::Random, true, 1},
                 Case{34, 12, 1, 200, MaskKind::Ring, true, 1},
                 Case{4, 20, 64, 125, MaskKind::Ring, false, 1}}) {
    moss::config::AttentionLaunch launch;
    std::string err;
    ASSERT_TRUE(moss::config::deriveAttentionLaunch(c.B, c.H, c.T, c.S, 0, 0,
                                                    launch, err));
    Problem p = makeProblem(c.B, c.H, c.T, c.S, c.kind, 110 + c.S + c.T);
    SCOPED_TRACE(caseName(p) + " -> splits " + std::to_string(launch.splits) +
                 " x " + std::to_string(launch.kvGroups) + " groups");
    ASSERT_EQ(launch.kvGroups, c.groups);
    ASSERT_EQ(launch.splits, 1);
    ASSERT_EQ(launch.tmaCopies, c.byRule);
    if (c.byRule && c.groups == 4)
      ++(launch.splitKvBarriers ? splitKv : oneBarrier);
    moss_runtime_t tma = c.byRule ? h.rt : forced.rt;
    DeviceProblem dev(p);
    size_t n = p.outElems();
    std::vector<uint16_t> byCpAsync = head(dev.run(cp.rt, dev.base), n);
    EXPECT_LE(relativeL2(byCpAsync, reference(p)), kAttentionTolerance);
    EXPECT_EQ(head(dev.run(tma, dev.base), n), byCpAsync) << "TMA";
    if (c.byRule && c.groups == 4) {
      EXPECT_EQ(head(dev.run(allKv.rt, dev.base), n), byCpAsync) << "K|V";
      EXPECT_EQ(head(dev.run(noKv.rt, dev.base), n), byCpAsync) << "K+V";
    }
    moss_attention_args a = dev.base;
    a.skip_empty_tiles = 1;
    EXPECT_EQ(head(dev.run(tma, a), n), head(dev.run(cp.rt, a), n))
        << "skip on";
    a = dev.transposedMask();
    a.skip_empty_tiles = 1;
    EXPECT_EQ(head(dev.run(tma, a), n), head(dev.run(cp.rt, a), n))
        << "skip on, mask [B,S,T]";
    a = dev.base;
    a.layout = MOSS_LAYOUT_BHTD;
    EXPECT_EQ(head(dev.run(tma, a), n), head(dev.run(cp.rt, a), n)) << "bhtd";
  }
  // g4_tma by the rule both ways: K and V on one mbarrier (g4_tma, up to 66
  // CTAs) and on two (g4_tma_kv, 132 CTAs; the forced two-trip cases of 96
  // and 192 CTAs too).
  EXPECT_GT(oneBarrier, 0);
  EXPECT_GT(splitKv, 0);
}

TEST_F(Attention, KvSharedAcrossHeadsByStrideZero) {
  // Every head reading head 0's K and V through a head stride of 0 (the
  // driver may or may not encode such a tensor map; the kernel copies by
  // cp.async when it does not) gives what copies of them give.
  Problem p = makeProblem(2, 12, 1, 250, MaskKind::Ring, 120);
  size_t headElems = size_t(p.S * D);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 1; h < p.H; ++h)
      for (std::vector<uint16_t> *kv : {&p.k, &p.v})
        std::copy_n(kv->begin() + (b * p.H) * headElems, headElems,
                    kv->begin() + (b * p.H + h) * headElems);
  DeviceProblem dev(p);
  size_t n = p.outElems();
  std::vector<uint16_t> copies = head(dev.run(h.rt, dev.base), n);
  EXPECT_LE(relativeL2(copies, reference(p)), kAttentionTolerance);
  moss_attention_args a = dev.base;
  a.k_stride[1] = 0;
  a.v_stride[1] = 0;
  EXPECT_EQ(head(dev.run(h.rt, a), n), copies);
}

TEST_F(Attention, GraphReplayEqualsEager) {
  std::vector<std::unique_ptr<Problem>> problems;
  problems.push_back(std::make_unique<Problem>(
      makeProblem(1, 20, 1, 400, MaskKind::Ring, 61))); // split-KV
  problems.push_back(std::make_unique<Problem>(
      makeProblem(4, 12, 240, 400, MaskKind::Ring, 62))); // one pass
  problems.push_back(std::make_unique<Problem>(
      makeProblem(2, 12, 15, 250, MaskKind::SparseHistory, 63)));
  std::vector<std::unique_ptr<DeviceProblem>> devs;
  std::vector<std::unique_ptr<DeviceBuffer>> graphOut;
  for (auto &p : problems) {
    devs.push_back(std::make_unique<DeviceProblem>(*p));
    graphOut.push_back(std::make_unique<DeviceBuffer>(p->outElems() * 2));
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::vector<std::vector<uint16_t>> eager;
  for (size_t i = 0; i < devs.size(); ++i) {
    moss_attention_args a = devs[i]->base;
    a.skip_empty_tiles = int(i % 2);
    eager.push_back(
        head(devs[i]->run(h.rt, a, stream), problems[i]->outElems()));
  }
  CapturedGraph graph;
  ASSERT_NO_FATAL_FAILURE(graph.capture(stream, [&] {
    for (size_t i = 0; i < devs.size(); ++i) {
      moss_attention_args a = devs[i]->base;
      a.skip_empty_tiles = int(i % 2);
      a.out = graphOut[i]->data();
      EXPECT_EQ(moss_streaming_attention(h.rt, &a, stream), MOSS_OK)
          << moss_runtime_last_error(h.rt);
    }
  }));
  for (int replay = 0; replay < 3; ++replay) {
    for (size_t i = 0; i < devs.size(); ++i)
      poison(graphOut[i]->data(), problems[i]->outElems());
    ASSERT_EQ(graph.launch(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    for (size_t i = 0; i < devs.size(); ++i)
      EXPECT_EQ(download(graphOut[i]->data(), problems[i]->outElems()),
                eager[i])
          << caseName(*problems[i]) << " replay " << replay;
  }
  cudaStreamDestroy(stream);
}

} // namespace
