//===- DriverApi.h - CUDA driver entry points, resolved at run time -*- C++
//-*-//
//
// The runtime does not link libcuda: the driver's entry points come from
// cudaGetDriverEntryPointByVersion, so libmoss_runtime.so loads (and its
// manifest checks run) on machines without an NVIDIA driver, where create()
// then reports "no CUDA device".
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_DRIVERAPI_H
#define MOSS_RUNTIME_DRIVERAPI_H

#include "Status.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace moss::runtime {

struct DriverApi {
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuGetErrorString_v6000 getErrorString = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent = nullptr;
  PFN_cuCtxPushCurrent_v4000 ctxPushCurrent = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctxPopCurrent = nullptr;
  PFN_cuCtxGetDevice_v2000 ctxGetDevice = nullptr;
  PFN_cuCtxGetId_v12000 ctxGetId = nullptr;
  PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute = nullptr;
  PFN_cuDeviceGetName_v2000 deviceGetName = nullptr;
  PFN_cuStreamGetCtx_v9020 streamGetCtx = nullptr;
  PFN_cuStreamGetId_v12000 streamGetId = nullptr;
  PFN_cuStreamIsCapturing_v10000 streamIsCapturing = nullptr;
  PFN_cuModuleLoadData_v2000 moduleLoadData = nullptr;
  PFN_cuModuleGetFunction_v2000 moduleGetFunction = nullptr;
  PFN_cuModuleUnload_v2000 moduleUnload = nullptr;
  PFN_cuFuncGetAttribute_v2020 funcGetAttribute = nullptr;
  PFN_cuFuncSetAttribute_v9000 funcSetAttribute = nullptr;
  PFN_cuFuncLoad_v12040 funcLoad = nullptr; ///< Optional (driver >= 12.4).
  PFN_cuLaunchKernel_v4000 launchKernel = nullptr;
  PFN_cuLaunchKernelEx_v11060 launchKernelEx = nullptr;
  PFN_cuMemAlloc_v3020 memAlloc = nullptr;
  PFN_cuMemFree_v3020 memFree = nullptr;
  /// The attention kernel's K/V tensor maps (host-side encoding only).
  PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncodeTiled = nullptr;
};

/// Resolves the entry points once per process. Fails with MOSS_ERROR_CUDA
/// "no CUDA device (...)" when there is no driver or no device.
Status getDriverApi(const DriverApi *&out);

/// The driver API once getDriverApi succeeded (else nullptr).
const DriverApi *driverApi();

/// "CUDA_ERROR_X (description)" for a driver result.
std::string cuResultText(CUresult result);

/// MOSS_ERROR_CUDA "<what>: CUDA_ERROR_X (description)".
Status cudaFailure(const std::string &what, CUresult result);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_DRIVERAPI_H
