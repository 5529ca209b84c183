//===- AttentionLaunchTest.cpp - The attention launch rule of kernel-abi.md
//===//

#include "moss/Config/AttentionLaunch.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace moss::config;

namespace {

AttentionLaunch derive(int64_t b, int64_t h, int64_t t, int64_t s,
                       int64_t splits = 0, int64_t groups = 0) {
  AttentionLaunch launch;
  std::string err;
  EXPECT_TRUE(deriveAttentionLaunch(b, h, t, s, splits, groups, launch, err))
      << err;
  return launch;
}

/// The rule without TMA copies (AttentionTmaMode::off): the runtime's where k
/// or v does not encode as a tensor map.
AttentionLaunch deriveCp(int64_t b, int64_t h, int64_t t, int64_t s,
                         int64_t splits = 0, int64_t groups = 0) {
  AttentionLaunch launch;
  std::string err;
  EXPECT_TRUE(deriveAttentionLaunch(b, h, t, s, splits, groups, launch, err, -1,
                                    AttentionTmaMode::off))
      << err;
  return launch;
}

std::string deriveError(int64_t b, int64_t h, int64_t t, int64_t s,
                        int64_t splits = 0, int64_t groups = 0) {
  AttentionLaunch launch;
  std::string err;
  EXPECT_FALSE(deriveAttentionLaunch(b, h, t, s, splits, groups, launch, err));
  return err;
}

TEST(AttentionLaunchTest, DecodeUsesKeyGroupsAndSplits) {
  // T = 1: one row warp. Four key groups would walk its 7 tiles in two
  // trips; 12 CTAs leave room for 4 splits of one trip of two groups each,
  // whose CTAs two copy warps fill to four warps.
  AttentionLaunch l = derive(1, 12, 1, 400);
  EXPECT_EQ(l.rowWarps, 1);
  EXPECT_EQ(l.kvGroups, 2);
  EXPECT_EQ(l.computeWarps, 2);
  EXPECT_EQ(l.copyWarps, 2);
  EXPECT_EQ(l.warps, 4);
  EXPECT_EQ(l.threads, 128);
  EXPECT_EQ(l.gridX, 12);
  EXPECT_EQ(l.gridY, 1);
  EXPECT_EQ(l.keyTiles, 7);
  EXPECT_EQ(l.splits, 4);
  EXPECT_EQ(l.tilesPerSplit, 2);
  EXPECT_EQ(l.stages, 2); // 2 groups: two stages of 2 slots
  // Slots, the compute warps' Q rows, and the merge area: the entry of
  // group 1 and the four splits' receive slots, 4608 bytes each for the one
  // row warp, and the receive mbarrier.
  EXPECT_EQ(l.sharedBytes, 4 * 16384 + 2 * 2048 + 5 * 4608 + 16);
  // 48 row blocks: 4 splits would take 192 CTAs, so four groups, two
  // splits of one trip each, and no copy warps (four compute warps).
  AttentionLaunch b4 = derive(4, 12, 1, 400);
  EXPECT_EQ(b4.kvGroups, 4);
  EXPECT_EQ(b4.splits, 2);
  EXPECT_EQ(b4.copyWarps, 0);
  EXPECT_EQ(b4.sharedBytes, 4 * 16384 + 4 * 2048 + 5 * 4608 + 16);
}

TEST(AttentionLaunchTest, CopyWarpsFillSmallGridsOfTwoOrThreeGroups) {
  // Without TMA (with it: TmaFunction... below). H = 20, S = 125: two
  // groups of one row warp, 20 CTAs: two copy warps.
  AttentionLaunch decode = deriveCp(1, 20, 1, 125);
  EXPECT_EQ(decode.kvGroups, 2);
  EXPECT_EQ(decode.copyWarps, 2);
  EXPECT_EQ(decode.threads, 128);
  // Copy warps have no Q rows.
  EXPECT_EQ(decode.sharedBytes, 4 * 16384 + 2 * 2048 + 4608);
  EXPECT_EQ(deriveCp(4, 20, 8, 125).copyWarps, 2); // 80 CTAs
  // Past one CTA an SM (B = 8: 160 CTAs) the SMs' warp slots are taken.
  AttentionLaunch busy = deriveCp(8, 20, 1, 125);
  EXPECT_EQ(busy.kvGroups, 2);
  EXPECT_EQ(busy.copyWarps, 0);
  EXPECT_EQ(busy.threads, 64);
  // Three groups: one copy warp. One group or four: none (those functions
  // are built without them).
  AttentionLaunch three = derive(1, 1, 1, 190);
  EXPECT_EQ(three.kvGroups, 3);
  EXPECT_EQ(three.copyWarps, 1);
  EXPECT_EQ(three.warps, 4);
  EXPECT_EQ(three.sharedBytes, 3 * 16384 + 3 * 2048 + 2 * 4608);
  EXPECT_FALSE(attentionHasCopyWarps(1));
  EXPECT_TRUE(attentionHasCopyWarps(2));
  EXPECT_TRUE(attentionHasCopyWarps(3));
  EXPECT_FALSE(attentionHasCopyWarps(4));
  EXPECT_EQ(derive(1, 12, 1, 250).copyWarps, 0);  // 4 groups
  EXPECT_EQ(derive(1, 12, 32, 400).copyWarps, 0); // 1 group, 2 row warps
  // Forced: capped at four warps, 0 where the function has none.
  auto forced = [](int64_t b, int64_t h, int64_t t, int64_t s,
                   int64_t copyWarps) {
    AttentionLaunch launch;
    std::string err;
    EXPECT_TRUE(deriveAttentionLaunch(b, h, t, s, 0, 0, launch, err, copyWarps,
                                      AttentionTmaMode::off))
        << err;
    return launch;
  };
  EXPECT_EQ(forced(1, 20, 1, 125, 0).copyWarps, 0);
  EXPECT_EQ(forced(1, 20, 1, 125, 0).threads, 64);
  EXPECT_EQ(forced(1, 20, 1, 125, 1).copyWarps, 1);
  EXPECT_EQ(forced(1, 20, 1, 125, 3).copyWarps, 2);
  EXPECT_EQ(forced(8, 20, 1, 125, 2).copyWarps, 2);
  EXPECT_EQ(forced(32, 20, 1, 125, 3).copyWarps, 0); // one group
  EXPECT_EQ(forced(1, 12, 1, 250, 3).copyWarps, 0);  // four groups
}

TEST(AttentionLaunchTest, LongChunksRunOnePass) {
  AttentionLaunch l = derive(16, 12, 480, 400);
  EXPECT_EQ(l.rowWarps, 4);
  EXPECT_EQ(l.kvGroups, 1);
  EXPECT_EQ(l.warps, 4);
  EXPECT_EQ(l.threads, 128);
  EXPECT_EQ(l.rowsPerCta, 64);
  EXPECT_EQ(l.gridX, 192);
  EXPECT_EQ(l.gridY, 8); // ceil(480 / 64)
  EXPECT_EQ(l.splits, 1);
  EXPECT_EQ(l.stages, 2);
  // Seven trips: g1_tma, whose two stages' mbarriers end the shared memory.
  EXPECT_TRUE(l.tmaCopies);
  EXPECT_EQ(l.sharedBytes, 2 * 16384 + 4 * 2048 + 16);
  AttentionLaunch cp = deriveCp(16, 12, 480, 400);
  EXPECT_FALSE(cp.tmaCopies);
  EXPECT_EQ(cp.sharedBytes, 2 * 16384 + 4 * 2048);
}

TEST(AttentionLaunchTest, WarpsFollowTheRows) {
  EXPECT_EQ(derive(1, 1, 16, 64).rowWarps, 1);
  EXPECT_EQ(derive(1, 1, 17, 64).rowWarps, 2);
  EXPECT_EQ(derive(1, 1, 40, 64).rowWarps, 3);
  EXPECT_EQ(derive(1, 1, 2000, 64).rowWarps, 4);
  EXPECT_EQ(derive(1, 1, 2000, 64).gridY, 32); // ceil(2000 / 64)
  // One key tile: nothing for a second group.
  EXPECT_EQ(derive(1, 1, 16, 64).warps, 1);
}

TEST(AttentionLaunchTest, KeyGroupsFillTheWarpsRowsLeaveFree) {
  EXPECT_EQ(chooseAttentionKvGroups(1, 20, 1, 125), 2);  // 2 tiles
  EXPECT_EQ(chooseAttentionKvGroups(1, 1, 1, 190), 3);   // 3 tiles
  EXPECT_EQ(chooseAttentionKvGroups(4, 12, 16, 400), 4); // 4 / 1 row warp
  EXPECT_EQ(chooseAttentionKvGroups(4, 12, 32, 250), 2); // 4 / 2 row warps
  // Two row warps over 7 tiles: in a tiny grid (12 CTAs) 4 trips of 2
  // groups lose to splits; 48 CTAs group.
  EXPECT_EQ(chooseAttentionKvGroups(1, 12, 32, 400), 1);
  EXPECT_EQ(chooseAttentionKvGroups(4, 12, 32, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 32, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(1, 12, 40, 400), 1); // 3 row warps
  EXPECT_EQ(chooseAttentionKvGroups(1, 12, 480, 400), 1);
  // Two row warps over 4 tiles in a tiny grid: two groups would leave two
  // trips, so one group (and splits).
  EXPECT_EQ(chooseAttentionKvGroups(1, 12, 32, 250), 1);
  // A full grid: 16 * 12 = 192 CTAs still group, by four for T = 8 but by
  // two for a decode step of up to four rows past one CTA an SM (133..264
  // CTAs);
  // 16 * 20 = 320 and 32 * 12 = 384 of one row warp take two groups (2-warp
  // CTAs, three an SM), of two row warps none; 20 * 20 = 400 none.
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 8, 400), 4);
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 1, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 1, 250), 2);
  EXPECT_EQ(chooseAttentionKvGroups(22, 12, 1, 250), 2); // 264 CTAs
  EXPECT_EQ(chooseAttentionKvGroups(11, 12, 1, 250), 4); // 132 CTAs
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 2, 250), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 4, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 12, 5, 250), 4);
  EXPECT_EQ(chooseAttentionKvGroups(16, 20, 1, 125), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 20, 8, 125), 2);
  EXPECT_EQ(chooseAttentionKvGroups(32, 12, 1, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(16, 20, 32, 125), 1);
  EXPECT_EQ(chooseAttentionKvGroups(20, 20, 1, 125), 1);
  AttentionLaunch paired = deriveCp(16, 20, 1, 125);
  EXPECT_EQ(paired.splits, 1);
  EXPECT_EQ(paired.copyWarps, 0);
  EXPECT_EQ(paired.threads, 64);
  EXPECT_EQ(paired.sharedBytes, 2 * 2 * 16384 + 2 * 2048 + 4608);
  AttentionLaunch three = derive(1, 1, 1, 190);
  EXPECT_EQ(three.kvGroups, 3);
  EXPECT_EQ(three.stages, 1);
  EXPECT_EQ(three.sharedBytes, 3 * 16384 + 3 * 2048 + 2 * 4608);
  // One group, one pass: no merge area. Split: the hand-over of 4 row warps.
  EXPECT_EQ(derive(1, 1, 1, 1).sharedBytes, 2 * 16384 + 2048);
  EXPECT_EQ(derive(1, 12, 240, 400).sharedBytes,
            2 * 16384 + 4 * 2048 + 2 * 4 * 4608 + 16);
  // The most: one group of four row warps split eight ways.
  AttentionLaunch most;
  std::string err;
  ASSERT_TRUE(deriveAttentionLaunch(1, 1, 64, 8 * 64, 8, 1, most, err)) << err;
  EXPECT_EQ(most.splits, 8);
  EXPECT_EQ(most.sharedBytes, kAttentionMaxSharedBytes);
  EXPECT_EQ(kAttentionMaxSharedBytes, 2 * 16384 + 4 * 2048 + 8 * 4 * 4608 + 16);
  EXPECT_LE(derive(1, 12, 1, 400).sharedBytes, kAttentionMaxSharedBytes);
}

