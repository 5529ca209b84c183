// One key tile of the attention kernel, as three pieces: S = Q K^T on
// mma.sync (AttentionPieces::scoresQK), the online softmax in base 2
// (onlineSoftmax) and O += P V (accumulatePV).
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-qk" | FileCheck %s --check-prefix=QK
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-softmax" | FileCheck %s --check-prefix=SOFTMAX
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-pv" | FileCheck %s --check-prefix=PV

// Q's four k-steps by ldmatrix.x4 first (offsets an XOR of 16 kk), then per
// key group two K ldmatrix (d halves) and four m16n8k16 MMAs.
// QK-LABEL: gpu.func @"attention-qk"
// QK-SAME: (%[[KV:.*]]: !llvm.ptr<3>, %[[QOFF:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32)
// QK: %[[X0:.*]] = arith.xori %[[QOFF]]
// QK-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// QK-NOT: nvvm.mma.sync
// QK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// QK-COUNT-2: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// QK: nvvm.ldmatrix
// QK-COUNT-2: nvvm.mma.sync
// QK-NOT: nvvm.ldmatrix {{.*}}mma_layout<col>
// QK: gpu.return
// QK-SAME: : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32{{$}}

// Arguments: 32 scores, bits, whole, scale * log2 e, m[2], l[2], acc[32].
// SOFTMAX-LABEL: gpu.func @"attention-softmax"
// SOFTMAX-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// SOFTMAX-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// A tile the warp sees whole takes no selects; otherwise a masked score is
// -inf (bit maskBit(n, r, e) of the lane's word).
// SOFTMAX: scf.if %arg33 -> ({{.*}}) {
// SOFTMAX-NOT: arith.select
// SOFTMAX: } else {
// SOFTMAX: arith.shrui %arg32
// SOFTMAX: arith.select %{{.*}}, %arg0, %[[NEGINF]] : f32
// SOFTMAX: }
// Row g: the quad's maximum, scaled and rounded up to an integer, the new
// m, 0 in place of -inf, and alpha = 1 where m did not change.
// SOFTMAX: gpu.shuffle  xor %{{.*}}, %c1_i32
// SOFTMAX: gpu.shuffle  xor %{{.*}}, %c2_i32
// SOFTMAX: %[[SCALED:.*]] = arith.mulf %{{.*}}, %arg34 : f32
// SOFTMAX: %[[CEIL:.*]] = math.ceil %[[SCALED]] : f32
// SOFTMAX: %[[M:.*]] = arith.maxnumf %arg35, %[[CEIL]] : f32
// SOFTMAX: %[[NOKEY:.*]] = arith.cmpf oeq, %[[M]], %[[NEGINF]] : f32
// SOFTMAX: %[[MUSE:.*]] = arith.select %[[NOKEY]], %[[ZERO]], %[[M]] : f32
// SOFTMAX: %[[SAME:.*]] = arith.cmpf oeq, %[[M]], %arg35 : f32
// SOFTMAX: %[[D:.*]] = arith.subf %arg35, %[[MUSE]] : f32
// SOFTMAX: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[D]])
// SOFTMAX: %[[ALPHA:.*]] = arith.select %[[SAME]], %{{.*}}, %[[E]] : f32
// SOFTMAX: %[[L:.*]] = arith.mulf %arg37, %[[ALPHA]] : f32
// SOFTMAX: %[[NEGM:.*]] = arith.negf %[[MUSE]] : f32
// p = exp2(s c - m) by one FMA, summed into l.
// SOFTMAX: %[[F:.*]] = math.fma %{{.*}}#0, %arg34, %[[NEGM]] : f32
// SOFTMAX: %[[P:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[F]])
// SOFTMAX: arith.addf %[[L]], %[[P]] : f32
// SOFTMAX-COUNT-31: llvm.nvvm.ex2.approx.ftz.f32
// SOFTMAX: arith.mulf %arg39, %[[ALPHA]] : f32
// SOFTMAX: gpu.return %[[P]],

// P rounded to bf16 pairs (A of k-step j = key groups 2j, 2j + 1), V by
// ldmatrix.trans, two MMAs per d pair.
// PV-LABEL: gpu.func @"attention-pv"
// PV: arith.truncf %{{.*}} : f32 to bf16
// PV: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// PV: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// PV-COUNT-2: nvvm.mma.sync
// PV-NOT: mma_layout<row>, num
// PV: gpu.return
module {}
