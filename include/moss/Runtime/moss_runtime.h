/*===- moss_runtime.h - Thin C runtime for moss kernels ---------*- C -*-===*
 *
 * Loads the cubins that moss-aot wrote into kernels_generated/ (checked
 * against manifest.json and the whitelist they were built from) and runs the
 * codec's FFN GEMMs with one call each: the generated kernel when the
 * whitelist names the shape, else cuBLASLt (BF16 in, FP32 compute) followed
 * by an exact epilogue kernel. Both paths honour the rounding contract of
 * docs/design.md: v = bf16(acc); GELU out = bf16(0.5*v*(1+erf(v/sqrt 2)))
 * in FP32; LayerScale out = bf16(bf16(v*scale[n]) + residual[m,n]).
 *
 * Calls never synchronize the host, never allocate device memory and never
 * load modules once the runtime has set up the CUDA context they run in, so
 * they can be captured into CUDA graphs. Setup per context happens:
 *   - in moss_runtime_create, for the context current on the calling thread
 *     (the primary context of the current device if none is current);
 *   - lazily, on the first call that runs in another context (the stream's
 *     context, or the current one for the default stream). That first call
 *     loads the modules and reserves workspace; it must not be made while
 *     the stream is being captured (it then fails with
 *     MOSS_ERROR_UNSUPPORTED and says so).
 * A fallback shape's first call makes its cuBLASLt plan on the host, which
 * is fine inside a capture; cuBLASLt may still load its own kernels on first
 * use, so a capture-critical shape can be warmed up with one eager call.
 *
 * Workspace (cuBLASLt's, for the fallback) is reserved per context at setup,
 * in MOSS_RUNTIME_WORKSPACE_SLOTS slots (environment variable read at
 * create, default 4, 1..64). A stream gets a slot of its own the first time
 * it is used; calls on streams that came after all slots were taken run
 * cuBLASLt without workspace (generated GEMMs and attention need none),
 * which is slower but never races. Bindings last as long as the runtime, so
 * reuse a few streams rather than creating one per call. A CUDA graph
 * captured on stream S uses S's slot: do not replay it concurrently with
 * other work that uses S's slot (calls on S, or replays of other graphs
 * captured on S). MOSS_ATTENTION_SPLITS (1..8, read at create) forces the
 * split-KV count of every attention call instead of the launch rule,
 * MOSS_ATTENTION_KV_GROUPS (1..4) its key-group count and
 * MOSS_ATTENTION_COPY_WARPS (0..3) the warps that only share a CTA's K/V
 * copies (2- and 3-group launches): tuning knobs for measuring the rule, not
 * serving settings.
 *
 * Programmatic dependent launch (MOSS_CODEC_GEMM_PDL=1, read at create; 0 or
 * unset = off): generated GEMMs are launched with
 * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, so each may start
 * while the kernel before it in the stream still runs (that kernel must let
 * it: generated GEMMs do, at their start) and fetch its weight w meanwhile;
 * it reads x, scale and residual and writes out only after that kernel has
 * completed. In a captured graph the edge becomes a programmatic dependency.
 * Precondition: no kernel that may still be running when the GEMM is
 * launched writes w (weights written once at load, then synchronized, are
 * fine). The whitelist configs/h200-tuned-pdl.json was tuned with it on and
 * its tiles are meant for that launch. The fallback path is unchanged.
 * Leave it off if weights may be rewritten by the kernel just before a GEMM
 * on the same stream (docs/configuration.md).
 *
 * MOSS_ATTENTION_PDL=1 (read at create; 0 or unset = off) launches
 * moss_streaming_attention the same way. It assumes nothing: the kernel
 * reads and writes global memory only after the previous kernel in the
 * stream has completed, so only its launch and index math overlap that
 * kernel's end.
 *
 * Thread safety: every function may be called concurrently from several
 * threads on one runtime, except moss_runtime_destroy, which must not race
 * with any other call on that runtime and must come after the GPU work it
 * issued has finished (it frees the workspace).
 *
 * Errors: every failing call returns a status and records a message for the
 * calling thread, read with moss_runtime_last_error(rt) (rt may be NULL for
 * a failed moss_runtime_create or a call made with rt == NULL).
 *
 *===----------------------------------------------------------------------===*/