TEST(AttentionLaunchTest, RuleSplitsOnlyWhatTripsLeave) {
  // One trip (the groups hold every tile): nothing to split.
  EXPECT_EQ(chooseAttentionSplits(1, 20, 1, 125), 1);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 1, 250), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 20, 1, 125), 1);
  // Two row warps split down to one trip: 2 groups x 2 trips in 48 CTAs
  // take two splits (one CTA an SM).
  EXPECT_EQ(chooseAttentionSplits(4, 12, 32, 250), 2);
  // One row warp splits down to one trip a split while the slots allow:
  // two groups over 7 tiles in 12 CTAs, four groups in 48.
  EXPECT_EQ(chooseAttentionKvGroups(1, 12, 1, 400), 2);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 1, 400), 4);
  EXPECT_EQ(chooseAttentionKvGroups(4, 12, 1, 400), 4);
  EXPECT_EQ(chooseAttentionSplits(4, 12, 1, 400), 2);
  // Two row warps over 7 tiles. 12 CTAs: one group, two tiles a split. 48
  // CTAs: two groups, 4 trips, at least two trips a split. 96 CTAs of two
  // groups: a quarter of the slots, floor(396 / 384) = 1. 192 CTAs: 0.
  EXPECT_EQ(chooseAttentionSplits(1, 12, 32, 400), 4);
  EXPECT_EQ(chooseAttentionSplits(4, 12, 32, 400), 2);
  EXPECT_EQ(chooseAttentionKvGroups(8, 12, 32, 400), 2);
  EXPECT_EQ(chooseAttentionSplits(8, 12, 32, 400), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 12, 32, 400), 1);
  // Two row warps over 4 tiles in 12 CTAs: one group in four splits of one
  // tile (at most four for two row warps: 7 tiles stay at four, above).
  EXPECT_EQ(chooseAttentionSplits(1, 12, 32, 250), 4);
  EXPECT_EQ(derive(1, 12, 32, 250).tilesPerSplit, 1);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 32, 1024), 4);
  // Two trips of one group of four row warps: not worth a split, even in a
  // tiny grid.
  EXPECT_EQ(chooseAttentionSplits(1, 20, 64, 125), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 12, 1, 400), 1);
  EXPECT_EQ(chooseAttentionSplits(4, 12, 240, 400), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 12, 480, 400), 1);
  // One CTA an SM: four row warps over 7 tiles in 48 CTAs split twice
  // (half the slots would allow four), 96 CTAs not at all (the slots would
  // allow two).
  EXPECT_EQ(chooseAttentionSplits(1, 12, 240, 400), 2);
  EXPECT_EQ(chooseAttentionSplits(4, 12, 60, 400), 2);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 480, 400), 1);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 480, 250), 1);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 240, 250), 2);
  AttentionLaunch t32 = derive(1, 12, 32, 400);
  EXPECT_EQ(t32.tilesPerSplit, 2);
  EXPECT_EQ(t32.kvGroups, 1);
  EXPECT_EQ(t32.warps, 2);
  EXPECT_EQ(derive(1, 1, 1, 1).splits, 1);
}

