//===- GemmDispatch.cpp - moss_ffn_gemm: generated kernel or fallback -----===//
//
// One call: validate, find the context's state, then either launch the
// generated kernel the whitelist selected (one launch; split-K reduces inside
// its thread-block cluster) or run cuBLASLt and the exact epilogue kernel
// (moss_layernorm_gemm: the exact prologue kernel before it, in row chunks
// through the stream's workspace slot). Nothing here synchronizes or loads
// modules once the context is set up, and device memory is allocated only
// for a stream's first LayerNorm fallback when every reserved slot is taken,
// never during capture, so calls can be captured into CUDA graphs.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "RuntimeImpl.h"

#include <algorithm>
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
  const void *gamma = c.gamma, *beta = c.beta;
  float eps = c.eps;
  // The kernel ABI's order; kernels of a LayerNorm mode take the last three
  // (the driver reads as many as the function has).
  void *params[] = {&x, &w,         &scale, &residual, &out,
                    &m, &prefetchW, &gamma, &beta,     &eps};

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

/// cuBLASLt's out = x . w^T for rows [0, c.m) of `x` and `out`.
Status runLtRows(ContextState &state, const GemmCall &c, const void *x,
                 void *out, void *workspace, size_t workspaceBytes) {
  LtShape shape;
  shape.m = c.m;
  shape.n = c.n;
  shape.k = c.k;
  shape.alignX = alignmentOf(x);
  shape.alignW = alignmentOf(c.w);
  shape.alignOut = alignmentOf(out);
  shape.workspaceBytes = workspaceBytes;
  const LtPlan *plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    Status status = state.plans.get(state.cublas, shape, plan);
    if (!status.ok())
      return status;
  }
  return runLtGemm(state.cublas, *plan, x, c.w, out, workspace,
                   shape.workspaceBytes, c.stream);
}

/// The LayerNorm prologue and cuBLASLt, chunk by chunk: the normalised rows
/// go to the first half of the stream's workspace slot, cuBLASLt's own
/// workspace is the second half (stream order keeps the chunks apart). A
/// stream without a slot gets one of its own (not during capture).
Status runLayerNormRows(const DriverApi &api, ContextState &state,
                        const GemmCall &c, const WorkspaceSlot *slot,
                        size_t slotBytes) {
  if (!slot) {
    std::lock_guard<std::mutex> lock(state.mutex);
    Status status = state.addSlotLocked(api, streamKey(api, c.stream), c.stream,
                                        slotBytes, slot);
    if (!status.ok())
      return status;
  }
  const size_t half = slot->cublasBytes / 2 / 256 * 256;
  const int64_t rowBytes = c.k * 2;
  const int64_t chunkRows = static_cast<int64_t>(half) / rowBytes;
  if (chunkRows < 1)
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "the workspace slot (" + std::to_string(slot->cublasBytes) +
                       " bytes) cannot hold one normalised row of k = " +
                       std::to_string(c.k) + " twice");
  char *rows = static_cast<char *>(slot->cublas);
  void *ltWorkspace = rows + half;
  for (int64_t first = 0; first < c.m; first += chunkRows) {
    GemmCall chunk = c;
    chunk.m = std::min(chunkRows, c.m - first);
    const void *x = static_cast<const char *>(c.x) + first * rowBytes;
    void *out = static_cast<char *>(c.out) + first * c.n * 2;
    Status status =
        launchLayerNormPrologue(api, state.epilogue, x, c.gamma, c.beta, c.eps,
                                rows, chunk.m, c.k, c.stream);
    if (status.ok())
      status = runLtRows(state, chunk, rows, out, ltWorkspace,
                         slot->cublasBytes - half);
    if (!status.ok())
      return status;
  }
  return success();
}

Status runFallback(const DriverApi &api, ContextState &state, const GemmCall &c,
                   const WorkspaceSlot *slot, size_t slotBytes) {
  Status status = c.layerNorm ? runLayerNormRows(api, state, c, slot, slotBytes)
                              : runLtRows(state, c, c.x, c.out,
                                          slot ? slot->cublas : nullptr,
                                          slot ? slot->cublasBytes : 0);
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

  const GemmKernel *kernel = rt.kernels.find(c.m, c.n, c.k, c.mode());
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
  // A slot of its own for a LayerNorm on a stream that has none: the
  // reserved slots' size, at least 16 MiB.
  const size_t slotBytes = std::max<size_t>(
      rt.modules->workspaceConfig().cublasBytes, size_t(16) << 20);
  return runFallback(api, *state, c, slot, slotBytes);
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
  return rt->kernels.find(m, n, k, c.mode()) ? 1 : 0;
}

MOSS_RUNTIME_API int moss_layernorm_gemm_is_selected(moss_runtime_t rt,
                                                     int64_t m, int64_t n,
                                                     int64_t k,
                                                     moss_epilogue_t ep) {
  if (!rt)
    return 0;
  GemmArgs c{m,       n,       k,      static_cast<int>(ep), nullptr, nullptr,
             nullptr, nullptr, nullptr};
  c.layerNorm = true;
  if (!checkGemmShape(c).ok() || m == 0)
    return 0;
  return rt->kernels.find(m, n, k, c.mode()) ? 1 : 0;
}

MOSS_RUNTIME_API moss_status_t moss_layernorm_gemm(
    moss_runtime_t rt, int64_t m, int64_t n, int64_t k, moss_epilogue_t ep,
    const void *x, const void *gamma, const void *beta, float eps,
    const void *w, void *out, void *stream) {
  if (!rt)
    return report(nullptr, invalidArgument("moss_layernorm_gemm: rt is NULL"));
  try {
    GemmCall c{{m, n, k, static_cast<int>(ep), x, w, nullptr, nullptr, out,
                /*layerNorm=*/true, gamma, beta, eps},
               static_cast<CUstream>(stream)};
    return report(rt, runGemm(*rt, c));
  } catch (...) {
    return report(rt, failure(MOSS_ERROR_CUDA,
                              "moss_layernorm_gemm: out of host memory"));
  }
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
