// The K/V copies of the attention kernel (AttentionCopies.cpp): a full tile
// by every thread's cp.async at constant offsets, any tile with the rows
// past S zero-filled, and thread 0's TMA boxes completing on the stage's
// mbarrier.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-copy-full threads=128" | FileCheck %s --check-prefix=FULL
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-copy-full threads=64" | FileCheck %s --check-prefix=FULL64
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-copy-full tma-swizzle=true" | FileCheck %s --check-prefix=TMASWZ
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-copy-any" | FileCheck %s --check-prefix=ANY
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-tma-trip" | FileCheck %s --check-prefix=TMA
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-tma-trip split-kv=true" | FileCheck %s --check-prefix=TMAKV
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=attention-copy-full threads=96" 2>&1 | FileCheck %s --check-prefix=BADTHREADS

// 128 threads copy a 64-key tile of K and of V in 4 passes each; the
// chunk lands at chunk ^ swz(row % 8), swz(r) = ((r & 1) << 2) | (r >> 1).
// FULL-LABEL: gpu.func @"attention-copy-full"
// FULL: %[[CHUNK:.*]] = arith.andi %arg1, %c7_i32
// FULL: %[[ROW:.*]] = arith.shrui %arg1, %c3_i32
// FULL: %[[R8:.*]] = arith.andi %[[ROW]]
// FULL: %[[HI:.*]] = arith.shrui %[[R8]], %c1_i32
// FULL: %[[LO:.*]] = arith.andi %[[R8]], %c1_i32
// FULL: %[[LO4:.*]] = arith.shli %[[LO]], %c2_i32
// FULL: %[[SWZ:.*]] = arith.ori %[[LO4]], %[[HI]]
// FULL: arith.xori %[[CHUNK]], %[[SWZ]]
// FULL-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// FULL-NOT: nvvm.cp.async
// FULL: gpu.return
// FULL64-LABEL: gpu.func @"attention-copy-full"
// FULL64-COUNT-16: nvvm.cp.async.shared.global
// FULL64-NOT: nvvm.cp.async
// The TMA engine's 128-byte swizzle: chunk ^ (row % 8).
// TMASWZ-LABEL: gpu.func @"attention-copy-full"
// TMASWZ: %[[CHUNK:.*]] = arith.andi %arg1, %c7_i32
// TMASWZ: %[[ROW:.*]] = arith.shrui %arg1, %c3_i32
// TMASWZ: %[[R8:.*]] = arith.andi %[[ROW]]
// TMASWZ-NEXT: arith.xori %[[CHUNK]], %[[R8]]

// Two rows a trip of the loop; a row past S copies 0 bytes from the head's
// first row (src-size operand).
// ANY-LABEL: gpu.func @"attention-copy-any"
// ANY: scf.for
// ANY: %[[BYTES:.*]] = arith.select %{{.*}}, %c16_i32, %c0_i32{{.*}} : i32
// ANY: %[[SRC:.*]] = llvm.select %{{.*}}, %{{.*}}, %arg3 : i1, !llvm.ptr<1>
// ANY: nvvm.cp.async.shared.global %{{.*}}, %[[SRC]], 16, cache =  cg, %[[BYTES]]
// ANY: llvm.select %{{.*}}, %{{.*}}, %arg4 : i1, !llvm.ptr<1>
// ANY: scf.if
// ANY-COUNT-2: nvvm.cp.async.shared.global
// ANY: scf.yield

// Thread 0: the async-proxy fence, the expected bytes (a 16 KiB slot a
// tile of `active`), then per key group a K box and a V box at (0, key, h,
// b), both completing on the stage's one mbarrier.
// TMA-LABEL: gpu.func @"attention-tma-trip"
// TMA: scf.if
// TMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// TMA: %[[BAR:.*]] = llvm.getelementptr %arg0
// TMA: %[[TILES:.*]] = llvm.intr.ctpop(%arg10)
// TMA: %[[BYTES:.*]] = arith.muli %[[TILES]], %c16384_i32
// TMA: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %[[BYTES]]
// TMA-NOT: nvvm.mbarrier.arrive.expect_tx
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %[[BAR]], box[%{{.*}}, %{{.*}}, %arg6, %arg7]
// TMA-NEXT: %{{.*}} = arith.constant 4096 : i32
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %[[BAR]], box
// TMA-COUNT-6: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: gpu.return
// g4_tma_kv: half the bytes on each of two mbarriers, every K box first.
// TMAKV-LABEL: gpu.func @"attention-tma-trip"
// TMAKV: nvvm.mbarrier.arrive.expect_tx %[[KBAR:.*]], %{{.*}} : !llvm.ptr<3>, i32
// TMAKV: nvvm.mbarrier.arrive.expect_tx %[[VBAR:.*]], %{{.*}} : !llvm.ptr<3>, i32
// TMAKV-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %[[KBAR]], box
// TMAKV-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %[[VBAR]], box

// BADTHREADS: error: moss-test-kernel-piece: attention-copy-full takes threads=64 or threads=128
module {}
