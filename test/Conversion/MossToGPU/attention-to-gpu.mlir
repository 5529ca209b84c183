// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s
// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s --check-prefix=PDL

// Programmatic dependent launch (ABI 4): every function waits for the
// previous kernel before its first access to global memory (a copy, a load
// or a store) and lets the next one be scheduled after its key tiles: no
// MMA follows the trigger. With bit 1 of `flags` (%arg23, ABI 11) it
// triggers before the wait instead (the later trigger then counts nothing).
// PDL-LABEL: gpu.func @streaming_attention_d64_g1(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g2(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g3(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g4(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g1_split(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g2_split(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g3_split(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return
// PDL-LABEL: gpu.func @streaming_attention_d64_g4_split(
// PDL-NOT: nvvm.cp.async
// PDL-NOT: llvm.load
// PDL-NOT: llvm.store
// PDL: %[[EARLY:.*]] = arith.andi %arg23, %c2_i32{{.*}} : i32
// PDL-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// PDL-NEXT: %[[ON:.*]] = arith.cmpi ne, %[[EARLY]], %[[ZERO]] : i32
// PDL-NEXT: scf.if %[[ON]] {
// PDL-NEXT: nvvm.griddepcontrol launch_dependents
// PDL-NEXT: }
// PDL-NEXT: nvvm.griddepcontrol wait
// PDL: nvvm.mma.sync
// PDL: nvvm.griddepcontrol launch_dependents
// PDL-NOT: nvvm.mma.sync
// PDL-NOT: nvvm.griddepcontrol
// PDL: gpu.return

