//===- FallbackRopeCache.h - moss_qkv_rope_cache after cuBLASLt -*- C++ -*-===//
//
// The fallback of the QKV epilogue (nvcc-built, FallbackRopeCache.cu): RoPE,
// q, the ring cache and the slot table from the bf16 product cuBLASLt wrote,
// one chunk of rows at a time.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_FALLBACKROPECACHE_H
#define MOSS_RUNTIME_FALLBACKROPECACHE_H

#include "DriverApi.h"
#include "Status.h"

#include <cuda.h>

#include <cstdint>

namespace moss::runtime {

/// Rows [firstRow, firstRow + rows) of a moss_qkv_rope_cache call whose
/// product is in qkv ([rows, 3d], the chunk's rows only).
struct RopeCacheChunk {
  const void *qkv;
  int64_t firstRow, rows, d;
  const int64_t *positions;
  const void *live;
  void *q, *kCache, *vCache;
  int64_t *slotPositions;
  int64_t length, capacity;
};

/// The kernel's handle in the current context (loaded with the epilogues).
Status loadRopeCacheKernel(const DriverApi &api, CUfunction &out);

/// The chunk's q, cache and slot-table writes, as moss_runtime.h states
/// them for moss_qkv_rope_cache.
Status launchRopeCacheEpilogue(const DriverApi &api, CUfunction kernel,
                               const RopeCacheChunk &chunk, CUstream stream);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_FALLBACKROPECACHE_H
