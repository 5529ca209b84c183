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
      {"min_ctas_per_sm", kAttentionMinCtasPerSm},
      {"grouped_min_ctas_per_sm", kAttentionGroupedMinCtasPerSm},
      {"sms", kAttentionSms},
      {"max_splits", kAttentionMaxSplits},
      {"max_kv_groups", kAttentionMaxKvGroups},
      {"max_shared_bytes", kAttentionMaxSharedBytes}};
  return params;
}

const std::vector<std::string> &attentionKernelArgNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const AttentionParamInfo &param : kAttentionParams)
      out.push_back(param.name);
    return out;
  }();
  return names;
}

int64_t attentionStages(int64_t kvGroups) { return kvGroups <= 2 ? 2 : 1; }

int64_t attentionMergeBytes(int64_t kvGroups, int64_t rowWarps,
                            int64_t splits) {
  const bool split = splits > 1;
  return (kvGroups - 1 + (split ? splits : 0)) * rowWarps *
             kAttentionMergeBytesPerWarp +
         (split ? kAttentionMergeBarrierBytes : 0);
}

int64_t attentionMinCtasPerSm(int64_t kvGroups) {
  return kvGroups == 1 ? kAttentionMinCtasPerSm : kAttentionGroupedMinCtasPerSm;
}

bool attentionHasCopyWarps(int64_t kvGroups) {
  return kvGroups == 2 || kvGroups == 3;
}

bool attentionHasTmaCopies(int64_t kvGroups, bool split) {
  return kvGroups != 3 && !split;
}

namespace {
int64_t maskFunctionIndex(int64_t kvGroups, bool split, bool tma,
                          bool splitKv) {
  if (splitKv) // g4_tma_kv (ABI 14), last.
    return tma && kvGroups == 4 && !split ? kAttentionMaskFunctions - 1 : -1;
  if (tma) {
    if (!attentionHasTmaCopies(kvGroups, split))
      return -1;
    // After the split functions: g4_tma, g2_tma (ABI 12), g1_tma (13).
    return 2 * kAttentionMaxKvGroups + (kvGroups == 4 ? 0 : 3 - kvGroups);
  }
  return (split ? kAttentionMaxKvGroups : 0) + kvGroups - 1;
}
} // namespace

int64_t attentionFunctionIndex(int64_t kvGroups, bool split, bool tma,
                               bool splitKv, bool positions) {
  int64_t index = maskFunctionIndex(kvGroups, split, tma, splitKv);
  return index < 0 || !positions ? index : index + kAttentionMaskFunctions;
}

AttentionFunction attentionFunctionAt(int64_t index) {
  if (index >= kAttentionMaskFunctions) {
    AttentionFunction f = attentionFunctionAt(index - kAttentionMaskFunctions);
    f.positions = true;
    return f;
  }
  if (index == 2 * kAttentionMaxKvGroups)
    return {4, false, true};
  if (index == 2 * kAttentionMaxKvGroups + 1)
    return {2, false, true};
  if (index == 2 * kAttentionMaxKvGroups + 2)
    return {1, false, true};
  if (index == 2 * kAttentionMaxKvGroups + 3)
    return {4, false, true, true};
  return {index % kAttentionMaxKvGroups + 1, index >= kAttentionMaxKvGroups};
}

std::string attentionKernelSymbol(const AttentionFunction &f) {
  return std::string(kAttentionKernelName) + "_" + attentionKernelRole(f);
}

std::string attentionKernelRole(const AttentionFunction &f) {
  return "g" + std::to_string(f.kvGroups) +
         (f.split     ? "_split"
          : f.splitKv ? "_tma_kv"
          : f.tma     ? "_tma"
                      : "") +
         (f.positions ? "_pos" : "");
}