#ifndef MOSS_RUNTIME_MOSS_RUNTIME_H
#define MOSS_RUNTIME_MOSS_RUNTIME_H

#include <stdint.h>

#if defined(_WIN32)
#if defined(MOSS_RUNTIME_BUILDING)
#define MOSS_RUNTIME_API __declspec(dllexport)
#else
#define MOSS_RUNTIME_API __declspec(dllimport)
#endif
#else
#define MOSS_RUNTIME_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the declarations in this header: raised whenever a function,
 * enum or struct here changes incompatibly, so that a binding built against
 * one header (python/moss_kernels) can refuse a library built from another
 * instead of calling it with the wrong layout. */
#define MOSS_RUNTIME_API_VERSION 5

typedef struct moss_runtime_s *moss_runtime_t;

/* The enums are int-sized in both languages. In C++ their underlying type is
 * fixed to int, so any int a caller passes (Python's ctypes, a C caller) is a
 * valid value for the runtime to check and refuse; without it, a value
 * outside the enumerators' range would be undefined behaviour in C++. */
#ifdef __cplusplus
#define MOSS_ENUM_BASE : int
#else
#define MOSS_ENUM_BASE
#endif

typedef enum MOSS_ENUM_BASE {
  MOSS_OK = 0,
  MOSS_ERROR_INVALID_ARGUMENT = 1,   /* bad pointer, size, enum or alias */
  MOSS_ERROR_MANIFEST = 2,           /* manifest, cubin or whitelist broken */
  MOSS_ERROR_CACHE_KEY_MISMATCH = 3, /* kernels built from another whitelist */
  MOSS_ERROR_CUDA = 4,               /* CUDA driver/runtime error, no device */
  MOSS_ERROR_CUBLAS = 5,             /* cuBLASLt error or no algorithm */
  MOSS_ERROR_UNSUPPORTED = 6         /* valid request this runtime can't do */
} moss_status_t;

/* The fused epilogue of the FFN GEMM (the whitelist key's "mode"). */
typedef enum MOSS_ENUM_BASE {
  MOSS_EPILOGUE_NONE = 0,
  MOSS_EPILOGUE_GELU = 1,               /* exact erf-GELU, never tanh */
  MOSS_EPILOGUE_LAYERSCALE_RESIDUAL = 2 /* bf16(bf16(v*scale[n]) + res) */
} moss_epilogue_t;

/* Storage order of the attention output. */
typedef enum MOSS_ENUM_BASE {
  MOSS_LAYOUT_BTHD = 0,
  MOSS_LAYOUT_BHTD = 1
} moss_layout_t;
#undef MOSS_ENUM_BASE

/* The MOSS_RUNTIME_API_VERSION the library was built with. Needs no runtime
 * and no GPU; never fails. */
MOSS_RUNTIME_API int moss_runtime_api_version(void);

/* The moss version the library was built with (e.g. "0.1.0"), part of the
 * cache key of the manifests it accepts. Needs no runtime; never NULL. */
MOSS_RUNTIME_API const char *moss_runtime_version(void);

/* Creates a runtime.
 *
 * kernels_dir: folder with manifest.json, or NULL/"" for fallback only.
 * whitelist_path: the whitelist the kernels must have been built from;
 *   NULL = $MOSS_CODEC_GEMM_CONFIG; neither = no generated GEMMs (every GEMM
 *   takes the cuBLASLt fallback; attention kernels still load when
 *   kernels_dir is given). "" counts as not given. Without kernels_dir the
 *   whitelist is not read.
 * A manifest whose cache_key does not match the whitelist's bytes (with this
 * runtime's MOSS_VERSION and the manifest's chip and pipeline) ->
 * MOSS_ERROR_CACHE_KEY_MISMATCH, naming both keys and the whitelist path.
 *
 * The manifest, the whitelist and every cubin's sha256 are checked before
 * CUDA is touched; then the modules are loaded and the workspace reserved
 * for the calling thread's current context (see the top of this file).
 * On failure *out is set to NULL. */
MOSS_RUNTIME_API moss_status_t moss_runtime_create(const char *kernels_dir,
                                                   const char *whitelist_path,
                                                   moss_runtime_t *out);

