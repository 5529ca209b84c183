//===- RopeCacheArgChecksTest.cpp - moss_qkv_rope_cache's checks, no GPU --===//
//
// checkRopeCacheArgs on made-up addresses (compared, never read): every
// bad size or pointer is named, and the buffers the call writes (q, the
// caches, the slot table) may touch but not overlap anything else. The GPU
// test (QkvRopeCacheTests) checks that a refused call writes nothing.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "ArgChecksTestSupport.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace moss::runtime;
using namespace moss::runtime::test;

namespace {

/// batch 2, length 3, d 128 (2 heads), capacity 8; buffers 1 MiB apart.
struct Call {
  RopeCacheArgs r{reinterpret_cast<const int64_t *>(0x700000),
                  at(0x800000),
                  mutableAt(0x900000),
                  mutableAt(0xa00000),
                  reinterpret_cast<int64_t *>(0xb00000),
                  2,
                  3,
                  8};
  GemmArgs c{6,
             384,
             128,
             MOSS_EPILOGUE_NONE,
             at(0x100000),
             at(0x200000),
             nullptr,
             nullptr,
             mutableAt(0x500000)};
  Call() {
    c.layerNorm = true;
    c.gamma = at(0x300000);
    c.beta = at(0x400000);
    c.eps = 1e-5f;
    c.ropeCache = &r;
  }
  Call(const Call &) = delete;
};

TEST(RopeCacheArgChecks, ValidCallPasses) {
  Call call;
  EXPECT_EQ(call.c.mode(), 5);
  EXPECT_TRUE(checkGemmShape(call.c).ok());
  Status status = checkRopeCacheArgs(call.c);
  EXPECT_TRUE(status.ok()) << status.message;
  EXPECT_TRUE(checkGemmPointers(call.c).ok());
  EXPECT_TRUE(gemmPointersAligned16(call.c));
  EXPECT_EQ(call.c.label(),
            "moss_qkv_rope_cache(batch=2, length=3, d_model=128)");
  call.c.ep = MOSS_EPILOGUE_GELU; // no mode has RoPE after a GELU
  EXPECT_EQ(call.c.mode(), -1);
}

TEST(RopeCacheArgChecks, SizesAreNamed) {
  {
    Call call;
    call.r.length = 9;
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c),
                        "length = 9 exceeds the cache's capacity = 8"));
  }
  {
    Call call;
    call.r.capacity = 0;
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "capacity must be in"));
  }
  {
    Call call;
    call.c.k = 96;
    call.c.n = 288;
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c),
                        "d_model must be a multiple of 64"));
  }
}

TEST(RopeCacheArgChecks, NullAndMisalignedPointersAreNamed) {
  {
    Call call;
    call.r.live = nullptr;
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "live is NULL"));
  }
  {
    Call call;
    call.r.slotPositions = reinterpret_cast<int64_t *>(0xb00004);
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c),
                        "cache->slot_positions = 0xb00004 is not 8-byte "
                        "aligned"));
  }
  {
    Call call;
    call.r.kCache = mutableAt(0x900001);
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "cache->k"));
  }
  {
    Call call; // 2-byte aligned caches are legal: the fallback takes them
    call.r.vCache = mutableAt(0xa00002);
    EXPECT_TRUE(checkRopeCacheArgs(call.c).ok());
    EXPECT_FALSE(gemmPointersAligned16(call.c));
  }
}

TEST(RopeCacheArgChecks, WrittenBuffersTouchButDoNotOverlap) {
  // k: 2 * 2 * 8 * 64 bf16 = 4096 bytes; v may start right after it.
  {
    Call call;
    call.r.vCache = mutableAt(0x900000 + 4096);
    EXPECT_TRUE(checkRopeCacheArgs(call.c).ok());
    call.r.vCache = mutableAt(0x900000 + 4094);
    EXPECT_TRUE(
        rejects(checkRopeCacheArgs(call.c), "cache->k overlaps cache->v"));
  }
  {
    Call call; // the slot table may not alias the positions it reads
    call.r.slotPositions = reinterpret_cast<int64_t *>(0x700008);
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c),
                        "cache->slot_positions overlaps positions"));
  }
  {
    Call call; // q: 6 rows of 128 bf16 = 1536 bytes
    call.r.kCache = mutableAt(0x500000 + 1024);
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "q overlaps cache->k"));
  }
  {
    Call call;
    call.r.kCache = mutableAt(0x100000);
    EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "overlaps x"));
  }
}

TEST(RopeCacheArgChecks, CacheSizesThatOverflowAreErrors) {
  Call call;
  call.r.batch = INT64_MAX / 4;
  call.r.capacity = 8;
  EXPECT_TRUE(rejects(checkRopeCacheArgs(call.c), "overflows"));
}

} // namespace
