//===- AttentionLaunch.cpp - Launch rule of the attention kernels ---------===//

#include "moss/Config/AttentionLaunch.h"

#include <algorithm>
#include <cstdint>

namespace moss::config {

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
} // namespace

const std::map<std::string, int64_t> &attentionKernelParams() {
  static const std::map<std::string, int64_t> params = {
      {"abi_version", kAttentionAbiVersion},
      {"head_dim", kAttentionHeadDim},
      {"keys_per_tile", kAttentionKeysPerTile},
      {"rows_per_warp", kAttentionRowsPerWarp},
      {"max_warps", kAttentionMaxWarps},
      {"workspace_floats_per_row", kAttentionWorkspaceFloatsPerRow},
      {"counters", kAttentionCounters},
      {"min_ctas_per_sm", kAttentionMinCtasPerSm},
      {"sms", kAttentionSms},
      {"max_splits", kAttentionMaxSplits}};
  return params;
}

const std::vector<std::string> &attentionKernelArgNames() {
  static const std::vector<std::string> names = {"q",
                                                 "k",
                                                 "v",
                                                 "mask",
                                                 "out",
                                                 "workspace",
                                                 "q_stride_b",
                                                 "q_stride_h",
                                                 "q_stride_t",
                                                 "k_stride_b",
                                                 "k_stride_h",
                                                 "k_stride_s",
                                                 "v_stride_b",
                                                 "v_stride_h",
                                                 "v_stride_s",
                                                 "mask_stride_b",
                                                 "mask_stride_t",
                                                 "mask_stride_s",
                                                 "B",
                                                 "H",
                                                 "T",
                                                 "S",
                                                 "scale",
                                                 "layout",
                                                 "skip_empty_tiles",
                                                 "splits"};
  return names;
}

int64_t chooseAttentionSplits(int64_t b, int64_t h, int64_t t, int64_t s) {
  int64_t warps =
      std::min(kAttentionMaxWarps, ceilDiv(t, kAttentionRowsPerWarp));
  int64_t ctas = b * h * ceilDiv(t, kAttentionRowsPerWarp * warps);
  int64_t slots = kAttentionSms * kAttentionCtasPerSm[warps];
  int64_t tiles = ceilDiv(s, kAttentionKeysPerTile);
  if (tiles <= 2)
    return 1;
  int64_t bound = slots / (2 * ctas);
  int64_t minTilesPerSplit = ctas <= kAttentionFewCtas ? 1 : 2;
  return std::max<int64_t>(1, std::min({ceilDiv(tiles, minTilesPerSplit), bound,
                                        kAttentionMaxSplits}));
}

bool deriveAttentionLaunch(int64_t b, int64_t h, int64_t t, int64_t s,
                           int64_t splits, AttentionLaunch &out,
                           std::string &err) {
  const std::pair<const char *, int64_t> sizes[] = {
      {"B", b}, {"H", h}, {"T", t}, {"S", s}};
  for (const auto &[name, value] : sizes) {
    if (value < 1 || value > kMaxGridX) {
      err = std::string(name) + " = " + std::to_string(value) +
            " must be in [1, 2147483647]";
      return false;
    }
  }
  if (splits < 0) {
    err = "splits = " + std::to_string(splits) + " must be >= 0 (0 = rule)";
    return false;
  }
  AttentionLaunch launch;
  launch.warps =
      std::min(kAttentionMaxWarps, ceilDiv(t, kAttentionRowsPerWarp));
  launch.threads = 32 * launch.warps;
  launch.rowsPerCta = kAttentionRowsPerWarp * launch.warps;
  launch.gridY = ceilDiv(t, launch.rowsPerCta);
  if (b > kMaxGridX / h) {
    err = "B * H = " + std::to_string(b) + " * " + std::to_string(h) +
          " exceeds the grid limit 2147483647";
    return false;
  }
  launch.gridX = b * h;
  if (launch.gridY > kMaxGridYZ) {
    err = "T = " + std::to_string(t) + " needs " +
          std::to_string(launch.gridY) + " row blocks, more than 65535";
    return false;
  }
  launch.keyTiles = ceilDiv(s, kAttentionKeysPerTile);
  int64_t wanted = splits ? splits : chooseAttentionSplits(b, h, t, s);
  wanted = std::min(wanted, launch.keyTiles);
  launch.tilesPerSplit = ceilDiv(launch.keyTiles, wanted);
  launch.splits = ceilDiv(launch.keyTiles, launch.tilesPerSplit);
  if (launch.splits > 1) {
    // B*H*T rows of the workspace, in 64 bits.
    int64_t rows = launch.gridX;
    if (rows > INT64_MAX / t) {
      err = "B * H * T overflows 64 bits";
      return false;
    }
    rows *= t;
    int64_t perSplit = kAttentionWorkspaceFloatsPerRow * 4;
    if (launch.gridX * launch.gridY > kAttentionCounters) {
      err = "split-KV over B * H * row blocks = " +
            std::to_string(launch.gridX * launch.gridY) + " needs more than " +
            std::to_string(kAttentionCounters) + " counters (use splits = 1)";
      return false;
    }
    int64_t counterBytes = kAttentionCounters * 4;
    if (rows > (INT64_MAX - counterBytes) / perSplit / launch.splits) {
      err = "the split-KV workspace size overflows 64 bits";
      return false;
    }
    launch.workspaceBytes = counterBytes + launch.splits * rows * perSplit;
  }
  out = launch;
  return true;
}

} // namespace moss::config