TEST(AttentionLaunchTest, ForcedSplitsAndGroupsNeverIdle) {
  AttentionLaunch l = derive(1, 12, 1, 400, 5); // 7 tiles, tps 2
  EXPECT_EQ(l.tilesPerSplit, 2);
  EXPECT_EQ(l.splits, 4);
  EXPECT_EQ(l.kvGroups, 2); // no group without a tile
  AttentionLaunch seven = derive(1, 12, 1, 400, 100);
  EXPECT_EQ(seven.splits, 7);
  EXPECT_EQ(seven.kvGroups, 1);
  AttentionLaunch one = derive(1, 12, 1, 400, 1);
  EXPECT_EQ(one.splits, 1);
  EXPECT_EQ(one.kvGroups, 4);
  // At most a portable cluster: 18 tiles forced into 16 splits take 8
  // (tps 3, 6 splits).
  EXPECT_EQ(derive(2, 3, 5, 1100, 16).splits, 6);
  EXPECT_EQ(derive(2, 3, 5, 1100, 16).tilesPerSplit, 3);
  // Forced groups: the rule splits for them; 4 / rowWarps caps them.
  AttentionLaunch two = derive(1, 12, 1, 400, 0, 2);
  EXPECT_EQ(two.kvGroups, 2);
  EXPECT_EQ(two.splits, 4);
  EXPECT_EQ(derive(1, 12, 32, 400, 0, 4).kvGroups, 2);
  EXPECT_EQ(derive(1, 12, 1, 400, 1, 1).warps, 1);
}

