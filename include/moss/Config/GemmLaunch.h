//===- GemmLaunch.h - Tile legality and launch shape of a GEMM -*- C++ -*-===//
//
// The one place that turns a whitelist tile [bm, bn, bk, split] into the
// generated kernel's warp layout and launch configuration (docs/kernel-abi.md,
// "Generated GEMM constraints"). The compiler builds kernels from it and the
// whitelist validator rejects tiles it cannot build, so both always agree.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_GEMMLAUNCH_H
#define MOSS_CONFIG_GEMMLAUNCH_H

#include "moss/Config/GemmMode.h"

#include <cstdint>
#include <string>

namespace moss::config {

/// One whitelist value: rows (M), columns (N) of a CTA tile, the K depth of
/// one copy stage, and the number of K slices (CTAs of one thread-block
/// cluster along gridDim.z) when split > 1; the cluster reduces the slices
/// through distributed shared memory inside the same kernel.
struct GemmTile {
  int64_t bm = 0, bn = 0, bk = 0, split = 0;
  bool operator==(const GemmTile &o) const {
    return bm == o.bm && bn == o.bn && bk == o.bk && split == o.split;
  }
};

/// Largest M, N or K a key may name (m is passed to kernels as int32).
constexpr int64_t kMaxGemmDim = 2147483647;

/// Dynamic shared memory one CTA may use on sm_90 (227 KiB).
constexpr int64_t kGemmMaxSharedBytes = 227 * 1024;
constexpr int64_t kGemmMaxWarps = 16;
/// cp.async groups (stages) per CTA at most: the waits are unrolled, one per
/// stage, and a stage of a few bk blocks is already deep enough.
constexpr int64_t kGemmMaxStages = 8;
/// Largest portable thread-block cluster: the split-K CTAs of one tile.
constexpr int64_t kGemmMaxSplit = 8;
/// Split-K hand-over by bulk copies (GemmLaunch::bulkHandover): from this
/// many ranks and this many bytes a rank finishes: below them the bulk
/// engine's start-up outweighs the per-item st.async it replaces.
constexpr int64_t kGemmBulkHandoverMinSplit = 4;
constexpr int64_t kGemmBulkHandoverMinShareBytes = 2048;
/// Padding (floats) of each row of the FP32 partial tiles: lane (g, t) writes
/// row 2t, column g, so a row stride of bn + 4 puts the four t's 8 banks apart
/// and the warp's 32 stores hit 32 distinct banks. Keeps 16-byte alignment.
constexpr int64_t kGemmPartialRowPad = 4;

/// What a tile derives to for a given (N, K): the kernel's shape and its
/// launch. sameGemmLaunch compares every field; a new field goes there too.
struct GemmLaunch {
  /// Warpgroup MMAs (wgmma.mma_async m64nNk16) read x and W straight from
  /// shared memory, stored K-major with the 128-byte swizzle (K/split a
  /// multiple of 64). bm == 64: x is A, W is B (N = bn). bn >= 64 (bm <= 32,
  /// `wgmmaWeightsA`): W is A, x is B (N = bm8), one warpgroup for each 64
  /// W rows. Either way each of `warpsK` sets of warpgroups takes every
  /// warpsK-th 32-wide chunk of a stage.
  bool wgmma = false;
  bool wgmmaWeightsA = false;
  /// wgmma: warpgroups along N (bn / 64 when W is A, else 1).
  int64_t wgmmaGroupsN = 0;
  int64_t warpsN = 0;  ///< bn / 16: each warp owns 16 n rows (1 with wgmma
                       ///< and bm == 64).
  int64_t warpsK = 0;  ///< min(kPerCta / 32, max(1, 8 / warpsN)); with wgmma
                       ///< the warpgroup sets along K: 2 when a stage's chunk
                       ///< count is even and 8 * wgmmaGroupsN <= 16, else 1.
                       ///< Also the number of partial tiles.
  int64_t warps = 0;   ///< warpsN * warpsK (<= 16); with wgmma
                       ///< 4 * wgmmaGroupsN * warpsK.
  int64_t threads = 0; ///< 32 * warps: blockDim.x.
  int64_t kPerCta = 0; ///< K / split: the CTA's K slice.
  int64_t stages = 0;  ///< cp.async groups: largest divisor of kPerCta/bk
                       ///< that is <= kGemmMaxStages.
  int64_t stageK = 0;  ///< kPerCta / stages: k per stage (bk multiple).
  int64_t bm8 = 0;     ///< 8 * ceil(bm / 8): rows of the m8 tiles.
  int64_t slabRowElems = 0;     ///< bf16 per shared row: kPerCta + bank pad.
  int64_t slabBytes = 0;        ///< (bn + bm8) * slabRowElems * 2: W then x
                                ///< (rows unpadded with wgmma).
  int64_t partialRowFloats = 0; ///< bn + kGemmPartialRowPad.
  int64_t partialBytes = 0;     ///< warpsK * bm8 * partialRowFloats * 4 (FP32).
  /// split > 1: the items ((row, 8 columns) groups of the tile) each rank
  /// finishes, ceil(bm8 * bn / 8 / split); rank r finishes items
  /// [r * shareItems, (r + 1) * shareItems).
  int64_t shareItems = 0;
  /// split > 1: the receive area after max(slabBytes, partialBytes): slot z
  /// holds rank z's sums of this rank's items (shareItems * 8 floats), pushed
  /// by rank z with st.async; then the 8-byte mbarrier they complete.
  int64_t recvOffset = 0;
  int64_t recvBarrierOffset = 0;
  /// split > 1: each rank writes the sums of the other ranks' items into a
  /// send area (items * 32 bytes at sendOffset, after the partial tiles in
  /// the slab that the MMAs no longer read) and hands each rank its share
  /// with one cp.async.bulk, instead of an st.async per item. Set where
  /// split >= kGemmBulkHandoverMinSplit, shareItems * 32 >=
  /// kGemmBulkHandoverMinShareBytes and the send area fits below recvOffset.
  bool bulkHandover = false;
  int64_t sendOffset = 0;
  /// The mode's LayerNorm prologue: x comes into the slab by plain loads
  /// (its row statistics are needed before the first MMA) and is normalised
  /// in place. Rank z (0 without split-K) stores the (mean, M2) of its K
  /// slice of tile row r, two floats, into slot z * bm8 + r of the stats
  /// area at statsOffset (after everything above, 16-byte aligned; split *
  /// bm8 * 8 bytes); with split > 1 into every rank's, since each needs the
  /// statistics of whole rows.
  bool layerNorm = false;
  int64_t statsOffset = 0;
  int64_t sharedBytes = 0; ///< max(slabBytes, partialBytes) (+ receive
                           ///< area and mbarrier with split > 1): dynamic.
  int64_t gridX = 0;       ///< N / bn.
  int64_t gridYPerM = 0;   ///< bm: gridDim.y = ceil(m / gridYPerM).
  int64_t gridZ = 0;       ///< split; also the cluster's z extent.
};

/// Checks that `tile` is buildable for a GEMM with the given N, K (each in
/// [1, kMaxGemmDim]) and mode (GemmMode.h) and fills `out`. On failure returns
/// false, leaves `out` untouched and sets `err` to the reason, naming expected
/// and found values (e.g. "tile bn=48 is not a power of two", "bk*split = 1024
/// exceeds K = 768"), without a file prefix.
bool deriveGemmLaunch(int64_t n, int64_t k, int mode, const GemmTile &tile,
                      GemmLaunch &out, std::string &err);

/// Whether two launches agree in every field (a field added to GemmLaunch
/// goes into this comparison too).
bool sameGemmLaunch(const GemmLaunch &a, const GemmLaunch &b);

/// Whether two tiles, both legal for (n, k), build the same kernel: their
/// launches agree in every field (sameGemmLaunch). bk enters a kernel only
/// through the copy stages it divides the K slice into, so tiles that differ in
/// bk alone are often the same kernel (K = 1280, split 1: bk 64, 128 and 256
/// all give 5 stages of 256).
bool sameGemmKernel(int64_t n, int64_t k, int mode, const GemmTile &a,
                    const GemmTile &b);

/// deriveGemmLaunch without the launch shape.
bool checkTileLegal(int64_t n, int64_t k, int mode, const GemmTile &tile,
                    std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_GEMMLAUNCH_H
