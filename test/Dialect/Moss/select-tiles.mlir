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

// -----

// moss.qkv_rope_cache is key "B*T,3d,d,5": B = 2, T = 15 has a tile; with
// a dynamic T no key names it.
// CHECK-LABEL: func.func @qkv_rope_cache
// CHECK: moss.qkv_rope_cache {{.*}} tile <16, 64, 64, 2> :
// CHECK: moss.qkv_rope_cache {{.*}} vendor_fallback :
func.func @qkv_rope_cache(%x: tensor<2x15x768xbf16>, %xd: tensor<2x?x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %posd: tensor<2x?xi64>, %lived: tensor<2x?xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  %q2, %k2, %v2, %s2 = moss.qkv_rope_cache %xd, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%posd, %lived : tensor<2x?xi64>, tensor<2x?xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x?x768xbf16>, tensor<2304x768xbf16> -> tensor<2x?x12x64xbf16>
  return
}