TEST(AttentionLaunchTest, GroupedLaunchesFitOneWave) {
  // The grouped functions are built for two CTAs of four warps an SM
  // (.minnctapersm 2), the one-group function for three: every grouped
  // launch the rule makes for the decoder's shapes must fit in one wave, by
  // registers (eight warps an SM) and by shared memory (228 KiB, 1 KiB of it
  // reserved a CTA).
  EXPECT_EQ(attentionMinCtasPerSm(1), 3);
  for (int64_t g = 2; g <= kAttentionMaxKvGroups; ++g)
    EXPECT_EQ(attentionMinCtasPerSm(g), 2);
  int grouped = 0;
  for (int64_t h : {12, 20})
    for (int64_t s : {125, 250, 400, 1024})
      for (int64_t t : {1, 2, 4, 8, 15, 16, 30, 32, 60, 120, 240, 480})
        for (int64_t b : {1, 2, 4, 8, 16, 32, 64}) {
          AttentionLaunch l = derive(b, h, t, s);
          if (l.kvGroups == 1)
            continue;
          ++grouped;
          int64_t byRegisters =
              attentionMinCtasPerSm(l.kvGroups) * kAttentionMaxWarps / l.warps;
          int64_t byShared = 228 * 1024 / (l.sharedBytes + 1024);
          EXPECT_LE(l.gridX * l.gridY * l.splits,
                    kAttentionSms * std::min(byRegisters, byShared))
              << "B=" << b << " H=" << h << " T=" << t << " S=" << s;
        }
  EXPECT_GT(grouped, 50);
}

TEST(AttentionLaunchTest, RejectsBadSizes) {
  EXPECT_NE(deriveError(0, 12, 1, 400).find("B = 0 must be in [1, "),
            std::string::npos);
  EXPECT_NE(deriveError(1, 12, -3, 400).find("T = -3"), std::string::npos);
  EXPECT_NE(deriveError(1, 12, 1, 400, -1).find("splits = -1"),
            std::string::npos);
  EXPECT_NE(deriveError(1, 12, 1, 400, 0, -2).find("kv_groups = -2"),
            std::string::npos);
  EXPECT_NE(deriveError(1, 12, 64 * 65536, 400).find("more than 65535"),
            std::string::npos);
  EXPECT_NE(deriveError(65536, 65536, 1, 400).find("exceeds the grid limit"),
            std::string::npos);
  // A forced split of any grid: the clusters need no workspace.
  EXPECT_EQ(derive(64, 20, 1, 400, 2).splits, 2);
  EXPECT_EQ(derive(64, 20, 1, 400).splits, 1); // the rule never asks for it
}

