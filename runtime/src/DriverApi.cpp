//===- DriverApi.cpp - CUDA driver entry points, resolved at run time -----===//

#include "DriverApi.h"

#include <cuda_runtime_api.h>

#include <mutex>

namespace moss::runtime {
namespace {

DriverApi theApi;
Status theStatus;
bool resolved = false;

/// Version whose ABI the PFN_*_v typedefs of DriverApi describe.
constexpr unsigned kDriverAbiVersion = 12000;

template <typename Fn>
bool resolve(const char *symbol, Fn &fn, unsigned version, std::string &err) {
  void *address = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  cudaError_t result = cudaGetDriverEntryPointByVersion(
      symbol, &address, version, cudaEnableLegacyStream, &query);
  if (result != cudaSuccess || query != cudaDriverEntryPointSuccess ||
      !address) {
    err = std::string("driver entry point ") + symbol + " not found (" +
          cudaGetErrorName(result) + ")";
    return false;
  }
  fn = reinterpret_cast<Fn>(address);
  return true;
}

Status resolveAll() {
  int devices = 0;
  cudaError_t counted = cudaGetDeviceCount(&devices);
  if (counted != cudaSuccess)
    return failure(MOSS_ERROR_CUDA, std::string("no CUDA device (") +
                                        cudaGetErrorName(counted) + ": " +
                                        cudaGetErrorString(counted) + ")");
  if (devices <= 0)
    return failure(MOSS_ERROR_CUDA, "no CUDA device (the driver reports 0)");

  DriverApi api;
  std::string err;
  bool ok =
      resolve("cuGetErrorName", api.getErrorName, kDriverAbiVersion, err) &&
      resolve("cuGetErrorString", api.getErrorString, kDriverAbiVersion, err) &&
      resolve("cuCtxGetCurrent", api.ctxGetCurrent, kDriverAbiVersion, err) &&
      resolve("cuCtxPushCurrent", api.ctxPushCurrent, kDriverAbiVersion, err) &&
      resolve("cuCtxPopCurrent", api.ctxPopCurrent, kDriverAbiVersion, err) &&
      resolve("cuCtxGetDevice", api.ctxGetDevice, kDriverAbiVersion, err) &&
      resolve("cuCtxGetId", api.ctxGetId, kDriverAbiVersion, err) &&
      resolve("cuDeviceGetAttribute", api.deviceGetAttribute, kDriverAbiVersion,
              err) &&
      resolve("cuDeviceGetName", api.deviceGetName, kDriverAbiVersion, err) &&
      resolve("cuStreamGetCtx", api.streamGetCtx, kDriverAbiVersion, err) &&
      resolve("cuStreamGetId", api.streamGetId, kDriverAbiVersion, err) &&
      resolve("cuStreamIsCapturing", api.streamIsCapturing, kDriverAbiVersion,
              err) &&
      resolve("cuModuleLoadData", api.moduleLoadData, kDriverAbiVersion, err) &&
      resolve("cuModuleGetFunction", api.moduleGetFunction, kDriverAbiVersion,
              err) &&
      resolve("cuModuleUnload", api.moduleUnload, kDriverAbiVersion, err) &&
      resolve("cuFuncGetAttribute", api.funcGetAttribute, kDriverAbiVersion,
              err) &&
      resolve("cuFuncSetAttribute", api.funcSetAttribute, kDriverAbiVersion,
              err) &&
      resolve("cuLaunchKernel", api.launchKernel, kDriverAbiVersion, err) &&
      resolve("cuLaunchKernelEx", api.launchKernelEx, kDriverAbiVersion, err) &&
      resolve("cuMemAlloc", api.memAlloc, kDriverAbiVersion, err) &&
      resolve("cuMemFree", api.memFree, kDriverAbiVersion, err) &&
      resolve("cuTensorMapEncodeTiled", api.tensorMapEncodeTiled, 12000, err);
  if (!ok)
    return failure(MOSS_ERROR_CUDA, "CUDA driver too old: " + err);
  // cuFuncLoad only forces eager loading under CUDA_MODULE_LOADING=LAZY.
  std::string ignored;
  resolve("cuFuncLoad", api.funcLoad, 12040, ignored);
  theApi = api;
  return success();
}

} // namespace

Status getDriverApi(const DriverApi *&out) {
  static std::once_flag once;
  std::call_once(once, [] {
    theStatus = resolveAll();
    resolved = theStatus.ok();
  });
  out = resolved ? &theApi : nullptr;
  return theStatus;
}

const DriverApi *driverApi() { return resolved ? &theApi : nullptr; }

std::string cuResultText(CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (const DriverApi *api = driverApi()) {
    api->getErrorName(result, &name);
    api->getErrorString(result, &text);
  }
  std::string out =
      name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status cudaFailure(const std::string &what, CUresult result) {
  return failure(MOSS_ERROR_CUDA, what + ": " + cuResultText(result));
}

} // namespace moss::runtime
