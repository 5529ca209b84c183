// The warpgroup-MMA stages (GemmEmitter::emitWgmmaStages) and the shared
// memory descriptor of their 128-byte swizzled K-major operands
// (matrixDescriptor, swizzledOffset).
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-wgmma-stages tile=64,64,64,1" | FileCheck %s
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-wgmma-descriptor tile=64,64,64,1" | FileCheck %s --check-prefix=DESC

// bm = 64: x as A, W as B, m64n64k16, 32 accumulators a thread. Each stage
// waits for its copies, makes them visible to the async proxy, and issues
// its k16 steps between a fence and a commit; one wait at the end.
// CHECK-LABEL: gpu.func @"gemm-wgmma-stages"(%{{.*}}: !llvm.ptr<3>, %{{.*}}: i32, %{{.*}}: i32) -> (f32,
// CHECK: nvvm.cp.async.wait.group 5
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: gpu.return

// The descriptor: start address >> 4 (14 bits), leading offset 1, stride
// 1024 >> 4 = 64 at bit 32, layout 1 (128-byte swizzle) at bit 62:
// (1 << 62) | (64 << 32) | (1 << 16) = 4611686293305360384.
// DESC-LABEL: gpu.func @"gemm-wgmma-descriptor"
// DESC-SAME: (%[[M:.*]]: !llvm.ptr<3>, %[[ROW:.*]]: i32, %[[K:.*]]: i32) -> (i64, i32)
// DESC: %[[ADDR:.*]] = llvm.ptrtoint %[[M]] : !llvm.ptr<3> to i64
// DESC-DAG: %[[MASK:.*]] = arith.constant 16383 : i64
// DESC-DAG: %[[FOUR:.*]] = arith.constant 4 : i64
// DESC: %[[SHR:.*]] = arith.shrui %[[ADDR]], %[[FOUR]]
// DESC: %[[START:.*]] = arith.andi %[[SHR]], %[[MASK]]
// DESC: %[[FIELDS:.*]] = arith.constant 4611686293305360384 : i64
// DESC: %[[DESC:.*]] = arith.ori %[[START]], %[[FIELDS]]
// The swizzle: 16-byte chunk (k / 8) % 8 of row r stored at chunk ^ (r % 8).
// DESC: %[[R8:.*]] = arith.remui %[[ROW]]
// DESC: %[[KC:.*]] = arith.divui %[[K]]
// DESC: %[[C:.*]] = arith.remui %[[KC]]
// DESC: %[[CHUNK:.*]] = arith.xori %[[C]], %[[R8]]
// DESC: gpu.return %[[DESC]], %{{.*}} : i64, i32
module {}
