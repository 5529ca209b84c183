// RUN: moss-opt %s -split-input-file -verify-diagnostics
// One case per verifier message of the moss dialect.

func.func @f(%x: tensor<4x768xf32>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{operand 'x' must be a rank-2 tensor [M, K] of 'bf16', found 'tensor<4x768xf32>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<4x768xf32>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{operand 'x' must be a rank-2 tensor [M, K] of 'bf16', found 'tensor<768xbf16>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xf16>) {
  // expected-error @+1 {{operand 'w' must be a rank-2 tensor [N, K] of 'bf16', found 'tensor<3072x768xf16>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x512xbf16>) {
  // expected-error @+1 {{operand 'w' must have K (from 'x') = 768, found 512}}
  %y = moss.linear %x, %w epilogue gelu : tensor<4x768xbf16>, tensor<3072x512xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %r: tensor<4x3072xbf16>) {
  // expected-error @+1 {{epilogue 'layerscale_residual' requires operand 'scale' [N]}}
  %y = moss.linear %x, %w residual(%r : tensor<4x3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>) {
  // expected-error @+1 {{epilogue 'layerscale_residual' requires operand 'residual' [M, N]}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>) {
  // expected-error @+1 {{operand 'scale' is only allowed with epilogue 'layerscale_residual', found epilogue 'gelu'}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %r: tensor<4x3072xbf16>) {
  // expected-error @+1 {{operand 'residual' is only allowed with epilogue 'layerscale_residual', found epilogue 'none'}}
  %y = moss.linear %x, %w residual(%r : tensor<4x3072xbf16>) epilogue none : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xf32>, %r: tensor<4x3072xbf16>) {
  // expected-error @+1 {{operand 'scale' must be a rank-1 tensor [N] of 'bf16', found 'tensor<3072xf32>'}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xf32>) residual(%r : tensor<4x3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<1024xbf16>, %r: tensor<4x3072xbf16>) {
  // expected-error @+1 {{operand 'scale' must have length N (from 'w') = 3072, found 1024}}
  %y = moss.linear %x, %w scale(%s : tensor<1024xbf16>) residual(%r : tensor<4x3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>, %r: tensor<3072xbf16>) {
  // expected-error @+1 {{operand 'residual' must be a rank-2 tensor [M, N] of 'bf16', found 'tensor<3072xbf16>'}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) residual(%r : tensor<3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>, %r: tensor<8x3072xbf16>) {
  // expected-error @+1 {{operand 'residual' must have shape [M, N] = [4, 3072], found [8, 3072]}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) residual(%r : tensor<8x3072xbf16>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %l: tensor<4xi1>) {
  // expected-error @+1 {{operand 'row_live' is only allowed with epilogue 'layerscale_residual', found epilogue 'gelu'}}
  %y = moss.linear %x, %w row_live(%l : tensor<4xi1>) epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>, %r: tensor<4x3072xbf16>, %l: tensor<4xi8>) {
  // expected-error @+1 {{operand 'row_live' must be a rank-1 tensor [M] of 'i1', found 'tensor<4xi8>'}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) residual(%r : tensor<4x3072xbf16>) row_live(%l : tensor<4xi8>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %s: tensor<3072xbf16>, %r: tensor<4x3072xbf16>, %l: tensor<8xi1>) {
  // expected-error @+1 {{operand 'row_live' must have length M (from 'x') = 4, found 8}}
  %y = moss.linear %x, %w scale(%s : tensor<3072xbf16>) residual(%r : tensor<4x3072xbf16>) row_live(%l : tensor<8xi1>) epilogue layerscale_residual : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{result must be a rank-2 tensor [M, N] = [4, 3072] of bf16, found 'tensor<4x1024xbf16>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x1024xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{has both a 'tile' and 'vendor_fallback': a GEMM runs either a generated kernel or the vendor fallback}}
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 1> vendor_fallback : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{tile bn must be a positive power of two, found 48}}
  %y = moss.linear %x, %w epilogue gelu tile <16, 48, 64, 1> : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{tile bm must be a positive power of two, found 0}}
  %y = moss.linear %x, %w epilogue gelu tile <0, 64, 64, 1> : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{tile bk must be a positive power of two, found 24}}
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 24, 1> : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{tile split must be >= 1, found 0}}
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 0> : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'q' must be a rank-4 tensor [B, H, T, D] of 'bf16', found 'tensor<1x12x8x64xf16>'}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'k' must be a rank-4 tensor [B, H, S, D] of 'bf16', found 'tensor<12x400x64xbf16>'}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xf32>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'v' must be a rank-4 tensor [B, H, S, D] of 'bf16', found 'tensor<1x12x400x64xf32>'}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xf32>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi8>) {
  // expected-error @+1 {{operand 'mask' must be a rank-4 tensor [B, 1, T, S] of 'i1', found 'tensor<1x1x8x400xi8>'}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi8> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x40xbf16>, %k: tensor<1x12x400x40xbf16>, %v: tensor<1x12x400x40xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{head dim D of 'q' must be a static multiple of 16 in [16, 256], found 40}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x40xbf16>, tensor<1x12x400x40xbf16>, tensor<1x12x400x40xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x40xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x512xbf16>, %k: tensor<1x12x400x512xbf16>, %v: tensor<1x12x400x512xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{head dim D of 'q' must be a static multiple of 16 in [16, 256], found 512}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x512xbf16>, tensor<1x12x400x512xbf16>, tensor<1x12x400x512xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x512xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<2x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'k' must have batch B (from 'q') = 1, found 2}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<2x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x20x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'k' must have heads H (from 'q') = 12, found 20}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x20x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x128xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'v' must have head dim D (from 'q') = 64, found 128}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x128xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{operand 'v' must have keys S (from 'k') = 400, found 250}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x250xi1>) {
  // expected-error @+1 {{operand 'mask' must have shape [B, 1, T, S] = [1, 1, 8, 400], found [1, 1, 8, 250]}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x250xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x12x8x400xi1>) {
  // expected-error @+1 {{operand 'mask' must have shape [B, 1, T, S] = [1, 1, 8, 400], found [1, 12, 8, 400]}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{result must have the type of 'q' (the logical [B, H, T, D] tensor) 'tensor<1x12x8x64xbf16>', found 'tensor<1x8x12x64xbf16>'}}
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x8x12x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>) {
  // expected-error @+1 {{scale must be a positive finite number, found -1.000000e+00}}
  %o = moss.streaming_attention %q, %k, %v, %m scale(-1.0) : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> -> tensor<1x12x8x64xbf16>
  return
}

