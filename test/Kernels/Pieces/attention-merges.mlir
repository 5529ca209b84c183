// The merges of online-softmax states: key groups through shared memory,
// one at a time or all at once (mergeEntriesInOrder, mergeEntriesAtOnce),
// and the splits of a cluster: each pushes its rows into rank 0's slot
// (pushSplitRows), rank 0 merges the slots in order (mergeSplitRows).
// Every m is an integer, so each weight exp2(m_g - M) is exact.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-group-merge" | FileCheck %s --check-prefix=INORDER
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-group-merge groups=3" | FileCheck %s --check-prefix=ATONCE
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-split-push" | FileCheck %s --check-prefix=PUSH
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-split-merge" | FileCheck %s --check-prefix=SPLITS

// A loop over groups 1 .. G-1: five vectors of rows g, then rows g + 8 only
// where the warp has them (%arg37).
// INORDER-LABEL: gpu.func @"attention-group-merge"
// INORDER: scf.for %{{.*}} = %c1_i32{{.*}} to %arg36
// INORDER-COUNT-5: llvm.load {{.*}} -> vector<4xf32>
// INORDER: arith.maxnumf
// INORDER: llvm.nvvm.ex2.approx.ftz.f32
// INORDER: llvm.nvvm.ex2.approx.ftz.f32
// INORDER: scf.if %arg37
// INORDER-COUNT-4: llvm.load {{.*}} -> vector<4xf32>
// INORDER: } else {
// INORDER: scf.yield
// INORDER-NOT: llvm.load
// INORDER: gpu.return

// Three groups: no loop; both other entries' heads first, then each float
// as a chain of FMAs.
// ATONCE-LABEL: gpu.func @"attention-group-merge"
// ATONCE-NOT: scf.for
// ATONCE-COUNT-2: llvm.load {{.*}} -> vector<4xf32>
// ATONCE: arith.maxnumf
// ATONCE: arith.maxnumf
// ATONCE-COUNT-3: llvm.nvvm.ex2.approx.ftz.f32
// ATONCE: math.fma
// ATONCE: scf.if %arg37
// ATONCE: gpu.return

// The quad's l sums, then rank 0 stores its nine vectors and the others
// push theirs by st.async onto rank 0's mbarrier.
// PUSH-LABEL: gpu.func @"attention-split-push"
// PUSH-COUNT-4: gpu.shuffle  xor
// PUSH: %[[RANK0:.*]] = arith.cmpi eq, %arg38, %c0_i32
// PUSH: scf.if %[[RANK0]] {
// PUSH-COUNT-9: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// PUSH-NEXT: } else {
// PUSH: nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// PUSH: %[[BAR:.*]] = nvvm.mapa %arg40, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// PUSH-COUNT-9: st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// PUSH-NOT: llvm.store

// Every slot's m first (kAttentionMaxSplits of them, a slot past the
// splits reading slot 0 and weighing 0), then slots two at a time.
// SPLITS-LABEL: gpu.func @"attention-split-merge"
// SPLITS-COUNT-8: llvm.load {{.*}} -> vector<4xf32>
// SPLITS: scf.for %{{.*}} = %c0_i32{{.*}} to %arg0 step %c2_i32
// SPLITS: scf.if %arg1
// SPLITS: scf.if %arg1
// SPLITS: gpu.return
module {}