namespace {
int64_t rowWarpsFor(int64_t t) {
  return std::min(kAttentionMaxWarps, ceilDiv(t, kAttentionRowsPerWarp));
}
int64_t ctasPerSm(int64_t rowWarps, int64_t groups) {
  return std::min(kAttentionCtasPerSmByWarps[rowWarps * groups],
                  kAttentionCtasPerSmBySlots[attentionStages(groups) * groups]);
}
int64_t ctasOf(int64_t b, int64_t h, int64_t t) {
  return b * h * ceilDiv(t, kAttentionRowsPerWarp * rowWarpsFor(t));
}
/// A decode step of up to four query rows in a grid past one CTA an SM (up
/// to kAttentionGroupsMaxCtas): two key groups whose trips the TMA engine
/// pipelines on two stages beat four groups in one trip, which every warp
/// waits for whole. Not at T = 8 or 16, nor at 96 CTAs, where they were level
/// or slower.
bool decodePair(int64_t t, int64_t rowWarps, int64_t ctas) {
  return t <= kAttentionDecodePairMaxRows && rowWarps == 1 &&
         ctas > kAttentionSms && ctas <= kAttentionGroupsMaxCtas;
}
/// `splitting`: the rule, not the caller, picks the split count.
int64_t groupsFor(int64_t t, int64_t rowWarps, int64_t tiles, int64_t ctas,
                  int64_t wanted, bool splitting) {
  int64_t most = kAttentionMaxWarps / rowWarps;
  if (wanted)
    return std::max<int64_t>(1, std::min({wanted, most, tiles}));
  int64_t groups = std::min(most, tiles);
  if (decodePair(t, rowWarps, ctas))
    return std::min<int64_t>(groups, 2);
  // Groups pay while the grid leaves SMs idle (beyond two CTAs an SM their
  // shared memory costs occupancy), and two groups of one row warp while
  // their 2-warp CTAs fit three an SM.
  if (ctas > kAttentionGroupsMaxCtas)
    return rowWarps == 1 && ctas <= kAttentionPairedGroupsMaxCtas
               ? std::min<int64_t>(groups, 2)
               : 1;
  // In a tiny grid two row warps group only for a single trip: longer walks
  // split across CTAs instead. (More row warps never group: most = 1.)
  if (rowWarps >= 2 && ctas <= kAttentionFewCtas && ceilDiv(tiles, groups) > 1)
    return 1;
  // One row warp with more tiles than four groups take in a trip: two
  // groups (with two copy warps) and splits of one trip instead, while that
  // split grid has at most one CTA an SM (past it, four groups win).
  if (splitting && groups == 4 && tiles > 4 &&
      ctas * ceilDiv(tiles, 2) <= kAttentionSms)
    return 2;
  return groups;
}
/// The rule's split count for `groups` key groups.
int64_t splitsFor(int64_t b, int64_t h, int64_t t, int64_t s, int64_t groups) {
  int64_t rowWarps = rowWarpsFor(t);
  int64_t ctas = ctasOf(b, h, t);
  int64_t slots = kAttentionSms * ctasPerSm(rowWarps, groups);
  int64_t trips = ceilDiv(ceilDiv(s, kAttentionKeysPerTile), groups);
  if (trips <= 1)
    return 1;
  // Splits fill at most half the CTA slots, a quarter with key groups (their
  // CTAs already keep four warps busy).
  int64_t bound = slots / ((groups > 1 ? 4 : 2) * ctas);
  // And one CTA an SM: past that the clusters of a split grid cost more
  // than they save.
  bound = std::min(bound, kAttentionSms / ctas);
  // A split's merge costs in proportion to its rows: one or two row warps
  // may split down to one trip, two into at most four CTAs, more keep two
  // trips.
  int64_t minTrips = rowWarps <= 2 ? 1 : 2;
  int64_t most =
      rowWarps == 2 ? kAttentionTwoRowWarpsMaxSplits : kAttentionMaxSplits;
  return std::max<int64_t>(1,
                           std::min({ceilDiv(trips, minTrips), bound, most}));
}
} // namespace

int64_t chooseAttentionKvGroups(int64_t b, int64_t h, int64_t t, int64_t s) {
  return groupsFor(t, rowWarpsFor(t), ceilDiv(s, kAttentionKeysPerTile),
                   ctasOf(b, h, t), 0, /*splitting=*/true);
}

int64_t chooseAttentionSplits(int64_t b, int64_t h, int64_t t, int64_t s) {
  return splitsFor(b, h, t, s, chooseAttentionKvGroups(b, h, t, s));
}

