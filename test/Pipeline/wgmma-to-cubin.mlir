// REQUIRES: ptxas
// RUN: moss-opt %s --pass-pipeline="builtin.module(moss-select-tiles{whitelist=%S/Inputs/wgmma-whitelist.json},moss-to-cubin{format=isa})" | FileCheck %s

// bm = 64 tiles run on warpgroup MMAs: x (A) and W (B) K-major in shared
// memory with the 128-byte swizzle (1024-byte aligned buffer), cp.async
// copies made visible to the async proxy, wgmma m64nNk16 with N = bn, FP32
// accumulators into the usual epilogue; split-K keeps its cluster reduction
// (both split tiles here: 4 and 8 ranks of 2 KiB, so by bulk copies).
// bn = 64 tiles of bm <= 32 swap the operands: W's 64 rows are A, x is B
// (m64nNk16 with N = bm8); bn = 128 takes a warpgroup for each 64 W rows (16
// warps with two sets along K).
// CHECK: gpu.binary @moss_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a"
// CHECK-SAME: .extern .shared .align 1024 .b8 [[UP:__linear_n3072_k768_gelu_bm64_bn32_bk64_s1_smem]][];
// CHECK-SAME: .extern .shared .align 1024 .b8 [[DOWN:__linear_n768_k3072_layerscale_residual_bm64_bn32_bk64_s4_smem]][];
// CHECK-SAME: .extern .shared .align 1024 .b8 [[WA:__linear_n3072_k768_gelu_bm16_bn64_bk64_s1_smem]][];
// CHECK-SAME: .extern .shared .align 1024 .b8 [[WIDE:__linear_n1280_k5120_layerscale_residual_bm32_bn128_bk128_s8_smem]][];
// CHECK-SAME: .visible .entry linear_n3072_k768_gelu_bm64_bn32_bk64_s1(
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-SAME: cp.async.cg.shared.global
// CHECK-SAME: cp.async.wait_group
// CHECK-SAME: fence.proxy.async.shared::cta;
// CHECK-SAME: wgmma.fence.sync.aligned;
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-SAME: wgmma.commit_group.sync.aligned;
// CHECK-SAME: wgmma.wait_group.sync.aligned \090;
// CHECK-SAME: .visible .entry linear_n768_k3072_layerscale_residual_bm64_bn32_bk64_s4(
// CHECK-SAME: .reqnctapercluster 1, 1, 4
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-SAME: wgmma.wait_group.sync.aligned \090;
// CHECK-SAME: cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
// CHECK-SAME: .visible .entry linear_n3072_k768_gelu_bm16_bn64_bk64_s1(
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-SAME: fence.proxy.async.shared::cta;
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// CHECK-SAME: wgmma.wait_group.sync.aligned \090;
// CHECK-SAME: .visible .entry linear_n1280_k5120_layerscale_residual_bm32_bn128_bk128_s8(
// CHECK-SAME: .maxntid 512, 1, 1
// CHECK-SAME: .reqnctapercluster 1, 1, 8
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-SAME: wgmma.wait_group.sync.aligned \090;
// CHECK-SAME: cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
// CHECK-NOT: mma.sync.aligned
// CHECK-NOT: st.async
// CHECK-NOT: .local
// CHECK-LABEL: func.func @decoder_ffn_m64
// CHECK: call @moss_ffn_gemm(
// CHECK: call @moss_ffn_gemm_layerscale_residual(
// CHECK-LABEL: func.func @ffn_up_m16
// CHECK: call @moss_ffn_gemm(
// CHECK-LABEL: func.func @ffn_down_m30
// CHECK: call @moss_ffn_gemm_layerscale_residual(
// CHECK-NOT: moss.
func.func @decoder_ffn_m64(%x: tensor<64x768xbf16>, %w1: tensor<3072x768xbf16>, %w2: tensor<768x3072xbf16>, %s: tensor<768xbf16>, %r: tensor<64x768xbf16>) -> tensor<64x768xbf16> {
  %h = moss.linear %x, %w1 epilogue gelu : tensor<64x768xbf16>, tensor<3072x768xbf16> -> tensor<64x3072xbf16>
  %y = moss.linear %h, %w2 scale(%s : tensor<768xbf16>) residual(%r : tensor<64x768xbf16>) epilogue layerscale_residual : tensor<64x3072xbf16>, tensor<768x3072xbf16> -> tensor<64x768xbf16>
  return %y : tensor<64x768xbf16>
}
func.func @ffn_up_m16(%x: tensor<16x768xbf16>, %w1: tensor<3072x768xbf16>) -> tensor<16x3072xbf16> {
  %h = moss.linear %x, %w1 epilogue gelu : tensor<16x768xbf16>, tensor<3072x768xbf16> -> tensor<16x3072xbf16>
  return %h : tensor<16x3072xbf16>
}
func.func @ffn_down_m30(%h: tensor<30x5120xbf16>, %w2: tensor<1280x5120xbf16>, %s: tensor<1280xbf16>, %r: tensor<30x1280xbf16>) -> tensor<30x1280xbf16> {
  %y = moss.linear %h, %w2 scale(%s : tensor<1280xbf16>) residual(%r : tensor<30x1280xbf16>) epilogue layerscale_residual : tensor<30x5120xbf16>, tensor<1280x5120xbf16> -> tensor<30x1280xbf16>
  return %y : tensor<30x1280xbf16>
}