TEST(AttentionLaunchTest, TmaFunctionForOneTripFourGroupLaunches) {
  for (int64_t g = 1; g <= 4; ++g) {
    EXPECT_EQ(attentionHasTmaCopies(g, false), g != 3);
    EXPECT_FALSE(attentionHasTmaCopies(g, true));
  }
  // H = 12, S = 250 decode: four groups, the four tiles in one trip; the
  // trip's mbarrier (16 bytes) ends the shared memory.
  AttentionLaunch s250 = derive(1, 12, 1, 250);
  ASSERT_EQ(s250.kvGroups, 4);
  ASSERT_EQ(s250.splits, 1);
  EXPECT_TRUE(s250.tmaCopies);
  EXPECT_EQ(s250.sharedBytes, 4 * 16384 + 4 * 2048 + 3 * 4608 + 16);
  EXPECT_TRUE(derive(4, 12, 1, 250).tmaCopies);
  EXPECT_TRUE(derive(8, 12, 8, 250).tmaCopies); // 96 CTAs
  // S = 400, B = 4: two splits of four tiles (the split function).
  AttentionLaunch b4 = derive(4, 12, 1, 400);
  ASSERT_EQ(b4.kvGroups, 4);
  ASSERT_EQ(b4.tilesPerSplit, 4);
  EXPECT_FALSE(b4.tmaCopies);
  // S = 400, B = 16, T = 8: four groups walk seven tiles in two trips of
  // one stage: cp.async.
  AttentionLaunch b16 = derive(16, 12, 8, 400);
  ASSERT_EQ(b16.kvGroups, 4);
  ASSERT_EQ(b16.tilesPerSplit, 7);
  EXPECT_FALSE(b16.tmaCopies);
  EXPECT_EQ(b16.sharedBytes, 4 * 16384 + 4 * 2048 + 3 * 4608);
  // The decode pairs (T <= 4, 133..264 CTAs): two groups by TMA whatever
  // the trips (S = 250: two, S = 400: four); 96 or 384 CTAs are none.
  for (int64_t s : {250, 400}) {
    AttentionLaunch pair = derive(16, 12, s == 250 ? 1 : 4, s);
    EXPECT_EQ(pair.kvGroups, 2) << s;
    EXPECT_EQ(pair.splits, 1) << s;
    EXPECT_TRUE(pair.tmaCopies) << s;
    EXPECT_EQ(pair.threads, 64) << s;
    EXPECT_EQ(pair.sharedBytes, 4 * 16384 + 2 * 2048 + 4608 + 16) << s;
  }
  EXPECT_FALSE(derive(32, 12, 1, 250).tmaCopies); // 384 CTAs, two trips
  // Two groups (S = 125 decode, ABI 12): g2_tma, two stages of two slots,
  // both stages' mbarriers; no copy warps (thread 0 issues the boxes), up to
  // 396 CTAs.
  AttentionLaunch s125 = derive(1, 20, 1, 125);
  ASSERT_EQ(s125.kvGroups, 2);
  EXPECT_TRUE(s125.tmaCopies);
  EXPECT_EQ(s125.copyWarps, 0);
  EXPECT_EQ(s125.threads, 64);
  EXPECT_EQ(s125.sharedBytes, 4 * 16384 + 2 * 2048 + 4608 + 16);
  EXPECT_TRUE(derive(16, 20, 1, 125).tmaCopies);  // 320 CTAs
  EXPECT_EQ(derive(1, 20, 32, 125).threads, 128); // two row warps
  EXPECT_TRUE(derive(1, 20, 32, 125).tmaCopies);
  // Without TMA the same launch has its copy warps again.
  EXPECT_EQ(deriveCp(1, 20, 1, 125).copyWarps, 2);
  // One or two groups walking more than two trips in one pass: TMA (S =
  // 400, T = 32, B = 8 and 16: four trips of two row warps; T = 480, B = 16:
  // seven trips of one group, g1_tma); two trips of two row warps (S = 250)
  // or of one group (S = 125) and split launches (S = 400, T = 32, B = 4:
  // two splits of two trips) keep cp.async.
  for (int64_t b : {8, 16}) {
    AttentionLaunch longWalk = derive(b, 12, 32, 400);
    ASSERT_EQ(longWalk.kvGroups, 2) << b;
    ASSERT_EQ(longWalk.splits, 1) << b;
    ASSERT_EQ(longWalk.tilesPerSplit, 7) << b;
    EXPECT_TRUE(longWalk.tmaCopies) << b;
    EXPECT_EQ(longWalk.copyWarps, 0) << b;
  }
  AttentionLaunch twoTrips = derive(16, 12, 32, 250);
  ASSERT_EQ(twoTrips.kvGroups, 2);
  ASSERT_EQ(twoTrips.tilesPerSplit, 4);
  EXPECT_FALSE(twoTrips.tmaCopies);
  AttentionLaunch split = derive(4, 12, 32, 400);
  ASSERT_EQ(split.kvGroups, 2);
  ASSERT_GT(split.splits, 1);
  EXPECT_FALSE(split.tmaCopies);
  EXPECT_EQ(attentionFunctionIndex(1, false, true), 10);
  // One group (g1_tma) over more than two trips in one pass, in a grid past
  // two CTAs an SM: T = 480 and 120 of 16 streams (1536 and 384 CTAs), the
  // decode steps of 64 streams (768 CTAs of one row warp) at S = 250 and
  // 400. cp.async (g1) in smaller grids (T = 60 B = 16: 192 CTAs; T = 120
  // B = 4: 96), for two trips (S = 125), one tile (S = 64) and splits
  // (g1_split, tilesPerSplit 0: not checked).
  struct OneGroup {
    int64_t b, h, t, s, tilesPerSplit;
    bool tma;
  };
  for (OneGroup c :
       {OneGroup{16, 12, 480, 400, 7, true},
        OneGroup{16, 12, 120, 400, 7, true}, OneGroup{64, 12, 1, 250, 4, true},
        OneGroup{64, 12, 1, 400, 7, true}, OneGroup{16, 12, 60, 400, 7, false},
        OneGroup{4, 12, 120, 400, 7, false}, OneGroup{64, 20, 1, 125, 2, false},
        OneGroup{16, 20, 240, 125, 2, false},
        OneGroup{16, 12, 480, 64, 1, false},
        OneGroup{1, 12, 240, 400, 0, false}}) {
    AttentionLaunch l = derive(c.b, c.h, c.t, c.s);
    SCOPED_TRACE(testing::Message() << "B=" << c.b << " H=" << c.h
                                    << " T=" << c.t << " S=" << c.s);
    ASSERT_EQ(l.kvGroups, 1);
    ASSERT_EQ(l.splits > 1, c.tilesPerSplit == 0);
    if (c.tilesPerSplit)
      ASSERT_EQ(l.tilesPerSplit, c.tilesPerSplit);
    EXPECT_EQ(l.tmaCopies, c.tma);
  }
}

