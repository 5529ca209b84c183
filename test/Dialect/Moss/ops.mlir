// RUN: moss-opt %s | moss-opt | FileCheck %s
// RUN: moss-opt %s --mlir-print-op-generic | moss-opt | FileCheck %s
// Round trip of every moss op and attribute, in pretty and generic form.

// CHECK-LABEL: func.func @linear_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xbf16>, %[[W:.*]]: tensor<3072x768xbf16>)
// CHECK: %[[Y:.*]] = moss.linear %[[X]], %[[W]] epilogue gelu : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
// CHECK: return %[[Y]]
func.func @linear_gelu(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// CHECK-LABEL: func.func @linear_none_tiled
// CHECK: moss.linear %{{.*}}, %{{.*}} epilogue none tile <16, 64, 64, 2> : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
func.func @linear_none_tiled(%x: tensor<16x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<16x3072xbf16> {
  %y = moss.linear %x, %w epilogue none tile <16, 64, 64, 2> : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return %y : tensor<16x3072xbf16>
}

// CHECK-LABEL: func.func @linear_layerscale_residual
// CHECK-SAME: (%[[X:.*]]: tensor<?x3072xbf16>, %[[W:.*]]: tensor<768x3072xbf16>, %[[S:.*]]: tensor<768xbf16>, %[[R:.*]]: tensor<?x768xbf16>)
// CHECK: moss.linear %[[X]], %[[W]] scale(%[[S]] : tensor<768xbf16>) residual(%[[R]] : tensor<?x768xbf16>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
func.func @linear_layerscale_residual(%x: tensor<?x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<?x768xbf16>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<?x768xbf16>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}

// CHECK-LABEL: func.func @linear_layerscale_residual_row_live
// CHECK-SAME: (%[[X:.*]]: tensor<?x3072xbf16>, %[[W:.*]]: tensor<768x3072xbf16>, %[[S:.*]]: tensor<768xbf16>, %[[R:.*]]: tensor<?x768xbf16>, %[[L:.*]]: tensor<?xi1>)
// CHECK: moss.linear %[[X]], %[[W]] scale(%[[S]] : tensor<768xbf16>) residual(%[[R]] : tensor<?x768xbf16>) row_live(%[[L]] : tensor<?xi1>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
func.func @linear_layerscale_residual_row_live(%x: tensor<?x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<?x768xbf16>, %live: tensor<?xi1>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<?x768xbf16>) row_live(%live : tensor<?xi1>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}

// CHECK-LABEL: func.func @linear_layernorm_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xbf16>, %[[W:.*]]: tensor<3072x768xbf16>, %[[G:.*]]: tensor<768xbf16>, %[[B:.*]]: tensor<768xbf16>)
// CHECK: moss.linear %[[X]], %[[W]] layernorm(%[[G]], %[[B]] : tensor<768xbf16>, tensor<768xbf16>) eps 9.99999974E-6 epilogue gelu tile <16, 64, 64, 2> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
func.func @linear_layernorm_gelu(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 epilogue gelu tile <16, 64, 64, 2> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// CHECK-LABEL: func.func @linear_layernorm_none
// CHECK: moss.linear %{{.*}}, %{{.*}} layernorm(%{{.*}}, %{{.*}} : tensor<1280xbf16>, tensor<1280xbf16>) eps 0.000000e+00 epilogue none vendor_fallback : tensor<4x1280xbf16>, tensor<3840x1280xbf16> -> tensor<4x3840xbf16>
func.func @linear_layernorm_none(%x: tensor<4x1280xbf16>, %w: tensor<3840x1280xbf16>, %g: tensor<1280xbf16>, %b: tensor<1280xbf16>) -> tensor<4x3840xbf16> {
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<1280xbf16>, tensor<1280xbf16>) eps 0.0 epilogue none vendor_fallback : tensor<4x1280xbf16>, tensor<3840x1280xbf16> -> tensor<4x3840xbf16>
  return %y : tensor<4x3840xbf16>
}

// CHECK-LABEL: func.func @attention_default
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x?x64xbf16>, %[[K:.*]]: tensor<?x12x400x64xbf16>, %[[V:.*]]: tensor<?x12x400x64xbf16>, %[[M:.*]]: tensor<?x1x?x400xi1>)
// CHECK: %[[O:.*]] = moss.streaming_attention %[[Q]], %[[K]], %[[V]], %[[M]] : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1> -> tensor<?x12x?x64xbf16>
// CHECK: return %[[O]]
func.func @attention_default(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %m: tensor<?x1x?x400xi1>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1> -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}

// CHECK-LABEL: func.func @attention_all_attributes
// CHECK: moss.streaming_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} layout bhtd skip_empty_tiles scale(1.250000e-01) : tensor<2x20x8x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x1x8x125xi1> -> tensor<2x20x8x64xbf16>
func.func @attention_all_attributes(%q: tensor<2x20x8x64xbf16>, %k: tensor<2x20x125x64xbf16>, %v: tensor<2x20x125x64xbf16>, %m: tensor<2x1x8x125xi1>) -> tensor<2x20x8x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m layout bhtd skip_empty_tiles scale(0.125) : tensor<2x20x8x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x1x8x125xi1> -> tensor<2x20x8x64xbf16>
  return %o : tensor<2x20x8x64xbf16>
}

