// The LayerNorm prologue (GemmEmitter::applyLayerNorm and its pieces): x
// comes by plain 16-byte loads (zeros for rows the CTA does not own) into
// the slab, bar.sync, each warp's rows' (mean, M2) into the stats slots,
// then the slice normalised in place, rounded to bf16 once. Split-K trades
// the moments between the ranks through distributed shared memory between
// two cluster barrier phases; without it a bar.sync is enough.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-layernorm tile=16,64,64,1 mode=3" | FileCheck %s
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-layernorm tile=16,64,64,4 mode=4" | FileCheck %s --check-prefix=SPLIT
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-slice-moments tile=16,64,64,1 mode=3" | FileCheck %s --check-prefix=MOMENTS
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-row-statistics tile=16,64,64,1 mode=3" | FileCheck %s --check-prefix=STATS
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-row-statistics tile=16,64,64,4 mode=3" | FileCheck %s --check-prefix=CHAN
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-copies tile=16,64,64,1 mode=3" | FileCheck %s --check-prefix=COPIES
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-layernorm tile=16,64,64,1 mode=1" 2>&1 | FileCheck %s --check-prefix=NOLN

// CHECK-LABEL: gpu.func @"gemm-layernorm"
// CHECK: scf.if %{{.*}} -> (vector<8xbf16>) {
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: } else {
// CHECK: llvm.mlir.zero : vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: arith.divf
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NOT: nvvm.mapa
// CHECK: gpu.barrier
// CHECK: math.rsqrt
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.return

// Four ranks: the wait of the start's arrive, the moments stored into all
// four ranks, then one more arrive and wait before they are read.
// SPLIT-LABEL: gpu.func @"gemm-layernorm"
// SPLIT: gpu.barrier
// SPLIT-NEXT: nvvm.cluster.wait
// SPLIT-COUNT-4: nvvm.mapa
// SPLIT: nvvm.cluster.arrive
// SPLIT-NEXT: nvvm.cluster.wait
// SPLIT: math.rsqrt
// SPLIT: gpu.return

// A K slice of 768 is 96 pieces: three a lane, the third only for lanes
// below 96 - 64 = 32, i.e. all; two passes, each ending in a five-step
// butterfly.
// MOMENTS-LABEL: gpu.func @"gemm-slice-moments"
// MOMENTS-COUNT-3: llvm.load {{.*}} : !llvm.ptr<3> -> vector<8xbf16>
// MOMENTS: gpu.shuffle xor %{{.*}}, %c16_i32
// MOMENTS: gpu.shuffle xor %{{.*}}, %c8_i32
// MOMENTS: gpu.shuffle xor %{{.*}}, %c4_i32
// MOMENTS: gpu.shuffle xor %{{.*}}, %c2_i32
// MOMENTS: gpu.shuffle xor %{{.*}}, %c1_i32
// MOMENTS: %[[MEAN:.*]] = arith.divf %{{.*}}, %cst
// MOMENTS: arith.subf %{{.*}}, %[[MEAN]]
// MOMENTS-COUNT-5: gpu.shuffle xor
// MOMENTS: gpu.return %[[MEAN]], %{{.*}} : f32, f32

// STATS-LABEL: gpu.func @"gemm-row-statistics"
// STATS-COUNT-1: llvm.load {{.*}} -> vector<2xf32>
// STATS-NOT: llvm.load
// STATS: %[[VAR:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// STATS: %[[SUM:.*]] = arith.addf %[[VAR]], %{{.*}} : f32
// STATS: %[[RSTD:.*]] = math.rsqrt %[[SUM]] : f32
// STATS: gpu.return %{{.*}}, %[[RSTD]] : f32, f32

// Four slices of 192: the means averaged, then M2 + 192 (mean_z - mean)^2
// added in order z = 0..3.
// CHAN-LABEL: gpu.func @"gemm-row-statistics"
// CHAN-COUNT-4: llvm.load {{.*}} -> vector<2xf32>
// CHAN: arith.constant 4.000000e+00 : f32
// CHAN: arith.constant 1.920000e+02 : f32
// CHAN: math.rsqrt
// CHAN: gpu.return

// A LayerNorm mode copies W alone: its x arrives by plain loads.
// COPIES-LABEL: gpu.func @"gemm-copies"
// COPIES-NOT: cache = ca
// COPIES: gpu.return

// NOLN: the LayerNorm pieces need mode 3 or 4
module {}