TEST(AttentionLaunchTest, TmaModePicksTheLaunchesAndCountsTheirMbarrier) {
  auto withMode = [](int64_t b, int64_t s, AttentionTmaMode mode) {
    AttentionLaunch launch;
    std::string err;
    EXPECT_TRUE(deriveAttentionLaunch(b, 12, 1, s, 0, 0, launch, err,
                                      /*copyWarps=*/-1, mode))
        << err;
    return launch;
  };
  const int64_t cpAsyncBytes = 4 * 16384 + 4 * 2048 + 3 * 4608;
  // One trip: the rule's launch; off takes it away, with its 16 bytes.
  AttentionLaunch off = withMode(1, 250, AttentionTmaMode::off);
  EXPECT_FALSE(off.tmaCopies);
  EXPECT_EQ(off.sharedBytes, cpAsyncBytes);
  EXPECT_TRUE(withMode(1, 250, AttentionTmaMode::everywhere).tmaCopies);
  // Two trips of four groups (S = 400, B = 8): only `everywhere`, which
  // counts the mbarrier; the rest of the launch is the rule's.
  AttentionLaunch rule = withMode(8, 400, AttentionTmaMode::rule);
  AttentionLaunch every = withMode(8, 400, AttentionTmaMode::everywhere);
  ASSERT_EQ(rule.kvGroups, 4);
  ASSERT_EQ(rule.splits, 1);
  EXPECT_FALSE(rule.tmaCopies);
  EXPECT_TRUE(every.tmaCopies);
  EXPECT_EQ(every.sharedBytes, rule.sharedBytes + kAttentionTripBarrierBytes);
  EXPECT_EQ(every.kvGroups, rule.kvGroups);
  EXPECT_EQ(every.tilesPerSplit, rule.tilesPerSplit);
  // Split launches have no TMA function in any mode; one group (B = 64,
  // S = 125: two trips) has g1_tma only with `everywhere`.
  EXPECT_FALSE(withMode(4, 400, AttentionTmaMode::everywhere).tmaCopies);
  EXPECT_FALSE(withMode(64, 125, AttentionTmaMode::rule).tmaCopies);
  AttentionLaunch oneGroup = withMode(64, 125, AttentionTmaMode::everywhere);
  ASSERT_EQ(oneGroup.kvGroups, 1);
  EXPECT_TRUE(oneGroup.tmaCopies);
}

TEST(AttentionLaunchTest, SplitKvBarriersInG4TmaGridsOfMoreThanHalfTheSms) {
  // H = 12, S = 250 decode steps run g4_tma, 12 CTAs a stream: B = 5 (60
  // CTAs) keeps one mbarrier, B = 6 (72) splits K's from V's, as B = 11
  // (132) and, with eight rows, B = 8 (96).
  for (auto [b, t, split] :
       {std::tuple{1, 1, false}, std::tuple{4, 1, false},
        std::tuple{5, 1, false}, std::tuple{6, 1, true},
        std::tuple{11, 1, true}, std::tuple{8, 8, true}, std::tuple{8, 2, true},
        std::tuple{4, 16, false}}) {
    AttentionLaunch l = derive(b, 12, t, 250);
    SCOPED_TRACE("B=" + std::to_string(b) + " T=" + std::to_string(t));
    ASSERT_EQ(l.kvGroups, 4);
    ASSERT_TRUE(l.tmaCopies);
    EXPECT_EQ(2 * l.gridX * l.gridY > kAttentionSms, split);
    EXPECT_EQ(l.splitKvBarriers, split);
  }
  // Only g4_tma has them: not the cp.async g4 (TMA off, or two trips of four
  // groups), g2_tma (decode pairs) or g1_tma.
  EXPECT_FALSE(deriveCp(11, 12, 1, 250).splitKvBarriers);
  AttentionLaunch twoTrips = derive(16, 12, 8, 400);
  ASSERT_EQ(twoTrips.kvGroups, 4);
  EXPECT_FALSE(twoTrips.splitKvBarriers);
  AttentionLaunch pair = derive(16, 12, 1, 250);
  ASSERT_EQ(pair.kvGroups, 2);
  ASSERT_TRUE(pair.tmaCopies);
  EXPECT_FALSE(pair.splitKvBarriers);
  AttentionLaunch longChunk = derive(16, 12, 480, 400);
  ASSERT_EQ(longChunk.kvGroups, 1);
  ASSERT_TRUE(longChunk.tmaCopies);
  EXPECT_FALSE(longChunk.splitKvBarriers);
  // MOSS_ATTENTION_SPLIT_KV: never, or every g4_tma launch, and nothing else
  // either way (the launch itself unchanged).
  auto withMode = [](int64_t b, int64_t t, int64_t s,
                     AttentionSplitKvMode mode) {
    AttentionLaunch launch;
    std::string err;
    EXPECT_TRUE(deriveAttentionLaunch(b, 12, t, s, 0, 0, launch, err, -1,
                                      AttentionTmaMode::rule,
                                      AttentionTriggerMode::rule, mode))
        << err;
    return launch;
  };
  AttentionLaunch never = withMode(11, 1, 250, AttentionSplitKvMode::never);
  EXPECT_FALSE(never.splitKvBarriers);
  EXPECT_TRUE(never.tmaCopies);
  EXPECT_EQ(never.sharedBytes, derive(11, 12, 1, 250).sharedBytes);
  EXPECT_TRUE(
      withMode(1, 1, 250, AttentionSplitKvMode::always).splitKvBarriers);
  EXPECT_FALSE(
      withMode(16, 1, 250, AttentionSplitKvMode::always).splitKvBarriers);
  EXPECT_FALSE(
      withMode(16, 8, 400, AttentionSplitKvMode::always).splitKvBarriers);
}

