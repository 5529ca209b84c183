//===- AttentionProgrammaticLaunchTests.cpp - MOSS_ATTENTION_PDL=1 --------===//
//
// With MOSS_ATTENTION_PDL=1 attention is scheduled while the previous kernel
// still runs. It must read q, k, v and mask only after that kernel's writes
// and write out only after that kernel's reads: a previous kernel that lets
// dependents start at once, spins, then rewrites all four inputs and reads
// out would expose either. Eager and in a CUDA graph, for a one-pass, a
// split-KV and a key-group launch; the result must equal a plain launch on
// the fresh inputs bit for bit. The launch rule triggers the dependents of
// the small one-pass grids at the start and those of the split grid after
// its last key tile (AttentionLaunch::earlyTrigger);
// MOSS_ATTENTION_EARLY_TRIGGER=0 and 2 check the late trigger and the early
// one in every grid the same way.
//
//===----------------------------------------------------------------------===//

#include "DelayedCopy.h"
#include "ProgrammaticLaunchCheck.h"
#include "RuntimeTestSupport.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/Manifest.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <string>

using namespace moss::runtime::test;

namespace {

constexpr int64_t D = 64;
/// About 100 us at the H200's clock: far longer than these attention calls.
constexpr long long kSpinCycles = 200000;

size_t roundUp16(size_t bytes) { return (bytes + 15) / 16 * 16; }

/// One input in three versions: what the kernel must not see (stale), what
/// the delayed copy writes (fresh) and the buffer attention reads.
struct Input {
  size_t bytes;
  std::unique_ptr<DeviceBuffer> stale, fresh, live;

  Input(size_t bytes, std::mt19937_64 &rng, bool isMask) : bytes(bytes) {
    auto filled = [&] {
      std::vector<uint8_t> host(bytes);
      if (isMask) {
        // Mostly allowed keys, so that stale and fresh masks both leave
        // every row something to attend to.
        for (uint8_t &v : host)
          v = rng() % 4 != 0;
      } else {
        std::vector<uint16_t> values = randomBf16(bytes / 2, -2, 2, rng);
        std::memcpy(host.data(), values.data(), bytes);
      }
      auto buffer = std::make_unique<DeviceBuffer>(bytes);
      EXPECT_EQ(cudaMemcpy(buffer->data(), host.data(), bytes,
                           cudaMemcpyHostToDevice),
                cudaSuccess);
      return buffer;
    };
    stale = filled();
    fresh = filled();
    live = std::make_unique<DeviceBuffer>(bytes);
  }
};

struct Case {
  int64_t B, H, T, S;
  Input q, k, v, mask;
  std::unique_ptr<DeviceBuffer> out, seen, expected;
  moss_attention_args args{};

  Case(int64_t B, int64_t H, int64_t T, int64_t S, std::mt19937_64 &rng)
      : B(B), H(H), T(T), S(S), q(size_t(B * H * T * D * 2), rng, false),
        k(size_t(B * H * S * D * 2), rng, false),
        v(size_t(B * H * S * D * 2), rng, false),
        mask(roundUp16(size_t(B * T * S)), rng, true) {
    size_t outBytes = size_t(B * T * H * D * 2);
    out = std::make_unique<DeviceBuffer>(outBytes);
    seen = std::make_unique<DeviceBuffer>(outBytes);
    expected = std::make_unique<DeviceBuffer>(outBytes);
    args.B = B, args.H = H, args.T = T, args.S = S, args.D = D;
    set4(args.q_stride, H * T * D, T * D, D, 1);
    set4(args.k_stride, H * S * D, S * D, D, 1);
    set4(args.v_stride, H * S * D, S * D, D, 1);
    args.mask_stride[0] = T * S, args.mask_stride[1] = S;
    args.mask_stride[2] = 1;
    args.layout = MOSS_LAYOUT_BTHD;
    args.scale = 0.f;
  }

  static void set4(int64_t *s, int64_t a, int64_t b, int64_t c, int64_t d) {
    s[0] = a, s[1] = b, s[2] = c, s[3] = d;
  }

  std::string name() const {
    return "B=" + std::to_string(B) + " H=" + std::to_string(H) +
           " T=" + std::to_string(T) + " S=" + std::to_string(S);
  }
  size_t outElems() const { return size_t(B * T * H * D); }

  /// Attention on the fresh inputs or on the live ones, into `to`.
  moss_status_t run(moss_runtime_t rt, bool fresh, DeviceBuffer &to,
                    cudaStream_t stream) const {
    moss_attention_args a = args;
    a.q = (fresh ? q.fresh : q.live)->data();
    a.k = (fresh ? k.fresh : k.live)->data();
    a.v = (fresh ? v.fresh : v.live)->data();
    a.mask = (fresh ? mask.fresh : mask.live)->data();
    a.out = to.data();
    return moss_streaming_attention(rt, &a, stream);
  }

