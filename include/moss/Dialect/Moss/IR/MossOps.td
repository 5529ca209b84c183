//===- MossOps.td - moss operations ------------------------*- tablegen -*-===//
#ifndef MOSS_OPS
#define MOSS_OPS

include "moss/Dialect/Moss/IR/MossDialect.td"
include "moss/Dialect/Moss/IR/MossAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Moss_Op<string mnemonic, list<Trait> traits = []>
    : Op<Moss_Dialect, mnemonic, traits>;

def Moss_LinearOp : Moss_Op<"linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "GEMM x·Wᵀ with an optional LayerNorm prologue and a fused "
                "epilogue";
  let description = [{
    Computes `y[m, n] = epilogue(Σ_k x'[m, k] · w[n, k])` for `x : [M, K]`
    and `w : [N, K]`, BF16 operands, FP32 accumulation. `M` may be dynamic:
    generated kernels take it as a runtime argument.

    `x' = x`, or with `layernorm(%gamma, %beta) eps E` (`gamma, beta : [K]`
    BF16, `E` an f32 >= 0) each row normalised as `F.layer_norm` does on a
    BF16 input, with these rounding points: in FP32, `mean = Σ_k x / K` and
    `var = Σ_k (x − mean)² / K` (population variance; the generated kernel
    sums each K slice in two passes and combines split-K slices by Chan's
    formula in a fixed order), `rstd = rsqrt(var + E)` (the hardware's
    `rsqrt.approx.f32`, relative error <= 2^-22, as PyTorch's CUDA LayerNorm),
    then `x'[m, k] = bf16((x − mean)·rstd·gamma[k] + beta[k])`, rounded once. The LayerNorm modes of the whitelist are 3
    (`layernorm`, epilogue `none`) and 4 (`layernorm_gelu`, epilogue
    `gelu`); no mode combines it with `layerscale_residual`.

    Rounding is part of the contract. With `acc` the FP32 sum and
    `v = bf16(acc)` (round to nearest even):
    - `none` (mode 0): `y = v`;
    - `gelu` (mode 1): `y = bf16(0.5·v·(1 + erf(v/√2)))`, computed in FP32
      with the exact error function (never the tanh approximation);
    - `layerscale_residual` (mode 2): `y = bf16(bf16(v·scale[n]) +
      residual[m, n])`; `scale : [N]` and `residual : [M, N]` are required by
      this epilogue and forbidden by the others. With `row_live : [M]` (i1,
      also only with this epilogue) the result is `bf16(y · live[m])`: a
      decoder layer's padding frames leave its last GEMM as zeros (`y · 0`,
      so a NaN stays NaN, as in the reference's `y * live`).

    `tile` is attached by `moss-select-tiles` from the whitelist;
    `vendor_fallback` marks an op the whitelist does not name, which the
    runtime serves with cuBLASLt and an exact epilogue kernel.

    ```mlir
    %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 1>
        : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
    %z = moss.linear %h, %w2 scale(%ls : tensor<768xbf16>)
        residual(%res : tensor<?x768xbf16>) row_live(%live : tensor<?xi1>)
        epilogue layerscale_residual
        : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
    %u = moss.linear %h, %w1 layernorm(%g, %b : tensor<768xbf16>,
        tensor<768xbf16>) eps 1.0e-05 epilogue gelu
        : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$w,
                       Optional<AnyRankedTensor>:$scale,
                       Optional<AnyRankedTensor>:$residual,
                       Optional<AnyRankedTensor>:$row_live,
                       Optional<AnyRankedTensor>:$gamma,
                       Optional<AnyRankedTensor>:$beta,
                       OptionalAttr<F32Attr>:$eps,
                       Moss_EpilogueAttr:$epilogue,
                       OptionalAttr<Moss_TileAttr>:$tile,
                       UnitAttr:$vendor_fallback);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $x `,` $w
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`row_live` `(` $row_live^ `:` type($row_live) `)`)?
    (`layernorm` `(` $gamma^ `,` $beta `:` type($gamma) `,` type($beta) `)`)?
    (`eps` $eps^)?
    `epilogue` `` $epilogue
    (`tile` $tile^)?
    (`vendor_fallback` $vendor_fallback^)?
    attr-dict `:` type($x) `,` type($w) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The whitelist key's mode of the op: its prologue and epilogue
    /// (moss/Config/GemmMode.h); -1 for a combination no mode has.
    int getMode();
    /// The verifier's checks of gamma, beta and eps for a K of `k`.
    ::mlir::LogicalResult verifyLayerNorm(int64_t k);
  }];
}

def Moss_QkvRopeCacheOp : Moss_Op<"qkv_rope_cache", [Pure,
    AllTypesMatch<["k_cache", "k_cache_out"]>,
    AllTypesMatch<["v_cache", "v_cache_out"]>,
    AllTypesMatch<["slot_positions", "slot_positions_out"]>]> {
  let summary = "LayerNorm, QKV projection, RoPE and ring-cache write of a "
                "decoder layer";
  let description = [{
    The first step of a decoder layer, one generated kernel (whitelist mode
    5, `layernorm_rope_cache`, key `"M,3d,d,5"` with `M = B·T`). For
    `x : [B, T, d]` (`d = 64·H`), `w : [3d, d]`, `gamma, beta : [d]` (BF16),
    `positions : [B, T]` (i64, the frames' absolute positions, >= 0 and
    consecutive along T), `live : [B, T]` (i1, false for a padding frame) and
    the ring cache `k_cache, v_cache : [B, H, S, 64]` (BF16) with
    `slot_positions : [B, S]` (i64, -1 for an empty slot), `T <= S`:

    1. `x'` = the LayerNorm of `moss.linear`'s `layernorm(gamma, beta) eps E`
       (FP32 statistics, `rsqrt.approx.f32`, rounded to BF16 once);
    2. `v = bf16(acc)` of `acc = Σ_k x'[m, k] · w[n, k]` (FP32), columns
       `[0, d)` q, `[d, 2d)` k, `[2d, 3d)` v, each `[H, 64]`;
    3. q and k turned by interleaved RoPE at `p = positions[b, t]`: pair `i`
       of a head (dims `2i, 2i+1`) by `θ = f32(p) · f32(10000^(-2i/64))`
       (one rounded product), `(e, o) -> (bf16(e·cos θ − o·sin θ),
       bf16(e·sin θ + o·cos θ))` in FP32, each product and sum rounded (no
       FMA), cos and sin from libdevice;
    4. results: `q : [B, T, H, 64]`; the caches with `k` and `v` of frame
       `(b, t)` at slot `p mod S` of every head; `slot_positions[b, p mod S]
       = live ? p : -1` (`RingKvCache.append` of
       python/moss_kernels/ring_cache.py). A batch row whose positions are
       negative or not consecutive leaves its cache rows and slots as they
       were (q is still computed).

    `tile` comes from `moss-select-tiles`; `vendor_fallback` marks an op the
    whitelist does not name (cuBLASLt and exact prologue and epilogue
    kernels).

    ```mlir
    %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w
        layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05
        positions(%pos, %live : tensor<?x?xi64>, tensor<?x?xi1>)
        cache(%k, %v, %slots : tensor<?x12x250x64xbf16>,
              tensor<?x12x250x64xbf16>, tensor<?x250xi64>)
        : tensor<?x?x768xbf16>, tensor<2304x768xbf16> -> tensor<?x?x12x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$w,
                       AnyRankedTensor:$gamma, AnyRankedTensor:$beta,
                       F32Attr:$eps,
                       AnyRankedTensor:$positions, AnyRankedTensor:$live,
                       AnyRankedTensor:$k_cache, AnyRankedTensor:$v_cache,
                       AnyRankedTensor:$slot_positions,
                       OptionalAttr<Moss_TileAttr>:$tile,
                       UnitAttr:$vendor_fallback);
  let results = (outs AnyRankedTensor:$q, AnyRankedTensor:$k_cache_out,
                      AnyRankedTensor:$v_cache_out,
                      AnyRankedTensor:$slot_positions_out);
  let assemblyFormat = [{
    $x `,` $w
    `layernorm` `(` $gamma `,` $beta `:` type($gamma) `,` type($beta) `)`
    `eps` $eps
    `positions` `(` $positions `,` $live `:` type($positions) `,` type($live) `)`
    `cache` `(` $k_cache `,` $v_cache `,` $slot_positions `:` type($k_cache)
        `,` type($v_cache) `,` type($slot_positions) `)`
    (`tile` $tile^)?
    (`vendor_fallback` $vendor_fallback^)?
    attr-dict `:` type($x) `,` type($w) `->` type($q)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The whitelist mode of the op: layernorm_rope_cache
    /// (moss/Config/GemmMode.h).
    static int getMode();
  }];
}

def Moss_StreamingAttentionOp
    : Moss_Op<"streaming_attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "masked softmax attention over a ring KV cache";
  let description = [{
    For `q : [B, H, T, D]`, `k, v : [B, H, S, D]` (BF16) and a boolean
    `mask : [B, 1, T, S]`, computes for every query row
    `o[b, h, t] = Σ_s p[s] · v[b, h, s]` with
    `p = softmax_s(scale · q[b, h, t] · k[b, h, s])` over the keys `s` whose
    `mask[b, 0, t, s]` is true. Softmax is computed online in FP32; keys may
    be in any order (the ring's wrap lives in the mask); a row with no
    allowed key yields exact zeros, never NaN. `scale` defaults to `D^-0.5`.

    Instead of `mask`, `positions(%slot_positions, %query_positions)` (i64
    `[B, S]` and `[B, T]`) give the mask of a ring cache: key `s` is allowed
    for query `t` where `p = slot_positions[b, s] >= 0`,
    `p <= query_positions[b, t]` and `query_positions[b, t] - p < S` (the
    slot holds a frame of this stream, not after the query and less than S
    frames older; a negative query position, a padding frame, sees no key).
    The kernel builds that mask itself, and the result equals the `mask`
    form's with that mask bit for bit. Exactly one form is given.

    The result is the logical `[B, H, T, D]` tensor. With `layout bthd`
    (the default) its storage is `[B, T, H, D]`, so the output projection
    reads `[B, T, H·D]` without a copy; `bhtd` stores it as shaped.
    `skip_empty_tiles` lets a kernel skip key tiles whose mask block is all
    false (off by default; the results are bit-identical).

    ```mlir
    %o = moss.streaming_attention %q, %k, %v, %mask layout bthd
        : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>,
          tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1>
        -> tensor<?x12x?x64xbf16>
    %p = moss.streaming_attention %q, %k, %v positions(%slots, %frames)
        : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>,
          tensor<?x12x400x64xbf16> positions(tensor<?x400xi64>,
          tensor<?x?xi64>) -> tensor<?x12x?x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$k,
                       AnyRankedTensor:$v, Optional<AnyRankedTensor>:$mask,
                       Optional<AnyRankedTensor>:$slot_positions,
                       Optional<AnyRankedTensor>:$query_positions,
                       DefaultValuedAttr<Moss_AttentionLayoutAttr,
                                         "::moss::AttentionLayout::bthd">:$layout,
                       UnitAttr:$skip_empty_tiles,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`,` $mask^)?
    (`positions` `(` $slot_positions^ `,` $query_positions `)`)?
    (`layout` `` $layout^)?
    (`skip_empty_tiles` $skip_empty_tiles^)?
    (`scale` `(` $scale^ `)`)?
    attr-dict `:` type($q) `,` type($k) `,` type($v) (`,` type($mask)^)?
    (`positions` `(` type($slot_positions)^ `,` type($query_positions) `)`)?
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the attribute, or D^-0.5.
    float getSoftmaxScale();
    /// The verifier's checks of the mask form and of the positions form.
    ::mlir::LogicalResult verifyMask(int64_t b, int64_t t, int64_t s);
    ::mlir::LogicalResult verifyPositions(int64_t b, int64_t t, int64_t s);
  }];
}

#endif // MOSS_OPS