TEST(AttentionLaunchTest, EarlyTriggerWhereADependentGridFitsBeside) {
  auto withMode = [](int64_t b, int64_t h, int64_t t, int64_t s,
                     AttentionTriggerMode mode) {
    AttentionLaunch launch;
    std::string err;
    EXPECT_TRUE(deriveAttentionLaunch(b, h, t, s, 0, 0, launch, err,
                                      /*copyWarps=*/-1, AttentionTmaMode::rule,
                                      mode))
        << err;
    return launch;
  };
  auto ctas = [](const AttentionLaunch &l) {
    return l.gridX * l.gridY * l.splits;
  };
  // The rule: one pass and 2 * CTAs <= 132. H=12 S=250 decode: B=1 12 CTAs,
  // B=4 48. H=12 S=400 B=1 splits 12 heads 4 ways (48 CTAs): not, nor
  // B=4 (96 CTAs) or H=20 S=125 B=4 (80).
  AttentionLaunch s250 = withMode(4, 12, 1, 250, AttentionTriggerMode::rule);
  ASSERT_EQ(s250.splits, 1);
  ASSERT_EQ(ctas(s250), 48);
  EXPECT_TRUE(s250.earlyTrigger);
  EXPECT_TRUE(withMode(1, 12, 1, 250, AttentionTriggerMode::rule).earlyTrigger);
  AttentionLaunch s400 = withMode(1, 12, 1, 400, AttentionTriggerMode::rule);
  ASSERT_GT(s400.splits, 1);
  ASSERT_EQ(ctas(s400), 48);
  EXPECT_FALSE(s400.earlyTrigger);
  AttentionLaunch b4 = withMode(4, 12, 1, 400, AttentionTriggerMode::rule);
  ASSERT_EQ(ctas(b4), 96);
  EXPECT_FALSE(b4.earlyTrigger);
  EXPECT_FALSE(
      withMode(4, 20, 1, 125, AttentionTriggerMode::rule).earlyTrigger);
  // 66 CTAs (2 * 66 = 132) still trigger early, 67 do not.
  AttentionLaunch h66 = withMode(1, 66, 64, 64, AttentionTriggerMode::rule);
  ASSERT_EQ(h66.splits, 1);
  ASSERT_EQ(ctas(h66), 66);
  EXPECT_TRUE(h66.earlyTrigger);
  EXPECT_FALSE(
      withMode(1, 67, 64, 64, AttentionTriggerMode::rule).earlyTrigger);
  // The cases of AttentionProgrammaticLaunchTests.cpp, whose set-up asserts
  // these classes on a GPU: a long chunk of one pass (40 CTAs) and a short
  // chunk of key groups trigger early, the S = 400 decode step (above) late.
  // (B=2 H=12 T=60 S=250, its long chunk until 2026-12-05, splits.)
  AttentionLaunch longChunk =
      withMode(2, 20, 60, 125, AttentionTriggerMode::rule);
  ASSERT_EQ(longChunk.splits, 1);
  ASSERT_EQ(ctas(longChunk), 40);
  EXPECT_TRUE(longChunk.earlyTrigger);
  AttentionLaunch shortChunk =
      withMode(1, 20, 8, 125, AttentionTriggerMode::rule);
  ASSERT_EQ(shortChunk.splits, 1);
  ASSERT_GT(shortChunk.kvGroups, 1);
  EXPECT_TRUE(shortChunk.earlyTrigger);
  AttentionLaunch oldLong =
      withMode(2, 12, 60, 250, AttentionTriggerMode::rule);
  EXPECT_GT(oldLong.splits, 1);
  EXPECT_FALSE(oldLong.earlyTrigger);
  // The modes override the rule and change nothing else.
  AttentionLaunch late = withMode(1, 12, 1, 400, AttentionTriggerMode::late);
  AttentionLaunch early = withMode(4, 12, 1, 400, AttentionTriggerMode::early);
  EXPECT_FALSE(late.earlyTrigger);
  EXPECT_TRUE(early.earlyTrigger);
  EXPECT_EQ(late.splits, s400.splits);
  EXPECT_EQ(late.sharedBytes, s400.sharedBytes);
  EXPECT_EQ(early.splits, b4.splits);
  EXPECT_EQ(early.threads, b4.threads);
}

