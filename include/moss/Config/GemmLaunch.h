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

#include <cstdint>
#include <string>

namespace moss::config {

/// One whitelist value: rows (M), columns (N) and K depth of a CTA tile, and
/// the number of K slices (CTAs along gridDim.z) when split > 1; the last CTA
/// of an output tile to finish reduces the slices inside the same kernel.
struct GemmTile {
  int64_t bm = 0, bn = 0, bk = 0, split = 0;
};

/// Shared memory a generated GEMM may use (FP32 partial tiles).
constexpr int64_t kGemmMaxSharedBytes = 48 * 1024;
/// 16-byte loads in flight per thread before the tile spills registers.
constexpr int64_t kGemmMaxLoadsInFlight = 32;
constexpr int64_t kGemmMaxWarps = 16;
/// Split-K arrival counters (u32, one per output tile) at the start of the
/// workspace; the FP32 partials follow them. A call may have at most this
/// many output tiles (gridDim.x * gridDim.y) when split > 1.
constexpr int64_t kGemmSplitCounters = 16384;
constexpr int64_t kGemmSplitCounterBytes = 4 * kGemmSplitCounters;

struct GemmLaunch {
  int64_t warpsN = 0;        ///< bn / 16: each warp owns 16 n rows.
  int64_t warpsK = 0;        ///< min(kBlocksPerCta, max(1, 8 / warpsN)).
  int64_t warps = 0;         ///< warpsN * warpsK (<= 16).
  int64_t threads = 0;       ///< 32 * warps: blockDim.x of the main kernel.
  int64_t kBlocksPerCta = 0; ///< K / (bk * split): bk blocks per CTA.
  int64_t bm8 = 0;           ///< 8 * ceil(bm / 8): rows of the m8 tiles.
  int64_t sharedBytes = 0;   ///< warpsK * bm8 * bn * 4 (static shared).
  int64_t gridX = 0;         ///< N / bn.
  int64_t gridYPerM = 0;     ///< bm: gridDim.y = ceil(m / gridYPerM).
  int64_t gridZ = 0;         ///< split.
  int64_t workspaceBytesPerRow = 0; ///< split * N * 4; 0 when split == 1.
  /// kGemmSplitCounterBytes when split > 1 (the counters), else 0.
  int64_t workspaceFixedBytes = 0;
};

/// Checks that `tile` is buildable for a GEMM with the given N and K and fills
/// `out`. On failure returns false, leaves `out` untouched and sets `err` to
/// the reason, naming expected and found values (e.g. "tile bn=48 is not a
/// power of two", "bk*split = 1024 exceeds K = 768"), without a file prefix.
bool deriveGemmLaunch(int64_t n, int64_t k, const GemmTile &tile,
                      GemmLaunch &out, std::string &err);

/// Output tiles of a call with m rows: gridX * ceil(m / bm).
int64_t gemmOutputTiles(const GemmLaunch &launch, int64_t m);

/// Workspace bytes a call with m rows needs: workspaceFixedBytes +
/// m * workspaceBytesPerRow (0 when split == 1).
int64_t gemmWorkspaceBytes(const GemmLaunch &launch, int64_t m);

/// For split > 1, checks that a call with m >= 1 rows has at most
/// kGemmSplitCounters output tiles (one arrival counter each); always true
/// when split == 1. `err` names the numbers, without a file prefix.
bool checkSplitRows(const GemmLaunch &launch, int64_t m, std::string &err);

/// deriveGemmLaunch without the launch shape.
bool checkTileLegal(int64_t n, int64_t k, const GemmTile &tile,
                    std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_GEMMLAUNCH_H