bool deriveAttentionLaunch(int64_t b, int64_t h, int64_t t, int64_t s,
                           int64_t splits, int64_t kvGroups,
                           AttentionLaunch &out, std::string &err,
                           int64_t copyWarps, AttentionTmaMode tma,
                           AttentionTriggerMode trigger,
                           AttentionSplitKvMode splitKv) {
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
  if (kvGroups < 0) {
    err =
        "kv_groups = " + std::to_string(kvGroups) + " must be >= 0 (0 = rule)";
    return false;
  }
  AttentionLaunch launch;
  launch.rowWarps = rowWarpsFor(t);
  launch.rowsPerCta = kAttentionRowsPerWarp * launch.rowWarps;
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
  int64_t groups = groupsFor(t, launch.rowWarps, launch.keyTiles,
                             launch.gridX * launch.gridY, kvGroups,
                             /*splitting=*/splits == 0);
  int64_t wanted = splits ? splits : splitsFor(b, h, t, s, groups);
  wanted = std::min({wanted, launch.keyTiles, kAttentionMaxSplits});
  launch.tilesPerSplit = ceilDiv(launch.keyTiles, wanted);
  launch.splits = ceilDiv(launch.keyTiles, launch.tilesPerSplit);
  launch.kvGroups = std::min(groups, launch.tilesPerSplit);
  launch.computeWarps = launch.rowWarps * launch.kvGroups;
  // Copy warps fill a CTA of a grid of at most one CTA an SM to four warps:
  // a warp issues its cp.async copies at about 16 bytes a cycle, so a CTA of
  // one or two warps takes ~1000 cycles to put 32 KiB of K/V in flight, and
  // the SM has warp slots to spare.
  int64_t ctas = launch.gridX * launch.gridY * launch.splits;
  int64_t byRule = ctas <= kAttentionSms ? kAttentionMaxWarps : 0;
  // The TMA engine pays for one trip of several groups; with two groups (two
  // stages) also for the decode pairs above and for walks of more than two
  // trips, not for two trips of two row warps. One group (two stages): over
  // more than two trips in grids past two CTAs an SM, where thread 0's
  // copies leave the issue slots to the SM's other CTAs; not in smaller
  // grids. Four groups have one stage: the next trip is copied after the
  // compute, which cp.async did better.
  const int64_t trips = ceilDiv(launch.tilesPerSplit, launch.kvGroups);
  const int64_t ctasBeforeSplits = launch.gridX * launch.gridY;
  const bool tmaPays =
      (launch.kvGroups > 1 && trips == 1) ||
      (launch.kvGroups == 2 &&
       (trips > 2 || decodePair(t, launch.rowWarps, ctasBeforeSplits))) ||
      (launch.kvGroups == 1 && trips > 2 &&
       ctasBeforeSplits > kAttentionGroupsMaxCtas);
  launch.tmaCopies =
      tma != AttentionTmaMode::off &&
      attentionHasTmaCopies(launch.kvGroups, launch.splits > 1) &&
      (tma == AttentionTmaMode::everywhere || tmaPays);
  // A TMA function's copies are thread 0's: it has no copy warps.
  launch.copyWarps =
      attentionHasCopyWarps(launch.kvGroups) && !launch.tmaCopies
          ? std::max<int64_t>(
                0, std::min(copyWarps < 0 ? byRule : copyWarps,
                            kAttentionMaxWarps - launch.computeWarps))
          : 0;
  launch.warps = launch.computeWarps + launch.copyWarps;
  launch.threads = 32 * launch.warps;
  launch.stages = attentionStages(launch.kvGroups);
  launch.sharedBytes =
      launch.stages * launch.kvGroups * kAttentionSlotBytes +
      launch.computeWarps * kAttentionQBytesPerWarp +
      attentionMergeBytes(launch.kvGroups, launch.rowWarps, launch.splits) +
      (launch.tmaCopies ? kAttentionTripBarrierBytes : 0);
  // A grid triggered early has its dependents scheduled beside it: only
  // where they find SMs of their own does that not slow this one. Split
  // launches, whose rank 0 waits for the other ranks' pushes, lost with it
  // even then.
  launch.earlyTrigger = trigger == AttentionTriggerMode::early ||
                        (trigger == AttentionTriggerMode::rule &&
                         launch.splits == 1 && 2 * ctas <= kAttentionSms);
  // g4_tma_kv (K and V on mbarriers of their own) pays where more than half
  // the SMs hold a CTA: each SM's share of L2 bandwidth is then small enough
  // that starting QK^T while V lands wins over the second wait; in smaller
  // grids V lands soon enough that the second wait only costs (measured:
  // docs/performance.md).
  launch.splitKvBarriers =
      launch.tmaCopies && launch.kvGroups == 4 &&
      (splitKv == AttentionSplitKvMode::always ||
       (splitKv == AttentionSplitKvMode::rule && 2 * ctas > kAttentionSms));
  out = launch;
  return true;
}

} // namespace moss::config
