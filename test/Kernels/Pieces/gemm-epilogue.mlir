// The fused epilogue (GemmEmitter::applyEpilogue): v = bf16(acc) first,
// then the mode's formula in FP32 and one more rounding: erf-GELU
// bf16(0.5 v (1 + erf(v / sqrt 2))), LayerScale bf16(bf16(v scale) +
// residual) times the row's live factor (1 or 0, rounded once more: exact),
// scale read through the read-only path and residual by a plain load (out
// may alias it). The factor comes from row_live (gemm-row-live): 1 when the
// pointer is null, else 1 or 0 by the row's byte, a plain load after the
// kernel's griddepcontrol.wait.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=0" | FileCheck %s --check-prefix=NONE
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=1" | FileCheck %s --check-prefix=GELU
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-epilogue tile=16,32,64,1 mode=2" | FileCheck %s --check-prefix=LS
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-row-live tile=16,32,64,1 mode=2" | FileCheck %s --check-prefix=LIVE

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
// LS-SAME: (%{{.*}}: vector<4xf32>, %{{.*}}: vector<4xf32>, %[[ROW:.*]]: i64, %{{.*}}: i32, %[[SCALE:.*]]: !llvm.ptr<1>, %[[RES:.*]]: !llvm.ptr<1>, %[[LF:.*]]: f32)
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
// LS-NEXT: %[[Y:.*]] = arith.truncf %[[S]] : f32 to bf16
// LS-NEXT: %[[YF:.*]] = arith.extf %[[Y]] : bf16 to f32
// LS-NEXT: %[[Z:.*]] = arith.mulf %[[YF]], %[[LF]] : f32
// LS-NEXT: arith.truncf %[[Z]] : f32 to bf16
// LS-COUNT-7: arith.mulf %{{.*}}, %[[LF]] : f32
// LS: gpu.return

// LIVE-LABEL: gpu.func @"gemm-row-live"
// LIVE-SAME: (%[[P:.*]]: !llvm.ptr<1>, %[[R:.*]]: i32) -> f32
// LIVE: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// LIVE: %[[IS:.*]] = llvm.icmp "eq" %[[P]], %[[NULL]]
// LIVE: %[[F:.*]] = scf.if %[[IS]] -> (f32) {
// LIVE: %[[ONE:.*]] = arith.constant 1.0{{.*}} : f32
// LIVE-NEXT: scf.yield %[[ONE]]
// LIVE: } else {
// LIVE: %[[R64:.*]] = arith.extui %[[R]] : i32 to i64
// LIVE: %[[BP:.*]] = llvm.getelementptr %[[P]][%[[R64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// LIVE: %[[B:.*]] = llvm.load %[[BP]] : !llvm.ptr<1> -> i8
// LIVE-NOT: invariant
// LIVE: %[[NZ:.*]] = arith.cmpi ne, %[[B]], %{{.*}} : i8
// LIVE: %[[SEL:.*]] = arith.select %[[NZ]], %{{.*}}, %{{.*}} : f32
// LIVE-NEXT: scf.yield %[[SEL]]
// LIVE: gpu.return %[[F]] : f32
module {}