/* Unloads modules and frees workspace in every context the runtime set up.
 * NULL is a no-op. The GPU work issued through rt must have finished. */
MOSS_RUNTIME_API void moss_runtime_destroy(moss_runtime_t rt);

/* Message of the last failed call on this thread with this runtime (rt NULL:
 * of the last failed create, or call made with rt == NULL). Never NULL; ""
 * when nothing failed. Valid until the next failing call on this thread. */
MOSS_RUNTIME_API const char *moss_runtime_last_error(moss_runtime_t rt);

/* 1 when moss_ffn_gemm with this shape and epilogue runs a generated kernel
 * (given 16-byte aligned pointers), 0 when it takes the fallback or the
 * arguments are invalid. */
MOSS_RUNTIME_API int moss_gemm_is_selected(moss_runtime_t rt, int64_t m,
                                           int64_t n, int64_t k,
                                           moss_epilogue_t ep);

/* out[m,n] = epilogue(x[m,k] . w[n,k]^T), FP32 accumulation.
 *
 * x [m,k], w [n,k], residual and out [m,n]: bf16 row-major contiguous;
 * scale [n] bf16; stream is a cudaStream_t (NULL = default stream).
 * scale and residual are read only for MOSS_EPILOGUE_LAYERSCALE_RESIDUAL
 * (required then, may be NULL otherwise).
 * Alignment: every pointer must be at least 2-byte aligned (else
 * MOSS_ERROR_INVALID_ARGUMENT); generated kernels need all of them 16-byte
 * aligned, a call with a less aligned pointer takes the fallback.
 * out must not overlap x, w, scale or residual (MOSS_ERROR_INVALID_ARGUMENT).
 * m == 0 is a no-op returning MOSS_OK (pointers are not read). m, n, k must
 * be <= INT32_MAX; n, k >= 1. Asynchronous: returns once the work is queued
 * on the stream. */
MOSS_RUNTIME_API moss_status_t moss_ffn_gemm(moss_runtime_t rt, int64_t m,
                                             int64_t n, int64_t k,
                                             moss_epilogue_t ep, const void *x,
                                             const void *w, const void *scale,
                                             const void *residual, void *out,
                                             void *stream);

/* moss_ffn_gemm whose LAYERSCALE_RESIDUAL result y is multiplied by the
 * row's live byte: out[r,:] = bf16(y[r,:] * (live[r] != 0)), so the padding
 * frames of a decoder layer's last GEMM leave it as zeros (a NaN stays NaN,
 * as in the reference's y * live). live [m] is one byte per row (a torch
 * bool tensor), any alignment, read only for LAYERSCALE_RESIDUAL; NULL:
 * every row live (= moss_ffn_gemm). It must not overlap out. The generated
 * kernels read it in their epilogue, the fallback in its epilogue kernel;
 * selection is moss_gemm_is_selected's. (API version 5 added this.) */
MOSS_RUNTIME_API moss_status_t moss_ffn_gemm_live(
    moss_runtime_t rt, int64_t m, int64_t n, int64_t k, moss_epilogue_t ep,
    const void *x, const void *w, const void *scale, const void *residual,
    const void *live, void *out, void *stream);

/* out[m,n] = epilogue(LN(x)[m,k] . w[n,k]^T): moss_ffn_gemm with a
 * LayerNorm of each x row first (the whitelist modes 3 layernorm, ep NONE,
 * and 4 layernorm_gelu, ep GELU; LAYERSCALE_RESIDUAL has no such mode and
 * is refused). In FP32: mean and var (population) over the row's k values,
 * rstd = rsqrt(var + eps) (rsqrt.approx.f32), LN(x)[r,c] = bf16((x -
 * mean)*rstd*gamma[c] + beta[c]), rounded once; then the product and epilogue
 * as moss_ffn_gemm. gamma, beta [k] bf16; eps finite and >= 0. The pointers
 * follow moss_ffn_gemm's rules (gamma and beta too; out overlaps none of them).
 * The fallback normalises x into the stream's workspace slot (up to half
 * of it at a time) and runs cuBLASLt on it; a stream that finds every one of
 * the MOSS_RUNTIME_WORKSPACE_SLOTS reserved slots taken reserves a slot of
 * its own at its first such call, which therefore must not be made during
 * stream capture (MOSS_ERROR_UNSUPPORTED, saying so). (API version 3 added
 * this.) */
