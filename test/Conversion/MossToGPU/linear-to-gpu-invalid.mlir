// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu -verify-diagnostics

func.func @untiled(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  // expected-error @+1 {{has neither a 'tile' nor 'vendor_fallback': run moss-select-tiles first}}
  %y = moss.linear %x, %w epilogue gelu : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

func.func @impossible_tile(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  // expected-error @+1 {{tile #moss.tile<16, 64, 1024, 1> cannot serve N = 3072, K = 768}}
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 1024, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

