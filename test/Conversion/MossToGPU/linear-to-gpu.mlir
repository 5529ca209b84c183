// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s
// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s --check-prefix=ORDER

// With prefetch_w, no x copy (.ca) comes before griddepcontrol.wait; without
// it, the wait is the first thing the branch does.
// ORDER-LABEL: gpu.func @linear_n3072_k768_gelu_bm16_bn32_bk64_s1
// ORDER: scf.if
// ORDER-NOT: cache =  ca
// ORDER: nvvm.griddepcontrol wait
// ORDER: cache =  ca
// ORDER: } else {
// ORDER-NEXT: nvvm.griddepcontrol wait

// A tiled GEMM becomes its kernel and a launch with the runtime M. The CTA's
// W and x slab goes to dynamic shared memory by cp.async, one commit group
// per stage (768 / 128 = 6 stages); each stage's MMAs wait for its group.
// The kernel lets dependents launch at once and reads x only after
// griddepcontrol.wait; prefetch_w (last argument) picks the copy order: W's
// stages before the wait, then x's (programmatic launch), or the wait first
// and each stage's W and x together.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @moss_kernels
// CHECK: llvm.mlir.global external @[[SMEM:__linear_n3072_k768_gelu_bm16_bn32_bk64_s1_smem]]() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @[[KERNEL:linear_n3072_k768_gelu_bm16_bn32_bk64_s1]](%[[XP:.*]]: !llvm.ptr<1>, %[[WP:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[M:.*]]: i32, %[[PREFETCH:.*]]: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: nvvm.cluster_dim
// CHECK: %[[SLAB:.*]] = llvm.mlir.addressof @[[SMEM]] : !llvm.ptr<3>
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK: %[[EARLY:.*]] = arith.cmpi ne, %[[PREFETCH]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[EARLY]] {
// W goes to shared memory only (.cg).
// CHECK-NOT: griddepcontrol
// CHECK: llvm.getelementptr %[[WP]]
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NOT: griddepcontrol
// CHECK-COUNT-6: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.griddepcontrol wait
// x through L1 (.ca), which the CTAs on one SM share; rows past M are
// zero-filled (src-size 0), not read.
// CHECK: %[[OWNED:.*]] = arith.cmpi ult, %{{.*}}, %[[M]] : i32
// CHECK: %[[SRCBYTES:.*]] = arith.select %[[OWNED]], %c16_i32{{.*}}, %c0_i32
// CHECK: llvm.getelementptr %[[XP]]
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  ca, %[[SRCBYTES]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-COUNT-6: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: } else {
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  ca
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-5: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.commit.group
// CHECK: }
// The same waits serve both orders: stage s's group is the (stages - s)-th
// newest of the W-and-x group(s) it needs.
// CHECK: nvvm.cp.async.wait.group 5
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: nvvm.mma.sync
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: nvvm.cp.async.wait.group 4
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// The partial tiles reuse the slab once every warp is done with it.
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: arith.truncf {{.*}} to bf16
// CHECK: math.erf
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: gpu.return
// CHECK-NOT: nvvm.cluster
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xbf16>, %[[W:.*]]: tensor<3072x768xbf16>)
// The host side is one call of the runtime's moss_ffn_gemm, which launches
// the kernel by the launch rule it shares with moss-aot (GemmLaunchTest).
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK: %[[XD:.*]] = memref.cast %[[XB]] : memref<?x768xbf16> to memref<?x?xbf16>
// CHECK: %[[DIM:.*]] = memref.dim %[[XD]], %c0
// CHECK: %[[OUT:.*]] = memref.alloc(%[[DIM]]) : memref<?x3072xbf16>
// CHECK: %[[WB:.*]] = bufferization.to_buffer %[[W]] read_only
// CHECK: %[[WD:.*]] = memref.cast %[[WB]] : memref<3072x768xbf16> to memref<?x?xbf16>
// CHECK: %[[OD:.*]] = memref.cast %[[OUT]] : memref<?x3072xbf16> to memref<?x?xbf16>
// CHECK-NOT: gpu.launch_func
// CHECK: call @moss_ffn_gemm(%[[XD]], %[[WD]], %[[OD]], %c1_i32) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: moss.
func.func @gelu(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu tile <16, 32, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// split > 1: one kernel, whose split CTAs form a (1, 1, split) cluster. At
// the start thread 0 arms the rank's receive mbarrier for the bytes the
// other ranks will push, and every thread arrives (relaxed) at a cluster
// barrier. After the MMAs each rank waits at that barrier (every mbarrier is
// initialized), sums its warps' tiles item by item and stores an item's sum
// into its own receive slot or pushes it with st.async into the slot of the
// rank that finishes it (mapa of the slot and of that rank's mbarrier); it
// then waits on its own mbarrier, adds the slots in rank order, applies the
// epilogue to its share of the tile and exits: no workspace, no atomics, no
// remote loads and no cluster barrier after the MMAs.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @[[MAIN:linear_n768_k3072_layerscale_residual_bm8_bn32_bk128_s2]](%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 2>
// CHECK: %[[SLAB:.*]] = llvm.mlir.addressof @__linear_n768_k3072_layerscale_residual_bm8_bn32_bk128_s2_smem
// The receive area starts after the slab, (32 + 8) x (1536 + 32) bf16 =
// 125440 bytes: 2 slots of 16 items x 8 floats, then the mbarrier.
// CHECK: %[[RECV:.*]] = llvm.getelementptr %[[SLAB]][%c125440_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[MBAR:.*]] = llvm.getelementptr %[[SLAB]][%c126464_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.mbarrier.init %[[MBAR]], %c1_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[MBAR]]
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: nvvm.cluster.wait
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: } else {
// CHECK: %[[REMOTE:.*]] = nvvm.mapa %{{.*}}, %[[OWNER:.*]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: %[[REMOTEBAR:.*]] = nvvm.mapa %[[MBAR]], %[[OWNER]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK: gpu.barrier
// CHECK-NEXT: llvm.inline_asm has_side_effects "{ .reg .pred p; R${:uid}: mbarrier.try_wait.parity.shared.b64 p, [$0], 0; @!p bra R${:uid}; }", "r" %[[MBAR]]
// CHECK-NOT: ptr<7>
// CHECK-NOT: nvvm.cluster
// CHECK: llvm.getelementptr %[[RECV]]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.return
// CHECK-NOT: llvm.atomicrmw
// CHECK-LABEL: func.func @layerscale_split
// CHECK-NOT: memref.alloc() : memref<?xf32>
// CHECK-NOT: gpu.memset
// CHECK: call @moss_ffn_gemm_layerscale_residual(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32) -> ()
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: moss.
func.func @layerscale_split(%x: tensor<4x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<4x768xbf16>) -> tensor<4x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<4x768xbf16>) epilogue layerscale_residual tile <8, 32, 128, 2> : tensor<4x3072xbf16>, tensor<768x3072xbf16> -> tensor<4x768xbf16>
  return %y : tensor<4x768xbf16>
}