// -----

// The weight's shape is static (issue repro: a dynamic N once reached the
// lowering and failed inside memref.alloc).
func.func @f(%x: tensor<16x768xbf16>, %w: tensor<?x768xbf16>) {
  // expected-error @+1 {{operand 'w' must have a static shape [N, K], found [?, 768]}}
  %y = moss.linear %x, %w epilogue none vendor_fallback : tensor<16x768xbf16>, tensor<?x768xbf16> -> tensor<16x?xbf16>
  return
}

// -----

func.func @f(%x: tensor<16x?xbf16>, %w: tensor<3072x?xbf16>) {
  // expected-error @+1 {{operand 'w' must have a static shape [N, K], found [3072, ?]}}
  %y = moss.linear %x, %w epilogue gelu : tensor<16x?xbf16>, tensor<3072x?xbf16> -> tensor<16x3072xbf16>
  return
}

// -----

// The result is exactly [M, N] of the operands: a static M where x's is
// dynamic (or the reverse) is refused, not left to the lowering.
func.func @f(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{result must be a rank-2 tensor [M, N] = [?, 3072] of bf16, found 'tensor<16x3072xbf16>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<16x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{result must be a rank-2 tensor [M, N] = [16, 3072] of bf16, found 'tensor<16x?xbf16>'}}
  %y = moss.linear %x, %w epilogue gelu : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x?xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>) {
  // expected-error @+1 {{needs a mask or positions(...)}}
  %o = moss.streaming_attention %q, %k, %v : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16> -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %m: tensor<1x1x8x400xi1>, %s: tensor<1x400xi64>, %t: tensor<1x8xi64>) {
  // expected-error @+1 {{takes a mask or positions(...), not both}}
  %o = moss.streaming_attention %q, %k, %v, %m positions(%s, %t) : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x1x8x400xi1> positions(tensor<1x400xi64>, tensor<1x8xi64>) -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %s: tensor<1x400xi32>, %t: tensor<1x8xi64>) {
  // expected-error @+1 {{operand 'slot_positions' must be a rank-2 tensor [B, S] of 'i64', found 'tensor<1x400xi32>'}}
  %o = moss.streaming_attention %q, %k, %v positions(%s, %t) : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16> positions(tensor<1x400xi32>, tensor<1x8xi64>) -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<1x12x8x64xbf16>, %k: tensor<1x12x400x64xbf16>, %v: tensor<1x12x400x64xbf16>, %s: tensor<1x250xi64>, %t: tensor<1x8xi64>) {
  // expected-error @+1 {{operand 'slot_positions' must have shape [B, S] = [1, 400], found [1, 250]}}
  %o = moss.streaming_attention %q, %k, %v positions(%s, %t) : tensor<1x12x8x64xbf16>, tensor<1x12x400x64xbf16>, tensor<1x12x400x64xbf16> positions(tensor<1x250xi64>, tensor<1x8xi64>) -> tensor<1x12x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<2x12x8x64xbf16>, %k: tensor<2x12x400x64xbf16>, %v: tensor<2x12x400x64xbf16>, %s: tensor<2x400xi64>, %t: tensor<2x15xi64>) {
  // expected-error @+1 {{operand 'query_positions' must have shape [B, T] = [2, 8], found [2, 15]}}
  %o = moss.streaming_attention %q, %k, %v positions(%s, %t) : tensor<2x12x8x64xbf16>, tensor<2x12x400x64xbf16>, tensor<2x12x400x64xbf16> positions(tensor<2x400xi64>, tensor<2x15xi64>) -> tensor<2x12x8x64xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>) {
  // expected-error @+1 {{layernorm(gamma, beta) requires attribute 'eps'}}
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>) {
  // expected-error @+1 {{attribute 'eps' is only allowed with layernorm(gamma, beta)}}
  %y = moss.linear %x, %w eps 1.0e-05 epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>) {
  // expected-error @+1 {{attribute 'eps' must be finite and >= 0, found -1}}
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps -1.0 epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<512xbf16>, %b: tensor<768xbf16>) {
  // expected-error @+1 {{operand 'gamma' must have length K (from 'x') = 768, found 512}}
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<512xbf16>, tensor<768xbf16>) eps 1.0e-05 epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xf32>) {
  // expected-error @+1 {{operand 'beta' must be a rank-1 tensor [K] of 'bf16', found 'tensor<768xf32>'}}
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xf32>) eps 1.0e-05 epilogue gelu : tensor<4x768xbf16>, tensor<3072x768xbf16> -> tensor<4x3072xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x3072xbf16>, %w: tensor<768x3072xbf16>, %g: tensor<3072xbf16>, %b: tensor<3072xbf16>, %s: tensor<768xbf16>, %r: tensor<4x768xbf16>) {
  // expected-error @+1 {{layernorm(gamma, beta) with epilogue 'layerscale_residual' is no whitelist mode (expected 0 none, 1 gelu, 2 layerscale_residual, 3 layernorm, 4 layernorm_gelu, 5 layernorm_rope_cache)}}
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<4x768xbf16>) layernorm(%g, %b : tensor<3072xbf16>, tensor<3072xbf16>) eps 1.0e-05 epilogue layerscale_residual : tensor<4x3072xbf16>, tensor<768x3072xbf16> -> tensor<4x768xbf16>
  return
}

