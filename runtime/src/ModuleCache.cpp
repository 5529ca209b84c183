//===- ModuleCache.cpp - Modules, cuBLASLt and workspace per context ------===//

#include "ModuleCache.h"

#include "moss/Config/AttentionLaunch.h"

#include <cuda_runtime_api.h>

#include <string>

namespace moss::runtime {
namespace {

bool isSpecialStream(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY ||
         stream == CU_STREAM_PER_THREAD;
}

std::string deviceText(const DriverApi &api, CUdevice device, int major,
                       int minor) {
  char name[256] = {};
  api.deviceGetName(name, sizeof(name) - 1, device);
  return "device " + std::to_string(device) + " (" + name +
         ", compute capability " + std::to_string(major) + "." +
         std::to_string(minor) + ")";
}

/// Looks up `fn` in `module` (loaded from `cubinPath`, listed in
/// `manifestPath`) and readies it for launch: cuFuncLoad, its block within
/// the function's thread limit, and the dynamic shared memory it asks for
/// allowed past the default 48 KiB.
Status loadFunction(const DriverApi &api, CUmodule module,
                    const config::KernelFunctionRecord &fn,
                    const std::string &cubinPath,
                    const std::string &manifestPath, CUfunction &out) {
  CUfunction function = nullptr;
  CUresult result = api.moduleGetFunction(&function, module, fn.symbol.c_str());
  if (result != CUDA_SUCCESS)
    return failure(MOSS_ERROR_MANIFEST, "cubin " + cubinPath +
                                            " has no kernel \"" + fn.symbol +
                                            "\" listed in " + manifestPath +
                                            ": " + cuResultText(result));
  if (api.funcLoad && (result = api.funcLoad(function)) != CUDA_SUCCESS)
    return cudaFailure("cuFuncLoad(" + fn.symbol + ")", result);
  int maxThreads = 0;
  api.funcGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                       function);
  int64_t threads = fn.block[0] * fn.block[1] * fn.block[2];
  if (threads > maxThreads)
    return failure(MOSS_ERROR_MANIFEST,
                   "kernel \"" + fn.symbol + "\" in " + cubinPath +
                       " is launched with up to " + std::to_string(threads) +
                       " threads but its resources allow only " +
                       std::to_string(maxThreads));
  if (fn.dynamicSharedBytes > 48 * 1024) {
    result = api.funcSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(fn.dynamicSharedBytes));
    if (result != CUDA_SUCCESS)
      return cudaFailure("allowing " + std::to_string(fn.dynamicSharedBytes) +
                             " bytes of dynamic shared memory for " + fn.symbol,
                         result);
  }
  out = function;
  return success();
}

} // namespace

ScopedContext::~ScopedContext() {
  if (pushed) {
    CUcontext popped = nullptr;
    api->ctxPopCurrent(&popped);
  }
}

Status ScopedContext::enter(const DriverApi &driver, CUcontext context) {
  api = &driver;
  CUcontext current = nullptr;
  CUresult result = api->ctxGetCurrent(&current);
  if (result != CUDA_SUCCESS)
    return cudaFailure("cuCtxGetCurrent", result);
  if (current == context)
    return success();
  result = api->ctxPushCurrent(context);
  if (result != CUDA_SUCCESS)
    return cudaFailure("making the stream's context current", result);
  pushed = true;
  return success();
}

uint64_t streamKey(const DriverApi &api, CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY)
    return 1;
  if (stream == CU_STREAM_PER_THREAD) {
    unsigned long long id = 0;
    api.streamGetId(stream, &id);
    return id | (uint64_t(1) << 63); // Ids are small; handles are addresses.
  }
  return reinterpret_cast<uint64_t>(stream);
}

ModuleCache::~ModuleCache() {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[id, state] : states)
    release(*state);
  states.clear();
}

