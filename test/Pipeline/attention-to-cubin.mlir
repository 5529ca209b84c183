// REQUIRES: ptxas
// RUN: moss-opt %s --pass-pipeline="builtin.module(moss-to-cubin{format=isa})" | FileCheck %s

// The attention kernels (a one-pass and a split function per key-group count) through the whole pipeline: PTX for sm_90a with BF16
// tensor cores for QK^T and PV (K by ldmatrix, V by ldmatrix.trans), cp.async
// into dynamic shared memory, the reducing barriers of the key groups and of
// skip_empty_tiles, the warp votes that skip a fully masked tile's compute
// and a whole tile's mask selects, the split functions' cluster merge, and
// no local memory, global fences, atomics or calls.
// CHECK: gpu.binary @moss_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a"
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .extern .shared .align 1024 .b8 __streaming_attention_d64_smem[];
// CHECK-SAME: .visible .entry streaming_attention_d64_g1(
// CHECK-SAME: .maxntid 128, 1, 1
// CHECK-SAME: .minnctapersm 3
// CHECK-SAME: cp.async.cg.shared.global
// The one-group function's mask of a contiguous full tile: 4-byte words
// shifted into place (prmt) or 16-byte vectors, exchanged in the quad.
// CHECK-SAME: prmt.b32.f4e
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: shfl.sync.idx.b32
// CHECK-SAME: bar.red.or.pred
// CHECK-SAME: cp.async.wait_group
// CHECK-SAME: vote.sync.any.pred
// CHECK-SAME: vote.sync.all.pred
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-SAME: ex2.approx.ftz.f32
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// The grouped functions (small grids) keep two CTAs an SM, not three.
// CHECK-SAME: .visible .entry streaming_attention_d64_g2(
// CHECK-SAME: .minnctapersm 2
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: shfl.sync.idx.b32
// CHECK-SAME: .visible .entry streaming_attention_d64_g3(
// CHECK-SAME: .minnctapersm 2
// CHECK-SAME: .visible .entry streaming_attention_d64_g4(
// CHECK-SAME: .param .align 64 .b8 streaming_attention_d64_g4_param_26[128]
// CHECK-SAME: .minnctapersm 2
// The split functions push their splits' hand-overs into rank 0's shared
// memory (st.async completing on its mbarrier), which merges them.
// CHECK-SAME: .visible .entry streaming_attention_d64_g1_split(
// CHECK-SAME: .minnctapersm 3
// CHECK-SAME: mbarrier.init.shared.b64
// CHECK-SAME: barrier.cluster.arrive.relaxed;
// CHECK-SAME: barrier.cluster.wait;
// CHECK-SAME: mapa.shared::cluster.u64
// CHECK-SAME: st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK-SAME: mbarrier.try_wait.parity.shared.b64
// CHECK-SAME: .visible .entry streaming_attention_d64_g2_split(
// CHECK-SAME: .visible .entry streaming_attention_d64_g3_split(
// CHECK-SAME: .visible .entry streaming_attention_d64_g4_split(
// CHECK-SAME: .minnctapersm 2
// g4_tma copies K and V by the TMA engine, from the tensor maps passed by
// value (moss-kernel-byval-args).
// CHECK-SAME: .visible .entry streaming_attention_d64_g4_tma(
// CHECK-SAME: .param .align 64 .b8 streaming_attention_d64_g4_tma_param_26[128]
// CHECK-SAME: .minnctapersm 2
// CHECK-SAME: cvta.param.u64
// CHECK-SAME: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-NOT: streaming_attention_d64_combine
// CHECK-NOT: ld.shared::cluster
// CHECK-NOT: membar.gl
// CHECK-NOT: atom.global
// CHECK-NOT: .local
// CHECK-NOT: call
// CHECK-LABEL: func.func @decoder_attention
// CHECK: call @moss_streaming_attention(
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: moss.
func.func @decoder_attention(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x400x64xbf16>, %v: tensor<?x12x400x64xbf16>, %m: tensor<?x1x?x400xi1>) -> tensor<?x12x?x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m : tensor<?x12x?x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x12x400x64xbf16>, tensor<?x1x?x400xi1> -> tensor<?x12x?x64xbf16>
  return %o : tensor<?x12x?x64xbf16>
}
