//===- GemmDispatch.cpp - moss_ffn_gemm: generated kernel or fallback -----===//
//
// One call: validate, find the context's state, then either launch the
// generated kernel the whitelist selected (one launch; split-K reduces inside
// its thread-block cluster) or run cuBLASLt and the exact epilogue kernel
// (moss_layernorm_gemm and moss_qkv_rope_cache: the exact prologue kernel
// before it, in row chunks through the stream's workspace slot). Nothing here
// synchronizes or loads modules once the context is set up, and device memory
// is allocated only for a stream's first LayerNorm fallback when every reserved
// slot is taken, never during capture, so calls can be captured into CUDA
// graphs.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "FallbackRopeCache.h"
#include "RuntimeImpl.h"

#include "moss/Config/GemmMode.h"

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
  const void *rowLive = c.usesScaleResidual() ? c.rowLive : nullptr;
  void *out = c.out;
  int32_t m = static_cast<int32_t>(c.m);
  int32_t prefetchW = programmatic ? 1 : 0;
  const void *gamma = c.gamma, *beta = c.beta;
  float eps = c.eps;
  const RopeCacheArgs none{};
  const RopeCacheArgs &r = c.ropeCache ? *c.ropeCache : none;
  const void *positions = r.positions, *live = r.live;
  void *kCache = r.kCache, *vCache = r.vCache, *slotPositions = r.slotPositions;
  int32_t length = static_cast<int32_t>(r.length);
  int32_t capacity = static_cast<int32_t>(r.capacity);
  // The kernel ABI's order; kernels of a LayerNorm mode take gamma, beta
  // and eps, those of mode 5 the rest too (the driver reads as many as the
  // function has).
  void *params[] = {
      &x,    &w,         &scale,  &residual,      &rowLive, &out,
      &m,    &prefetchW, &gamma,  &beta,          &eps,     &positions,
      &live, &kCache,    &vCache, &slotPositions, &length,  &capacity};

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
  // moss_qkv_rope_cache: the chunk's product goes to the slot too, after
  // the normalised rows, and its epilogue kernel writes q and the cache.
  const int64_t productBytes = c.ropeCache ? c.n * 2 : 0;
  const int64_t chunkRows =
      static_cast<int64_t>(half) / (rowBytes + productBytes);
  if (chunkRows < 1)
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "the workspace slot (" + std::to_string(slot->cublasBytes) +
                       " bytes) cannot hold one normalised row of k = " +
                       std::to_string(c.k) + " twice");
  char *rows = static_cast<char *>(slot->cublas);
  char *product = rows + chunkRows * rowBytes;
  void *ltWorkspace = rows + half;
  for (int64_t first = 0; first < c.m; first += chunkRows) {
    GemmCall chunk = c;
    chunk.m = std::min(chunkRows, c.m - first);
    const void *x = static_cast<const char *>(c.x) + first * rowBytes;
    void *out = c.ropeCache ? static_cast<void *>(product)
                            : static_cast<char *>(c.out) + first * c.n * 2;
    Status status =
        launchLayerNormPrologue(api, state.epilogue, x, c.gamma, c.beta, c.eps,
                                rows, chunk.m, c.k, c.stream);
    if (status.ok())
      status = runLtRows(state, chunk, rows, out, ltWorkspace,
                         slot->cublasBytes - half);
    if (status.ok() && c.ropeCache) {
      const RopeCacheArgs &r = *c.ropeCache;
      RopeCacheChunk ropeChunk{
          product,     first,           chunk.m,  c.k,
          r.positions, r.live,          c.out,    r.kCache,
          r.vCache,    r.slotPositions, r.length, r.capacity};
      status = launchRopeCacheEpilogue(api, state.epilogue.ropeCache, ropeChunk,
                                       c.stream);
    }
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
    status = launchLayerScaleResidualEpilogue(api, state.epilogue, c.out,
                                              c.scale, c.residual, c.rowLive,
                                              c.m, c.n, c.stream);
  if (!status.ok())
    return failure(status.code, c.label() + ": " + status.message);
  return success();
}

