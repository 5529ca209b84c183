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
/// the number of K slices reduced by a second kernel when split > 1.
struct GemmTile {
  int64_t bm = 0, bn = 0, bk = 0, split = 0;
};

/// Shared memory a generated GEMM may use (FP32 partial tiles).
constexpr int64_t kGemmMaxSharedBytes = 48 * 1024;
/// 16-byte loads in flight per thread before the tile spills registers.
constexpr int64_t kGemmMaxLoadsInFlight = 32;
constexpr int64_t kGemmMaxWarps = 16;

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
  int64_t reduceThreads = 0; ///< max(32, bm8 * bn / 8); 0 when split == 1.
  int64_t workspaceBytesPerRow = 0; ///< split * N * 4; 0 when split == 1.
};

/// Checks that `tile` is buildable for a GEMM with the given N and K and fills
/// `out`. On failure returns false, leaves `out` untouched and sets `err` to
/// the reason, naming expected and found values (e.g. "tile bn=48 is not a
/// power of two", "bk*split = 1024 exceeds K = 768"), without a file prefix.
bool deriveGemmLaunch(int64_t n, int64_t k, const GemmTile &tile,
                      GemmLaunch &out, std::string &err);

/// deriveGemmLaunch without the launch shape.
bool checkTileLegal(int64_t n, int64_t k, const GemmTile &tile,
                    std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_GEMMLAUNCH_H
