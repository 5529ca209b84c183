// REQUIRES: ptxas
// RUN: moss-opt %s --pass-pipeline="builtin.module(moss-select-tiles{whitelist=%S/Inputs/whitelist.json},moss-to-cubin{format=isa})" | FileCheck %s
// RUN: moss-opt %s --pass-pipeline="builtin.module(moss-select-tiles{whitelist=%S/Inputs/whitelist.json},moss-to-cubin{format=bin})" | FileCheck %s --check-prefix=BIN

// The whole pipeline: tile selection, the generated kernels, NVVM, PTX for
// sm_90a on BF16 tensor cores with erf inlined from libdevice.
// CHECK: gpu.binary @moss_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx81", link = ["{{.*}}libdevice.10.bc"]>
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .visible .entry linear_n3072_k768_gelu_bm16_bn32_bk64_s1(
// CHECK-SAME: cp.async.cg.shared.global
// CHECK-SAME: cp.async.wait_group
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// Split-K reduces in the same kernel, across its cluster: each rank arms an
// mbarrier and arrives (relaxed) at a cluster barrier at the start, waits at
// it after the MMAs, pushes each item's partial sum to the rank that
// finishes it with st.async (completing bytes on that rank's mbarrier) and
// waits on its own mbarrier before the epilogue. No cluster barrier after
// the MMAs, no remote loads, no fence on the output.
// CHECK-SAME: .visible .entry linear_n768_k3072_layerscale_residual_bm8_bn32_bk128_s2(
// CHECK-SAME: .reqnctapercluster 1, 1, 2
// CHECK-SAME: mbarrier.init.shared.b64
// CHECK-SAME: fence.mbarrier_init.release.cluster;
// CHECK-SAME: mbarrier.arrive.expect_tx.shared.b64
// CHECK-SAME: barrier.cluster.arrive.relaxed;
// CHECK-SAME: cp.async.cg.shared.global
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-SAME: barrier.cluster.wait;
// CHECK-SAME: mapa.shared::cluster.u64
// CHECK-SAME: st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32
// CHECK-SAME: mbarrier.try_wait.parity.shared.b64
// CHECK-NOT: ld.shared::cluster
// CHECK-NOT: barrier.cluster.arrive;
// CHECK-NOT: _reduce
// CHECK-NOT: atom.global
// CHECK-NOT: __nv_erff
// CHECK-NOT: .local
// CHECK-LABEL: func.func @decoder_ffn
// The host calls the runtime, which launches the kernels above.
// CHECK: call @moss_ffn_gemm(
// CHECK-NOT: gpu.memset
// CHECK: call @moss_ffn_gemm_layerscale_residual(
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: moss.

// format=bin: ptxas makes the cubin inside the pipeline.
// BIN: gpu.binary @moss_kernels [#gpu.object<#nvvm.target<{{.*}}chip = "sm_90a"{{.*}}>, properties = {{.*}}bin = "\7FELF
func.func @decoder_ffn(%x: tensor<16x768xbf16>, %w1: tensor<3072x768xbf16>, %w2: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<16x768xbf16>) -> tensor<16x768xbf16> {
  %h = moss.linear %x, %w1 epilogue gelu : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  %y = moss.linear %h, %w2 scale(%s : tensor<768xbf16>) residual(%r : tensor<16x768xbf16>) epilogue layerscale_residual : tensor<16x3072xbf16>, tensor<768x3072xbf16> -> tensor<16x768xbf16>
  return %y : tensor<16x768xbf16>
}
