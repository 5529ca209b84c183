//===- ArgChecksTest.cpp - The C API's argument checks, without a GPU ----===//
//
// moss_ffn_gemm's and moss_streaming_attention's checks on made-up
// addresses (compared, never read): each bad argument is named, boundaries
// (adjacent buffers, the top of the address space) fall on the right side,
// and sizes whose byte ranges would wrap are errors. The GPU tests
// (GemmArgsTests, AttentionArgsTests) check the same through the C API.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "ArgChecksTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

using namespace moss::runtime;
using namespace moss::runtime::test;

namespace {

constexpr uintptr_t kTop = std::numeric_limits<uintptr_t>::max();

// --- GEMM --------------------------------------------------------------------

/// m = 4, n = 8, k = 16, layerscale_residual, buffers 64 KiB apart.
GemmArgs validGemm() {
  return {4,
          8,
          16,
          MOSS_EPILOGUE_LAYERSCALE_RESIDUAL,
          at(0x10000),
          at(0x20000),
          at(0x30000),
          at(0x40000),
          mutableAt(0x50000)};
}

TEST(GemmArgChecks, ValidCallPasses) {
  GemmArgs a = validGemm();
  EXPECT_TRUE(checkGemmShape(a).ok());
  EXPECT_TRUE(checkGemmPointers(a).ok()) << checkGemmPointers(a).message;
  EXPECT_TRUE(gemmPointersAligned16(a));
  EXPECT_EQ(a.label(), "moss_ffn_gemm(m=4, n=8, k=16, ep=2)");
}

/// m = 4, n = 8, k = 16, moss_layernorm_gemm with GELU, buffers 64 KiB
/// apart.
GemmArgs validLayerNorm() {
  GemmArgs a{4,           8,       16,      MOSS_EPILOGUE_GELU, at(0x10000),
             at(0x20000), nullptr, nullptr, mutableAt(0x50000)};
  a.layerNorm = true;
  a.gamma = at(0x60000);
  a.beta = at(0x70000);
  a.eps = 1e-5f;
  return a;
}

TEST(GemmArgChecks, LayerNormCallPassesWithItsMode) {
  GemmArgs a = validLayerNorm();
  EXPECT_TRUE(checkGemmShape(a).ok()) << checkGemmShape(a).message;
  EXPECT_TRUE(checkGemmPointers(a).ok()) << checkGemmPointers(a).message;
  EXPECT_TRUE(gemmPointersAligned16(a));
  EXPECT_EQ(a.mode(), 4);
  a.ep = MOSS_EPILOGUE_NONE;
  EXPECT_EQ(a.mode(), 3);
  EXPECT_EQ(a.label(), "moss_layernorm_gemm(m=4, n=8, k=16, ep=0)");
  a.eps = 0.f; // allowed, as F.layer_norm allows it
  EXPECT_TRUE(checkGemmShape(a).ok());
}

TEST(GemmArgChecks, LayerNormRefusesWhatNoModeOrContractHas) {
  GemmArgs a = validLayerNorm();
  a.ep = MOSS_EPILOGUE_LAYERSCALE_RESIDUAL;
  EXPECT_EQ(a.mode(), -1);
  EXPECT_TRUE(rejects(checkGemmShape(a),
                      "the LayerNorm prologue takes epilogue 0 (none) or 1 "
                      "(gelu), not 2"));
  for (float eps : {-1e-5f, std::nanf(""), INFINITY}) {
    a = validLayerNorm();
    a.eps = eps;
    EXPECT_TRUE(rejects(checkGemmShape(a), "must be finite and >= 0"));
  }
  a = validLayerNorm();
  a.gamma = nullptr;
  EXPECT_TRUE(rejects(checkGemmPointers(a),
                      "gamma is NULL (the LayerNorm needs gamma and beta)"));
  a = validLayerNorm();
  a.beta = at(0x70001);
  EXPECT_TRUE(rejects(checkGemmPointers(a), "beta = "));
  EXPECT_TRUE(rejects(checkGemmPointers(a), "is not 2-byte aligned"));
  // out [4, 8] = 64 bytes from 0x50000; gamma inside it.
  a = validLayerNorm();
  a.gamma = at(0x50020);
  EXPECT_TRUE(rejects(checkGemmPointers(a), "out overlaps gamma"));
  // 2-byte aligned gamma or beta: valid, but for the fallback only.
  a = validLayerNorm();
  a.beta = at(0x70002);
  EXPECT_TRUE(checkGemmPointers(a).ok());
  EXPECT_FALSE(gemmPointersAligned16(a));
  // moss_ffn_gemm never reads gamma and beta, whatever they hold.
  a = validLayerNorm();
  a.layerNorm = false;
  a.gamma = at(0x50020);
  a.eps = -1.f;
  EXPECT_TRUE(checkGemmShape(a).ok());
  EXPECT_TRUE(checkGemmPointers(a).ok());
}

TEST(GemmArgChecks, EpilogueAndSizes) {
  GemmArgs a = validGemm();
  a.ep = 3;
  EXPECT_TRUE(rejects(checkGemmShape(a), "epilogue 3 is not 0 (none)"));
  for (int64_t m : {int64_t(-1), int64_t(INT32_MAX) + 1}) {
    a = validGemm();
    a.m = m;
    EXPECT_TRUE(rejects(checkGemmShape(a), "m must be in [0, 2147483647]"));
  }
  a = validGemm();
  a.m = 0; // a no-op the caller returns early for
  EXPECT_TRUE(checkGemmShape(a).ok());
  for (auto [n, k] : {std::pair<int64_t, int64_t>{0, 16},
                      {8, 0},
                      {int64_t(INT32_MAX) + 1, 16}}) {
    a = validGemm();
    a.n = n, a.k = k;
    EXPECT_TRUE(rejects(checkGemmShape(a), "n and k must be in [1, "));
  }
}

TEST(GemmArgChecks, NullAndMisalignedPointersAreNamed) {
  GemmArgs a = validGemm();
  a.w = nullptr;
  EXPECT_TRUE(rejects(checkGemmPointers(a), "ep=2): w is NULL"));
  a = validGemm();
  a.residual = nullptr;
  EXPECT_TRUE(rejects(checkGemmPointers(a),
                      "residual is NULL (layerscale_residual needs scale "
                      "and residual)"));
  // Without the LayerScale epilogue, scale and residual are not read.
  a.ep = MOSS_EPILOGUE_GELU;
  a.scale = nullptr;
  EXPECT_TRUE(checkGemmPointers(a).ok());
  a = validGemm();
  a.x = at(0x10001);
  EXPECT_TRUE(rejects(checkGemmPointers(a), "x = 0x10001 is not 2-byte "
                                            "aligned (bf16)"));
}

TEST(GemmArgChecks, OutMayTouchButNotOverlapItsInputs) {
  GemmArgs a = validGemm();
  // x is m * k * 2 = 128 bytes: out right after it is fine, one element
  // earlier is not.
  a.out = mutableAt(0x10000 + 128);
  EXPECT_TRUE(checkGemmPointers(a).ok());
  a.out = mutableAt(0x10000 + 126);
  EXPECT_TRUE(rejects(checkGemmPointers(a), "out overlaps x (in-place GEMMs "
                                            "are not supported)"));
  a = validGemm();
  a.out = mutableAt(0x40000 - 2); // 64 bytes of out reach into residual
  EXPECT_TRUE(rejects(checkGemmPointers(a), "out overlaps residual"));
}

TEST(GemmArgChecks, RowLiveBytesAreCheckedOnlyWhereRead) {
  GemmArgs a = validGemm();
  // One byte a row, any alignment; out (64 bytes at 0x50000) may end where
  // live starts but not run into it.
  a.rowLive = at(0x50000 + 64 + 1);
  EXPECT_TRUE(checkGemmPointers(a).ok()) << checkGemmPointers(a).message;
  EXPECT_TRUE(gemmPointersAligned16(a));
  a.rowLive = at(0x50000 + 62);
  EXPECT_TRUE(rejects(checkGemmPointers(a), "out overlaps live"));
  a.rowLive = at(kTop - 3); // m = 4 bytes would end at 2^64
  EXPECT_TRUE(rejects(checkGemmPointers(a),
                      "live runs past the end of the address space"));
  a.rowLive = at(kTop - 4);
  EXPECT_TRUE(checkGemmPointers(a).ok());
  // Only layerscale_residual reads it: other epilogues ignore it.
  a.ep = MOSS_EPILOGUE_GELU;
  a.rowLive = at(0x50000);
  EXPECT_TRUE(checkGemmPointers(a).ok()) << checkGemmPointers(a).message;
}

TEST(GemmArgChecks, RangesPastTheAddressSpace) {
  GemmArgs a = validGemm();
  a.w = at(kTop - 255); // w's n * k * 2 = 256 bytes would end at 2^64
  EXPECT_TRUE(rejects(checkGemmPointers(a),
                      "w runs past the end of the address space"));
  a.w = at(kTop - 511);
  EXPECT_TRUE(checkGemmPointers(a).ok());
}

TEST(GemmArgChecks, GeneratedKernelsNeedSixteenByteAlignment) {
  GemmArgs a = validGemm();
  a.scale = at(0x30002);
  EXPECT_FALSE(gemmPointersAligned16(a));
  a.ep = MOSS_EPILOGUE_GELU; // scale unused: does not count
  EXPECT_TRUE(gemmPointersAligned16(a));
  a.out = mutableAt(0x50008);
  EXPECT_FALSE(gemmPointersAligned16(a));
}

// --- attention ---------------------------------------------------------------

/// B = 2, H = 3, T = 4, S = 32, contiguous, buffers 1 MiB apart.
moss_attention_args validAttention() {
  moss_attention_args a = {};
  a.B = 2, a.H = 3, a.T = 4, a.S = 32, a.D = 64;
  const int64_t q[4] = {3 * 4 * 64, 4 * 64, 64, 1};
  const int64_t kv[4] = {3 * 32 * 64, 32 * 64, 64, 1};
  for (int i = 0; i < 4; ++i)
    a.q_stride[i] = q[i], a.k_stride[i] = kv[i], a.v_stride[i] = kv[i];
  a.mask_stride[0] = 4 * 32, a.mask_stride[1] = 32, a.mask_stride[2] = 1;
  a.q = at(0x100000);
  a.k = at(0x200000);
  a.v = at(0x300000);
  a.mask = at(0x400000);
  a.out = mutableAt(0x500000);
  a.layout = MOSS_LAYOUT_BTHD;
  return a;
}

/// Bytes of v (and k) in validAttention: 2 * 3 * 32 * 64 bf16.
constexpr uintptr_t kKvBytes = 2 * 3 * 32 * 64 * 2;
/// Bytes of out: 2 * 3 * 4 * 64 bf16.
constexpr uintptr_t kOutBytes = 2 * 3 * 4 * 64 * 2;

TEST(AttentionArgChecks, ValidCallPasses) {
  moss_attention_args a = validAttention();
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a.layout = MOSS_LAYOUT_BHTD;
  a.scale = 0.5f;
  a.mask = at(0x400003); // the mask takes any alignment
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
}

TEST(AttentionArgChecks, SizesAndHeadDim) {
  moss_attention_args a = validAttention();
  a.T = 0;
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "moss_streaming_attention(B=2, H=3, T=0, S=32, D=64): "
                      "B, H, T, S and D must be in [1, 2147483647]"));
  a = validAttention();
  a.S = int64_t(INT32_MAX) + 1;
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "must be in [1, 2147483647]"));
  a = validAttention();
  a.D = 128;
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "D must be 64"));
}