TEST(AttentionLaunchTest, OnePassAndSplitFunctionPerKeyGroupCount) {
  EXPECT_EQ(attentionKernelSymbol({1, false}), "streaming_attention_d64_g1");
  EXPECT_EQ(attentionKernelSymbol({4, false}), "streaming_attention_d64_g4");
  EXPECT_EQ(attentionKernelSymbol({2, true}),
            "streaming_attention_d64_g2_split");
  EXPECT_EQ(attentionKernelRole({3, false}), "g3");
  EXPECT_EQ(attentionKernelRole({3, true}), "g3_split");
  EXPECT_EQ(attentionKernelSymbol({4, false, true}),
            "streaming_attention_d64_g4_tma");
  EXPECT_EQ(attentionKernelSymbol({2, false, true}),
            "streaming_attention_d64_g2_tma");
  EXPECT_EQ(attentionKernelRole({2, false, true}), "g2_tma");
  EXPECT_EQ(attentionKernelSymbol({1, false, true}),
            "streaming_attention_d64_g1_tma");
  EXPECT_EQ(attentionKernelSymbol({4, false, true, true}),
            "streaming_attention_d64_g4_tma_kv");
  EXPECT_EQ(attentionKernelRole({4, false, true, true}), "g4_tma_kv");
  const int64_t mask = kAttentionMaskFunctions;
  EXPECT_EQ(attentionFunctionIndex(4, false, true), mask - 4);
  EXPECT_EQ(attentionFunctionIndex(2, false, true), mask - 3);
  EXPECT_EQ(attentionFunctionIndex(1, false, true), mask - 2);
  EXPECT_EQ(attentionFunctionIndex(4, false, true, true), mask - 1);
  EXPECT_EQ(attentionFunctionIndex(1, true, true), -1);
  EXPECT_EQ(attentionFunctionIndex(4, true, true), -1);
  EXPECT_EQ(attentionFunctionIndex(2, true, true), -1);
  EXPECT_EQ(attentionFunctionIndex(3, false, true), -1);
  // Split K/V mbarriers exist for g4_tma only.
  EXPECT_EQ(attentionFunctionIndex(4, false, false, true), -1);
  EXPECT_EQ(attentionFunctionIndex(2, false, true, true), -1);
  EXPECT_EQ(attentionFunctionIndex(4, true, true, true), -1);
  for (int64_t i = mask - 4; i < mask; ++i) {
    AttentionFunction f = attentionFunctionAt(i);
    EXPECT_TRUE(f.tma) << i;
    EXPECT_FALSE(f.split) << i;
    EXPECT_EQ(f.splitKv, i == mask - 1) << i;
  }
  EXPECT_EQ(attentionFunctionAt(mask - 3).kvGroups, 2);
  EXPECT_EQ(attentionFunctionAt(mask - 2).kvGroups, 1);
  EXPECT_EQ(attentionFunctionAt(mask - 1).kvGroups, 4);
  // One-pass functions first, then the split ones, each by G.
  EXPECT_EQ(attentionFunctionIndex(1, false), 0);
  EXPECT_EQ(attentionFunctionIndex(4, false), 3);
  EXPECT_EQ(attentionFunctionIndex(1, true), 4);
  EXPECT_EQ(attentionFunctionIndex(4, true), 7);
  for (int64_t i = 0; i < kAttentionFunctions; ++i) {
    AttentionFunction f = attentionFunctionAt(i);
    EXPECT_EQ(attentionFunctionIndex(f.kvGroups, f.split, f.tma, f.splitKv,
                                     f.positions),
              i);
    EXPECT_EQ(f.positions, i >= mask) << i;
  }
  EXPECT_EQ(attentionFunctionAt(5).kvGroups, 2);
  EXPECT_TRUE(attentionFunctionAt(5).split);
  // The positions functions: the same launches, kAttentionMaskFunctions on.
  EXPECT_EQ(attentionFunctionIndex(2, true, false, false, true), mask + 5);
  EXPECT_EQ(attentionFunctionIndex(4, false, true, true, true),
            kAttentionFunctions - 1);
  EXPECT_EQ(attentionFunctionIndex(3, false, true, false, true), -1);
  EXPECT_EQ(attentionKernelRole(attentionFunctionAt(mask + 5)), "g2_split_pos");
  EXPECT_EQ(attentionKernelSymbol(attentionFunctionAt(kAttentionFunctions - 1)),
            "streaming_attention_d64_g4_tma_kv_pos");
}

} // namespace