// Default layout (bthd): the generated kernels, then host code that passes
// the operands' strides, allocates [B,T,H,D] storage, returns it as the
// transposed [B,H,T,D] view and launches with the runtime B and T.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @moss_kernels
// CHECK: llvm.mlir.global external @__streaming_attention_d64_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-NOT: llvm.mlir.global
// The function for one key group (long chunks); g2..g4 follow.
// CHECK: gpu.func @streaming_attention_d64_g1(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: f32, %[[LAYOUT:.*]]: i32, %{{.*}}: i32, %[[SPLITS:.*]]: i32, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64) kernel
// CHECK-SAME: moss.byval_args = array<i32: 25, 26>
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK: gpu.block_dim x
// Prologue: the warp's Q rows into shared memory (their own cp.async group),
// then trip 0's tiles, one per group, by every thread with 16-byte cp.async
// (rows past S zero-filled), one commit group per trip.
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1_i32{{(_[0-9]+)?}} step
// CHECK: scf.for
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// Which groups' tiles have an allowed key anywhere in the CTA: one
// bar.red.or per group.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1_i32{{(_[0-9]+)?}} step
// CHECK: nvvm.barrier #nvvm.reduction<or>
// The trip loop: wait for this thread's copies, the groups' barriers (all
// copies visible), the next trip's copies, the L1 prefetch of the mask two
// trips ahead, compute.
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.prefetch level = L1
// CHECK: nvvm.vote.sync any
// Q's A fragments from shared memory.
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// QK^T on BF16 tensor cores with K from ldmatrix.
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: nvvm.mma.sync
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32, f32)>
// Online softmax: quad max, p = exp2(s * scale - m) as one FMA and one
// ex2.approx.ftz, then PV with V^T from ldmatrix.trans.
// CHECK: arith.maxnumf
// CHECK: gpu.shuffle xor
// CHECK: math.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK: nvvm.mma.sync
// One-pass epilogue: bf16 pairs at row ((b*T + t)*H + h) (bthd) or
// ((b*H + h)*T + t) (bhtd); no split code (splits is not read).
// CHECK-NOT: %[[SPLITS]]
// CHECK: %[[BTHD:.*]] = arith.cmpi eq, %[[LAYOUT]], %{{.*}} : i32
// CHECK: arith.select %[[BTHD]], %{{.*}}, %{{.*}} : i64
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NOT: nvvm.cluster
// CHECK-NOT: nvvm.mapa
// CHECK: gpu.return
// CHECK: gpu.func @streaming_attention_d64_g2(
// CHECK: gpu.func @streaming_attention_d64_g3(
// With four groups there is one stage: the next trip's copies follow the
// compute and a barrier. After the last tile groups 1.. hand their state to
// group 0 in the merge area after the Q rows, at once (no barrier: no warp
// reads it before) as 16-byte vectors (five for row g, four more for row
// g + 8 where the warp has it), one barrier publishes it and group 0 merges
// the three entries at once, with no loop: their m and l vectors, the
// largest m, the four weights, then row g's acc vectors of every entry, and
// row g + 8's where the warp has it.
// CHECK: gpu.func @streaming_attention_d64_g4(
// CHECK: nvvm.mma.sync
// CHECK: nvvm.barrier0
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-5: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: scf.if
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.barrier0
// CHECK-NOT: scf.for
// CHECK-COUNT-3: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK-COUNT-3: arith.maxnumf
// CHECK-NOT: llvm.load
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-COUNT-12: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK-COUNT-12: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: scf.for
// CHECK: gpu.return
// The split functions (splits > 1, one cluster of the splits): thread 0
// arms the receive mbarrier (rank 0 expects (splits - 1) slots) and every
// thread arrives (relaxed) at a cluster barrier; each CTA walks its split's
// tiles, waits at that barrier, and group 0 leaves (m, l, acc) as 16-byte
// vectors in rank 0's receive slot z: rank 0 with plain stores, the others
// with st.async completing on rank 0's mbarrier. Rank 0 spins on it and
// merges the slots in order from its own shared memory, then stores the
// output. No remote loads, no cluster barrier
// at the end, no global partials, fences or atomics.
// CHECK: gpu.func @streaming_attention_d64_g1_split({{.*}}, %[[SPLITS1:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, {{.*}}) kernel
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK: gpu.block_id z
// CHECK: nvvm.mbarrier.init
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: nvvm.mma.sync
// CHECK: nvvm.griddepcontrol launch_dependents
// The slots are in the merge area, not in the K/V slots the last tile's
// ldmatrix may still read: no barrier before the hand-over.
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: nvvm.cluster.wait
// CHECK-NOT: !llvm.ptr<1>
// CHECK-COUNT-9: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: } else {
// CHECK: %[[REMOTE:.*]] = nvvm.mapa %{{.*}}, %[[RANK0:.*]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: %[[REMOTEBAR:.*]] = nvvm.mapa %{{.*}}, %[[RANK0]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-COUNT-9: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; R${:uid}: mbarrier.try_wait.parity.shared.b64 p, [$0], 0; @!p bra R${:uid}; }"
// Every slot's m first (eight, the most splits; slots past the splits
// weigh 0) for the common maximum, then the slots two at a time, each
// weighted by exp2(m_z - max): no maximum inside the loop.
// CHECK-NOT: !llvm.ptr<7>
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: arith.maxnumf
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS1]] step %c2_i32
// CHECK-NOT: arith.maxnumf
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: arith.maxnumf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: arith.maxnumf
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: arith.maxnumf
// CHECK: scf.yield
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.return
// With key groups: one barrier, between the groups' hand-over and group 0's
// merge; the split hand-over follows the groups' entries in the merge area.
// CHECK: gpu.func @streaming_attention_d64_g2_split(
// CHECK: nvvm.mma.sync
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-5: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-9: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK: st.async.shared::cluster
// CHECK: gpu.func @streaming_attention_d64_g3_split(
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: st.async.shared::cluster
// CHECK: gpu.func @streaming_attention_d64_g4_split(
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK: st.async.shared::cluster
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: gpu.return
// The ninth, g4_tma: thread 0 initializes the trip's mbarrier and has the
// TMA engine copy each tile's K and V box from the tensor maps; no cp.async
// of K or V (only Q's 16 rows).
// CHECK: gpu.func @streaming_attention_d64_g4_tma({{.*}}, %[[KMAP4:[^:]*]]: !llvm.ptr, %[[VMAP4:[^:]*]]: !llvm.ptr, {{.*}}) kernel
// CHECK-SAME: moss.byval_args = array<i32: 25, 26>
// CHECK: nvvm.mbarrier.init
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP4]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP4]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: mbarrier.try_wait.parity
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
// The tenth, g2_tma (ABI 12): the same for two groups, two stages.
// CHECK: gpu.func @streaming_attention_d64_g2_tma({{.*}}, %[[KMAP2:[^:]*]]: !llvm.ptr, %[[VMAP2:[^:]*]]: !llvm.ptr, {{.*}}) kernel
// CHECK-SAME: moss.byval_args = array<i32: 25, 26>
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP2]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP2]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: mbarrier.try_wait.parity
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
// The eleventh, g1_tma (ABI 13): one group, two stages, three CTAs an SM;
// its only cp.async are Q's, before the first trip's boxes.
// CHECK: gpu.func @streaming_attention_d64_g1_tma({{.*}}, %[[KMAP1:[^:]*]]: !llvm.ptr, %[[VMAP1:[^:]*]]: !llvm.ptr, {{.*}}) kernel
// CHECK-SAME: moss.byval_args = array<i32: 25, 26>
// CHECK-SAME: nvvm.minctasm = 3
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP1]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP1]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: mbarrier.try_wait.parity
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.return
// The twelfth, g4_tma_kv (ABI 14): g4_tma with K's and V's mbarriers of
// their own: every tile's K box on the first, then every V box on the
// second. A warp spins on K's before QK^T, on V's before P V, and every
// thread on V's again after the compute.
// CHECK: gpu.func @streaming_attention_d64_g4_tma_kv({{.*}}, %[[KMAPKV:[^:]*]]: !llvm.ptr, %[[VMAPKV:[^:]*]]: !llvm.ptr, {{.*}}) kernel
// CHECK-SAME: moss.byval_args = array<i32: 25, 26>
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.griddepcontrol wait
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[KBAR:[^,]*]], %{{.*}}
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[VBAR:[^,]*]], %{{.*}}
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAPKV]], %[[KBAR]], box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NOT: %[[KMAPKV]]
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAPKV]], %[[VBAR]], box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: mbarrier.try_wait.parity
// CHECK: nvvm.mma.sync
// CHECK: llvm.inline_asm {{.*}}mbarrier.try_wait.parity
// CHECK: nvvm.mma.sync
// CHECK: llvm.inline_asm {{.*}}mbarrier.try_wait.parity
// CHECK: gpu.return
// Then the same twelve building the mask from positions: the query rows'
// int64 positions after the wait, int64 slot positions a tile, no mask byte.
// CHECK: gpu.func @streaming_attention_d64_g1_pos({{.*}}, %[[SLOTS:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i64, %[[QPOS:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i64) kernel
// CHECK: nvvm.griddepcontrol wait
// CHECK: llvm.getelementptr %[[SLOTS]]
// CHECK: llvm.getelementptr %[[QPOS]]
// CHECK: llvm.load {{.*}} invariant {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK-NOT: !llvm.ptr<1> -> i8
// CHECK: gpu.func @streaming_attention_d64_g4_tma_kv_pos(
// CHECK-NOT: !llvm.ptr<1> -> i8
// CHECK: gpu.return
// CHECK-NOT: gpu.func
//
// CHECK-LABEL: func.func @bthd
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x?x64xbf16>, %[[K:.*]]: tensor<?x12x400x64xbf16>, %[[V:.*]]: tensor<?x12x400x64xbf16>, %[[M:.*]]: tensor<?x1x?x400xi1>)
// The host side: the output storage [B,T,H,D], its [B,H,T,D] view, and one
// call of the runtime's moss_streaming_attention, which applies the launch
// rule (moss::config::deriveAttentionLaunch) at run time.
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only
// CHECK: %[[QD:.*]] = memref.cast %[[QB]] : memref<?x12x?x64xbf16> to memref<?x?x?x?xbf16>
// CHECK: %[[B:.*]] = memref.dim %[[QD]], %c0
// CHECK: %[[T:.*]] = memref.dim %[[QD]], %c2
// CHECK: %[[OUT:.*]] = memref.alloc(%[[B]], %[[T]]) : memref<?x?x12x64xbf16>
// CHECK: %[[VIEW:.*]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x12x64xbf16> to memref<?x12x?x64xbf16, strided<[?, 64, 768, 1]>>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: %[[KD:.*]] = memref.cast %[[KB]]
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[VD:.*]] = memref.cast %[[VB]]
// CHECK: %[[MB:.*]] = bufferization.to_buffer %[[M]] read_only
// CHECK: %[[MD:.*]] = memref.cast %[[MB]] : memref<?x1x?x400xi1> to memref<?x?x?x?xi1>
// CHECK: %[[OD:.*]] = memref.cast %[[OUT]] : memref<?x?x12x64xbf16> to memref<?x?x?x?xbf16>
// CHECK: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[BTHD0:.*]] = arith.constant 0 : i32
// CHECK: %[[NOSKIP:.*]] = arith.constant 0 : i32
// CHECK-NOT: gpu.launch_func
// CHECK: call @moss_streaming_attention(%[[QD]], %[[KD]], %[[VD]], %[[MD]], %[[OD]], %[[SCALE]], %[[BTHD0]], %[[NOSKIP]]) : (memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?x?x?xi1>, memref<?x?x?x?xbf16>, f32, i32, i32) -> ()
// CHECK-NOT: gpu.launch_func
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[VIEW]] restrict writable : memref<?x12x?x64xbf16, strided<[?, 64, 768, 1]>> to tensor<?x12x?x64xbf16>
// CHECK: return %[[R]]
// CHECK-NOT: moss.
func.func @bthd(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %m: tensor<?x1x?x400xi1>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1> -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}

