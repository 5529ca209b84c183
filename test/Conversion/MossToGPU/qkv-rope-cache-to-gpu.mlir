// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s

// A tiled moss.qkv_rope_cache becomes its mode-5 kernel (the LayerNorm's
// gamma, beta, eps, then positions, live, the caches, the slot table, length
// and capacity) and one runtime call. The caches are updated in place where
// the op is their only user; v, returned unchanged too, is copied first.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @linear_n2304_k768_layernorm_rope_cache_bm16_bn64_bk64_s2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: f32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32) kernel
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 2>
// CHECK: math.sin
// CHECK: func.func @qkv(
// CHECK: %[[Q:.*]] = memref.alloc() : memref<2x15x12x64xbf16>
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg6 : tensor<2x12x250x64xbf16> to memref<2x12x250x64xbf16>
// CHECK-NOT: memref.copy %[[K]]
// CHECK: %[[V:.*]] = bufferization.to_buffer %arg7
// CHECK: %[[VCOPY:.*]] = memref.alloc() : memref<2x12x250x64xbf16>
// CHECK: memref.copy %[[V]], %[[VCOPY]]
// CHECK: %[[S:.*]] = bufferization.to_buffer %arg8
// CHECK-NOT: memref.copy %[[S]]
// CHECK: call @moss_qkv_rope_cache(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?xbf16>, memref<?x?xi64>, memref<?x?xi1>, memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?xi64>, f32) -> ()
// CHECK: return %{{.*}}, %{{.*}}, %arg7,
// CHECK: func.func private @moss_qkv_rope_cache
func.func @qkv(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) -> (tensor<2x15x12x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) {
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) tile <16, 64, 64, 2> : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return %q, %k1, %v, %s1 : tensor<2x15x12x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>
}

// -----

// The vendor fallback builds no kernel: only the runtime call.
// CHECK-LABEL: module {
// CHECK-NOT: gpu.module
// CHECK: call @moss_qkv_rope_cache
func.func @fallback(%x: tensor<2x15x768xbf16>, %w: tensor<2304x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %pos: tensor<2x15xi64>, %live: tensor<2x15xi1>, %k: tensor<2x12x250x64xbf16>, %v: tensor<2x12x250x64xbf16>, %s: tensor<2x250xi64>) -> tensor<2x15x12x64xbf16> {
  %q, %k1, %v1, %s1 = moss.qkv_rope_cache %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 positions(%pos, %live : tensor<2x15xi64>, tensor<2x15xi1>) cache(%k, %v, %s : tensor<2x12x250x64xbf16>, tensor<2x12x250x64xbf16>, tensor<2x250xi64>) vendor_fallback : tensor<2x15x768xbf16>, tensor<2304x768xbf16> -> tensor<2x15x12x64xbf16>
  return %q : tensor<2x15x12x64xbf16>
}
