// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu -verify-diagnostics

func.func @untiled(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{has neither a 'tile' nor 'vendor_fallback': run moss-select-tiles first}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

func.func @impossible_tile(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{tile #moss.tile<16, 64, 1024, 1> cannot serve N = 2304, K = 768}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) tile <16, 64, 1024, 1> : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}