// -----

// The positions form calls the runtime's entry for it with the slot and
// query positions in place of the mask.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @positions
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x?x64xbf16>, %[[K:.*]]: tensor<?x12x400x64xbf16>, %[[V:.*]]: tensor<?x12x400x64xbf16>, %[[SL:.*]]: tensor<?x400xi64>, %[[QP:.*]]: tensor<?x?xi64>)
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[SL]] read_only
// CHECK: %[[SD:.*]] = memref.cast %[[SB]] : memref<?x400xi64> to memref<?x?xi64>
// CHECK: %[[PB:.*]] = bufferization.to_buffer %[[QP]] read_only
// CHECK: %[[PD:.*]] = memref.cast %[[PB]] : memref<?x?xi64> to memref<?x?xi64>
// CHECK: call @moss_streaming_attention_positions(%{{.*}}, %{{.*}}, %{{.*}}, %[[SD]], %[[PD]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?x?x?xbf16>, memref<?x?xi64>, memref<?x?xi64>, memref<?x?x?x?xbf16>, f32, i32, i32) -> ()
// CHECK-NOT: call @moss_streaming_attention(
func.func @positions(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %slots: tensor<?x400xi64>, %frames: tensor<?x?xi64>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v positions(%slots, %frames) : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16> positions(tensor<?x400xi64>, tensor<?x?xi64>) -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}

