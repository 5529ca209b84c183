//===- GemmDispatch.cpp - moss_ffn_gemm: generated kernel or fallback -----===//
//
// One call: validate, find the context's state, then either launch the
// generated kernel the whitelist selected (one launch; split-K reduces inside
// its thread-block cluster) or run cuBLASLt and the exact epilogue kernel.
// Nothing
// here synchronizes, allocates device memory or loads modules once the
// context is set up, so calls can be captured into CUDA graphs.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "RuntimeImpl.h"

#include <climits>
#include <cstdint>
#include <string>

namespace moss::runtime {
namespace {

/// One call: its arguments and stream.
struct GemmCall : GemmArgs {
  CUstream stream;
};

Status launchGenerated(const DriverApi &api, const GemmKernel &kernel,
                       const LoadedGemm &loaded, const GemmCall &c,
                       bool programmatic) {
  const void *x = c.x, *w = c.w;
  const void *scale = c.usesScaleResidual() ? c.scale : nullptr;
  const void *residual = c.usesScaleResidual() ? c.residual : nullptr;
  void *out = c.out;
  int32_t m = static_cast<int32_t>(c.m);
  int32_t prefetchW = programmatic ? 1 : 0;
  void *params[] = {&x, &w, &scale, &residual, &out, &m, &prefetchW};

  const config::KernelFunctionRecord &fn = kernel.record.functions[0];
  CUlaunchConfig launch = {};
  launch.gridDimX = static_cast<unsigned>(fn.grid.x);
  launch.gridDimY =
      static_cast<unsigned>((c.m + fn.grid.yPerM - 1) / fn.grid.yPerM);
  launch.gridDimZ = static_cast<unsigned>(fn.grid.z);
  launch.blockDimX = static_cast<unsigned>(fn.block[0]);
  launch.blockDimY = static_cast<unsigned>(fn.block[1]);
  launch.blockDimZ = static_cast<unsigned>(fn.block[2]);
  launch.sharedMemBytes = static_cast<unsigned>(fn.dynamicSharedBytes);
  launch.hStream = c.stream;
  // The kernel runs griddepcontrol either way; only this attribute lets it
  // start (and fetch W) before the previous kernel in the stream finished.
  CUlaunchAttribute overlap = {};
  overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  overlap.value.programmaticStreamSerializationAllowed = 1;
  if (programmatic) {
    launch.attrs = &overlap;
    launch.numAttrs = 1;
  }
  CUresult result = api.launchKernelEx(&launch, loaded.main, params, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure(c.label() + ": launching " + fn.symbol, result);
  return success();
}

Status runFallback(const DriverApi &api, ContextState &state, const GemmCall &c,
                   const WorkspaceSlot *slot) {
  LtShape shape;
  shape.m = c.m;
  shape.n = c.n;
  shape.k = c.k;
  shape.alignX = alignmentOf(c.x);
  shape.alignW = alignmentOf(c.w);
  shape.alignOut = alignmentOf(c.out);
  shape.workspaceBytes = slot ? slot->cublasBytes : 0;
  const LtPlan *plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    Status status = state.plans.get(state.cublas, shape, plan);
    if (!status.ok())
      return failure(status.code, c.label() + ": " + status.message);
  }
  Status status =
      runLtGemm(state.cublas, *plan, c.x, c.w, c.out,
                slot ? slot->cublas : nullptr, shape.workspaceBytes, c.stream);
  if (status.ok() && c.ep == MOSS_EPILOGUE_GELU)
    status = launchGeluEpilogue(api, state.epilogue, c.out, c.m, c.n, c.stream);
  if (status.ok() && c.ep == MOSS_EPILOGUE_LAYERSCALE_RESIDUAL)
    status = launchLayerScaleResidualEpilogue(
        api, state.epilogue, c.out, c.scale, c.residual, c.m, c.n, c.stream);
  if (!status.ok())
    return failure(status.code, c.label() + ": " + status.message);
  return success();
}

Status runGemm(moss_runtime_s &rt, const GemmCall &c) {
  Status status = checkGemmShape(c);
  if (!status.ok() || c.m == 0)
    return status; // m == 0: nothing to compute, pointers not read.
  status = checkGemmPointers(c);
  if (!status.ok())
    return status;

  ScopedContext scope;
  ContextState *state = nullptr;
  status = rt.modules->enter(c.stream, scope, state);
  if (!status.ok())
    return failure(status.code, c.label() + ": " + status.message);
  const DriverApi &api = *driverApi();

  const GemmKernel *kernel = rt.kernels.find(c.m, c.n, c.k, c.ep);
  if (kernel && gemmPointersAligned16(c)) {
    size_t index = static_cast<size_t>(kernel - rt.kernels.gemm.data());
    return launchGenerated(
        api, *kernel, state->gemm[index], c,
        rt.modules->workspaceConfig().gemmProgrammaticLaunch);
  }
  // cuBLASLt's workspace is per stream slot.
  const WorkspaceSlot *slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    slot = state->slotForLocked(streamKey(api, c.stream));
  }
  return runFallback(api, *state, c, slot);
}

} // namespace
} // namespace moss::runtime

using namespace moss::runtime;

extern "C" {

MOSS_RUNTIME_API int moss_gemm_is_selected(moss_runtime_t rt, int64_t m,
                                           int64_t n, int64_t k,
                                           moss_epilogue_t ep) {
  if (!rt)
    return 0;
  GemmArgs c{m,       n,       k,      static_cast<int>(ep), nullptr, nullptr,
             nullptr, nullptr, nullptr};
  if (!checkGemmShape(c).ok() || m == 0)
    return 0;
  return rt->kernels.find(m, n, k, c.ep) ? 1 : 0;
}

MOSS_RUNTIME_API moss_status_t moss_ffn_gemm(moss_runtime_t rt, int64_t m,
                                             int64_t n, int64_t k,
                                             moss_epilogue_t ep, const void *x,
                                             const void *w, const void *scale,
                                             const void *residual, void *out,
                                             void *stream) {
  if (!rt)
    return report(nullptr, invalidArgument("moss_ffn_gemm: rt is NULL"));
  try {
    GemmCall c{{m, n, k, static_cast<int>(ep), x, w, scale, residual, out},
               static_cast<CUstream>(stream)};
    return report(rt, runGemm(*rt, c));
  } catch (...) {
    return report(
        rt, failure(MOSS_ERROR_CUDA, "moss_ffn_gemm: out of host memory"));
  }
}

} // extern "C"
