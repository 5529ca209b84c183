//===- FallbackEpilogue.cu - Exact epilogues after the cuBLASLt GEMM ------===//
//
// Elementwise and memory bound (m*n <= a few hundred thousand elements for
// the decoder), so plain grid-stride loops; what matters is the rounding:
// FP32 math on the bf16 value cuBLASLt wrote, one bf16 rounding per step of
// the contract. Built without fast math so erff is the accurate one.
//
//===----------------------------------------------------------------------===//

#include "FallbackEpilogue.h"
#include "FallbackRopeCache.h"

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace moss::runtime {
namespace {

__global__ void mossFallbackGelu(__nv_bfloat16 *out, long long count) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    float v = __bfloat162float(out[i]);
    out[i] = __float2bfloat16_rn(0.5f * v * (1.f + erff(v * 0.70710678f)));
  }
}

__global__ void mossFallbackLayerScaleResidual(__nv_bfloat16 *out,
                                               const __nv_bfloat16 *scale,
                                               const __nv_bfloat16 *residual,
                                               const unsigned char *live,
                                               long long count,
                                               long long cols) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    float v = __bfloat162float(out[i]);
    float scaled = __bfloat162float(
        __float2bfloat16_rn(v * __bfloat162float(scale[i % cols])));
    float y = __bfloat162float(
        __float2bfloat16_rn(scaled + __bfloat162float(residual[i])));
    // A padding row: y * 0, as the generated kernel (NaN stays NaN).
    float factor = !live || live[i / cols] ? 1.f : 0.f;
    out[i] = __float2bfloat16_rn(y * factor);
  }
}

constexpr unsigned kThreads = 256;

/// Sum of every thread's `v` over the block (kThreads), the same in every
/// thread: warps by butterfly, then the warp sums in order.
__device__ float blockSum(float v, float *scratch) {
  for (int offset = 16; offset >= 1; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  const unsigned warp = threadIdx.x / 32;
  __syncthreads(); // scratch may still be read by the previous sum
  if (threadIdx.x % 32 == 0)
    scratch[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (unsigned w = 0; w < kThreads / 32; ++w)
    total += scratch[w];
  return total;
}

/// One block per row: out[r,c] = bf16((x - mean) * rstd * gamma[c] +
/// beta[c]), mean and var (population, two passes) in FP32, rstd =
/// rsqrtf(var + eps) (rsqrt.approx.f32, as the generated kernels and
/// PyTorch's LayerNorm).
__global__ void mossFallbackLayerNorm(const __nv_bfloat16 *x,
                                      const __nv_bfloat16 *gamma,
                                      const __nv_bfloat16 *beta, float eps,
                                      __nv_bfloat16 *out, long long k) {
  __shared__ float scratch[kThreads / 32];
  const __nv_bfloat16 *row = x + (long long)blockIdx.x * k;
  __nv_bfloat16 *outRow = out + (long long)blockIdx.x * k;
  float sum = 0.f;
  for (long long c = threadIdx.x; c < k; c += kThreads)
    sum += __bfloat162float(row[c]);
  const float mean = blockSum(sum, scratch) / (float)k;
  float squares = 0.f;
  for (long long c = threadIdx.x; c < k; c += kThreads) {
    float d = __bfloat162float(row[c]) - mean;
    squares += d * d;
  }
  const float var = blockSum(squares, scratch) / (float)k;
  const float rstd = rsqrtf(var + eps);
  for (long long c = threadIdx.x; c < k; c += kThreads) {
    float centred = __bfloat162float(row[c]) - mean;
    outRow[c] =
        __float2bfloat16_rn(centred * rstd * __bfloat162float(gamma[c]) +
                            __bfloat162float(beta[c]));
  }
}
constexpr long long kMaxBlocks = 4096;

unsigned blocksFor(long long count) {
  long long blocks = (count + kThreads - 1) / kThreads;
  return (unsigned)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

Status functionFor(const DriverApi &api, const void *symbol, const char *name,
                   CUfunction &out) {
  cudaFunction_t fn = nullptr;
  cudaError_t err = cudaGetFuncBySymbol(&fn, symbol);
  if (err != cudaSuccess)
    return failure(MOSS_ERROR_CUDA,
                   std::string("loading fallback epilogue ") + name +
                       ": cudaGetFuncBySymbol: " + cudaGetErrorName(err) +
                       " (" + cudaGetErrorString(err) + ")");
  out = reinterpret_cast<CUfunction>(fn);
  if (api.funcLoad) {
    CUresult loaded = api.funcLoad(out);
    if (loaded != CUDA_SUCCESS)
      return cudaFailure(std::string("loading fallback epilogue ") + name,
                         loaded);
  }
  return success();
}

Status launch(const DriverApi &api, CUfunction fn, const char *name,
              long long count, void **params, CUstream stream) {
  CUresult result = api.launchKernel(fn, blocksFor(count), 1, 1, kThreads, 1, 1,
                                     0, stream, params, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure(std::string("launching fallback epilogue ") + name,
                       result);
  return success();
}

} // namespace

Status loadEpilogueKernels(const DriverApi &api, EpilogueKernels &out) {
  EpilogueKernels kernels;
  Status status =
      functionFor(api, (const void *)mossFallbackGelu, "gelu", kernels.gelu);
  if (status.ok())
    status = functionFor(api, (const void *)mossFallbackLayerScaleResidual,
                         "layerscale_residual", kernels.layerScaleResidual);
  if (status.ok())
    status = functionFor(api, (const void *)mossFallbackLayerNorm, "layernorm",
                         kernels.layerNorm);
  if (status.ok())
    status = loadRopeCacheKernel(api, kernels.ropeCache);
  if (status.ok())
    out = kernels;
  return status;
}

Status launchLayerNormPrologue(const DriverApi &api, const EpilogueKernels &k,
                               const void *x, const void *gamma,
                               const void *beta, float eps, void *out,
                               int64_t rows, int64_t cols, CUstream stream) {
  long long count = (long long)cols;
  void *params[] = {&x, &gamma, &beta, &eps, &out, &count};
  CUresult result =
      api.launchKernel(k.layerNorm, (unsigned)rows, 1, 1, kThreads, 1, 1, 0,
                       stream, params, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("launching fallback prologue layernorm", result);
  return success();
}

Status launchGeluEpilogue(const DriverApi &api, const EpilogueKernels &k,
                          void *out, int64_t m, int64_t n, CUstream stream) {
  long long count = (long long)(m * n);
  void *params[] = {&out, &count};
  return launch(api, k.gelu, "gelu", count, params, stream);
}

Status launchLayerScaleResidualEpilogue(const DriverApi &api,
                                        const EpilogueKernels &k, void *out,
                                        const void *scale, const void *residual,
                                        const void *live, int64_t m, int64_t n,
                                        CUstream stream) {
  long long count = (long long)(m * n);
  long long cols = (long long)n;
  void *params[] = {&out, &scale, &residual, &live, &count, &cols};
  return launch(api, k.layerScaleResidual, "layerscale_residual", count, params,
                stream);
}

} // namespace moss::runtime
