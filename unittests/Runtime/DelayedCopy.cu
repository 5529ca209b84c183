//===- DelayedCopy.cu - A kernel that lets dependents start, then writes -===//

#include "DelayedCopy.h"

#include <cstdint>

namespace moss::runtime::test {
namespace {

__device__ void copy16(const void *src, void *dst, size_t bytes) {
  const uint4 *from = static_cast<const uint4 *>(src);
  uint4 *to = static_cast<uint4 *>(dst);
  size_t count = bytes / 16, step = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    to[i] = from[i];
}

__global__ void delayedCopyKernel(DelayedCopy copy) {
  // Dependents may be scheduled as soon as every CTA has passed this point.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  long long start = clock64();
  while (clock64() - start < copy.spinCycles) {
  }
  copy16(copy.watch, copy.seen, copy.watchBytes);
  for (int i = 0; i < DelayedCopy::kPairs; ++i)
    copy16(copy.src[i], copy.dst[i], copy.bytes[i]);
}

} // namespace

cudaError_t launchDelayedCopy(const DelayedCopy &copy, cudaStream_t stream) {
  delayedCopyKernel<<<8, 256, 0, stream>>>(copy);
  return cudaGetLastError();
}

} // namespace moss::runtime::test
