// The fused epilogue (GemmEmitter::applyEpilogue): v = bf16(acc) first,
// then the mode's formula in FP32 and one more rounding: erf-GELU
// bf16(0.5 v (1 + erf(v / sqrt 2))), LayerScale bf16(bf16(v scale) +
// residual), scale read through the read-only path and residual by a plain
// load (out may alias it).
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=0" | FileCheck %s --check-prefix=NONE
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=1" | FileCheck %s --check-prefix=GELU
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=2" | FileCheck %s --check-prefix=LS

// NONE-LABEL: gpu.func @"gemm-epilogue"({{.*}}) -> vector<8xbf16>
// NONE-COUNT-8: arith.truncf %{{.*}} : f32 to bf16
// NONE-NOT: arith.mulf
// NONE-NOT: llvm.load
// NONE: gpu.return

// GELU-LABEL: gpu.func @"gemm-epilogue"
// GELU: %[[ACC:.*]] = llvm.extractelement
// GELU-NEXT: %[[V:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// GELU-NEXT: %[[VF:.*]] = arith.extf %[[V]] : bf16 to f32
// GELU-NEXT: %[[C:.*]] = arith.constant 0.707106769 : f32
// GELU-NEXT: %[[X:.*]] = arith.mulf %[[VF]], %[[C]]
// GELU-NEXT: %[[ERF:.*]] = math.erf %[[X]]
// GELU-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01
// GELU-NEXT: %[[HV:.*]] = arith.mulf %[[HALF]], %[[VF]]
// GELU-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00
// GELU-NEXT: %[[SUM:.*]] = arith.addf %[[ONE]], %[[ERF]]
// GELU-NEXT: %[[G:.*]] = arith.mulf %[[HV]], %[[SUM]]
// GELU-NEXT: arith.truncf %[[G]] : f32 to bf16
// GELU-COUNT-7: math.erf
// GELU-NOT: math.tanh
// GELU: gpu.return

// LS-LABEL: gpu.func @"gemm-epilogue"
// LS-SAME: (%{{.*}}: vector<4xf32>, %{{.*}}: vector<4xf32>, %[[ROW:.*]]: i64, %{{.*}}: i32, %[[SCALE:.*]]: !llvm.ptr<1>, %[[RES:.*]]: !llvm.ptr<1>)
// LS: %[[SP:.*]] = llvm.getelementptr %[[SCALE]]
// LS: llvm.load %[[SP]] invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// LS: %[[RP:.*]] = llvm.getelementptr %[[RES]]
// LS: llvm.load %[[RP]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// LS: %[[V:.*]] = arith.truncf %{{.*}} : f32 to bf16
// LS: %[[VF:.*]] = arith.extf %[[V]]
// LS-NEXT: %[[P:.*]] = arith.mulf %[[VF]], %{{.*}} : f32
// LS-NEXT: %[[PB:.*]] = arith.truncf %[[P]] : f32 to bf16
// LS: %[[PF:.*]] = arith.extf %[[PB]]
// LS-NEXT: %[[S:.*]] = arith.addf %[[PF]], %{{.*}} : f32
// LS-NEXT: arith.truncf %[[S]] : f32 to bf16
// LS: gpu.return
module {}
