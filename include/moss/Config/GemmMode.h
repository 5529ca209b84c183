//===- GemmMode.h - The whitelist key's mode of moss.linear ----*- C++ -*-===//
//
// A GEMM's "mode" (the fourth number of a whitelist key "M,N,K,mode", the
// manifest's "epilogue" field, the kernel name's middle part) is one row of
// this table: an optional LayerNorm prologue on x and a fused epilogue. The
// compiler, the whitelist and manifest readers, the runtime and the tools
// all read the modes from here (docs/kernel-abi.md, "Whitelist").
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_GEMMMODE_H
#define MOSS_CONFIG_GEMMMODE_H

namespace moss::config {

/// The epilogue part of a mode; also moss.linear's `epilogue` attribute and
/// the C API's moss_epilogue_t (same numbers).
enum GemmEpilogue : int {
  kGemmEpilogueNone = 0,
  kGemmEpilogueGelu = 1,
  kGemmEpilogueLayerScaleResidual = 2,
  /// The fused QKV epilogue of a decoder layer (out = q, plus the ring
  /// cache): interleaved RoPE of q and k at each row's position, k and v
  /// into the ring cache at slot position mod S, the slot table updated
  /// (docs/kernel-abi.md, "The QKV epilogue"). Only with the LayerNorm
  /// prologue; not a moss_epilogue_t.
  kGemmEpilogueRopeCache = 3,
};

enum GemmMode : int {
  kGemmModeNone = 0,
  kGemmModeGelu = 1,
  kGemmModeLayerScaleResidual = 2,
  /// x is normalised row by row (LayerNorm, FP32 statistics, affine) and
  /// rounded to bf16 before the product.
  kGemmModeLayerNorm = 3,
  kGemmModeLayerNormGelu = 4,
  /// LayerNorm, then the QKV epilogue (kGemmEpilogueRopeCache): N = 3 d
  /// columns q, k, v of d = heads * 64 each.
  kGemmModeLayerNormRopeCache = 5,
};

/// Number of modes: valid modes are [0, kGemmModeCount).
constexpr int kGemmModeCount = 6;

/// The QKV epilogue's head size and RoPE period: the codec's head_dim and
/// max_period. Pair i of a head's dims (2i, 2i + 1) turns by the angle
/// position * ropeInverseFrequency(i).
constexpr int kRopeHeadDim = 64;
constexpr double kRopeMaxPeriod = 10000.0;

/// The codec's inverse frequency of pair i in [0, kRopeHeadDim / 2):
/// exp(e) rounded to FP32, e = float(i) * float(-ln(max_period) * 2 /
/// head_dim) in FP32, as vLLM-Omni's apply_rope computes it (not
/// max_period^(-2i / head_dim), which differs by up to 7 ulps). The generated
/// kernels, the fallback and the tests read the same table.
float ropeInverseFrequency(int pair);

struct GemmModeInfo {
  const char *name; ///< "none", "gelu", ..., "layernorm_rope_cache".
  int epilogue;     ///< A GemmEpilogue.
  bool layerNorm;   ///< LayerNorm prologue on x (gamma, beta, eps).
};

/// The row of `mode`, or nullptr for an unknown mode.
const GemmModeInfo *gemmModeInfo(int mode);

/// The mode's name; nullptr for an unknown mode.
const char *gemmModeName(int mode);

/// The mode of (prologue, epilogue), or -1 where no mode combines them
/// (LayerNorm with LayerScale + residual: no layer of the codec has it).
int gemmModeOf(bool layerNorm, int epilogue);

/// "0 none, 1 gelu, 2 layerscale_residual, 3 layernorm, 4 layernorm_gelu,
/// 5 layernorm_rope_cache",
/// for messages that list what is expected.
const char *gemmModeList();

} // namespace moss::config

#endif // MOSS_CONFIG_GEMMMODE_H