  /// Stale inputs in place, out poisoned (NaN), then the delayed copy of
  /// all four fresh inputs.
  void enqueuePrologue(cudaStream_t stream) const {
    DelayedCopy copy;
    const Input *inputs[DelayedCopy::kPairs] = {&q, &k, &v, &mask};
    for (int i = 0; i < DelayedCopy::kPairs; ++i) {
      ASSERT_EQ(cudaMemcpyAsync(inputs[i]->live->data(),
                                inputs[i]->stale->data(), inputs[i]->bytes,
                                cudaMemcpyDeviceToDevice, stream),
                cudaSuccess);
      copy.src[i] = inputs[i]->fresh->data();
      copy.dst[i] = inputs[i]->live->data();
      copy.bytes[i] = inputs[i]->bytes;
    }
    size_t outBytes = outElems() * 2; // D = 64: a multiple of 16
    ASSERT_EQ(cudaMemsetAsync(out->data(), 0xFF, outBytes, stream),
              cudaSuccess);
    copy.watch = out->data();
    copy.seen = seen->data();
    copy.watchBytes = outBytes;
    copy.spinCycles = kSpinCycles;
    ASSERT_EQ(launchDelayedCopy(copy, stream), cudaSuccess);
  }

  void check(const std::string &how) const {
    SCOPED_TRACE(name() + " " + how);
    std::vector<uint16_t> got = download(out->data(), outElems());
    EXPECT_EQ(countNaN(got), 0u) << "outputs left unwritten";
    EXPECT_TRUE(got == download(expected->data(), outElems()))
        << "attention read an input before the previous kernel wrote it";
    EXPECT_EQ(countNaN(download(seen->data(), outElems())), outElems())
        << "attention wrote out before the previous kernel read it";
  }
};

class AttentionProgrammaticLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    std::string dir = testKernelsDir(), err;
    MOSS_REQUIRE_GENERATED_KERNELS(dir);
    moss::config::Manifest manifest;
    ASSERT_TRUE(moss::config::readManifest(dir, manifest, err)) << err;
    if (manifest.attentionKernels.empty())
      GTEST_SKIP() << "no attention kernel in " << dir << "/manifest.json";
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_PDL", "1", pdl), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_PDL", "0", plain), MOSS_OK)
        << moss_runtime_last_error(nullptr);
    for (int mode = 0; mode < 3; mode += 2) {
      ScopedEnv trigger("MOSS_ATTENTION_EARLY_TRIGGER",
                        std::to_string(mode).c_str());
      ASSERT_EQ(createWithEnv(dir, "MOSS_ATTENTION_PDL", "1", forced[mode / 2]),
                MOSS_OK)
          << moss_runtime_last_error(nullptr);
    }
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    std::mt19937_64 rng(2027);
    // One pass (long chunk), split-KV (decode step over S = 400) and key
    // groups (short chunk), by the launch rule.
    const int64_t shapes[][4] = {
        {2, 20, 60, 125}, {1, 12, 1, 400}, {1, 20, 8, 125}};
    for (const auto &s : shapes) {
      cases.push_back(std::make_unique<Case>(s[0], s[1], s[2], s[3], rng));
      Case &c = *cases.back();
      // The reference: the same kernel, launched plainly on the fresh data.
      ASSERT_EQ(c.run(plain.rt, /*fresh=*/true, *c.expected, stream), MOSS_OK)
          << moss_runtime_last_error(plain.rt);
    }
    for (size_t i = 0; i < cases.size(); ++i)
      ASSERT_EQ(earlyByRule(*cases[i]), i != 1)
          << cases[i]->name() << ": the rule no longer triggers "
          << (i != 1 ? "early" : "late");
    const Case &decode = *cases[1];
    ASSERT_GT(moss::config::chooseAttentionSplits(decode.B, decode.H, decode.T,
                                                  decode.S),
              1)
        << "the decode case no longer exercises split-KV";
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  void TearDown() override {
    if (stream)
      cudaStreamDestroy(stream);
  }

  static bool earlyByRule(const Case &c) {
    moss::config::AttentionLaunch launch;
    std::string err;
    EXPECT_TRUE(moss::config::deriveAttentionLaunch(c.B, c.H, c.T, c.S, 0, 0,
                                                    launch, err))
        << err;
    return launch.earlyTrigger;
  }

  RuntimeHandle pdl, plain;
  /// Programmatic launches triggering late (0) and early (2) everywhere.
  RuntimeHandle forced[2];
  cudaStream_t stream = nullptr;
  std::vector<std::unique_ptr<Case>> cases;
};

TEST_F(AttentionProgrammaticLaunch, WaitsForThePreviousKernelEagerly) {
  checkEagerly(cases, stream, pdl.rt, [&](const Case &c) {
    return c.run(pdl.rt, /*fresh=*/false, *c.out, stream);
  });
}

TEST_F(AttentionProgrammaticLaunch, WaitsForThePreviousKernelInAGraph) {
  checkGraphReplays(cases, stream, pdl.rt, [&](const Case &c) {
    return c.run(pdl.rt, /*fresh=*/false, *c.out, stream);
  });
}

TEST_F(AttentionProgrammaticLaunch, EitherTriggerWaitsForThePreviousKernel) {
  for (RuntimeHandle &rt : forced) {
    checkEagerly(cases, stream, rt.rt, [&](const Case &c) {
      return c.run(rt.rt, /*fresh=*/false, *c.out, stream);
    });
    checkGraphReplays(cases, stream, rt.rt, [&](const Case &c) {
      return c.run(rt.rt, /*fresh=*/false, *c.out, stream);
    });
  }
}

} // namespace
