//===- GemmLaunchTest.cpp - The tile -> launch rule of kernel-abi.md ------===//

#include "moss/Config/GemmLaunch.h"

#include <gtest/gtest.h>

using namespace moss::config;

namespace {

GemmLaunch derive(int64_t n, int64_t k, GemmTile tile) {
  GemmLaunch launch;
  std::string err;
  EXPECT_TRUE(deriveGemmLaunch(n, k, tile, launch, err)) << err;
  return launch;
}

std::string deriveError(int64_t n, int64_t k, GemmTile tile) {
  GemmLaunch launch;
  std::string err;
  EXPECT_FALSE(deriveGemmLaunch(n, k, tile, launch, err));
  return err;
}

TEST(GemmLaunchTest, ExampleTileForFfnUp) {
  GemmLaunch launch = derive(3072, 768, {16, 64, 64, 1});
  EXPECT_EQ(launch.warpsN, 4);
  EXPECT_EQ(launch.kBlocksPerCta, 12);
  EXPECT_EQ(launch.warpsK, 2); // min(12, max(1, 8 / 4))
  EXPECT_EQ(launch.warps, 8);
  EXPECT_EQ(launch.threads, 256);
  EXPECT_EQ(launch.bm8, 16);
  EXPECT_EQ(launch.sharedBytes, 8192); // 2 * 16 * 64 * 4
  EXPECT_EQ(launch.gridX, 48);
  EXPECT_EQ(launch.gridYPerM, 16);
  EXPECT_EQ(launch.gridZ, 1);
  EXPECT_EQ(launch.workspaceBytesPerRow, 0);
  EXPECT_EQ(launch.workspaceFixedBytes, 0);
  EXPECT_EQ(gemmWorkspaceBytes(launch, 64), 0);
  std::string err;
  EXPECT_TRUE(checkSplitRows(launch, 1 << 30, err)); // no counters used
}

TEST(GemmLaunchTest, SplitKTileHasCountersAndPartialsInTheWorkspace) {
  GemmLaunch launch = derive(768, 3072, {8, 128, 128, 2});
  EXPECT_EQ(launch.warpsN, 8);
  EXPECT_EQ(launch.kBlocksPerCta, 12); // 3072 / 256
  EXPECT_EQ(launch.warpsK, 1);         // max(1, 8 / 8)
  EXPECT_EQ(launch.threads, 256);
  EXPECT_EQ(launch.sharedBytes, 4096); // 1 * 8 * 128 * 4
  EXPECT_EQ(launch.gridX, 6);
  EXPECT_EQ(launch.gridYPerM, 8);
  EXPECT_EQ(launch.gridZ, 2);
  EXPECT_EQ(launch.workspaceBytesPerRow, 2 * 768 * 4);
  EXPECT_EQ(launch.workspaceFixedBytes, kGemmSplitCounterBytes);
  EXPECT_EQ(kGemmSplitCounterBytes, 4 * kGemmSplitCounters);
  EXPECT_EQ(kGemmSplitCounterBytes % 16, 0); // partials stay 16-byte aligned
  EXPECT_EQ(gemmOutputTiles(launch, 30), 6 * 4);
  EXPECT_EQ(gemmWorkspaceBytes(launch, 30),
            kGemmSplitCounterBytes + 30 * 2 * 768 * 4);
}

TEST(GemmLaunchTest, SplitKNeedsOneCounterPerOutputTile) {
  // N/bn = 320 tiles along n; bm = 1 gives one tile row per m.
  GemmLaunch launch = derive(5120, 1280, {1, 16, 32, 4});
  std::string err;
  EXPECT_TRUE(checkSplitRows(launch, kGemmSplitCounters / 320, err)) << err;
  EXPECT_FALSE(checkSplitRows(launch, kGemmSplitCounters / 320 + 1, err));
  EXPECT_EQ(err, "split-K needs one counter per output tile, but M = 52 "
                 "gives (N/bn)*ceil(M/bm) = 320*52 = 16640 tiles, more than "
                 "16384");
}

TEST(GemmLaunchTest, SmallBmStillUsesOneM8Tile) {
  GemmLaunch launch = derive(3072, 768, {2, 16, 32, 4});
  EXPECT_EQ(launch.bm8, 8);
  EXPECT_EQ(launch.warpsN, 1);
  EXPECT_EQ(launch.kBlocksPerCta, 6); // 768 / 128
  EXPECT_EQ(launch.warpsK, 6);        // min(6, 8)
  EXPECT_EQ(launch.sharedBytes, 6 * 8 * 16 * 4);
}

TEST(GemmLaunchTest, WarpsKLimitedByKBlocks) {
  GemmLaunch launch = derive(16, 512, {16, 16, 256, 1});
  EXPECT_EQ(launch.kBlocksPerCta, 2);
  EXPECT_EQ(launch.warpsK, 2);
  EXPECT_EQ(launch.warps, 2);
  EXPECT_EQ(launch.threads, 64);
}

TEST(GemmLaunchTest, WidestTileUsesSixteenWarps) {
  GemmLaunch launch = derive(5120, 1280, {8, 256, 64, 1});
  EXPECT_EQ(launch.warpsN, 16);
  EXPECT_EQ(launch.warpsK, 1); // max(1, 8 / 16 = 0)
  EXPECT_EQ(launch.threads, 512);
  EXPECT_EQ(launch.gridX, 20);
}

TEST(GemmLaunchTest, RejectsIllegalTiles) {
  EXPECT_EQ(deriveError(3072, 768, {16, 48, 64, 1}),
            "tile bn=48 is not a power of two");
  EXPECT_EQ(deriveError(3072, 768, {16, 64, 256, 4}),
            "bk*split = 1024 exceeds K = 768");
  EXPECT_EQ(deriveError(3072, 768, {16, 64, 256, int64_t(1) << 60}),
            "bk*split = 256*1152921504606846976 exceeds K = 768");
  EXPECT_EQ(deriveError(3000, 768, {16, 64, 64, 1}),
            "N = 3000 is not a multiple of bn = 64");
  EXPECT_EQ(deriveError(3072, 12, {1, 16, 4, 1}),
            "K = 12 is not a multiple of 8 (16-byte bf16 loads)");
  EXPECT_EQ(deriveError(0, 768, {16, 64, 64, 1}), "N = 0 must be >= 1");
  EXPECT_EQ(deriveError(3072, 768, {16, 512, 64, 1}),
            "tile bn=512 is not supported (expected one of "
            "{16,32,64,128,256})");
}

TEST(GemmLaunchTest, FailureLeavesOutputUntouched) {
  GemmLaunch launch;
  launch.threads = 12345;
  std::string err;
  EXPECT_FALSE(deriveGemmLaunch(3072, 768, {16, 48, 64, 1}, launch, err));
  EXPECT_EQ(launch.threads, 12345);
}

TEST(GemmLaunchTest, CheckTileLegalAgreesWithDerive) {
  std::string err;
  EXPECT_TRUE(checkTileLegal(3072, 768, {16, 64, 64, 1}, err)) << err;
  EXPECT_FALSE(checkTileLegal(3072, 768, {64, 64, 256, 1}, err));
  EXPECT_NE(err.find("too big for registers"), std::string::npos) << err;
}

TEST(GemmLaunchTest, EveryLegalTileRespectsLimits) {
  // Exhaustive over the supported sizes for the decoder's GEMM shapes.
  const int64_t shapes[][2] = {
      {3072, 768}, {5120, 1280}, {768, 3072}, {1280, 5120}};
  int legal = 0;
  for (const auto &shape : shapes)
    for (int64_t bm : {1, 2, 4, 8, 16, 32, 64})
      for (int64_t bn : {16, 32, 64, 128, 256})
        for (int64_t bk : {32, 64, 128, 256})
          for (int64_t split : {1, 2, 4, 8}) {
            GemmLaunch launch;
            std::string err;
            if (!deriveGemmLaunch(shape[0], shape[1], {bm, bn, bk, split},
                                  launch, err))
              continue;
            ++legal;
            EXPECT_LE(launch.threads, 512);
            EXPECT_LE(launch.sharedBytes, kGemmMaxSharedBytes);
            EXPECT_EQ(launch.gridX * bn, shape[0]);
            EXPECT_EQ(launch.kBlocksPerCta * bk * split, shape[1]);
            EXPECT_GE(launch.warpsK, 1);
          }
  EXPECT_GT(legal, 100);
}

} // namespace
