//===- GemmLaunchTest.cpp - The tile -> launch rule of kernel-abi.md ------===//

#include "moss/Config/GemmLaunch.h"

#include <gtest/gtest.h>

using namespace moss::config;

namespace {

GemmLaunch derive(int64_t n, int64_t k, GemmTile tile,
                  int mode = kGemmModeNone) {
  GemmLaunch launch;
  std::string err;
  EXPECT_TRUE(deriveGemmLaunch(n, k, mode, tile, launch, err)) << err;
  return launch;
}

std::string deriveError(int64_t n, int64_t k, GemmTile tile,
                        int mode = kGemmModeNone) {
  GemmLaunch launch;
  std::string err;
  EXPECT_FALSE(deriveGemmLaunch(n, k, mode, tile, launch, err));
  return err;
}

TEST(GemmLaunchTest, ExampleTileForFfnUp) {
  GemmLaunch launch = derive(3072, 768, {16, 32, 64, 1});
  EXPECT_FALSE(launch.wgmma);
  EXPECT_EQ(launch.warpsN, 2);
  EXPECT_EQ(launch.kPerCta, 768);
  EXPECT_EQ(launch.stages, 6); // 12 bk blocks in 6 groups of 2
  EXPECT_EQ(launch.stageK, 128);
  EXPECT_EQ(launch.warpsK, 4); // min(768 / 32, max(1, 8 / 2))
  EXPECT_EQ(launch.warps, 8);
  EXPECT_EQ(launch.threads, 256);
  EXPECT_EQ(launch.bm8, 16);
  // 384 words per row is 0 (mod 32): padded by 16 words to 400.
  EXPECT_EQ(launch.slabRowElems, 800);
  EXPECT_EQ(launch.slabBytes, (32 + 16) * 800 * 2);
  EXPECT_EQ(launch.partialRowFloats, 32 + 4);
  EXPECT_EQ(launch.partialBytes, 4 * 16 * 36 * 4);
  EXPECT_EQ(launch.sharedBytes, launch.slabBytes);
  EXPECT_EQ(launch.gridX, 96);
  EXPECT_EQ(launch.gridYPerM, 16);
  EXPECT_EQ(launch.gridZ, 1);
}

TEST(GemmLaunchTest, SplitKTileSlicesKAcrossTheCluster) {
  GemmLaunch launch = derive(768, 3072, {8, 32, 128, 4});
  EXPECT_FALSE(launch.wgmma);
  EXPECT_EQ(launch.warpsN, 2);
  EXPECT_EQ(launch.kPerCta, 768);
  EXPECT_EQ(launch.stages, 6); // 6 bk blocks
  EXPECT_EQ(launch.stageK, 128);
  EXPECT_EQ(launch.warpsK, 4); // min(768 / 32, max(1, 8 / 2))
  EXPECT_EQ(launch.threads, 256);
  EXPECT_EQ(launch.slabRowElems, 800); // 384 words = 0 (mod 32): + 16
  // The slab, then the receive area: a slot of 8 items (8 * 32 / 8 / 4) of
  // 8 floats for each rank, then the 8-byte mbarrier.
  EXPECT_EQ(launch.shareItems, 8);
  EXPECT_EQ(launch.recvOffset, (32 + 8) * 800 * 2);
  EXPECT_EQ(launch.recvBarrierOffset, launch.recvOffset + 4 * 8 * 8 * 4);
  EXPECT_EQ(launch.sharedBytes, launch.recvBarrierOffset + 8);
  EXPECT_EQ(launch.gridX, 24);
  EXPECT_EQ(launch.gridYPerM, 8);
  EXPECT_EQ(launch.gridZ, 4);
}

TEST(GemmLaunchTest, ManyRanksWithLargeSharesHandOverByBulkCopies) {
  // 32 x 64 tile, 4 ranks: 256 items, 64 (2 KiB) a rank; the send area
  // follows the one partial tile (32 rows of 64 + 4 floats) in the slab.
  GemmLaunch bulk = derive(768, 3072, {32, 64, 32, 4});
  EXPECT_EQ(bulk.shareItems, 64);
  EXPECT_TRUE(bulk.bulkHandover);
  EXPECT_EQ(bulk.sendOffset, 1 * 32 * 68 * 4);
  EXPECT_LE(bulk.sendOffset + 256 * 32, bulk.recvOffset);
  // Two ranks: st.async, even with 4 KiB shares.
  GemmLaunch twoRanks = derive(3072, 768, {32, 64, 32, 2});
  EXPECT_EQ(twoRanks.shareItems, 128);
  EXPECT_FALSE(twoRanks.bulkHandover);
  EXPECT_EQ(twoRanks.sendOffset, 0);
  // Four ranks of 1 KiB shares: st.async.
  GemmLaunch smallShares = derive(768, 3072, {16, 64, 256, 4});
  EXPECT_EQ(smallShares.shareItems, 32);
  EXPECT_FALSE(smallShares.bulkHandover);
  // 16 KiB shares whose send area (64 KiB) does not fit after the partial
  // tiles (2 x 64 rows of 260 floats) below the receive area: st.async.
  GemmLaunch noRoom = derive(256, 256, {64, 256, 64, 4});
  EXPECT_EQ(noRoom.shareItems, 512);
  EXPECT_EQ(noRoom.recvOffset, 2 * 64 * 260 * 4);
  EXPECT_FALSE(noRoom.bulkHandover);
}

TEST(GemmLaunchTest, LayerNormModesAddTheRowStatisticsAfterEverything) {
  // split 1: (mean, M2) of bm8 rows after max(slab, partials).
  GemmLaunch plain = derive(2304, 768, {8, 64, 64, 1}, kGemmModeNone);
  GemmLaunch ln = derive(2304, 768, {8, 64, 64, 1}, kGemmModeLayerNorm);
  EXPECT_FALSE(plain.layerNorm);
  EXPECT_TRUE(ln.layerNorm);
  EXPECT_EQ(ln.statsOffset, (plain.sharedBytes + 15) / 16 * 16);
  EXPECT_EQ(ln.sharedBytes, ln.statsOffset + 8 * 8);
  // split 4: a slot per rank and row, after the receive mbarrier; the rest of
  // the layout is the plain kernel's.
  plain = derive(3072, 768, {16, 64, 64, 4}, kGemmModeGelu);
  ln = derive(3072, 768, {16, 64, 64, 4}, kGemmModeLayerNormGelu);
  EXPECT_EQ(ln.recvOffset, plain.recvOffset);
  EXPECT_EQ(ln.recvBarrierOffset, plain.recvBarrierOffset);
  EXPECT_EQ(ln.statsOffset, (plain.recvBarrierOffset + 8 + 15) / 16 * 16);
  EXPECT_EQ(ln.sharedBytes, ln.statsOffset + 4 * 16 * 8);
  EXPECT_FALSE(sameGemmLaunch(plain, ln));
  EXPECT_NE(
      deriveError(3072, 768, {16, 64, 64, 1}, 6).find("mode 6 is unknown"),
      std::string::npos);
}

TEST(GemmLaunchTest, QkvModeNeedsThreeGroupsOfWholeHeads) {
  // Mode 5's launch is mode 3's: the QKV epilogue adds no shared memory.
  GemmLaunch ln = derive(2304, 768, {16, 64, 64, 2}, kGemmModeLayerNorm);
  GemmLaunch qkv =
      derive(2304, 768, {16, 64, 64, 2}, kGemmModeLayerNormRopeCache);
  EXPECT_TRUE(sameGemmLaunch(ln, qkv));
  EXPECT_EQ(gemmModeInfo(kGemmModeLayerNormRopeCache)->epilogue,
            kGemmEpilogueRopeCache);
  // 3 * 768 = 2304 and 3 * 1280 = 3840 are legal; N not 3 * (64 h) is not.
  std::string err;
  EXPECT_TRUE(checkTileLegal(3840, 1280, 5, {8, 64, 128, 1}, err)) << err;
  EXPECT_TRUE(checkTileLegal(768, 768, 5, {8, 32, 64, 1}, err)) << err;
  for (int64_t n : {288, 2048, 2208, 2400}) {
    err = deriveError(n, 768, {8, 32, 64, 1}, 5);
    EXPECT_NE(err.find("is not 3 * d with d a multiple of 64"),
              std::string::npos)
        << n << ": " << err;
  }
}

TEST(GemmLaunchTest, RowStrideIsSixteenWordsModThirtyTwo) {
  // 96 words (K slice 192) is 0 (mod 32): padded; 48 words (96) is already
  // 16 (mod 32).
  EXPECT_EQ(derive(3072, 768, {32, 32, 64, 4}).slabRowElems, 192 + 32);
  EXPECT_EQ(derive(3072, 768, {32, 32, 32, 8}).slabRowElems, 96);
}

TEST(GemmLaunchTest, StagesAreTheLargestDivisorUpToEight) {
  EXPECT_EQ(derive(5120, 1280, {8, 16, 64, 1}).stages, 5); // 20 blocks
  EXPECT_EQ(derive(768, 3072, {8, 16, 32, 1}).stages, 8);  // 96 blocks
  EXPECT_EQ(derive(3072, 768, {8, 32, 256, 1}).stages, 3); // 3 blocks
  EXPECT_EQ(derive(3072, 768, {8, 32, 256, 1}).stageK, 256);
}

TEST(GemmLaunchTest, SmallBmStillUsesOneM8Tile) {
  GemmLaunch launch = derive(3072, 768, {2, 16, 32, 4});
  EXPECT_EQ(launch.bm8, 8);
  EXPECT_EQ(launch.warpsN, 1);
  EXPECT_EQ(launch.warpsK, 6); // min(192 / 32, 8)
  EXPECT_EQ(launch.partialBytes, 6 * 8 * 20 * 4);
}

TEST(GemmLaunchTest, WarpsKLimitedByKChunks) {
  GemmLaunch launch = derive(16, 64, {16, 16, 32, 1});
  EXPECT_EQ(launch.warpsK, 2); // 64 / 32 chunks
  EXPECT_EQ(launch.warps, 2);
  EXPECT_EQ(launch.threads, 64);
}

TEST(GemmLaunchTest, WidestTileUsesSixteenWarps) {
  // K/split = 160 is no whole 64-k atoms: mma.sync, one warp per 16 W rows.
  GemmLaunch launch = derive(5120, 1280, {8, 256, 32, 8});
  EXPECT_FALSE(launch.wgmma);
  EXPECT_EQ(launch.warpsN, 16);
  EXPECT_EQ(launch.slabRowElems, 160); // 80 words = 16 (mod 32)
  EXPECT_EQ(launch.warpsK, 1);         // max(1, 8 / 16 = 0)
  EXPECT_EQ(launch.threads, 512);
  EXPECT_EQ(launch.gridX, 20);
}

TEST(GemmLaunchTest, Bm64TilesUseWarpgroupMma) {
  GemmLaunch launch = derive(3072, 768, {64, 32, 64, 1});
  EXPECT_TRUE(launch.wgmma);
  EXPECT_EQ(launch.stages, 6);
  EXPECT_EQ(launch.stageK, 128); // 4 chunks of 32 k: even
  EXPECT_EQ(launch.warpsK, 2);   // two warpgroups, two chunks each
  EXPECT_EQ(launch.warps, 8);
  EXPECT_EQ(launch.slabRowElems, 768); // no bank padding
  EXPECT_EQ(launch.slabBytes, (32 + 64) * 768 * 2);
  EXPECT_EQ(launch.partialBytes, 2 * 64 * 36 * 4);
  // 640 k per CTA = 10 bk blocks in 5 stages of 128 k (4 chunks).
  EXPECT_EQ(derive(5120, 1280, {64, 64, 64, 2}).warpsK, 2);
  // 768 / 4 = 192 k in 6 stages of one 32-k chunk: one warpgroup.
  GemmLaunch odd = derive(3072, 768, {64, 32, 32, 4});
  EXPECT_EQ(odd.stageK, 32);
  EXPECT_EQ(odd.warpsK, 1);
  EXPECT_EQ(odd.threads, 128);
  // 768 / 8 splits = 96 k: no whole 64-k swizzle atoms.
  EXPECT_EQ(deriveError(768, 768, {64, 32, 32, 8}),
            "bm = 64 (wgmma) needs K/split = 96 to be a multiple of 64 "
            "(128-byte swizzle atoms of 64 k)");
  EXPECT_FALSE(derive(3072, 768, {32, 32, 64, 1}).wgmma);
}

TEST(GemmLaunchTest, Bn64TilesUseWarpgroupMmaWithWeightsAsA) {
  GemmLaunch launch = derive(3072, 768, {16, 64, 64, 1});
  EXPECT_TRUE(launch.wgmma);
  EXPECT_TRUE(launch.wgmmaWeightsA);
  EXPECT_EQ(launch.stageK, 128); // 4 chunks of 32 k: even
  EXPECT_EQ(launch.warpsN, 4);
  EXPECT_EQ(launch.warpsK, 2); // two warpgroups, two chunks each
  EXPECT_EQ(launch.threads, 256);
  EXPECT_EQ(launch.bm8, 16);
  EXPECT_EQ(launch.slabRowElems, 768); // no bank padding
  EXPECT_EQ(launch.slabBytes, (64 + 16) * 768 * 2);
  EXPECT_EQ(launch.partialBytes, 2 * 16 * 68 * 4);
  EXPECT_EQ(launch.gridX, 48);
  EXPECT_EQ(launch.gridYPerM, 16);
  // bm < 8 still runs N = 8; 192 k in 6 stages of one chunk: one warpgroup.
  GemmLaunch odd = derive(3072, 768, {2, 64, 32, 4});
  EXPECT_TRUE(odd.wgmmaWeightsA);
  EXPECT_EQ(odd.bm8, 8);
  EXPECT_EQ(odd.warpsK, 1);
  EXPECT_EQ(odd.threads, 128);
  EXPECT_EQ(deriveError(768, 768, {16, 64, 32, 8}),
            "bn = 64 (wgmma) needs K/split = 96 to be a multiple of 64 "
            "(128-byte swizzle atoms of 64 k)");
  // bm = 64 keeps x as A; narrower W tiles stay on mma.sync.
  EXPECT_FALSE(derive(3072, 768, {64, 64, 64, 1}).wgmmaWeightsA);
  EXPECT_EQ(derive(3072, 768, {64, 128, 64, 2}).wgmmaGroupsN, 1);
  EXPECT_FALSE(derive(3072, 768, {16, 32, 64, 1}).wgmma);
}

TEST(GemmLaunchTest, WiderWeightsAsATilesTakeAWarpgroupPer64Rows) {
  // bn = 128: two warpgroups along N, and two sets of them along K when a
  // stage's chunks split evenly (16 warps).
  GemmLaunch launch = derive(3072, 768, {16, 128, 64, 1});
  EXPECT_TRUE(launch.wgmmaWeightsA);
  EXPECT_EQ(launch.wgmmaGroupsN, 2);
  EXPECT_EQ(launch.warpsN, 8);
  EXPECT_EQ(launch.warpsK, 2);
  EXPECT_EQ(launch.threads, 512);
  EXPECT_EQ(launch.slabBytes, (128 + 16) * 768 * 2);
  EXPECT_EQ(launch.partialBytes, 2 * 16 * 132 * 4);
  EXPECT_EQ(launch.gridX, 24);
  // A stage of three chunks: one set along K.
  GemmLaunch odd = derive(3072, 768, {8, 128, 32, 1});
  EXPECT_EQ(odd.stageK, 96);
  EXPECT_EQ(odd.warpsK, 1);
  EXPECT_EQ(odd.threads, 256);
  // bn = 256: four warpgroups fill the 16 warps; K is never split further.
  GemmLaunch wide = derive(3072, 768, {8, 256, 64, 2});
  EXPECT_EQ(wide.wgmmaGroupsN, 4);
  EXPECT_EQ(wide.warpsK, 1);
  EXPECT_EQ(wide.threads, 512);
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
  EXPECT_EQ(deriveError(0, 768, {16, 64, 64, 1}),
            "N = 0 must be in [1, 2147483647]");
  // Found by the launch fuzzer: K sizes the shared slab, (bn + bm8) *
  // (K/split + pad) * 2 bytes, which overflowed int64 for K near 2^60.
  EXPECT_EQ(deriveError(3072, int64_t(1) << 60, {32, 64, 32, 1}),
            "K = 1152921504606846976 must be in [1, 2147483647]");
  EXPECT_EQ(deriveError(3072, 768, {16, 512, 64, 1}),
            "tile bn=512 is not supported (expected one of "
            "{16,32,64,128,256})");
  EXPECT_EQ(deriveError(3072, 3072, {8, 16, 32, 16}),
            "tile split=16 exceeds 8 (the split-K CTAs of a tile form one "
            "thread-block cluster)");
}

TEST(GemmLaunchTest, FailureLeavesOutputUntouched) {
  GemmLaunch launch;
  launch.threads = 12345;
  std::string err;
  EXPECT_FALSE(
      deriveGemmLaunch(3072, 768, kGemmModeNone, {16, 48, 64, 1}, launch, err));
  EXPECT_EQ(launch.threads, 12345);
}

TEST(GemmLaunchTest, CheckTileLegalAgreesWithDerive) {
  std::string err;
  EXPECT_TRUE(checkTileLegal(3072, 768, kGemmModeNone, {16, 64, 64, 1}, err))
      << err;
  // W and x slab of 64 + 64 rows of the whole K = 5120: 1.3 MB.
  EXPECT_FALSE(
      checkTileLegal(1280, 5120, kGemmModeNone, {64, 64, 256, 1}, err));
  EXPECT_EQ(err, "shared memory max((bn+bm8)*(K/split+pad)*2, "
                 "warps_k*bm8*(bn+4)*4) = max(1310720, 34816) = 1310720 bytes "
                 "exceeds 227 KiB (232448)");
  // Split-K adds the receive slots (2 x 256 items x 32 bytes) and mbarrier.
  EXPECT_FALSE(
      checkTileLegal(1280, 5120, kGemmModeNone, {64, 64, 256, 2}, err));
  EXPECT_EQ(err, "shared memory max((bn+bm8)*(K/split+pad)*2, "
                 "warps_k*bm8*(bn+4)*4) = max(655360, 34816) + split-K "
                 "receive slots and mbarrier 16392 = 671752 bytes exceeds "
                 "227 KiB (232448)");
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
            if (!deriveGemmLaunch(shape[0], shape[1], kGemmModeNone,
                                  {bm, bn, bk, split}, launch, err))
              continue;
            ++legal;
            EXPECT_LE(launch.threads, 512);
            EXPECT_LE(launch.sharedBytes, kGemmMaxSharedBytes);
            EXPECT_EQ(launch.gridX * bn, shape[0]);
            EXPECT_EQ(launch.stages * launch.stageK * split, shape[1]);
            EXPECT_EQ(launch.stageK % bk, 0);
            EXPECT_LE(launch.stages, kGemmMaxStages);
            EXPECT_GE(launch.warpsK, 1);
            const bool wholeAtoms = launch.kPerCta % 64 == 0;
            EXPECT_EQ(launch.wgmma,
                      bm == 64 || bn == 64 || (bn >= 128 && wholeAtoms));
            EXPECT_EQ(launch.wgmmaWeightsA, launch.wgmma && bm < 64);
            if (launch.wgmma) { // unpadded rows of 64-k swizzle atoms
              EXPECT_EQ(launch.slabRowElems, launch.kPerCta);
              EXPECT_EQ(launch.kPerCta % 64, 0);
              EXPECT_EQ(launch.wgmmaGroupsN,
                        launch.wgmmaWeightsA ? bn / 64 : 1);
              EXPECT_EQ(launch.warps, 4 * launch.wgmmaGroupsN * launch.warpsK);
            } else {
              EXPECT_EQ(launch.slabRowElems / 2 % 32, 16);
            }
          }
  EXPECT_GT(legal, 100);
}

} // namespace