// -----

// bhtd stores the result as shaped (no transpose); layout, skip flag and the
// given scale reach the runtime as arguments. (The module label ends the
// previous case before this one's kernels, whose functions carry
// moss.byval_args.)
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @bhtd_skip_scale
// CHECK-NOT: memref.transpose
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x20x15x64xbf16>
// CHECK-NOT: memref.transpose
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[BHTD:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[SKIP:.*]] = arith.constant 1 : i32
// CHECK: call @moss_streaming_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]], %[[BHTD]], %[[SKIP]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<2x20x15x64xbf16> to tensor<2x20x15x64xbf16>
// CHECK-NOT: moss.
func.func @bhtd_skip_scale(%q: tensor<2x20x15x64xbf16>, %k: tensor<2x20x125x64xbf16>, %v: tensor<2x20x125x64xbf16>, %m: tensor<2x1x15x125xi1>) -> tensor<2x20x15x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m layout bhtd skip_empty_tiles scale(5.000000e-01) : tensor<2x20x15x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x1x15x125xi1> -> tensor<2x20x15x64xbf16>
  return %o : tensor<2x20x15x64xbf16>
}

// -----

// Every attention op shares the eleven functions.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g3(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1_split(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2_split(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g3_split(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_split(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_tma(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2_tma(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1_tma(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_tma_kv(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g3_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1_split_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2_split_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g3_split_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_split_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_tma_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g2_tma_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g1_tma_pos(
// CHECK-COUNT-1: gpu.func @streaming_attention_d64_g4_tma_kv_pos(
// CHECK-NOT: gpu.func
// CHECK-LABEL: func.func @two_layers
// CHECK-COUNT-2: call @moss_streaming_attention(
// CHECK-NOT: moss.
func.func @two_layers(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x1x250xi1>) -> (tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>) {
  %a = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  %b = moss.streaming_attention %a, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  return %a, %b : tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>
}
