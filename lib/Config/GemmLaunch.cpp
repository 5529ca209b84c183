//===- GemmLaunch.cpp - Tile legality and launch shape of a GEMM ----------===//

#include "moss/Config/GemmLaunch.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace moss::config {

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Sizes the generated kernel is written for.
constexpr std::array<int64_t, 7> kSupportedBm = {1, 2, 4, 8, 16, 32, 64};
constexpr std::array<int64_t, 5> kSupportedBn = {16, 32, 64, 128, 256};
constexpr std::array<int64_t, 4> kSupportedBk = {32, 64, 128, 256};

template <size_t N>
bool isOneOf(int64_t v, const std::array<int64_t, N> &allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

template <size_t N>
std::string listText(const std::array<int64_t, N> &allowed) {
  std::string text = "{";
  for (int64_t v : allowed) {
    if (text.size() > 1)
      text += ",";
    text += std::to_string(v);
  }
  return text + "}";
}

std::string field(const char *name, int64_t v) {
  return std::string("tile ") + name + "=" + std::to_string(v);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

bool deriveGemmLaunch(int64_t n, int64_t k, int mode, const GemmTile &tile,
                      GemmLaunch &out, std::string &err) {
  const GemmModeInfo *modeInfo = gemmModeInfo(mode);
  if (!modeInfo) {
    err = "mode " + std::to_string(mode) + " is unknown (expected " +
          gemmModeList() + ")";
    return false;
  }
  // Bounded above too: the shared-memory sizes below multiply K.
  const std::pair<const char *, int64_t> sizes[] = {{"N", n}, {"K", k}};
  for (const auto &[name, value] : sizes) {
    if (value < 1 || value > kMaxGemmDim) {
      err = std::string(name) + " = " + std::to_string(value) +
            " must be in [1, " + std::to_string(kMaxGemmDim) + "]";
      return false;
    }
  }
  const std::pair<const char *, int64_t> fields[] = {
      {"bm", tile.bm}, {"bn", tile.bn}, {"bk", tile.bk}, {"split", tile.split}};
  for (const auto &[name, value] : fields) {
    if (value < 1) {
      err = field(name, value) + " must be >= 1";
      return false;
    }
  }
  for (const auto &[name, value] : fields) {
    if (!isPowerOfTwo(value)) {
      err = field(name, value) + " is not a power of two";
      return false;
    }
  }

  int64_t bkTimesSplit = 0;
  bool overflows = __builtin_mul_overflow(tile.bk, tile.split, &bkTimesSplit);
  if (overflows || bkTimesSplit > k) {
    std::string product =
        overflows ? std::to_string(tile.bk) + "*" + std::to_string(tile.split)
                  : std::to_string(bkTimesSplit);
    err = "bk*split = " + product + " exceeds K = " + std::to_string(k);
    return false;
  }
  if (k % bkTimesSplit != 0) {
    err = "K = " + std::to_string(k) +
          " is not a multiple of bk*split = " + std::to_string(bkTimesSplit);
    return false;
  }
  if (n % tile.bn != 0) {
    err = "N = " + std::to_string(n) +
          " is not a multiple of bn = " + std::to_string(tile.bn);
    return false;
  }
  if (modeInfo->epilogue == kGemmEpilogueRopeCache &&
      (n % 3 != 0 || (n / 3) % kRopeHeadDim != 0)) {
    err = "N = " + std::to_string(n) + " is not 3 * d with d a multiple of " +
          std::to_string(kRopeHeadDim) + " (mode " + modeInfo->name +
          ": q, k and v of whole heads)";
    return false;
  }
  if (k % 8 != 0) {
    err = "K = " + std::to_string(k) +
          " is not a multiple of 8 (16-byte bf16 loads)";
    return false;
  }

  if (!isOneOf(tile.bm, kSupportedBm)) {
    err = field("bm", tile.bm) + " is not supported (expected one of " +
          listText(kSupportedBm) + ")";
    return false;
  }
  if (!isOneOf(tile.bn, kSupportedBn)) {
    err = field("bn", tile.bn) + " is not supported (expected one of " +
          listText(kSupportedBn) + ")";
    return false;
  }
  if (!isOneOf(tile.bk, kSupportedBk)) {
    err = field("bk", tile.bk) + " is not supported (expected one of " +
          listText(kSupportedBk) + ")";
    return false;
  }

  if (tile.split > kGemmMaxSplit) {
    err = field("split", tile.split) + " exceeds " +
          std::to_string(kGemmMaxSplit) +
          " (the split-K CTAs of a tile form one thread-block cluster)";
    return false;
  }

  GemmLaunch launch;
  launch.kPerCta = k / tile.split;
  // Copy stages: the bk blocks of the slice in at most kGemmMaxStages equal
  // groups (the largest divisor of the block count that fits).
  const int64_t blocks = launch.kPerCta / tile.bk;
  launch.stages = std::min(blocks, kGemmMaxStages);
  while (blocks % launch.stages != 0)
    --launch.stages;
  launch.stageK = launch.kPerCta / launch.stages;
  const int64_t chunksPerStage = launch.stageK / 32;
  // Warpgroup MMAs read both operands from shared memory in 128-byte
  // swizzle atoms of 64 k. bm = 64: x is A (64 rows), W is B (N = bn).
  // bn >= 64 (bm <= 32): W is A (64 rows a warpgroup), x is B (N = bm8),
  // the operand swap of the mma.sync kernels; bn >= 128 only where K/split
  // is whole atoms, else they stay on mma.sync as before.
  launch.wgmma = tile.bm == 64 || tile.bn == 64 ||
                 (tile.bn >= 128 && launch.kPerCta % 64 == 0);
  launch.wgmmaWeightsA = launch.wgmma && tile.bm < 64;
  if (launch.wgmma && launch.kPerCta % 64 != 0) {
    err = std::string(launch.wgmmaWeightsA ? "bn = 64" : "bm = 64") +
          " (wgmma) needs K/split = " + std::to_string(launch.kPerCta) +
          " to be a multiple of 64 (128-byte swizzle atoms of 64 k)";
    return false;
  }
  if (launch.wgmma) {
    // One warpgroup covers the MMA's 64 rows (x's), or each 64 of W's when
    // W is A (warp w of warpgroup n then holds the partial rows of warp
    // 4n + w % 4 of warps_n = bn / 16); a second set of them along K when a
    // stage's chunks split evenly and the CTA stays within 16 warps.
    launch.wgmmaGroupsN = launch.wgmmaWeightsA ? tile.bn / 64 : 1;
    launch.warpsN = launch.wgmmaWeightsA ? tile.bn / 16 : 1;
    launch.warpsK =
        chunksPerStage % 2 == 0 && 8 * launch.wgmmaGroupsN <= kGemmMaxWarps ? 2
                                                                            : 1;
    launch.warps = 4 * launch.wgmmaGroupsN * launch.warpsK;
  } else {
    launch.warpsN = tile.bn / 16;
    launch.warpsK =
        std::min(launch.kPerCta / 32, std::max<int64_t>(1, 8 / launch.warpsN));
    launch.warps = launch.warpsN * launch.warpsK;
  }
  if (launch.warps > kGemmMaxWarps) {
    err = "warps = warps_n*warps_k = " + std::to_string(launch.warpsN) + "*" +
          std::to_string(launch.warpsK) + " = " + std::to_string(launch.warps) +
          " exceeds " + std::to_string(kGemmMaxWarps) + " (512 threads)";
    return false;
  }
  launch.threads = 32 * launch.warps;
  launch.bm8 = 8 * ceilDiv(tile.bm, 8);
  // A row stride of 16 (mod 32) words puts the 8 lanes of a 16-byte shared
  // load phase (2 rows x 4 k groups) on 32 distinct banks. The wgmma layout
  // needs no padding: its 128-byte swizzle spreads the banks.
  launch.slabRowElems =
      launch.kPerCta +
      (!launch.wgmma && (launch.kPerCta / 2) % 32 == 0 ? 32 : 0);
  launch.slabBytes = (tile.bn + launch.bm8) * launch.slabRowElems * 2;
  launch.partialRowFloats = tile.bn + kGemmPartialRowPad;
  launch.partialBytes =
      launch.warpsK * launch.bm8 * launch.partialRowFloats * 4;
  launch.sharedBytes = std::max(launch.slabBytes, launch.partialBytes);
  if (tile.split > 1) {
    const int64_t items = launch.bm8 * tile.bn / 8;
    launch.shareItems = ceilDiv(items, tile.split);
    launch.recvOffset = ceilDiv(launch.sharedBytes, 16) * 16;
    // Many ranks with large shares: one bulk copy per rank beats an
    // st.async per item; the send area must fit in the dead slab.
    const int64_t sendOffset = ceilDiv(launch.partialBytes, 16) * 16;
    launch.bulkHandover =
        tile.split >= kGemmBulkHandoverMinSplit &&
        launch.shareItems * 32 >= kGemmBulkHandoverMinShareBytes &&
        sendOffset + items * 32 <= launch.recvOffset;
    launch.sendOffset = launch.bulkHandover ? sendOffset : 0;
    launch.recvBarrierOffset =
        launch.recvOffset + tile.split * launch.shareItems * 8 * 4;
    launch.sharedBytes = launch.recvBarrierOffset + 8;
  }
  launch.layerNorm = modeInfo->layerNorm;
  if (launch.layerNorm) {
    launch.statsOffset = ceilDiv(launch.sharedBytes, 16) * 16;
    launch.sharedBytes = launch.statsOffset + tile.split * launch.bm8 * 8;
  }
  if (launch.sharedBytes > kGemmMaxSharedBytes) {
    err = "shared memory max((bn+bm8)*(K/split+pad)*2, warps_k*bm8*(bn+4)*4) "
          "= max(" +
          std::to_string(launch.slabBytes) + ", " +
          std::to_string(launch.partialBytes) + ")" +
          (tile.split > 1
               ? std::string(" + split-K receive slots") +
                     (launch.layerNorm ? ", mbarrier and row statistics "
                                       : " and mbarrier ") +
                     std::to_string(launch.sharedBytes - launch.recvOffset)
           : launch.layerNorm
               ? " + row statistics " +
                     std::to_string(launch.sharedBytes - launch.statsOffset)
               : std::string()) +
          " = " + std::to_string(launch.sharedBytes) +
          " bytes exceeds 227 KiB (" + std::to_string(kGemmMaxSharedBytes) +
          ")";
    return false;
  }
  launch.gridX = n / tile.bn;
  launch.gridYPerM = tile.bm;
  launch.gridZ = tile.split;
  out = launch;
  return true;
}

bool sameGemmLaunch(const GemmLaunch &a, const GemmLaunch &b) {
  auto fields = [](const GemmLaunch &l) {
    return std::make_tuple(l.wgmma, l.wgmmaWeightsA, l.wgmmaGroupsN, l.warpsN,
                           l.warpsK, l.warps, l.threads, l.kPerCta, l.stages,
                           l.stageK, l.bm8, l.slabRowElems, l.slabBytes,
                           l.partialRowFloats, l.partialBytes, l.shareItems,
                           l.recvOffset, l.recvBarrierOffset, l.bulkHandover,
                           l.sendOffset, l.layerNorm, l.statsOffset,
                           l.sharedBytes, l.gridX, l.gridYPerM, l.gridZ);
  };
  return fields(a) == fields(b);
}

bool sameGemmKernel(int64_t n, int64_t k, int mode, const GemmTile &a,
                    const GemmTile &b) {
  GemmLaunch la, lb;
  std::string err;
  return deriveGemmLaunch(n, k, mode, a, la, err) &&
         deriveGemmLaunch(n, k, mode, b, lb, err) && sameGemmLaunch(la, lb);
}

bool checkTileLegal(int64_t n, int64_t k, int mode, const GemmTile &tile,
                    std::string &err) {
  GemmLaunch unused;
  return deriveGemmLaunch(n, k, mode, tile, unused, err);
}

} // namespace moss::config