MOSS_RUNTIME_API moss_status_t moss_layernorm_gemm(
    moss_runtime_t rt, int64_t m, int64_t n, int64_t k, moss_epilogue_t ep,
    const void *x, const void *gamma, const void *beta, float eps,
    const void *w, void *out, void *stream);

/* moss_gemm_is_selected for moss_layernorm_gemm. (API version 3.) */
MOSS_RUNTIME_API int moss_layernorm_gemm_is_selected(moss_runtime_t rt,
                                                     int64_t m, int64_t n,
                                                     int64_t k,
                                                     moss_epilogue_t ep);

/* The ring KV cache of one attention layer: k and v [batch, heads,
 * capacity, 64] bf16 and slot_positions [batch, capacity] int64, all
 * contiguous. The frame at absolute position p of row b lives in slot
 * p % capacity; slot_positions[b,s] is the position slot s holds, -1 when it
 * is empty (python/moss_kernels/ring_cache.py). (API version 4.) */
typedef struct {
  void *k;
  void *v;
  int64_t *slot_positions;
  int64_t capacity;
} moss_ring_cache;

/* A decoder layer's LayerNorm, QKV projection, RoPE and ring-cache write in
 * one call (whitelist mode 5, layernorm_rope_cache). With m = batch*length
 * rows of x [m, d] (d = d_model, a multiple of 64; heads = d/64) and w_qkv
 * [3d, d]:
 *   qkv = moss_layernorm_gemm(x, gamma, beta, eps, w_qkv), ep NONE: the
 *         bf16 [m, 3d] product, columns q, k, v of [heads, 64] each;
 *   q and k of row r turned by its position p = positions[r] (interleaved
 *         RoPE: dims (2i, 2i+1) by the angle float(p) * 10000^(-2i/64), in
 *         FP32 on the bf16 values, rounded to bf16 once);
 *   q -> q [batch, length, heads, 64] (the attention's q, BTHD storage);
 *   k, v -> cache->k, cache->v [b, h, p % capacity, :];
 *   cache->slot_positions[b, p % capacity] = live[r] ? p : -1 (a padding
 *         frame empties its slot).
 * positions [batch, length] int64 and live [batch, length] bool (one byte,
 * nonzero = a real frame) are contiguous. Each row's positions must be >= 0
 * and consecutive: the call cannot read them without a host sync, so a
 * batch row whose positions are not writes nothing into the cache or the
 * table (q is still written). Requirements (else
 * MOSS_ERROR_INVALID_ARGUMENT, naming the argument): 1 <= length <=
 * capacity <= INT32_MAX, batch >= 0, batch*length <= INT32_MAX; pointers
 * non-NULL; x, w_qkv, gamma, beta, q, k, v 2-byte aligned, positions and
 * slot_positions 8-byte aligned; q, k, v and slot_positions overlap nothing
 * else. batch == 0 is a no-op. The generated kernel needs x, w_qkv, gamma,
 * beta, q, k and v 16-byte aligned (else the fallback: moss_layernorm_gemm's
 * prologue and cuBLASLt in the stream's workspace slot, then an exact RoPE
 * and cache kernel). Asynchronous, capturable, no allocation after the
 * stream's first fallback call (as moss_layernorm_gemm). (API version 4.) */
MOSS_RUNTIME_API moss_status_t moss_qkv_rope_cache(
    moss_runtime_t rt, int64_t batch, int64_t length, int64_t d_model,
    const void *x, const void *gamma, const void *beta, float eps,
    const void *w_qkv, const int64_t *positions, const void *live, void *q,
    const moss_ring_cache *cache, void *stream);

/* 1 when moss_qkv_rope_cache with these sizes runs a generated kernel (given
 * 16-byte aligned pointers), 0 otherwise. (API version 4.) */
MOSS_RUNTIME_API int moss_qkv_rope_cache_is_selected(moss_runtime_t rt,
                                                     int64_t batch,
                                                     int64_t length,
                                                     int64_t d_model);

