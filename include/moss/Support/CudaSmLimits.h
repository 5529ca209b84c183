//===- CudaSmLimits.h - A device's per-SM limits for Occupancy.h -*- C++
//-*-===//
//
// Header-only, for code that has the CUDA runtime (moss-bench, moss-tune,
// the GPU tests): the occupancy model's limits as the device reports them.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_SUPPORT_CUDASMLIMITS_H
#define MOSS_SUPPORT_CUDASMLIMITS_H

#include "moss/Config/Occupancy.h"

#include <cuda_runtime_api.h>

namespace moss {

inline config::SmLimits smLimitsOf(const cudaDeviceProp &prop) {
  config::SmLimits limits;
  limits.registers = prop.regsPerMultiprocessor;
  limits.registersPerCta = prop.regsPerBlock;
  limits.sharedBytes = int64_t(prop.sharedMemPerMultiprocessor);
  limits.reservedSharedBytesPerCta = int64_t(prop.reservedSharedMemPerBlock);
  limits.threads = prop.maxThreadsPerMultiProcessor;
  limits.ctas = prop.maxBlocksPerMultiProcessor;
  return limits;
}

} // namespace moss

#endif // MOSS_SUPPORT_CUDASMLIMITS_H
