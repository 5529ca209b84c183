//===- GemmCall.h - One C API call per whitelist mode -----------*- C++ -*-===//
//
// The tests, moss-bench and moss-tune run whitelist keys of every mode; the
// mode decides the entry point (moss_ffn_gemm, or moss_layernorm_gemm for
// the LayerNorm modes) and what it reads. One place maps a key to its call
// (moss/Config/GemmMode.h holds the modes), and the FP64 reference of the
// LayerNorm prologue lives beside it.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_SUPPORT_GEMMCALL_H
#define MOSS_SUPPORT_GEMMCALL_H

#include "moss/Config/GemmMode.h"
#include "moss/Runtime/moss_runtime.h"
#include "moss/Support/HostBf16.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace moss::host {

/// The eps the tools and tests pass to the LayerNorm modes (the codec's).
constexpr float kLayerNormEps = 1e-5f;

/// The operands of one GEMM call of any mode; the mode reads what it needs
/// (scale and residual: layerscale_residual; gamma and beta: LayerNorm).
struct GemmOperands {
  const void *x = nullptr, *w = nullptr, *scale = nullptr, *residual = nullptr,
             *gamma = nullptr, *beta = nullptr;
  void *out = nullptr;
};

/// Whether callGemm serves `mode`: every mode but layernorm_rope_cache, whose
/// call (moss_qkv_rope_cache) writes a ring cache beside its output and is
/// tested and timed with its ring (QkvRopeCacheTests, the layer step).
inline bool isPlainGemmMode(int mode) {
  return config::gemmModeInfo(mode)->epilogue != config::kGemmEpilogueRopeCache;
}

/// The C API call of whitelist mode `mode` (a valid one, isPlainGemmMode).
inline moss_status_t callGemm(moss_runtime_t rt, int64_t m, int64_t n,
                              int64_t k, int mode, const GemmOperands &ops,
                              void *stream) {
  const config::GemmModeInfo &info = *config::gemmModeInfo(mode);
  auto ep = static_cast<moss_epilogue_t>(info.epilogue);
  if (info.layerNorm)
    return moss_layernorm_gemm(rt, m, n, k, ep, ops.x, ops.gamma, ops.beta,
                               kLayerNormEps, ops.w, ops.out, stream);
  return moss_ffn_gemm(rt, m, n, k, ep, ops.x, ops.w, ops.scale, ops.residual,
                       ops.out, stream);
}

/// moss_gemm_is_selected, or moss_layernorm_gemm_is_selected, for `mode`
/// (isPlainGemmMode).
inline int gemmSelected(moss_runtime_t rt, int64_t m, int64_t n, int64_t k,
                        int mode) {
  const config::GemmModeInfo &info = *config::gemmModeInfo(mode);
  auto ep = static_cast<moss_epilogue_t>(info.epilogue);
  return info.layerNorm ? moss_layernorm_gemm_is_selected(rt, m, n, k, ep)
                        : moss_gemm_is_selected(rt, m, n, k, ep);
}

/// The LayerNorm prologue in FP64, rounded to bf16 once (the contract's one
/// rounding): x'[r,c] = bf16((x - mean) / sqrt(var + eps) * gamma[c] +
/// beta[c]), population variance over the row's k values.
inline std::vector<uint16_t> layerNormReference(
    const std::vector<uint16_t> &x, const std::vector<uint16_t> &gamma,
    const std::vector<uint16_t> &beta, double eps, int64_t m, int64_t k) {
  std::vector<uint16_t> out(static_cast<size_t>(m * k));
  for (int64_t row = 0; row < m; ++row) {
    const uint16_t *in = x.data() + row * k;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < k; ++c)
      mean += fromBf16(in[c]);
    mean /= static_cast<double>(k);
    for (int64_t c = 0; c < k; ++c)
      var += (fromBf16(in[c]) - mean) * (fromBf16(in[c]) - mean);
    var /= static_cast<double>(k);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < k; ++c)
      out[row * k + c] =
          toBf16((fromBf16(in[c]) - mean) * rstd * fromBf16(gamma[c]) +
                 fromBf16(beta[c]));
  }
  return out;
}

} // namespace moss::host

#endif // MOSS_SUPPORT_GEMMCALL_H