Status runGemm(moss_runtime_s &rt, const GemmCall &c) {
  Status status = checkGemmShape(c);
  if (!status.ok() || c.m == 0)
    return status; // m == 0: nothing to compute, pointers not read.
  if (c.ropeCache)
    status = checkRopeCacheArgs(c);
  if (status.ok())
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

MOSS_RUNTIME_API int moss_qkv_rope_cache_is_selected(moss_runtime_t rt,
                                                     int64_t batch,
                                                     int64_t length,
                                                     int64_t d_model) {
  int64_t m = 0, n = 0;
  if (!rt || batch < 1 || length < 1 || d_model < 1 ||
      __builtin_mul_overflow(batch, length, &m) ||
      __builtin_mul_overflow(d_model, 3, &n))
    return 0;
  RopeCacheArgs r{nullptr, nullptr, nullptr, nullptr,
                  nullptr, batch,   length,  length};
  GemmArgs c{m,       n,       d_model, MOSS_EPILOGUE_NONE, nullptr, nullptr,
             nullptr, nullptr, nullptr};
  c.layerNorm = true;
  c.ropeCache = &r;
  if (!checkGemmShape(c).ok() || !checkRopeCacheShape(c).ok())
    return 0;
  return rt->kernels.find(m, n, d_model, c.mode()) ? 1 : 0;
}

MOSS_RUNTIME_API moss_status_t moss_qkv_rope_cache(
    moss_runtime_t rt, int64_t batch, int64_t length, int64_t d_model,
    const void *x, const void *gamma, const void *beta, float eps,
    const void *w_qkv, const int64_t *positions, const void *live, void *q,
    const moss_ring_cache *cache, void *stream) {
  if (!rt)
    return report(nullptr, invalidArgument("moss_qkv_rope_cache: rt is NULL"));
  try {
    // The sizes first, so the messages can use the call's label.
    const moss_ring_cache none{};
    const moss_ring_cache &ring = cache ? *cache : none;
    RopeCacheArgs r{positions,           live,  ring.k, ring.v,
                    ring.slot_positions, batch, length, ring.capacity};
    int64_t m = 0, n = 0;
    const bool sizesFit = batch >= 0 &&
                          !__builtin_mul_overflow(batch, length, &m) &&
                          !__builtin_mul_overflow(d_model, 3, &n);
    GemmCall c{{m, n, d_model, MOSS_EPILOGUE_NONE, x, w_qkv, nullptr, nullptr,
                q, /*layerNorm=*/true, gamma, beta, eps, &r},
               static_cast<CUstream>(stream)};
    if (!sizesFit)
      return report(rt, invalidArgument(c.label() +
                                        ": batch must be >= 0 and "
                                        "batch*length, 3*d_model must not "
                                        "overflow"));
    if (!cache)
      return report(rt, invalidArgument(c.label() + ": cache is NULL"));
    return report(rt, runGemm(*rt, c)); // batch == 0: m == 0, a no-op
  } catch (...) {
    return report(rt, failure(MOSS_ERROR_CUDA,
                              "moss_qkv_rope_cache: out of host memory"));
  }
}

MOSS_RUNTIME_API moss_status_t moss_ffn_gemm(moss_runtime_t rt, int64_t m,
                                             int64_t n, int64_t k,
                                             moss_epilogue_t ep, const void *x,
                                             const void *w, const void *scale,
                                             const void *residual, void *out,
                                             void *stream) {
  return moss_ffn_gemm_live(rt, m, n, k, ep, x, w, scale, residual, nullptr,
                            out, stream);
}

MOSS_RUNTIME_API moss_status_t moss_ffn_gemm_live(
    moss_runtime_t rt, int64_t m, int64_t n, int64_t k, moss_epilogue_t ep,
    const void *x, const void *w, const void *scale, const void *residual,
    const void *live, void *out, void *stream) {
  if (!rt)
    return report(nullptr, invalidArgument("moss_ffn_gemm: rt is NULL"));
  try {
    GemmCall c{{m, n, k, static_cast<int>(ep), x, w, scale, residual, out},
               static_cast<CUstream>(stream)};
    c.rowLive = live;
    return report(rt, runGemm(*rt, c));
  } catch (...) {
    return report(
        rt, failure(MOSS_ERROR_CUDA, "moss_ffn_gemm: out of host memory"));
  }
}

} // extern "C"
