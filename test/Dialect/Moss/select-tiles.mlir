// RUN: moss-opt %s -split-input-file -moss-select-tiles=whitelist=%S/Inputs/whitelist.json | FileCheck %s
// RUN: env MOSS_CODEC_GEMM_CONFIG=%S/Inputs/whitelist.json moss-opt %s -split-input-file -moss-select-tiles | FileCheck %s
// RUN: not moss-opt %s -split-input-file -moss-select-tiles=whitelist=%S/Inputs/bad-tile.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not moss-opt %s -split-input-file -moss-select-tiles=whitelist=%S/Inputs/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not moss-opt %s -split-input-file -moss-select-tiles 2>&1 | FileCheck %s --check-prefix=NONE

// BAD: error: moss-select-tiles: {{.*}}bad-tile.json: key "16,3072,768,1": {{.*}}bn{{.*}}48{{.*}}power of two
// MISSING: error: moss-select-tiles: {{.*}}missing.json
// NONE: error: moss-select-tiles: no whitelist: pass whitelist=PATH or set MOSS_CODEC_GEMM_CONFIG

// A key in the whitelist gets its tile.
// CHECK-LABEL: func.func @match
// CHECK: moss.linear %{{.*}}, %{{.*}} epilogue gelu tile <16, 64, 64, 1> :
// CHECK-NOT: vendor_fallback
func.func @match(%x: tensor<16x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<16x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return %y : tensor<16x3072xbf16>
}

// -----

// Same shape, another epilogue: no key, vendor fallback.
// CHECK-LABEL: func.func @mode_mismatch
// CHECK: moss.linear %{{.*}}, %{{.*}} epilogue none vendor_fallback :
func.func @mode_mismatch(%x: tensor<16x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<16x3072xbf16> {
  %y = moss.linear %x, %w epilogue none : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return %y : tensor<16x3072xbf16>
}

// -----

// The LayerNorm prologue is part of the mode: "16,3072,768,4" (layernorm_gelu)
// is another key than "16,3072,768,1" (gelu), and layernorm alone (mode 3)
// has none.
// CHECK-LABEL: func.func @layernorm_modes
// CHECK: moss.linear %{{.*}}, %{{.*}} layernorm({{.*}}) eps {{.*}} epilogue gelu tile <16, 64, 64, 2> :
// CHECK: moss.linear %{{.*}}, %{{.*}} layernorm({{.*}}) eps {{.*}} epilogue none vendor_fallback :
func.func @layernorm_modes(%x: tensor<16x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>) -> (tensor<16x3072xbf16>, tensor<16x3072xbf16>) {
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 epilogue gelu : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  %z = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 epilogue none : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return %y, %z : tensor<16x3072xbf16>, tensor<16x3072xbf16>
}

// -----

// M absent from the whitelist (only M = 16 is listed for this N, K, mode).
// CHECK-LABEL: func.func @m_absent
// CHECK: moss.linear %{{.*}}, %{{.*}} epilogue gelu vendor_fallback :
func.func @m_absent(%x: tensor<15x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<15x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu : tensor<15x768xbf16>, tensor<3072x768xbf16> -> tensor<15x3072xbf16>
  return %y : tensor<15x3072xbf16>
}

// -----

// A dynamic M names no key: vendor fallback.
// CHECK-LABEL: func.func @dynamic_m
// CHECK: moss.linear %{{.*}}, %{{.*}} epilogue gelu vendor_fallback :
func.func @dynamic_m(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// Layerscale + residual with split-K; an existing choice is replaced.
// CHECK-LABEL: func.func @layerscale_split
// CHECK: moss.linear %{{.*}}, %{{.*}} scale(%{{.*}} : tensor<768xbf16>) residual(%{{.*}} : tensor<4x768xbf16>) epilogue layerscale_residual tile <8, 32, 128, 2> :
// CHECK-NOT: vendor_fallback
func.func @layerscale_split(%x: tensor<4x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<4x768xbf16>) -> tensor<4x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<4x768xbf16>) epilogue layerscale_residual vendor_fallback : tensor<4x3072xbf16>, tensor<768x3072xbf16> -> tensor<4x768xbf16>
  return %y : tensor<4x768xbf16>
}
