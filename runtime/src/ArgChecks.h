//===- ArgChecks.h - The C API's argument checks ----------------*- C++ -*-===//
//
// What moss_ffn_gemm, moss_layernorm_gemm and moss_streaming_attention
// check before they touch
// CUDA: sizes, pointers, alignment, strides and overlap, each failure named
// in its message. Pure functions of the arguments (pointers are compared,
// never read), so they are tested without a GPU
// (unittests/Runtime/ArgChecksTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_RUNTIME_ARGCHECKS_H
#define MOSS_RUNTIME_ARGCHECKS_H

#include "Status.h"

#include "moss/Runtime/moss_runtime.h"

#include <cstdint>
#include <string>

namespace moss::runtime {

/// What moss_qkv_rope_cache adds to its LayerNorm GEMM (m = batch *
/// length, n = 3 d, k = d; out is q [m, d]).
struct RopeCacheArgs {
  const int64_t *positions;
  const void *live;
  void *kCache, *vCache;
  int64_t *slotPositions;
  int64_t batch, length, capacity;
};

/// The arguments of moss_ffn_gemm and moss_ffn_gemm_live (layerNorm false),
/// moss_layernorm_gemm (true: gamma, beta and eps are read) or
/// moss_qkv_rope_cache (ropeCache too: mode 5, ep NONE), less the stream.
struct GemmArgs {
  int64_t m, n, k;
  int ep;
  const void *x, *w, *scale, *residual;
  void *out;
  bool layerNorm = false;
  const void *gamma = nullptr, *beta = nullptr;
  float eps = 0.f;
  const RopeCacheArgs *ropeCache = nullptr;
  /// moss_ffn_gemm_live's live [m] bytes (read with layerscale_residual);
  /// NULL: every row live.
  const void *rowLive = nullptr;

  bool usesScaleResidual() const {
    return ep == MOSS_EPILOGUE_LAYERSCALE_RESIDUAL;
  }
  /// The whitelist mode of the call (moss/Config/GemmMode.h); -1 when none
  /// combines its prologue and epilogue.
  int mode() const;
  /// "moss_ffn_gemm(m=.., n=.., k=.., ep=..)" (or moss_layernorm_gemm, or
  /// "moss_qkv_rope_cache(batch=.., length=.., d_model=..)"), the prefix of
  /// every message.
  std::string label() const;
};

/// Epilogue and sizes: a known ep that has a mode with the call's prologue
/// (moss_layernorm_gemm: none or gelu), m in [0, INT32_MAX], n and k in
/// [1, INT32_MAX], and eps finite and >= 0. Needs no pointers
/// (moss_gemm_is_selected uses it).
Status checkGemmShape(const GemmArgs &a);

/// x, w, out (and scale, residual for layerscale_residual; gamma, beta for
/// the LayerNorm): not NULL, 2-byte aligned, within the address space, out
/// overlapping none of them; row live bytes (layerscale_residual, when not
/// NULL) within the address space and not overlapping out.
Status checkGemmPointers(const GemmArgs &a);

/// Whether every pointer the call reads or writes is 16-byte aligned, as the
/// generated kernels need (else the call takes the fallback).
bool gemmPointersAligned16(const GemmArgs &a);

/// moss_qkv_rope_cache's sizes, after checkGemmShape: 1 <= length <=
/// capacity <= INT32_MAX, n = 3 k with k (d_model) a multiple of 64. Needs no
/// pointers (moss_qkv_rope_cache_is_selected uses it).
Status checkRopeCacheShape(const GemmArgs &a);

/// moss_qkv_rope_cache's own requirements (moss_runtime.h), after
/// checkGemmShape: checkRopeCacheShape, the cache's and the positions'
/// pointers, their alignment and extents, and that q, the caches and the
/// slot table overlap nothing else.
Status checkRopeCacheArgs(const GemmArgs &a);

/// Every requirement of moss_streaming_attention (moss_runtime.h): sizes,
/// D == 64, pointers, 16-byte alignment of q/k/v/out, strides (D contiguous,
/// rows multiples of 8 elements, none negative), extents within the address
/// space, out overlapping no input, layout and scale.
Status checkAttentionArgs(const moss_attention_args &a);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_ARGCHECKS_H
