//===- FallbackRopeCache.cu - moss_qkv_rope_cache after cuBLASLt ----------===//
//
// The fallback's QKV epilogue: cuBLASLt has written the bf16 product qkv
// [rows, 3d] of a chunk of rows; this kernel turns q and k by each row's
// position and writes q, the ring cache and the slot table, as the generated
// kernel's epilogue does (lib/Kernels/Gemm/GemmRopeCache.cpp) and with the
// same inverse frequencies (moss::config::ropeInverseFrequency, passed by
// value). Products and sums are spelled __fmul_rn/__fsub_rn/__fadd_rn so
// nvcc cannot contract them into FMAs: the reference rounds each one.
//
//===----------------------------------------------------------------------===//

#include "FallbackRopeCache.h"

#include "moss/Config/GemmMode.h"

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace moss::runtime {
namespace {

constexpr int kPairs = config::kRopeHeadDim / 2;
constexpr long long kHeadDim = config::kRopeHeadDim;

struct RopeFrequencies {
  float value[kPairs];
};

/// Whether batch row b's `length` positions are >= 0 and consecutive.
__device__ bool batchRowValid(const long long *positions, long long b,
                              long long length) {
  const long long *row = positions + b * length;
  const long long first = row[0];
  bool valid = first >= 0;
  for (long long t = 1; t < length; ++t)
    valid = valid && row[t] >= 0 && row[t] == first + t;
  return valid;
}

/// One thread per (row, column pair) of rows [firstRow, firstRow + rows).
__global__ void mossFallbackRopeCache(
    const __nv_bfloat16 *qkv, long long firstRow, long long rows, long long d,
    const long long *positions, const unsigned char *live, __nv_bfloat16 *q,
    __nv_bfloat16 *kCache, __nv_bfloat16 *vCache, long long *slotPositions,
    long long length, long long capacity, RopeFrequencies frequencies) {
  const long long pairsPerRow = 3 * d / 2;
  const long long heads = d / kHeadDim;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < rows * pairsPerRow; i += stride) {
    const long long local = i / pairsPerRow;
    const long long column = 2 * (i % pairsPerRow);
    const long long row = firstRow + local;
    const long long part = column / d, col = column % d;
    const long long head = col / kHeadDim, dim = col % kHeadDim;
    const __nv_bfloat16 *in = qkv + local * 3 * d + column;
    __nv_bfloat16 even = in[0], odd = in[1];
    const long long position = positions[row];
    if (part < 2) {
      const float angle =
          __fmul_rn((float)position, frequencies.value[dim / 2]);
      const float c = cosf(angle), s = sinf(angle);
      const float e = __bfloat162float(even), o = __bfloat162float(odd);
      even = __float2bfloat16_rn(__fsub_rn(__fmul_rn(e, c), __fmul_rn(o, s)));
      odd = __float2bfloat16_rn(__fadd_rn(__fmul_rn(e, s), __fmul_rn(o, c)));
    }
    if (part == 0) {
      q[row * d + col] = even;
      q[row * d + col + 1] = odd;
    }
    if (part == 0 && column != 0)
      continue;
    const long long b = row / length;
    if (!batchRowValid(positions, b, length))
      continue; // the cache and the table are left as they were
    const long long slot = position % capacity;
    if (part != 0) {
      __nv_bfloat16 *cache = part == 1 ? kCache : vCache;
      const long long at = ((b * heads + head) * capacity + slot) * kHeadDim;
      cache[at + dim] = even;
      cache[at + dim + 1] = odd;
    }
    if (column == 0)
      slotPositions[b * capacity + slot] = live[row] ? position : -1;
  }
}

constexpr unsigned kThreads = 256;
constexpr long long kMaxBlocks = 4096;

} // namespace

Status loadRopeCacheKernel(const DriverApi &api, CUfunction &out) {
  cudaFunction_t fn = nullptr;
  cudaError_t err =
      cudaGetFuncBySymbol(&fn, (const void *)mossFallbackRopeCache);
  if (err != cudaSuccess)
    return failure(MOSS_ERROR_CUDA,
                   std::string("loading fallback epilogue rope_cache: "
                               "cudaGetFuncBySymbol: ") +
                       cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                       ")");
  out = reinterpret_cast<CUfunction>(fn);
  if (api.funcLoad) {
    CUresult loaded = api.funcLoad(out);
    if (loaded != CUDA_SUCCESS)
      return cudaFailure("loading fallback epilogue rope_cache", loaded);
  }
  return success();
}

Status launchRopeCacheEpilogue(const DriverApi &api, CUfunction kernel,
                               const RopeCacheChunk &chunk, CUstream stream) {
  RopeFrequencies frequencies;
  for (int i = 0; i < kPairs; ++i)
    frequencies.value[i] = config::ropeInverseFrequency(i);
  long long firstRow = chunk.firstRow, rows = chunk.rows, d = chunk.d;
  long long length = chunk.length, capacity = chunk.capacity;
  const void *qkv = chunk.qkv, *positions = chunk.positions, *live = chunk.live;
  void *q = chunk.q, *kCache = chunk.kCache, *vCache = chunk.vCache,
       *slotPositions = chunk.slotPositions;
  void *params[] = {&qkv,    &firstRow, &rows,       &d,      &positions,
                    &live,   &q,        &kCache,     &vCache, &slotPositions,
                    &length, &capacity, &frequencies};
  const long long pairs = rows * 3 * d / 2;
  long long blocks = (pairs + kThreads - 1) / kThreads;
  CUresult result = api.launchKernel(
      kernel, (unsigned)(blocks < kMaxBlocks ? blocks : kMaxBlocks), 1, 1,
      kThreads, 1, 1, 0, stream, params, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("launching fallback epilogue rope_cache", result);
  return success();
}

} // namespace moss::runtime
