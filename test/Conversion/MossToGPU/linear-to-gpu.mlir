// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s

// A tiled GEMM becomes its kernel (NVVM tensor-core ops, FP32 partials in
// shared memory, exact erf from math.erf) and a launch with the runtime M.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @moss_kernels
// CHECK: llvm.mlir.global internal @__linear_n3072_k768_gelu_bm16_bn64_bk64_s1_partials() {addr_space = 3 : i32
// CHECK: gpu.func @[[KERNEL:linear_n3072_k768_gelu_bm16_bn64_bk64_s1]](%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[M:.*]]: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: llvm.load {{.*}}vector<4xi32>
// CHECK: nvvm.mma.sync
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: gpu.barrier
// CHECK: arith.truncf {{.*}} to bf16
// CHECK: math.erf
// CHECK: gpu.return
// CHECK-NOT: _reduce
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xbf16>, %[[W:.*]]: tensor<3072x768xbf16>)
// CHECK-DAG: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK-DAG: %[[WB:.*]] = bufferization.to_buffer %[[W]] read_only
// CHECK: %[[DIM:.*]] = memref.dim %[[XB]], %c0
// CHECK: %[[OUT:.*]] = memref.alloc(%[[DIM]]) : memref<?x3072xbf16>
// CHECK: %[[M32:.*]] = arith.index_cast %[[DIM]] : index to i32
// CHECK: %[[GY:.*]] = arith.ceildivui %[[DIM]], %c16
// CHECK: gpu.launch_func @moss_kernels::@[[KERNEL]] blocks in (%c48, %[[GY]], %{{.*}}) threads in (%c256, %{{.*}}, %{{.*}}) args({{.*}}, %[[M32]] : i32)
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: moss.
func.func @gelu(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// split > 1: one kernel. Each CTA writes its FP32 partial tile to the
// workspace after the 16384 tile counters, thread 0 releases it and counts the
// CTA in; the last of the split CTAs (the reducing barrier tells the CTA)
// acquires, resets the counter, sums the slices and applies the epilogue.
// The host zeroes the counters of the workspace it allocates.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @[[MAIN:linear_n768_k3072_layerscale_residual_bm8_bn32_bk128_s2]](%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[WS:.*]]: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: %[[C16384:.*]] = arith.constant 16384 : i64
// CHECK: %[[PARTIALS:.*]] = llvm.getelementptr %[[WS]][%[[C16384]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: scf.if
// CHECK: llvm.getelementptr %[[PARTIALS]]
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: gpu.barrier
// CHECK: %[[COUNTER:.*]] = llvm.getelementptr %[[WS]][%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
// CHECK: scf.if %{{.*}} -> (i1) {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %[[COUNTER]], %{{.*}} syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, i32
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[OLD]], %c1_i32
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %{{.*}}, %[[COUNTER]] {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: scf.yield %[[LAST]] : i1
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: gpu.func
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: gpu.return
// CHECK-NOT: _reduce
// CHECK-LABEL: func.func @layerscale_split
// CHECK: %[[WORDS:.*]] = arith.addi %c16384, %{{.*}} : index
// CHECK: %[[WSB:.*]] = memref.alloc(%[[WORDS]]) : memref<?xf32>
// CHECK: %[[CNT:.*]] = memref.subview %[[WSB]][0] [16384] [1]
// CHECK: gpu.memset %[[CNT]], %{{.*}} : memref<16384xf32, strided<[1]>>, f32
// CHECK: gpu.launch_func @moss_kernels::@[[MAIN]] blocks in (%c24, %{{.*}}, %c2) threads in (%c256,
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: moss.
func.func @layerscale_split(%x: tensor<4x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<4x768xbf16>) -> tensor<4x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<4x768xbf16>) epilogue layerscale_residual tile <8, 32, 128, 2> : tensor<4x3072xbf16>, tensor<768x3072xbf16> -> tensor<4x768xbf16>
  return %y : tensor<4x768xbf16>
}

// -----

// Two ops with the same configuration share one kernel.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-COUNT-1: gpu.func @linear_n3072_k768_none_bm16_bn64_bk64_s1(
// CHECK-NOT: gpu.func
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-2: gpu.launch_func @moss_kernels::@linear_n3072_k768_none_bm16_bn64_bk64_s1
func.func @shared(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> (tensor<?x3072xbf16>, tensor<?x3072xbf16>) {
  %a = moss.linear %x, %w epilogue none tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  %b = moss.linear %x, %w epilogue none tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %a, %b : tensor<?x3072xbf16>, tensor<?x3072xbf16>
}

// -----

// The vendor fallback is a call into the runtime.
// CHECK-LABEL: func.func @fallback
// CHECK-NOT: gpu.launch_func
// CHECK: call @moss_vendor_linear(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32) -> ()
// CHECK-LABEL: func.func @fallback_layerscale
// CHECK: call @moss_vendor_linear_layerscale_residual(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32)
// CHECK-DAG: func.func private @moss_vendor_linear(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32)
// CHECK-DAG: func.func private @moss_vendor_linear_layerscale_residual(memref<?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32)
// CHECK-NOT: moss.linear
func.func @fallback(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu vendor_fallback : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}
func.func @fallback_layerscale(%x: tensor<?x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<?x768xbf16>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<?x768xbf16>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}
