//===- FallbackEpilogue.cu - Exact epilogues after the cuBLASLt GEMM ------===//
//
// Elementwise and memory bound (m*n <= a few hundred thousand elements for
// the decoder), so plain grid-stride loops; what matters is the rounding:
// FP32 math on the bf16 value cuBLASLt wrote, one bf16 rounding per step of
// the contract. Built without fast math so erff is the accurate one.
//
//===----------------------------------------------------------------------===//

#include "FallbackEpilogue.h"

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
                                               long long count,
                                               long long cols) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    float v = __bfloat162float(out[i]);
    float scaled = __bfloat162float(
        __float2bfloat16_rn(v * __bfloat162float(scale[i % cols])));
    out[i] = __float2bfloat16_rn(scaled + __bfloat162float(residual[i]));
  }
}

constexpr unsigned kThreads = 256;
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
    out = kernels;
  return status;
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
                                        int64_t m, int64_t n, CUstream stream) {
  long long count = (long long)(m * n);
  long long cols = (long long)n;
  void *params[] = {&out, &scale, &residual, &count, &cols};
  return launch(api, k.layerScaleResidual, "layerscale_residual", count, params,
                stream);
}

} // namespace moss::runtime