TEST(AttentionArgChecks, PointersLayoutAndScale) {
  for (std::string name : {"q", "k", "v", "mask", "out"}) {
    moss_attention_args a = validAttention();
    if (name == "q")
      a.q = nullptr;
    else if (name == "k")
      a.k = nullptr;
    else if (name == "v")
      a.v = nullptr;
    else if (name == "mask")
      a.mask = nullptr;
    else
      a.out = nullptr;
    EXPECT_TRUE(rejects(checkAttentionArgs(a), name + " is NULL"));
  }
  moss_attention_args a = validAttention();
  a.v = at(0x300008);
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "v = 0x300008 is not 16-byte "
                                             "aligned"));
  a = validAttention();
  a.layout = static_cast<moss_layout_t>(2);
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "layout 2 is not 0 (BTHD) or 1"));
  for (float scale : {-1.f, std::nanf(""), INFINITY}) {
    a = validAttention();
    a.scale = scale;
    EXPECT_TRUE(rejects(checkAttentionArgs(a), "scale must be finite and >= 0"))
        << scale;
  }
}

TEST(AttentionArgChecks, Strides) {
  moss_attention_args a = validAttention();
  a.k_stride[1] = -64;
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "k stride 1 is negative"));
  a = validAttention();
  a.q_stride[3] = 2;
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "q must be contiguous in D (stride[3] == 1)"));
  a = validAttention();
  a.v_stride[2] = 68;
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "v stride 2 = 68 is not a multiple of 8 elements"));
  a = validAttention();
  a.mask_stride[2] = 3; // any stride of the mask
  a.mask_stride[0] = 0; // broadcast over the batch
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a.mask_stride[1] = -1;
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "mask stride 1 is negative"));
}

