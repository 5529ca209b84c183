//===- BhtdToBthd.h - The copy of the bhtd + copy variant -------*- C++ -*-===//
//
// What a caller of a [B,H,T,D] attention kernel pays before the output
// projection: reordering to [B,T,H,D]. Benchmark code only.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_BENCH_BHTDTOBTHD_H
#define MOSS_BENCH_BHTDTOBTHD_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace moss::bench {

/// out[b,t,h,:] = in[b,h,t,:] for bf16 rows of 64 (16-byte aligned buffers).
cudaError_t launchBhtdToBthd(const void *in, void *out, int64_t b, int64_t h,
                             int64_t t, cudaStream_t stream);

} // namespace moss::bench

#endif // MOSS_BENCH_BHTDTOBTHD_H