// -----

// row_live: the same kernel (every kernel takes row_live), the host call
// with the live rows after residual.
// CHECK-LABEL: func.func @layerscale_row_live
// CHECK: call @moss_ffn_gemm_layerscale_residual_live(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, memref<?xi1>, memref<?x?xbf16>, i32) -> ()
func.func @layerscale_row_live(%x: tensor<4x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<4x768xbf16>, %l: tensor<4xi1>) -> tensor<4x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<4x768xbf16>) row_live(%l : tensor<4xi1>) epilogue layerscale_residual tile <8, 32, 128, 2> : tensor<4x3072xbf16>, tensor<768x3072xbf16> -> tensor<4x768xbf16>
  return %y : tensor<4x768xbf16>
}

// -----

// bn = 64 (bm <= 32): warpgroup MMAs with the operands of mma.sync's swap, W
// (64 rows) as A and x (N = bm8 = 16) as B, both K-major in 128-byte swizzle
// atoms of a 1024-byte aligned buffer. Each stage's copies are made visible
// to the async proxy before the barrier; a k16 step of W walks 64-k blocks
// of 64 x 128 bytes (8192), one of x 16 x 128 (2048). Two warpgroups take
// alternate 32-k chunks of a stage.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: llvm.mlir.global external @{{.*}}_bm16_bn64_bk64_s1_smem() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK: gpu.func @[[KERNEL:linear_n3072_k768_gelu_bm16_bn64_bk64_s1]](
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  ca
// CHECK: nvvm.cp.async.wait.group 5
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: arith.muli %{{.*}}, %c8192_i64
// CHECK: arith.shrui
// CHECK-NEXT: %[[A:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: arith.muli %{{.*}}, %c2048_i64
// CHECK: arith.shrui
// CHECK-NEXT: %[[B:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[A]], %[[B]], %{{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-6: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.extractvalue
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// CHECK-LABEL: func.func @gelu_weights_a
// CHECK: call @moss_ffn_gemm(
// CHECK-NOT: moss.
func.func @gelu_weights_a(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// bn = 128 (bm <= 32): one warpgroup for each 64 W rows. Warpgroup wg takes W
// rows from 64 (wg % 2) (8 atoms, 4096 bf16, further into each 64-k block) and
// chunks of set wg / 2; a k16 step walks 64-k blocks of 128 x 128 bytes
// (16384) of W and 16 x 128 (2048) of x. Four warpgroups: 512 threads.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @[[WIDE:linear_n3072_k768_gelu_bm16_bn128_bk64_s1]](
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK: %[[WGN:.*]] = arith.remui %[[WG:.*]], %c2_i32
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: %[[WGK:.*]] = arith.divui %[[WG]], %c2_i32
// CHECK: arith.muli %[[WGN]], %c4096_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.addi %[[WGK]],
// CHECK: arith.muli %{{.*}}, %c16384_i64
// CHECK: arith.shrui
// CHECK-NEXT: %[[A:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: arith.muli %{{.*}}, %c2048_i64
// CHECK: arith.shrui
// CHECK-NEXT: %[[B:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[A]], %[[B]], %{{.*}}, <m = 64, n = 16, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// CHECK-LABEL: func.func @gelu_weights_a_wide
// CHECK: call @moss_ffn_gemm(
// CHECK-NOT: moss.
func.func @gelu_weights_a_wide(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu tile <16, 128, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}

// -----

// Two ops with the same configuration share one kernel.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-COUNT-1: gpu.func @linear_n3072_k768_none_bm16_bn64_bk64_s1(
// CHECK-NOT: gpu.func
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-2: call @moss_ffn_gemm(
func.func @shared(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> (tensor<?x3072xbf16>, tensor<?x3072xbf16>) {
  %a = moss.linear %x, %w epilogue none tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  %b = moss.linear %x, %w epilogue none tile <16, 64, 64, 1> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %a, %b : tensor<?x3072xbf16>, tensor<?x3072xbf16>
}

// -----

// The vendor fallback is the same call of the runtime, with no kernel built.
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @fallback
// CHECK: call @moss_ffn_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32) -> ()
// CHECK-LABEL: func.func @fallback_layerscale
// CHECK: call @moss_ffn_gemm_layerscale_residual(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32)
// CHECK-DAG: func.func private @moss_ffn_gemm(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32)
// CHECK-DAG: func.func private @moss_ffn_gemm_layerscale_residual(memref<?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32)
// CHECK-NOT: moss.linear
func.func @fallback(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w epilogue gelu vendor_fallback : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}
func.func @fallback_layerscale(%x: tensor<?x3072xbf16>, %w: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<?x768xbf16>) -> tensor<?x768xbf16> {
  %y = moss.linear %x, %w scale(%s : tensor<768xbf16>) residual(%r : tensor<?x768xbf16>) epilogue layerscale_residual vendor_fallback : tensor<?x3072xbf16>, tensor<768x3072xbf16> -> tensor<?x768xbf16>
  return %y : tensor<?x768xbf16>
}

// -----

// A LayerNorm mode: the kernel (named by mode layernorm_gelu) takes gamma,
// beta and eps after the seven of every GEMM kernel, loads x itself (no x
// cp.async: only W's), normalises it in the slab before the MMAs; the host
// calls moss_layernorm_gemm with the epilogue and eps.
// CHECK-LABEL: gpu.func @linear_n3072_k768_layernorm_gelu_bm16_bn64_bk64_s2
// CHECK-SAME: (%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %[[G:.*]]: !llvm.ptr<1>, %[[B:.*]]: !llvm.ptr<1>, %[[EPS:.*]]: f32)
// CHECK-NOT: cache =  ca
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.cluster.wait
// CHECK: nvvm.mapa
// CHECK: nvvm.cluster.arrive
// CHECK: nvvm.cluster.wait
// CHECK: math.rsqrt
// CHECK: nvvm.cp.async.wait.group
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.cluster.wait
// CHECK: math.erf
// CHECK: gpu.return
// CHECK-LABEL: func.func @layernorm_gelu
// CHECK: %[[EPSV:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: call @moss_layernorm_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i32, %[[EPSV]]) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?xbf16>, memref<?xbf16>, memref<?x?xbf16>, i32, f32) -> ()
func.func @layernorm_gelu(%x: tensor<?x768xbf16>, %w: tensor<3072x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>) -> tensor<?x3072xbf16> {
  %y = moss.linear %x, %w layernorm(%g, %b : tensor<768xbf16>, tensor<768xbf16>) eps 1.0e-05 epilogue gelu tile <16, 64, 64, 2> : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
  return %y : tensor<?x3072xbf16>
}
