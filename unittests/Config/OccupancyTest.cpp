//===- OccupancyTest.cpp - Resident CTAs per SM and launch waves ----------===//

#include "moss/Config/Occupancy.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/Manifest.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace moss::config;

namespace {

TEST(OccupancyTest, RegistersLimitTheAttentionFunctions) {
  // 4 warps: 164 registers (5376 a warp) leave 3 warps a sub-partition, 12 an
  // SM; 228 and 244 (7424, 7936 a warp) leave 2 and 8.
  EXPECT_EQ(residentCtasPerSm(164, 128, 40000), 3);
  EXPECT_EQ(residentCtasPerSm(228, 128, 40000), 2);
  EXPECT_EQ(residentCtasPerSm(244, 128, 40000), 2);
  EXPECT_EQ(residentCtasPerSm(168, 128, 40000), 3);
  EXPECT_EQ(residentCtasPerSm(169, 128, 40000), 2);
}

TEST(OccupancyTest, SubPartitionsHoldTheirOwnWarps) {
  // 200 registers: 6400 a warp, 2 in each 16384-register sub-partition: 8
  // one-warp CTAs, not the 10 that 65536 / 6400 would give.
  EXPECT_EQ(residentCtasPerSm(200, 32, 0), 8);
}

TEST(OccupancyTest, SharedMemoryCountsTheReservedKiloByteInUnits) {
  // 122880 + 1024 reserved: one an SM (233472 bytes); 115712 + 1024 fits
  // two, one byte more does not.
  EXPECT_EQ(residentCtasPerSm(56, 256, 122880), 1);
  EXPECT_EQ(residentCtasPerSm(56, 256, 115712), 2);
  EXPECT_EQ(residentCtasPerSm(56, 256, 115713), 1);
  EXPECT_EQ(residentCtasPerSm(56, 256, 232448), 1);
  EXPECT_EQ(residentCtasPerSm(56, 256, 232449), 0);
}

TEST(OccupancyTest, WarpAndCtaSlots) {
  EXPECT_EQ(residentCtasPerSm(32, 1024, 0), 2); // 64 warps an SM
  EXPECT_EQ(residentCtasPerSm(16, 32, 0), 32);  // CTA slots
  EXPECT_EQ(residentCtasPerSm(16, 33, 0), 32);  // two warps: 64 / 2
  EXPECT_EQ(residentCtasPerSm(16, 96, 0), 21);  // 64 / 3
}

TEST(OccupancyTest, CtasThatCannotRunGiveZero) {
  EXPECT_EQ(residentCtasPerSm(256, 32, 0), 0); // over 255 registers a thread
  // 255 registers (8192 a warp): 8 warps fit a CTA, and the hardware counts
  // 9 as 12 (a multiple of the sub-partitions): 98304 > 65536.
  EXPECT_EQ(residentCtasPerSm(255, 256, 0), 1);
  EXPECT_EQ(residentCtasPerSm(255, 288, 0), 0);
  EXPECT_EQ(residentCtasPerSm(0, 128, 0), 0);
  EXPECT_EQ(residentCtasPerSm(32, 0, 0), 0);
  EXPECT_EQ(residentCtasPerSm(32, 128, -1), 0);
  // Sizes no launch has: no overflow, nothing fits.
  EXPECT_EQ(residentCtasPerSm(INT64_MAX, 128, 0), 0);
  EXPECT_EQ(residentCtasPerSm(32, INT64_MAX, 0), 0);
  EXPECT_EQ(residentCtasPerSm(32, 128, INT64_MAX), 0);
  EXPECT_EQ(residentCtasPerSm(32, 2049, 0), 0);
}

TEST(OccupancyTest, LimitNamesTheBindingResource) {
  EXPECT_STREQ(occupancyLimit(228, 128, 87552), "registers");
  EXPECT_STREQ(occupancyLimit(56, 256, 122880), "shared memory");
  EXPECT_STREQ(occupancyLimit(16, 1024, 0), "warps"); // registers allow 4
  EXPECT_STREQ(occupancyLimit(16, 32, 0), "CTA slots");
  EXPECT_STREQ(occupancyLimit(255, 288, 0), "does not fit");
  EXPECT_STREQ(occupancyLimit(32, 128, 232449), "does not fit");
  // 164 registers and 74240 bytes bind at 3 both: registers come first.
  EXPECT_EQ(residentCtasPerSm(164, 128, 74240), 3);
  EXPECT_STREQ(occupancyLimit(164, 128, 74240), "registers");
}

TEST(OccupancyTest, Waves) {
  EXPECT_EQ(launchWaves(192, 2, 132), 1);
  EXPECT_EQ(launchWaves(264, 2, 132), 1);
  EXPECT_EQ(launchWaves(265, 2, 132), 2);
  EXPECT_EQ(launchWaves(384, 2, 132), 2);
  EXPECT_EQ(launchWaves(0, 2, 132), 0);
  EXPECT_EQ(launchWaves(10, 0, 132), 0);
  EXPECT_EQ(launchWaves(INT64_MAX, 1, 1), INT64_MAX);
  EXPECT_EQ(launchWaves(INT64_MAX, 2, 132), INT64_MAX / 264 + 1);
  EXPECT_EQ(launchWaves(5, INT64_MAX, 2), 1);
}

KernelFunctionRecord function(const std::string &symbol, int64_t registers) {
  KernelFunctionRecord f;
  f.symbol = symbol;
  f.resources.registers = registers;
  return f;
}

TEST(OccupancyTest, AttentionLaunchFindsItsFunction) {
  AttentionKernelRecord kernel;
  kernel.functions = {function("streaming_attention_d64_g4", 228),
                      function("streaming_attention_d64_g4_split", 238),
                      function("streaming_attention_d64_g1", 164)};
  // H=12 S=400 B=16 T=1 forced to two splits of four key groups: 384 CTAs
  // at two an SM take two waves; one split takes one.
  AttentionLaunch launch;
  std::string err;
  ASSERT_TRUE(deriveAttentionLaunch(16, 12, 1, 400, 2, 4, launch, err)) << err;
  LaunchOccupancy split = attentionLaunchOccupancy(kernel, launch, 132);
  EXPECT_EQ(split.ctas, 384);
  EXPECT_EQ(split.ctasPerSm, 2);
  EXPECT_EQ(split.waves, 2);
  EXPECT_EQ(occupancyText(split), "384/2/2");
  ASSERT_TRUE(deriveAttentionLaunch(16, 12, 1, 400, 1, 4, launch, err)) << err;
  EXPECT_EQ(occupancyText(attentionLaunchOccupancy(kernel, launch, 132)),
            "192/2/1");
  // A function the manifest does not list: unknown, not a guess.
  ASSERT_TRUE(deriveAttentionLaunch(16, 12, 1, 400, 1, 2, launch, err)) << err;
  LaunchOccupancy missing = attentionLaunchOccupancy(kernel, launch, 132);
  EXPECT_EQ(missing.ctas, 0);
  EXPECT_EQ(occupancyText(missing), "-");
}

TEST(OccupancyTest, GemmLaunchCountsRowBlocksAndSplits) {
  GemmKernelRecord kernel;
  kernel.n = 5120;
  kernel.k = 1280;
  kernel.tile = {32, 128, 64, 4}; // 40 x 4 CTAs of 512 threads, 118792 B
  kernel.functions = {function("linear", 90)};
  LaunchOccupancy one = gemmLaunchOccupancy(kernel, 30, 132);
  EXPECT_EQ(one.ctas, 160);
  EXPECT_EQ(one.ctasPerSm, 1); // shared memory: 2 * (118792 + 1024) > 233472
  EXPECT_EQ(one.waves, 2);
  EXPECT_EQ(gemmLaunchOccupancy(kernel, 33, 132).ctas, 320); // two row blocks
  EXPECT_EQ(gemmLaunchOccupancy(kernel, 0, 132).ctas, 0);
  kernel.tile = {32, 100, 64, 4}; // not a legal tile
  EXPECT_EQ(gemmLaunchOccupancy(kernel, 30, 132).ctas, 0);
}

} // namespace