Status ModuleCache::setUpCurrent() {
  const DriverApi *api = nullptr;
  Status status = getDriverApi(api);
  if (!status.ok())
    return status;
  CUcontext context = nullptr;
  CUresult result = api->ctxGetCurrent(&context);
  if (result != CUDA_SUCCESS)
    return cudaFailure("cuCtxGetCurrent", result);
  if (!context) {
    // Like any CUDA runtime call would: the current device's primary context.
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
      err = cudaSetDevice(device);
    if (err != cudaSuccess)
      return failure(MOSS_ERROR_CUDA,
                     std::string("initializing the primary context: ") +
                         cudaGetErrorName(err) + " (" +
                         cudaGetErrorString(err) + ")");
    result = api->ctxGetCurrent(&context);
    if (result != CUDA_SUCCESS || !context)
      return cudaFailure("cuCtxGetCurrent after cudaSetDevice", result);
  }
  ContextState *state = nullptr;
  return stateForCurrent(context, nullptr, state);
}

Status ModuleCache::enter(CUstream stream, ScopedContext &scope,
                          ContextState *&out) {
  const DriverApi *api = nullptr;
  Status status = getDriverApi(api);
  if (!status.ok())
    return status;
  CUcontext context = nullptr;
  CUresult result = isSpecialStream(stream)
                        ? api->ctxGetCurrent(&context)
                        : api->streamGetCtx(stream, &context);
  if (result != CUDA_SUCCESS)
    return cudaFailure(isSpecialStream(stream)
                           ? std::string("cuCtxGetCurrent")
                           : std::string("cuStreamGetCtx (is the stream "
                                         "valid?)"),
                       result);
  if (!context) {
    // No context on this thread yet: bind the current device's primary one,
    // as the CUDA runtime would for the default stream.
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
      err = cudaSetDevice(device);
    if (err == cudaSuccess)
      result = api->ctxGetCurrent(&context);
    if (err != cudaSuccess || result != CUDA_SUCCESS || !context)
      return failure(MOSS_ERROR_CUDA,
                     "no CUDA context is current on this thread and the "
                     "primary context could not be bound");
  }
  status = scope.enter(*api, context);
  if (!status.ok())
    return status;
  return stateForCurrent(context, stream, out);
}

Status ModuleCache::stateForCurrent(CUcontext context, CUstream stream,
                                    ContextState *&out) {
  const DriverApi &api = *driverApi();
  unsigned long long id = 0;
  CUresult result = api.ctxGetId(context, &id);
  if (result != CUDA_SUCCESS)
    return cudaFailure("cuCtxGetId", result);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = states.find(id);
  if (it != states.end()) {
    out = it->second.get();
    return success();
  }
  bool capturing = false;
  if (Status status = streamCapturing(api, stream, capturing); !status.ok())
    return status;
  if (capturing)
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "first call in CUDA context " + std::to_string(id) +
                       " made during stream capture: loading modules and "
                       "reserving workspace cannot be captured; make one "
                       "call in this context (or create the runtime in it) "
                       "before capturing");
  auto state = std::make_unique<ContextState>();
  state->context = context;
  state->contextId = id;
  Status status = setUp(*state);
  if (!status.ok()) {
    release(*state);
    return status;
  }
  out = state.get();
  states.emplace(id, std::move(state));
  return success();
}

