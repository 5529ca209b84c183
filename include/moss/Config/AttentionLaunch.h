//===- AttentionLaunch.h - Launch rule of the attention kernels -*- C++ -*-===//
//
// The one place that turns (B, H, T, S) into the launch of the generated
// streaming-attention kernels (docs/kernel-abi.md, "Attention kernel ABI"):
// warps per CTA, grid, split-KV count and workspace size. The compiler's host
// code mirrors it, the runtime calls it, the GPU test links it. No LLVM, no
// JSON: a stand-alone driver can compile this file directly.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_ATTENTIONLAUNCH_H
#define MOSS_CONFIG_ATTENTIONLAUNCH_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moss::config {

/// Kernel (file-name stem and symbol). One kernel: with splits > 1 the last
/// CTA of each (b, h, row block) merges the splits itself.
constexpr const char *kAttentionKernelName = "streaming_attention_d64";

/// Version of the 26-parameter ABI; the manifest's params.abi_version.
/// 2: split-KV merged in the kernel (workspace counters), no combine kernel.
constexpr int64_t kAttentionAbiVersion = 2;
constexpr int64_t kAttentionHeadDim = 64;     ///< D, fixed.
constexpr int64_t kAttentionKeysPerTile = 64; ///< keys per K/V tile.
constexpr int64_t kAttentionRowsPerWarp = 16; ///< query rows per warp (MMA m).
constexpr int64_t kAttentionMaxWarps = 4;     ///< main kernel: 32..128 thr.
/// FP32 values per (split, row) in the workspace: acc[64], then m and l.
constexpr int64_t kAttentionWorkspaceFloatsPerRow = 66;
/// Split-KV counters (int32) at the start of the workspace, one per (b*H + h,
/// row block): a fixed place, so a launch of one shape never finds another
/// shape's partials where its counters should be. The rule splits only while
/// B*H*gridY <= 132 * 7 / 2, far below this.
constexpr int64_t kAttentionCounters = 1024;
/// Split-KV rule: SMs of an H100/H200 and the kernel's resident CTAs per SM
/// for 1..4 warps (at most 168 registers a thread, __launch_bounds__(128, 3),
/// and 32 KiB of shared memory each). Splits pay while the grid leaves half
/// the GPU's CTA slots empty.
constexpr int64_t kAttentionSms = 132;
constexpr int64_t kAttentionMinCtasPerSm = 3; ///< at 4 warps (nvvm.minctasm).
constexpr int64_t kAttentionCtasPerSm[5] = {0, 7, 6, 4, 3};
constexpr int64_t kAttentionMaxSplits = 16;
/// Up to this many CTAs, a split may hold a single key tile.
constexpr int64_t kAttentionFewCtas = 32;

/// Parameter names of the attention kernel, in ABI order.
const std::vector<std::string> &attentionKernelArgNames();

/// The constants a generated attention kernel is built with, as recorded in
/// its manifest entry's "params": moss-aot writes them and the runtime
/// refuses a record whose values differ.
const std::map<std::string, int64_t> &attentionKernelParams();

struct AttentionLaunch {
  int64_t warps = 0;         ///< min(4, ceil(T / 16)).
  int64_t threads = 0;       ///< 32 * warps: blockDim.x of the main kernel.
  int64_t rowsPerCta = 0;    ///< 16 * warps query rows of one (b, h).
  int64_t gridX = 0;         ///< B * H.
  int64_t gridY = 0;         ///< ceil(T / rowsPerCta).
  int64_t keyTiles = 0;      ///< ceil(S / 64).
  int64_t tilesPerSplit = 0; ///< ceil(keyTiles / splits).
  int64_t splits = 0;        ///< gridDim.z; no split is empty.
  /// 1024 4-byte counters (zero before the first launch; the kernel leaves
  /// them zero), then splits * B*H*T * 66 * 4 bytes of partials; 0 when
  /// splits == 1.
  int64_t workspaceBytes = 0;
};

/// Split-KV count of the rule, for sizes >= 1: with slots = 132 * CTAs per SM
/// (by warps) and ctas = B*H*ceil(T / rowsPerCta), 1 when keyTiles <= 2, else
/// max(1, min(ceil(keyTiles / minTps), floor(slots / (2 ctas)), 16)) with
/// minTps = 1 for at most 32 CTAs, else 2. Every split pays a merge (a fence,
/// an atomic and the last CTA's reads), so splits must save more than one
/// tile each unless the grid is tiny; fitted to a sweep of the decoder's
/// short-chunk cases on an H200 (benchmarks/results/2026-12-03-h200).
int64_t chooseAttentionSplits(int64_t b, int64_t h, int64_t t, int64_t s);

/// Fills `out` for sizes >= 1. `splits` = 0 applies chooseAttentionSplits;
/// a positive value is used instead, reduced so that no split is empty
/// (splits = ceil(keyTiles / ceil(keyTiles / splits))). Fails, with the
/// reason in `err`, on sizes < 1, a grid past CUDA's limits, or a forced split
/// of more (b, h, row block)s than there are counters.
bool deriveAttentionLaunch(int64_t b, int64_t h, int64_t t, int64_t s,
                           int64_t splits, AttentionLaunch &out,
                           std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_ATTENTIONLAUNCH_H