// -----

// Only the generic form can name one of the two.
func.func @f(%x: tensor<4x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>) {
  // expected-error @+1 {{operands 'gamma' and 'beta' come together}}
  %y = "moss.linear"(%x, %w, %g) <{epilogue = #moss<epilogue gelu>, eps = 1.0e-05 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0>}> : (tensor<4x768xbf16>, tensor<3072x768xbf16>, tensor<768xbf16>) -> tensor<4x3072xbf16>
  return
}

// -----

// moss.qkv_rope_cache: x must be [B, T, d].
func.func @qkv_0(%x: tensor<30x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'x' must be a rank-3 tensor [B, T, d] of 'bf16', found 'tensor<30x768xbf16>'}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<30x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: w static.
func.func @qkv_1(%x: tensor<2x15x768xbf16>, %w: tensor<?x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'w' must have a static shape [3d, d], found [?, 768]}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<?x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: w 3d x d.
func.func @qkv_2(%x: tensor<2x15x736xbf16>, %w: tensor<2208x736xbf16>, %g: tensor<736xbf16>, %b: tensor<736xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'w' must be [3d, d] with d a multiple of 64 (heads of 64), found [2208, 736]}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<736xbf16>, tensor<736xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x736xbf16>, tensor<2208x736xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: x d.
func.func @qkv_3(%x: tensor<2x15x512xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'x' must have d (from 'w') = 768, found 512}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x512xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: gamma.
func.func @qkv_4(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<512xbf16>, %b: tensor<512xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'gamma' must have length d (from 'w') = 768, found 512}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<512xbf16>, tensor<512xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: eps.
func.func @qkv_5(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{attribute 'eps' must be finite and >= 0, found -1}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps -1.0 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: positions dtype.
func.func @qkv_6(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi32>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'positions' must be a rank-2 tensor [B, T] of 'i64', found 'tensor<2x15xi32>'}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi32>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: live shape.
func.func @qkv_7(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x16xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'live' must be [B, T] = [2, 15] (from 'x'), found [2, 16]}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x16xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: k heads.
func.func @qkv_8(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x8x250x64xbf16>, %v: tensor<2x8x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'k_cache' must be [B, H, S, 64] = [2, 12, 250, 64] (B from 'x', H = d / 64), found [2, 8, 250, 64]}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x8x250x64xbf16>, tensor<2x8x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: v type.
func.func @qkv_9(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x200x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{operand 'v_cache' must have k_cache's type 'tensor<2x12x250x64xbf16>', found 'tensor<2x12x200x64xbf16>'}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x200x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: slots.
func.func @qkv_10(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x200xi64>) {
  // expected-error @+1 {{operand 'slot_positions' must be [B, S] = [2, 250] (from 'k_cache'), found [2, 200]}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x200xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: chunk.
func.func @qkv_11(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x10x64xbf16>, %v: tensor<2x12x10x64xbf16>, %s: tensor<2x10xi64>) {
  // expected-error @+1 {{a chunk of T = 15 frames does not fit a ring of S = 10 slots}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x10x64xbf16>, tensor<2x12x10x64xbf16>, tensor<2x10xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return
}

// -----

// moss.qkv_rope_cache: q.
func.func @qkv_12(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) {
  // expected-error @+1 {{result 'q' must be 'tensor<2x15x12x64xbf16>', found 'tensor<2x15x768xbf16>'}}
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x768xbf16>
  return
}
