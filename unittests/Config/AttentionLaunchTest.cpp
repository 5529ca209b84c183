//===- AttentionLaunchTest.cpp - The attention launch rule of kernel-abi.md
//===//

#include "moss/Config/AttentionLaunch.h"

#include <gtest/gtest.h>

using namespace moss::config;

namespace {

AttentionLaunch derive(int64_t b, int64_t h, int64_t t, int64_t s,
                       int64_t splits = 0) {
  AttentionLaunch launch;
  std::string err;
  EXPECT_TRUE(deriveAttentionLaunch(b, h, t, s, splits, launch, err)) << err;
  return launch;
}

std::string deriveError(int64_t b, int64_t h, int64_t t, int64_t s,
                        int64_t splits = 0) {
  AttentionLaunch launch;
  std::string err;
  EXPECT_FALSE(deriveAttentionLaunch(b, h, t, s, splits, launch, err));
  return err;
}

TEST(AttentionLaunchTest, DecodeSplitsTheKeysAcrossCtas) {
  // T = 1: one warp per CTA, 12 CTAs, so every one of the 7 key tiles gets
  // a CTA of its own; the last of them merges the splits.
  AttentionLaunch l = derive(1, 12, 1, 400);
  EXPECT_EQ(l.warps, 1);
  EXPECT_EQ(l.threads, 32);
  EXPECT_EQ(l.gridX, 12);
  EXPECT_EQ(l.gridY, 1);
  EXPECT_EQ(l.keyTiles, 7);
  EXPECT_EQ(l.splits, 7);
  EXPECT_EQ(l.tilesPerSplit, 1);
  // 1024 counters, then the partials of 12 rows per split.
  EXPECT_EQ(l.workspaceBytes, 1024 * 4 + 7 * 12 * 1 * 66 * 4);
}

TEST(AttentionLaunchTest, LongChunksRunOnePass) {
  AttentionLaunch l = derive(16, 12, 480, 400);
  EXPECT_EQ(l.warps, 4);
  EXPECT_EQ(l.threads, 128);
  EXPECT_EQ(l.rowsPerCta, 64);
  EXPECT_EQ(l.gridX, 192);
  EXPECT_EQ(l.gridY, 8); // ceil(480 / 64)
  EXPECT_EQ(l.splits, 1);
  EXPECT_EQ(l.workspaceBytes, 0);
}

TEST(AttentionLaunchTest, WarpsFollowTheRows) {
  EXPECT_EQ(derive(1, 1, 16, 64).warps, 1);
  EXPECT_EQ(derive(1, 1, 17, 64).warps, 2);
  EXPECT_EQ(derive(1, 1, 40, 64).warps, 3);
  EXPECT_EQ(derive(1, 1, 2000, 64).warps, 4);
  EXPECT_EQ(derive(1, 1, 2000, 64).gridY, 32); // ceil(2000 / 64)
}

TEST(AttentionLaunchTest, RuleFollowsTheMeasuredSweep) {
  // Two key tiles never split: the merge costs more than a tile.
  EXPECT_EQ(chooseAttentionSplits(1, 20, 1, 125), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 20, 32, 125), 1);
  // A tiny grid (12 CTAs): one tile per split.
  EXPECT_EQ(chooseAttentionSplits(1, 12, 1, 400), 7);
  EXPECT_EQ(chooseAttentionSplits(1, 12, 1, 250), 4);
  // 48 CTAs of 2 warps: at least two tiles per split.
  EXPECT_EQ(chooseAttentionSplits(4, 12, 32, 400), 4);
  EXPECT_EQ(chooseAttentionSplits(4, 12, 32, 250), 2);
  // 192 CTAs: the slots bound, floor(792 / 384) = 2 for 2 warps,
  // floor(924 / 384) = 2 for 1 warp.
  EXPECT_EQ(chooseAttentionSplits(16, 12, 32, 400), 2);
  EXPECT_EQ(chooseAttentionSplits(16, 12, 1, 400), 2);
  // 4 warps, 192 CTAs: floor(396 / 384) = 1, no split.
  EXPECT_EQ(chooseAttentionSplits(4, 12, 240, 400), 1);
  EXPECT_EQ(chooseAttentionSplits(16, 12, 480, 400), 1);
  // Splits never exceed the key tiles (7 wanted from 7 tiles -> tps 1).
  EXPECT_EQ(derive(1, 12, 1, 400).splits, 7);
  EXPECT_EQ(derive(4, 12, 32, 400).splits, 4); // tps 2
  EXPECT_EQ(derive(1, 1, 1, 1).splits, 1);
}

TEST(AttentionLaunchTest, ForcedSplitsNeverLeaveASplitEmpty) {
  AttentionLaunch l = derive(1, 12, 1, 400, 5); // 7 tiles, tps 2
  EXPECT_EQ(l.tilesPerSplit, 2);
  EXPECT_EQ(l.splits, 4);
  EXPECT_EQ(derive(1, 12, 1, 400, 100).splits, 7);
  EXPECT_EQ(derive(1, 12, 1, 400, 1).splits, 1);
  EXPECT_EQ(derive(2, 3, 5, 1100, 16).splits, 9); // 18 tiles, tps 2
}

TEST(AttentionLaunchTest, RejectsBadSizes) {
  EXPECT_NE(deriveError(0, 12, 1, 400).find("B = 0 must be in [1, "),
            std::string::npos);
  EXPECT_NE(deriveError(1, 12, -3, 400).find("T = -3"), std::string::npos);
  EXPECT_NE(deriveError(1, 12, 1, 400, -1).find("splits = -1"),
            std::string::npos);
  EXPECT_NE(deriveError(1, 12, 64 * 65536, 400).find("more than 65535"),
            std::string::npos);
  EXPECT_NE(deriveError(65536, 65536, 1, 400).find("exceeds the grid limit"),
            std::string::npos);
  // A forced split over more (b, h, row block)s than there are counters.
  EXPECT_NE(
      deriveError(64, 20, 1, 400, 2).find("needs more than 1024 counters"),
      std::string::npos);
  EXPECT_EQ(derive(64, 20, 1, 400).splits, 1); // the rule never asks for it
}

TEST(AttentionLaunchTest, ArgumentNamesFollowTheAbi) {
  const std::vector<std::string> &names = attentionKernelArgNames();
  ASSERT_EQ(names.size(), 26u);
  EXPECT_EQ(names.front(), "q");
  EXPECT_EQ(names[5], "workspace");
  EXPECT_EQ(names[18], "B");
  EXPECT_EQ(names[22], "scale");
  EXPECT_EQ(names.back(), "splits");
}

} // namespace
