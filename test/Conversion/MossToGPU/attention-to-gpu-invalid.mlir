// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu -verify-diagnostics

func.func @head_dim_32(%q: tensor<1x12x4x32xbf16>, %k: tensor<1x12x8x32xbf16>, %v: tensor<1x12x8x32xbf16>, %m: tensor<1x1x4x8xi1>) -> tensor<1x12x4x32xbf16> {
  // expected-error @+1 {{the generated attention kernel needs head dim D = 64, found 32}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x4x32xbf16>, tensor<1x12x8x32xbf16>, tensor<1x12x8x32xbf16>, tensor<1x1x4x8xi1> -> tensor<1x12x4x32xbf16>
  return %o : tensor<1x12x4x32xbf16>
}