typedef struct {
  int64_t B, H, T, S, D;
  const void *q;
  int64_t q_stride[4]; /* bf16, logical [B,H,T,D], strides in elements */
  const void *k;
  int64_t k_stride[4]; /* bf16, [B,H,S,D] */
  const void *v;
  int64_t v_stride[4]; /* bf16, [B,H,S,D] */
  const void *mask;
  int64_t mask_stride[3]; /* one byte per key, nonzero = allowed, [B,1,T,S]:
                             strides of b, t, s */
  void *out; /* contiguous storage [B,T,H,D] (BTHD) or [B,H,T,D] (BHTD) */
  moss_layout_t layout;
  int skip_empty_tiles;
  float scale; /* 0 -> D^-0.5 */
  /* The mask from positions, instead of `mask` (then NULL): int64
   * slot_positions [B,S] (S contiguous; the absolute position of the frame
   * each ring slot holds, negative for an empty slot) and query_positions
   * [B,T] (T contiguous; negative for a padding frame); strides of b in
   * elements. NULL both to read `mask`. (API version 2 added these.) */
  const int64_t *slot_positions;
  int64_t slot_positions_stride_b;
  const int64_t *query_positions;
  int64_t query_positions_stride_b;
} moss_attention_args;

/* Masked attention over a ring KV cache (moss.streaming_attention):
 * out = softmax(scale * q.k^T over the keys the mask allows) . v, FP32
 * online softmax, BF16 tensor cores; a query row with no allowed key gets
 * exact zeros. Runs the generated attention kernel of the manifest
 * (docs/kernel-abi.md, "Attention kernel ABI"); without one ->
 * MOSS_ERROR_UNSUPPORTED (there is no fallback).
 *
 * Requirements (else MOSS_ERROR_INVALID_ARGUMENT, naming the argument):
 *   - B, H, T, S in [1, INT32_MAX], D == 64; T at most 65535 * 64;
 *   - q, k, v and out non-NULL, 16-byte aligned; either mask non-NULL, or
 *     mask NULL and slot_positions and query_positions non-NULL, 8-byte
 *     aligned, with strides of b >= 0;
 *   - q/k/v: innermost (D) stride 1, the other strides >= 0 and multiples of
 *     8 elements (true for contiguous caches and for q as a view of a fused
 *     [B,T,3,H,D] QKV projection); mask: any alignment, strides >= 0;
 *   - out must not overlap q, k, v, mask or the positions;
 *   - scale finite and >= 0 (0 -> D^-0.5 = 0.125); layout BTHD or BHTD.
 * Precondition (not checked: it would read the data): the v rows of keys
 * the mask hides must hold finite values. A hidden key gets weight exactly 0,
 * but 0 * NaN is NaN in the tensor-core MMA; zero-initialise a ring cache's
 * unused slots.
 *
 * out: BTHD (default) writes contiguous [B,T,H,D] storage, so the logical
 * [B,H,T,D] result has strides (T*H*D, D, H*D, 1) and [B,T,H*D] for the
 * output projection is a free view; BHTD writes [B,H,T,D]. Both give the
 * same values bit for bit, as do skip_empty_tiles on and off (nonzero: skip
 * key tiles whose mask block is all false; helps sparse histories).
 *
 * With positions, key s is allowed for query t of row b where
 * p = slot_positions[b,s] >= 0, p <= query_positions[b,t] and
 * query_positions[b,t] - p < S: the ring cache's rule (a query with a
 * negative position sees no key and gets zeros). The result equals the
 * bool-mask call's with that mask bit for bit, and no mask is built.
 *
 * Short chunks split the keys across the CTAs of one thread-block cluster
 * (split-KV, flash-decoding style) by the rule
 * moss::config::deriveAttentionLaunch; the splits merge in the kernel in a
 * fixed order, so the result is deterministic for given sizes (another
 * split count, e.g. forced by MOSS_ATTENTION_SPLITS, agrees up to FP32
 * rounding: a few outputs may differ in the last bf16 bit). Asynchronous, no
 * host sync, no allocation: capturable in CUDA graphs and thread-safe like
 * moss_ffn_gemm. */
MOSS_RUNTIME_API moss_status_t moss_streaming_attention(
    moss_runtime_t rt, const moss_attention_args *args, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MOSS_RUNTIME_MOSS_RUNTIME_H */
