//===- GemmMode.cpp - The whitelist key's mode of moss.linear -------------===//

#include "moss/Config/GemmMode.h"

#include <cmath>

namespace moss::config {

namespace {

// Index = mode number.
constexpr GemmModeInfo kModes[kGemmModeCount] = {
    {"none", kGemmEpilogueNone, false},
    {"gelu", kGemmEpilogueGelu, false},
    {"layerscale_residual", kGemmEpilogueLayerScaleResidual, false},
    {"layernorm", kGemmEpilogueNone, true},
    {"layernorm_gelu", kGemmEpilogueGelu, true},
    {"layernorm_rope_cache", kGemmEpilogueRopeCache, true},
};

} // namespace

const GemmModeInfo *gemmModeInfo(int mode) {
  return mode >= 0 && mode < kGemmModeCount ? &kModes[mode] : nullptr;
}

const char *gemmModeName(int mode) {
  const GemmModeInfo *info = gemmModeInfo(mode);
  return info ? info->name : nullptr;
}

int gemmModeOf(bool layerNorm, int epilogue) {
  for (int mode = 0; mode < kGemmModeCount; ++mode)
    if (kModes[mode].layerNorm == layerNorm &&
        kModes[mode].epilogue == epilogue)
      return mode;
  return -1;
}

float ropeInverseFrequency(int pair) {
  // The codec's formula (vLLM-Omni's apply_rope): exp(i * (-ln(max_period) *
  // 2 / D)) with the factor and the product in FP32. Rounding the exponent
  // first moves 17 of the 32 values by 1 to 7 ulps from a pow of the exact
  // exponent, so the pow would not be the codec's rotation.
  const float factor =
      static_cast<float>(-std::log(kRopeMaxPeriod) * 2.0 / kRopeHeadDim);
  const float exponent = static_cast<float>(pair) * factor;
  return static_cast<float>(std::exp(static_cast<double>(exponent)));
}

const char *gemmModeList() {
  return "0 none, 1 gelu, 2 layerscale_residual, 3 layernorm, 4 "
         "layernorm_gelu, 5 layernorm_rope_cache";
}

} // namespace moss::config
