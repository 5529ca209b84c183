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
// CHECK: gpu.func @streaming_attention_d64_g1(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: f32, %[[LAYOUT:.*]]: i32, %{{.*}}: i32, %[[SPLITS:.*]]: i32, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
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
// CHECK: gpu.func @streaming_attention_d64_g1_split({{.*}}, %[[SPLITS1:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) kernel
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
// CHECK: gpu.func @streaming_attention_d64_g4_tma({{.*}}, %[[KMAP4:[^:]*]]: !llvm.ptr, %[[VMAP4:[^:]*]]: !llvm.ptr) kernel
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
// CHECK: gpu.func @streaming_attention_d64_g2_tma({{.*}}, %[[KMAP2:[^:]*]]: !llvm.ptr, %[[VMAP2:[^:]*]]: !llvm.ptr) kernel
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
// CHECK: gpu.func @streaming_attention_d64_g1_tma({{.*}}, %[[KMAP1:[^:]*]]: !llvm.ptr, %[[VMAP1:[^:]*]]: !llvm.ptr) kernel
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
// CHECK: gpu.func @streaming_attention_d64_g4_tma_kv({{.*}}, %[[KMAPKV:[^:]*]]: !llvm.ptr, %[[VMAPKV:[^:]*]]: !llvm.ptr) kernel
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
// CHECK-NOT: gpu.func
//
// CHECK-LABEL: func.func @bthd
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x?x64xbf16>, %[[K:.*]]: tensor<?x12x400x64xbf16>, %[[V:.*]]: tensor<?x12x400x64xbf16>, %[[M:.*]]: tensor<?x1x?x400xi1>)
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[QS:.*]]:4 = memref.extract_strided_metadata %[[QB]]
// CHECK: %[[QSB:.*]] = arith.index_cast %[[QS]]#0 : index to i64
// CHECK: %[[QSH:.*]] = arith.index_cast %[[QS]]#1 : index to i64
// CHECK: %[[QST:.*]] = arith.index_cast %[[QS]]#2 : index to i64
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: bufferization.to_buffer %[[V]] read_only
// CHECK: %[[MB:.*]] = bufferization.to_buffer %[[M]] read_only
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[MS:.*]]:4 = memref.extract_strided_metadata %[[MB]]
// CHECK: %[[MSB:.*]] = arith.index_cast %[[MS]]#0 : index to i64
// CHECK: %[[MSH:.*]] = arith.index_cast %[[MS]]#1 : index to i64
// CHECK: %[[MST:.*]] = arith.index_cast %[[MS]]#2 : index to i64
// CHECK: %[[MSS:.*]] = arith.index_cast %[[MS]]#3 : index to i64
// CHECK: %[[B:.*]] = memref.dim %[[QB]], %c0
// CHECK: %[[H:.*]] = memref.dim %[[QB]], %c1
// CHECK: %[[T:.*]] = memref.dim %[[QB]], %c2
// CHECK: %[[S:.*]] = memref.dim %[[KB]], %c2
// CHECK: %[[OUT:.*]] = memref.alloc(%[[B]], %[[T]]) : memref<?x?x12x64xbf16>
// CHECK: %[[VIEW:.*]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x12x64xbf16> to memref<?x12x?x64xbf16, strided<[?, 64, 768, 1]>>
// Launch rule: rowWarps = min(ceil(T/16), 4), groups0 = min(4 / rowWarps,
// tiles) (see below), grid (B*H, ceil(T/(16 rowWarps)), splits), the splits
// one cluster (1, 1, splits); no workspace.
// CHECK: %[[W16:.*]] = arith.ceildivui %[[T]], %c16
// CHECK: %[[RW:.*]] = arith.minui %[[W16]], %c4
// CHECK: %[[GX:.*]] = arith.muli %[[B]], %[[H]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[RW]], %c16
// CHECK: %[[GY:.*]] = arith.ceildivui %[[T]], %[[ROWS]]
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[S]], %c64
// CHECK: %[[CTAS:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK: %[[FREE:.*]] = arith.divui %c4{{.*}}, %[[RW]]
// CHECK: %[[FIT:.*]] = arith.minui %[[FREE]], %[[TILES]]
// One group beyond 264 CTAs (two for one row warp up to 396), and for two or
// more row warps in a grid of at most 32 CTAs when groups would leave more
// than one trip.
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[CTAS]], %c32
// CHECK: %[[FULL:.*]] = arith.cmpi ugt, %[[CTAS]], %c264
// CHECK: %[[UPTO396:.*]] = arith.cmpi ule, %[[CTAS]], %c396
// CHECK: %[[ONEROW:.*]] = arith.cmpi eq, %[[RW]], %c1
// CHECK: %[[FULLONEROW:.*]] = arith.andi %[[FULL]], %[[ONEROW]]
// CHECK: %[[PAIREDFULL:.*]] = arith.andi %[[FULLONEROW]], %[[UPTO396]]
// CHECK: %[[MANYRW:.*]] = arith.cmpi uge, %[[RW]], %c2
// CHECK: %[[FITTRIPS:.*]] = arith.ceildivui %[[TILES]], %[[FIT]]
// CHECK: %[[MANYTRIPS:.*]] = arith.cmpi ugt, %[[FITTRIPS]], %c1
// CHECK: %[[WALK:.*]] = arith.andi %[[MANYRW]], %[[MANYTRIPS]]
// CHECK: %[[LONG:.*]] = arith.andi %[[WALK]], %[[FEW]]
// CHECK: %[[ONEG:.*]] = arith.ori %[[FULL]], %[[LONG]]
// Two groups instead of four when more than four tiles' splits of one trip
// each fit one CTA an SM.
// CHECK: %[[PAIRS:.*]] = arith.ceildivui %[[TILES]], %c2
// CHECK: %[[PAIRCTAS:.*]] = arith.muli %[[CTAS]], %[[PAIRS]]
// CHECK: %[[PAIRFITS:.*]] = arith.cmpi ule, %[[PAIRCTAS]], %c132
// CHECK: %[[MORE:.*]] = arith.cmpi ugt, %[[TILES]], %c4
// CHECK: %[[FOUR:.*]] = arith.cmpi eq, %[[FIT]], %c4
// CHECK: %[[PAIRABLE:.*]] = arith.andi %[[FOUR]], %[[MORE]]
// CHECK: %[[PAIR:.*]] = arith.andi %[[PAIRABLE]], %[[PAIRFITS]]
// CHECK: %[[PAIRG:.*]] = arith.select %[[PAIR]], %c2{{.*}}, %[[FIT]]
// And at most two for a decode step (T <= 4) of 133..264 CTAs.
// CHECK: %[[UPTO264:.*]] = arith.cmpi ule, %[[CTAS]], %c264
// CHECK: %[[PAST132:.*]] = arith.cmpi ugt, %[[CTAS]], %c132
// CHECK: %[[T1:.*]] = arith.cmpi ule, %[[T]], %c4
// CHECK: %[[T1PAST:.*]] = arith.andi %[[T1]], %[[PAST132]]
// CHECK: %[[DECODEPAIR:.*]] = arith.andi %[[T1PAST]], %[[UPTO264]]
// CHECK: %[[ATMOST2:.*]] = arith.ori %[[PAIREDFULL]], %[[DECODEPAIR]]
// CHECK: %[[G1:.*]] = arith.select %[[ONEG]], %c1{{.*}}, %[[PAIRG]]
// CHECK: %[[TWOMOST:.*]] = arith.minui %[[FIT]], %c2
// CHECK: %[[G0:.*]] = arith.select %[[ATMOST2]], %[[TWOMOST]], %[[G1]]
// Splits: 1 for one trip, else max(1, min(ceil(trips / minTrips),
// slots / (f ctas), 132 / ctas, most)) with f = 2 for one group, else 4,
// minTrips = 1 for one or two row warps, else 2, most = 4 for two row warps,
// else 8; slots = 132 * min(CTAs by warps, CTAs by shared-memory slots).
// CHECK: %[[SLOTS:.*]] = arith.muli %{{.*}}, %c132
// CHECK: %[[TRIPS:.*]] = arith.ceildivui %[[TILES]], %[[G0]]
// CHECK: %[[ONEG0:.*]] = arith.cmpi ule, %[[G0]], %c1
// CHECK: %[[SPREAD:.*]] = arith.select %[[ONEG0]], %c2{{.*}}, %c4
// CHECK: %[[CTASF:.*]] = arith.muli %[[CTAS]], %[[SPREAD]]
// CHECK: %[[HALF:.*]] = arith.divui %[[SLOTS]], %[[CTASF]]
// CHECK: %[[PERSM:.*]] = arith.divui %c132{{.*}}, %[[CTAS]]
// CHECK: %[[BOUND:.*]] = arith.minui %[[HALF]], %[[PERSM]]
// CHECK: %[[FEWRW:.*]] = arith.cmpi ule, %[[RW]], %c2
// CHECK: %[[MINTRIPS:.*]] = arith.select %[[FEWRW]]
// CHECK: %[[TWORW:.*]] = arith.cmpi eq, %[[RW]], %c2
// CHECK: %[[MOST:.*]] = arith.select %[[TWORW]], %c4{{.*}}, %c8
// CHECK: %[[BYTRIPS:.*]] = arith.ceildivui %[[TRIPS]], %[[MINTRIPS]]
// CHECK: %[[CAP1:.*]] = arith.minui %[[BYTRIPS]], %[[BOUND]]
// CHECK: %[[CAP2:.*]] = arith.minui %[[CAP1]], %[[MOST]]
// CHECK: %[[ATLEAST1:.*]] = arith.maxui %{{.*}}, %[[CAP2]]
// CHECK: %[[ONE:.*]] = arith.cmpi ule, %[[TRIPS]], %c1
// CHECK: %[[WANTED:.*]] = arith.select %[[ONE]], %{{.*}}, %[[ATLEAST1]]
// CHECK: %[[CAPPED:.*]] = arith.minui %[[WANTED]], %[[TILES]]
// CHECK: %[[TPS:.*]] = arith.ceildivui %[[TILES]], %[[CAPPED]]
// CHECK: %[[NSPLIT:.*]] = arith.ceildivui %[[TILES]], %[[TPS]]
// CHECK: %[[GROUPS:.*]] = arith.minui %[[G0]], %[[TPS]]
// CHECK: %[[WARPS:.*]] = arith.muli %[[RW]], %[[GROUPS]]
// Copy warps fill CTAs of two or three groups to four warps while the grid
// has at most one CTA an SM.
// CHECK: %[[TWOG:.*]] = arith.cmpi eq, %[[GROUPS]], %c2
// CHECK: %[[THREEG:.*]] = arith.cmpi eq, %[[GROUPS]], %c3
// CHECK: %[[CAPABLE:.*]] = arith.ori %[[TWOG]], %[[THREEG]]
// CHECK: %[[ALLCTAS:.*]] = arith.muli %[[CTAS]], %[[NSPLIT]]
// CHECK: %[[ONEWAVE:.*]] = arith.cmpi ule, %[[ALLCTAS]], %c132
// CHECK: %[[COPYING:.*]] = arith.andi %[[CAPABLE]], %[[ONEWAVE]]
// CHECK: %[[FILL:.*]] = arith.subi %c4{{.*}}, %[[WARPS]]
// CHECK: %[[COPYW:.*]] = arith.select %[[COPYING]], %[[FILL]], %c0
// CHECK: %[[ALLW:.*]] = arith.addi %[[WARPS]], %[[COPYW]]
// CHECK: %[[THREADS:.*]] = arith.muli %[[ALLW]], %c32
// Shared memory: stages * groups slots of 16 KiB (two stages for <= 2
// groups), then 2 KiB of Q rows a compute warp, then the merge area: 4608 bytes a
// row warp for each group but the first and, when split, for each split's
// receive slot, and 16 bytes for the mbarrier.
// CHECK: %[[FEWG:.*]] = arith.cmpi ule, %[[GROUPS]], %c2
// CHECK: %[[STAGES:.*]] = arith.select %[[FEWG]]
// CHECK: %[[NSLOTS:.*]] = arith.muli %[[STAGES]], %[[GROUPS]]
// CHECK: %[[SLOTBYTES:.*]] = arith.muli %[[NSLOTS]], %c16384
// CHECK: %[[QBYTES:.*]] = arith.muli %[[WARPS]], %c2048
// CHECK: %[[ONEPASS:.*]] = arith.cmpi ule, %[[NSPLIT]], %c1{{.*}} : index
// CHECK: %[[SPLITSLOTS:.*]] = arith.select %[[ONEPASS]], %c0{{.*}}, %[[NSPLIT]] : index
// CHECK: %[[GPLUS:.*]] = arith.addi %[[GROUPS]], %[[SPLITSLOTS]]
// CHECK: %[[ENTRIES:.*]] = arith.subi %[[GPLUS]], %c1
// CHECK: %[[MBAR:.*]] = arith.select %[[ONEPASS]], %c0{{.*}}, %c16{{.*}} : index
// CHECK: %[[ENTRYWARPS:.*]] = arith.muli %[[ENTRIES]], %[[RW]]
// CHECK: %[[ENTRYBYTES:.*]] = arith.muli %[[ENTRYWARPS]], %c4608
// CHECK: %[[MERGEBYTES:.*]] = arith.addi %[[ENTRYBYTES]], %[[MBAR]]
// The rule without TMA copies (no tensor maps here): no trip mbarrier.
// CHECK: %[[SQ:.*]] = arith.addi %[[SLOTBYTES]], %[[QBYTES]]
// CHECK: %[[SMEM:.*]] = arith.addi %[[SQ]], %[[MERGEBYTES]]
// CHECK-NOT: memref<?xf32>
// CHECK-DAG: %[[B32:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK-DAG: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[BTHD0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[NOSKIP:.*]] = arith.constant 0 : i32
// CHECK: %[[N32:.*]] = arith.index_cast %[[NSPLIT]] : index to i32
// CHECK: %[[SMEM32:.*]] = arith.index_cast %[[SMEM]] : index to i32
// The function of the rule's key-group count (1..3, default 4): the split one,
// launched as clusters (1, 1, splits), when splits > 1, else the one-pass one.
// CHECK: %[[ISSPLIT:.*]] = arith.cmpi ugt, %[[NSPLIT]], %c1{{.*}} : index
// CHECK: scf.if %[[ISSPLIT]] {
// CHECK: scf.index_switch %[[GROUPS]]
// CHECK: case 1 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1_split clusters in (%{{.*}}, %{{.*}}, %[[NSPLIT]]) blocks in (%[[GX]], %[[GY]], %[[NSPLIT]]) threads in (%[[THREADS]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM32]] args(
// CHECK-SAME: %[[QSB]] : i64, %[[QSH]] : i64, %[[QST]] : i64,
// CHECK-SAME: %[[MSB]] : i64, %[[MST]] : i64, %[[MSS]] : i64, %[[B32]] : i32, %{{.*}} : i32, %[[T32]] : i32, %{{.*}} : i32, %[[SCALE]] : f32, %[[BTHD0]] : i32, %[[NOSKIP]] : i32, %[[N32]] : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
// CHECK: case 2 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2_split clusters in (%{{.*}}, %{{.*}}, %[[NSPLIT]]) blocks in (%[[GX]], %[[GY]], %[[NSPLIT]])
// CHECK: case 3 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g3_split clusters in (%{{.*}}, %{{.*}}, %[[NSPLIT]]) blocks in (%[[GX]], %[[GY]], %[[NSPLIT]])
// CHECK: default {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g4_split clusters in (%{{.*}}, %{{.*}}, %[[NSPLIT]]) blocks in (%[[GX]], %[[GY]], %[[NSPLIT]])
// CHECK: } else {
// CHECK: scf.index_switch %[[GROUPS]]
// CHECK: case 1 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g1 blocks in (%[[GX]], %[[GY]], %[[NSPLIT]]) threads in (%[[THREADS]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM32]] args(
// CHECK-SAME: %[[N32]] : i32, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
// CHECK: case 2 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g2 blocks in
// CHECK: case 3 {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g3 blocks in
// CHECK: default {
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64_g4 blocks in
// CHECK-NOT: gpu.launch_func
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[VIEW]] restrict writable : memref<?x12x?x64xbf16, strided<[?, 64, 768, 1]>> to tensor<?x12x?x64xbf16>
// CHECK: return %[[R]]
// CHECK-NOT: moss.
func.func @bthd(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %m: tensor<?x1x?x400xi1>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1> -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}

// -----

// bhtd stores the result as shaped (no transpose); layout, skip flag and the
// given scale reach the kernel as arguments. (The module label ends the
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
// The cp.async functions: host IR has no driver to encode tensor maps, which
// are null.
// CHECK-DAG: %[[KMAP:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG: %[[VMAP:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64
// CHECK-SAME: %[[SCALE]] : f32, %[[BHTD]] : i32, %[[SKIP]] : i32, %{{.*}} : i32, %[[KMAP]] : !llvm.ptr, %[[VMAP]] : !llvm.ptr)
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
// CHECK-NOT: gpu.func
// CHECK-LABEL: func.func @two_layers
// CHECK-COUNT-4: scf.index_switch
// CHECK-NOT: moss.
func.func @two_layers(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x1x250xi1>) -> (tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>) {
  %a = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  %b = moss.streaming_attention %a, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  return %a, %b : tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>
}
