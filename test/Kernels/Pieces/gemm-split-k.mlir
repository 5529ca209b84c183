// The split-K hand-over (GemmEmitter::handOverSplitK, sumReceived): after
// the cluster wait that publishes the receive mbarriers, each item's sum
// goes to the rank that finishes it (st.async completing bytes on that
// rank's mbarrier, or a plain store into the own slot); many ranks with
// large shares use a send area and one cp.async.bulk per other rank. A rank
// spins on its mbarrier, then adds the ranks' slots in order z = 0..split-1.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-split-k k=3072 tile=16,32,64,4" | FileCheck %s
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-split-k k=3072 tile=64,64,64,8" | FileCheck %s --check-prefix=BULK
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-split-k tile=16,32,64,1" 2>&1 | FileCheck %s --check-prefix=NOSPLIT

// CHECK-LABEL: gpu.func @"gemm-split-k"
// CHECK: nvvm.cluster.wait
// CHECK: scf.if
// CHECK: } else {
// CHECK: nvvm.mapa
// CHECK: nvvm.mapa
// CHECK-COUNT-2: st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK: gpu.barrier
// CHECK-NOT: cp.async.bulk
// CHECK: mbarrier.try_wait.parity
// Four slots, added in order: three adds of each half.
// CHECK-COUNT-4: llvm.load {{.*}} -> vector<4xf32>
// CHECK: %[[LO:.*]] = arith.addf
// CHECK: gpu.return

// BULK-LABEL: gpu.func @"gemm-split-k"
// BULK-NOT: st.async
// BULK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// BULK: gpu.barrier
// Thread 0, one bulk copy per other rank (a branch per rank z skips its own).
// BULK-COUNT-8: cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
// BULK: mbarrier.try_wait.parity
// BULK: nvvm.cluster.arrive.relaxed
// BULK: gpu.return

// NOSPLIT: error: moss-test-kernel-piece: the split-K hand-over needs split > 1
module {}
