//===- BhtdToBthd.cu - [B,H,T,64] -> [B,T,H,64] bf16 copy -----------------===//

#include "BhtdToBthd.h"

namespace moss::bench {
namespace {

/// One thread per 16 bytes (8 bf16); reads are contiguous, writes go out in
/// whole 128-byte rows.
__global__ void bhtdToBthd(const uint4 *in, uint4 *out, int64_t h, int64_t t,
                           int64_t vectors) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= vectors)
    return;
  int64_t lane = i % 8, row = i / 8;
  int64_t ti = row % t, bh = row / t;
  int64_t hi = bh % h, bi = bh / h;
  out[((bi * t + ti) * h + hi) * 8 + lane] = in[i];
}

} // namespace

cudaError_t launchBhtdToBthd(const void *in, void *out, int64_t b, int64_t h,
                             int64_t t, cudaStream_t stream) {
  int64_t vectors = b * h * t * 8;
  int threads = 256;
  unsigned blocks = unsigned((vectors + threads - 1) / threads);
  bhtdToBthd<<<blocks, threads, 0, stream>>>(
      static_cast<const uint4 *>(in), static_cast<uint4 *>(out), h, t, vectors);
  return cudaGetLastError();
}

} // namespace moss::bench