TEST(AttentionArgChecks, OutMayTouchButNotOverlapItsInputs) {
  moss_attention_args a = validAttention();
  a.out = mutableAt(0x300000 + kKvBytes); // right after v
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a.out = mutableAt(0x300000 + kKvBytes - 16);
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "out overlaps v"));
  a = validAttention();
  a.out = mutableAt(0x400000 - kOutBytes + 16); // its last 16 bytes on mask
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "out overlaps mask"));
  a.out = mutableAt(0x400000 - kOutBytes);
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
}

/// validAttention with the mask from positions: slot positions [2, 32] and
/// query positions [2, 4], int64, rows contiguous.
moss_attention_args positionsAttention() {
  moss_attention_args a = validAttention();
  a.mask = nullptr;
  a.slot_positions = static_cast<const int64_t *>(at(0x600000));
  a.slot_positions_stride_b = 32;
  a.query_positions = static_cast<const int64_t *>(at(0x700000));
  a.query_positions_stride_b = 4;
  return a;
}

TEST(AttentionArgChecks, MaskFromPositions) {
  moss_attention_args a = positionsAttention();
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a.slot_positions_stride_b = 0; // one table for every row
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a = positionsAttention();
  a.mask = at(0x400000);
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "mask and slot_positions/query_positions are both "
                      "given"));
  a = positionsAttention();
  a.query_positions = nullptr;
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "query_positions is NULL (the mask from positions "
                      "needs slot_positions and query_positions)"));
  a = positionsAttention();
  a.slot_positions = nullptr;
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "slot_positions is NULL"));
  a = positionsAttention();
  a.slot_positions = static_cast<const int64_t *>(at(0x600004));
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "slot_positions = 0x600004 is not 8-byte aligned"));
  a = positionsAttention();
  a.query_positions_stride_b = -4;
  EXPECT_TRUE(
      rejects(checkAttentionArgs(a), "query_positions_stride_b is negative"));
  a = positionsAttention();
  a.out = mutableAt(0x700000 - kOutBytes + 16); // 16 bytes on the positions
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "out overlaps query_positions"));
  a = positionsAttention();
  a.slot_positions = static_cast<const int64_t *>(at(kTop - 255));
  EXPECT_TRUE(rejects(checkAttentionArgs(a), "slot_positions strides run past "
                                             "the end of the address space"));
}

