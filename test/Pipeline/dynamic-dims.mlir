// REQUIRES: ptxas
// RUN: moss-opt %s -split-input-file --pass-pipeline="builtin.module(moss-to-cubin{format=isa})" | FileCheck %s

// Every dimension either op lets be dynamic goes through the whole pipeline
// to PTX (the dimensions it refuses are in test/Dialect/Moss/invalid.mlir):
// x's M and K, scale's N and residual's M and N with a tile and with the
// vendor fallback, and every extent of attention but the head dim.

// CHECK: gpu.binary @moss_kernels
// CHECK: func.func @linear_tile_dynamic_x
// CHECK: call @moss_ffn_gemm(
func.func @linear_tile_dynamic_x(%x: tensor<?x?xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 1> : tensor<?x?xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// CHECK: gpu.binary @moss_kernels
// CHECK: func.func @linear_tile_dynamic_scale_residual
// CHECK: call @moss_ffn_gemm_layerscale_residual(
func.func @linear_tile_dynamic_scale_residual(%x: tensor<?x?xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<?xbf16>, %r: tensor<?x?xbf16>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<?xbf16>) residual(%r : tensor<?x?xbf16>) epilogue layerscale_residual tile <16, 64, 64, 4> : tensor<?x?xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}

// -----

// CHECK: func.func @linear_fallback_dynamic
// CHECK: call @moss_ffn_gemm_layerscale_residual(
func.func @linear_fallback_dynamic(%x: tensor<?x?xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<?xbf16>, %r: tensor<?x?xbf16>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<?xbf16>) residual(%r : tensor<?x?xbf16>) epilogue layerscale_residual vendor_fallback : tensor<?x?xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}

// -----

// CHECK: gpu.binary @moss_kernels
// CHECK: func.func @attention_dynamic
func.func @attention_dynamic(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x?xbf16>, %v: tensor<?x?x?x?xbf16>, %m: tensor<?x?x?x?xi1>) -> tensor<?x?x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<?x?x?x64xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xi1> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
