//===- FallbackEpilogue.h - Exact epilogues after the cuBLASLt GEMM -*- C++
//-*-//
//
// cuBLASLt writes v = bf16(acc) into out; these kernels (nvcc-built, in
// FallbackEpilogue.cu) apply the rest of the rounding contract in place.
// cuBLASLt's own GELU epilogue is the tanh approximation and is never used.
// The LayerNorm prologue of moss_layernorm_gemm writes the normalised rows
// of x into a buffer that cuBLASLt then reads as its x.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_FALLBACKEPILOGUE_H
#define MOSS_RUNTIME_FALLBACKEPILOGUE_H

#include "DriverApi.h"
#include "Status.h"

#include <cuda.h>

#include <cstdint>

namespace moss::runtime {

struct EpilogueKernels {
  CUfunction gelu = nullptr;
  CUfunction layerScaleResidual = nullptr;
  CUfunction layerNorm = nullptr;
  CUfunction ropeCache = nullptr; ///< FallbackRopeCache.cu
};

/// Handles of the epilogue kernels in the current context, loaded now (not
/// lazily at the first launch, which may be inside a graph capture).
Status loadEpilogueKernels(const DriverApi &api, EpilogueKernels &out);

/// out[i] = bf16(0.5f*v*(1.f+erff(v*0.70710678f))), v = out[i], i < m*n.
Status launchGeluEpilogue(const DriverApi &api, const EpilogueKernels &k,
                          void *out, int64_t m, int64_t n, CUstream stream);

/// out[r,c] = bf16(y * (live[r] != 0)), y = bf16(bf16(v*scale[c]) +
/// residual[r,c]), v = out[r,c]; live (one byte per row) NULL: every row
/// live.
Status launchLayerScaleResidualEpilogue(const DriverApi &api,
                                        const EpilogueKernels &k, void *out,
                                        const void *scale, const void *residual,
                                        const void *live, int64_t m, int64_t n,
                                        CUstream stream);

/// out[r,c] = bf16((x[r,c] - mean_r) * rstd_r * gamma[c] + beta[c]) for
/// rows r < rows (< 2^31) of `cols` values: FP32 statistics, the contract
/// of moss_layernorm_gemm.
Status launchLayerNormPrologue(const DriverApi &api, const EpilogueKernels &k,
                               const void *x, const void *gamma,
                               const void *beta, float eps, void *out,
                               int64_t rows, int64_t cols, CUstream stream);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_FALLBACKEPILOGUE_H