TEST(AttentionArgChecks, RangesPastTheAddressSpace) {
  moss_attention_args a = validAttention();
  a.k_stride[0] = INT64_MAX - 7; // batch 1 of k starts 2^64 - 16 bytes on
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "k strides run past the end of the address space"));
  a = validAttention();
  a.mask = at(kTop - 255); // its B * T * S = 256 bytes would end at 2^64
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "mask strides run past the end of the address space"));
  a.mask = at(kTop - 511);
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
  a = validAttention();
  a.out = mutableAt(kTop + 1 - kOutBytes);
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "out runs past the end of the address space"));
  a.out = mutableAt(kTop + 1 - 2 * kOutBytes);
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
}

TEST(AttentionArgChecks, SizesWhoseOutputBytesWouldWrapAreErrors) {
  // Every input broadcast (strides 0), so only out is large:
  // B * H * T * 64 * 2 bytes, past 2^64.
  moss_attention_args a = validAttention();
  a.B = a.H = a.T = INT32_MAX;
  for (int i = 0; i < 3; ++i)
    a.q_stride[i] = a.k_stride[i] = a.v_stride[i] = a.mask_stride[i] = 0;
  EXPECT_TRUE(rejects(checkAttentionArgs(a),
                      "out runs past the end of the address space"));
  // H * T * 128 bytes, about 2^60: large, but it fits.
  a.B = 1, a.H = int64_t(1) << 22;
  EXPECT_TRUE(checkAttentionArgs(a).ok()) << checkAttentionArgs(a).message;
}

} // namespace
