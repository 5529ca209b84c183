// The GEMM slab copies (GemmEmitter::issueCopies): one cp.async commit group
// per stage; with prefetch_w the W stages go first and only x waits for the
// previous grid, else the wait comes first. x rows are zero-filled by a
// src-size operand; x goes through L1 (.ca) only for small-split tiles.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-copies tile=16,32,64,1" | FileCheck %s
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-copies tile=32,32,64,2" | FileCheck %s --check-prefix=SPLIT

// CHECK-LABEL: gpu.func @"gemm-copies"
// CHECK-SAME: (%{{.*}}: !llvm.ptr<3>, %[[X:.*]]: !llvm.ptr<1>, %[[W:.*]]: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[PREFETCH:.*]]: i32) {
// CHECK: %[[ON:.*]] = arith.cmpi ne, %[[PREFETCH]]
// CHECK: scf.if %[[ON]] {
// W first: L2 only, no src-size, before the wait.
// CHECK-NOT: cache = ca
// CHECK-NOT: griddepcontrol
// CHECK-COUNT-6: nvvm.cp.async.commit.group
// CHECK-NOT: cache = ca
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = ca, %{{.*}} :
// CHECK-COUNT-6: nvvm.cp.async.commit.group
// CHECK-NEXT: } else {
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-COUNT-6: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return

// A split-K tile of bm >= 32 reads x by .cg.
// SPLIT-LABEL: gpu.func @"gemm-copies"
// SPLIT-NOT: cache = ca
// SPLIT: gpu.return
module {}