// The mask from a ring cache's positions instead of a bool mask.
// CHECK-LABEL: func.func @attention_positions
// CHECK: moss.streaming_attention %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}}, %{{.*}}) skip_empty_tiles : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16> positions(tensor<?x400xi64>, tensor<?x?xi64>) -> tensor<?x12x?x64xbf16>
func.func @attention_positions(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %slots: tensor<?x400xi64>, %frames: tensor<?x?xi64>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v positions(%slots, %frames) skip_empty_tiles : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16> positions(tensor<?x400xi64>, tensor<?x?xi64>) -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}

// An explicit default layout is elided when printed.
// CHECK-LABEL: func.func @attention_explicit_bthd
// CHECK: moss.streaming_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor
// CHECK-NOT: layout
func.func @attention_explicit_bthd(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x1x250xi1>) -> tensor<1x12x1x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m layout bthd : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  return %o : tensor<1x12x1x64xbf16>
}

// The attributes also round-trip on their own.
// CHECK-LABEL: func.func @attributes
// CHECK-SAME: attrs.epilogue = #moss<epilogue layerscale_residual>
// CHECK-SAME: attrs.layout = #moss<layout bhtd>
// CHECK-SAME: attrs.tile = #moss.tile<1, 16, 32, 4>
func.func @attributes() attributes {attrs.tile = #moss.tile<1, 16, 32, 4>, attrs.epilogue = #moss<epilogue layerscale_residual>, attrs.layout = #moss<layout bhtd>} {
  return
}

// moss.qkv_rope_cache: static and dynamic B, T; tile and vendor_fallback.
// CHECK-LABEL: func.func @qkv_rope_cache
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = moss.qkv_rope_cache %{{.*}}, %{{.*}} layernorm(%{{.*}}, %{{.*}} : tensor<768xbf16>, tensor<768xbf16>) eps 9.99999974E-6 positions(%{{.*}}, %{{.*}} : tensor<2x15xi64>, tensor<2x15xi1>) cache(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) tile <16, 64, 64, 2> : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
func.func @qkv_rope_cache(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) tile <16, 64, 64, 2> : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// CHECK-LABEL: func.func @qkv_rope_cache_dynamic
// CHECK: moss.qkv_rope_cache {{.*}} vendor_fallback : tensor<?x?x1280xbf16>, tensor<3840x1280xbf16> -> tensor<?x?x20x64xbf16>
func.func @qkv_rope_cache_dynamic(%x: tensor<?x?x1280xbf16>, %w: tensor<3840x1280xbf16>, %g: tensor<1280xbf16>, %b: tensor<1280xbf16>, %pos: tensor<?x?xi64>, %live: tensor<?x?xi1>, %k: tensor<?x20x125x64xbf16>, %v: tensor<?x20x125x64xbf16>, %s: tensor<?x125xi64>) {
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<1280xbf16>, tensor<1280xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<?x?xi64>, tensor<?x?xi1>) cache(%k, %v, %s : tensor<?x20x125x64xbf16>, tensor<?x20x125x64xbf16>, tensor<?x125xi64>) vendor_fallback : tensor<?x?x1280xbf16>, tensor<3840x1280xbf16> -> tensor<?x?x20x64xbf16>
  return
}