Status ModuleCache::setUp(ContextState &state) {
  const DriverApi &api = *driverApi();
  CUdevice device = 0;
  CUresult result = api.ctxGetDevice(&device);
  if (result != CUDA_SUCCESS)
    return cudaFailure("cuCtxGetDevice", result);
  int major = 0, minor = 0;
  api.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         device);
  api.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         device);
  if (kernels.hasKernels() &&
      (major != kSupportedCcMajor || minor != kSupportedCcMinor))
    return failure(MOSS_ERROR_UNSUPPORTED,
                   deviceText(api, device, major, minor) +
                       " cannot run the kernels in " + kernels.kernelsDir +
                       ": they are built for " + kernels.chip +
                       " (compute capability 9.0); create the runtime "
                       "without a kernels dir to use the fallback only");

  for (const GemmKernel &kernel : kernels.gemm) {
    LoadedGemm loaded;
    result = api.moduleLoadData(&loaded.module, kernel.cubinBytes.data());
    state.gemm.push_back(loaded); // Recorded first so release() unloads it.
    if (result != CUDA_SUCCESS) {
      state.gemm.back().module = nullptr;
      return cudaFailure("cuModuleLoadData(" + kernel.cubinPath + ") on " +
                             deviceText(api, device, major, minor),
                         result);
    }
    // The record's one function (checked when the manifest was read).
    for (const config::KernelFunctionRecord &fn : kernel.record.functions) {
      Status status =
          loadFunction(api, loaded.module, fn, kernel.cubinPath,
                       kernels.manifestPath, state.gemm.back().main);
      if (!status.ok())
        return status;
    }
  }

  for (const AttentionKernel &kernel : kernels.attention) {
    LoadedAttention loaded;
    result = api.moduleLoadData(&loaded.module, kernel.cubinBytes.data());
    if (result != CUDA_SUCCESS)
      return cudaFailure("cuModuleLoadData(" + kernel.cubinPath + ") on " +
                             deviceText(api, device, major, minor),
                         result);
    state.attention.push_back(loaded); // Recorded so release() unloads it.
    // A one-pass and a split function per key-group count; each record asks for
    // kAttentionMaxSharedBytes (checked when the manifest was read).
    for (size_t i = 0; i < kernel.record.functions.size(); ++i) {
      Status status = loadFunction(
          api, loaded.module, kernel.record.functions[i], kernel.cubinPath,
          kernels.manifestPath, state.attention.back().functions[i]);
      if (!status.ok())
        return status;
    }
  }

  Status status = loadEpilogueKernels(api, state.epilogue);
  if (!status.ok())
    return status;
  cublasStatus_t lt = cublasLtCreate(&state.cublas);
  if (lt != CUBLAS_STATUS_SUCCESS) {
    state.cublas = nullptr;
    return cublasFailure("cublasLtCreate", lt);
  }

  size_t cublasBytes = roundUpToWorkspaceAlign(config.cublasBytes);
  if (cublasBytes && config.slots) {
    result = api.memAlloc(&state.workspace, cublasBytes * config.slots);
    if (result != CUDA_SUCCESS) {
      state.workspace = 0;
      return cudaFailure("reserving " +
                             std::to_string(cublasBytes * config.slots) +
                             " bytes of workspace",
                         result);
    }
  }
  for (size_t i = 0; i < config.slots; ++i) {
    WorkspaceSlot slot;
    slot.cublas = cublasBytes ? reinterpret_cast<char *>(state.workspace) +
                                    i * cublasBytes
                              : nullptr;
    slot.cublasBytes = cublasBytes;
    state.slots.push_back(slot);
  }
  return success();
}

void ModuleCache::release(ContextState &state) {
  const DriverApi *api = driverApi();
  if (!api)
    return;
  // Skip a context that no longer exists (destroyed, or device reset): its
  // modules and memory went with it.
  unsigned long long id = 0;
  if (api->ctxGetId(state.context, &id) != CUDA_SUCCESS ||
      id != state.contextId)
    return;
  ScopedContext scope;
  if (!scope.enter(*api, state.context).ok())
    return;
  state.plans.clear();
  if (state.cublas)
    cublasLtDestroy(state.cublas);
  if (state.workspace)
    api->memFree(state.workspace);
  for (CUdeviceptr memory : state.addedSlots)
    api->memFree(memory);
  state.addedSlots.clear();
  for (LoadedGemm &loaded : state.gemm)
    if (loaded.module)
      api->moduleUnload(loaded.module);
  for (LoadedAttention &loaded : state.attention)
    if (loaded.module)
      api->moduleUnload(loaded.module);
  state.cublas = nullptr;
  state.workspace = 0;
  state.gemm.clear();
  state.attention.clear();
  state.slots.clear();
}

} // namespace moss::runtime
