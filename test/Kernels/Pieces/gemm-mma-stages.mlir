// The mma.sync stages (GemmEmitter::emitStages): stage s waits for its
// cp.async group (wait_group stages-1-s), a CTA barrier, then the warp's
// chunks of the stage, two bf16 m16n8k16 MMAs per x m8 tile and chunk (A = W
// rows, B = x rows: the swap), carrying the accumulators.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-mma-stages tile=16,32,64,1" | FileCheck %s
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-mma-stages tile=64,64,64,1" 2>&1 | FileCheck %s --check-prefix=WGMMA

// bm = 16: two m8 tiles, 8 accumulators.
// CHECK-LABEL: gpu.func @"gemm-mma-stages"(%{{.*}}: !llvm.ptr<3>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: nvvm.cp.async.wait.group 5
// CHECK-NEXT: gpu.barrier
// CHECK: %[[S0:.*]]:8 = scf.for
// CHECK-COUNT-4: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 4
// CHECK: scf.for {{.*}} iter_args({{.*}} = %[[S0]]#0,
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: %[[S5:.*]]:8 = scf.for
// CHECK: gpu.return %[[S5]]#0, %[[S5]]#1, %[[S5]]#2, %[[S5]]#3, %[[S5]]#4, %[[S5]]#5, %[[S5]]#6, %[[S5]]#7

// WGMMA: error: moss-test-kernel-piece: the tile takes the warpgroup-MMA stages
module {}
