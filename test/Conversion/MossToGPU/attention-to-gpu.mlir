// RUN: moss-opt %s -split-input-file -moss-convert-to-gpu | FileCheck %s

// Default layout (bthd): the generated kernels, then host code that passes
// the operands' strides, allocates [B,T,H,D] storage, returns it as the
// transposed [B,H,T,D] view and launches with the runtime B and T.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @moss_kernels
// CHECK: llvm.mlir.global internal @__streaming_attention_d64_kv() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16384 x bf16>
// CHECK: gpu.func @streaming_attention_d64(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: f32, %[[LAYOUT:.*]]: i32, %{{.*}}: i32, %[[SPLITS:.*]]: i32) kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK: gpu.block_dim x
// Prologue: whether the first key tile has an allowed key anywhere in the
// CTA (bar.red.or), then its asynchronous copy into shared memory.
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// The key-tile loop: wait, barrier (copy of the next tile), the L1 prefetch
// of the mask two tiles ahead, compute.
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.prefetch level = L1
// CHECK: nvvm.vote.sync any
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
// Epilogue: splits == 1 stores bf16 pairs at row ((b*T + t)*H + h) (bthd)
// or ((b*H + h)*T + t) (bhtd); splits > 1 stores FP32 partials, fences,
// bumps the block's counter, and the last CTA merges the splits in order
// (online, two splits' loads at a time), stores the output and zeroes the
// counter.
// CHECK: %[[SINGLE:.*]] = arith.cmpi eq, %[[SPLITS]], %{{.*}} : i32
// CHECK: scf.if %[[SINGLE]]
// CHECK: %[[BTHD:.*]] = arith.cmpi eq, %[[LAYOUT]], %{{.*}} : i32
// CHECK: arith.select %[[BTHD]], %{{.*}}, %{{.*}} : i64
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: } else {
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: nvvm.barrier0
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %[[COUNTER:.*]], %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: %[[LAST:.*]] = nvvm.barrier #nvvm.reduction<or>
// CHECK: scf.if
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2_i64
// CHECK-COUNT-18: llvm.load volatile
// CHECK: arith.maxnumf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: llvm.store volatile %{{.*}}, %[[COUNTER]] {alignment = 4 : i64} : i32, !llvm.ptr<1>
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
// Launch rule: warps = min(ceil(T/16), 4), grid (B*H, ceil(T/(16 warps)),
// splits), a workspace only when splits > 1: 1024 counters that start at
// zero, then the partials.
// CHECK: %[[W16:.*]] = arith.ceildivui %[[T]], %c16
// CHECK: %[[WARPS:.*]] = arith.minui %[[W16]], %c4
// CHECK: %[[THREADS:.*]] = arith.muli %[[WARPS]], %c32
// CHECK: %[[GX:.*]] = arith.muli %[[B]], %[[H]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[WARPS]], %c16
// CHECK: %[[GY:.*]] = arith.ceildivui %[[T]], %[[ROWS]]
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[S]], %c64
// Splits: 1 for <= 2 tiles, else max(1, min(ceil(tiles / minTps),
// slots / (2 ctas), 16)) with minTps = 1 for <= 32 CTAs, else 2.
// CHECK: %[[SLOTS:.*]] = arith.muli %{{.*}}, %c132
// CHECK: %[[CTAS:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK: %[[CTAS2:.*]] = arith.muli %[[CTAS]], %c2
// CHECK: %[[BOUND:.*]] = arith.divui %[[SLOTS]], %[[CTAS2]]
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[CTAS]], %c32
// CHECK: %[[MINTPS:.*]] = arith.select %[[FEW]]
// CHECK: %[[BYTILES:.*]] = arith.ceildivui %[[TILES]], %[[MINTPS]]
// CHECK: %[[CAP1:.*]] = arith.minui %[[BYTILES]], %[[BOUND]]
// CHECK: %[[CAP2:.*]] = arith.minui %[[CAP1]], %c16
// CHECK: %[[ATLEAST1:.*]] = arith.maxui %{{.*}}, %[[CAP2]]
// CHECK: %[[TWO:.*]] = arith.cmpi ule, %[[TILES]], %c2
// CHECK: %[[WANTED:.*]] = arith.select %[[TWO]], %{{.*}}, %[[ATLEAST1]]
// CHECK: %[[TPS:.*]] = arith.ceildivui %[[TILES]], %[[WANTED]]
// CHECK: %[[NSPLIT:.*]] = arith.ceildivui %[[TILES]], %[[TPS]]
// CHECK: %[[SPLIT:.*]] = arith.cmpi ugt, %[[NSPLIT]], %c1{{.*}} : index
// CHECK: %[[PARTIALS:.*]] = arith.muli %{{.*}}, %c66
// CHECK: %[[TOTAL:.*]] = arith.addi %c1024, %[[PARTIALS]]
// CHECK: %[[WSN:.*]] = arith.select %[[SPLIT]], %[[TOTAL]], %c0
// CHECK: %[[WS:.*]] = memref.alloc(%[[WSN]]) : memref<?xf32>
// CHECK: %[[NCOUNT:.*]] = arith.select %[[SPLIT]], %c1024, %c0
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[NCOUNT]]
// CHECK: memref.store %{{.*}}, %[[WS]][%[[I]]] : memref<?xf32>
// CHECK-DAG: %[[B32:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK-DAG: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[BTHD0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[NOSKIP:.*]] = arith.constant 0 : i32
// CHECK: %[[N32:.*]] = arith.index_cast %[[NSPLIT]] : index to i32
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64 blocks in (%[[GX]], %[[GY]], %[[NSPLIT]]) threads in (%[[THREADS]], %{{.*}}, %{{.*}}) args(
// CHECK-SAME: %[[QSB]] : i64, %[[QSH]] : i64, %[[QST]] : i64,
// CHECK-SAME: %[[MSB]] : i64, %[[MST]] : i64, %[[MSS]] : i64, %[[B32]] : i32, %{{.*}} : i32, %[[T32]] : i32, %{{.*}} : i32, %[[SCALE]] : f32, %[[BTHD0]] : i32, %[[NOSKIP]] : i32, %[[N32]] : i32)
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
// given scale reach the kernel as arguments.
// CHECK-LABEL: func.func @bhtd_skip_scale
// CHECK-NOT: memref.transpose
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x20x15x64xbf16>
// CHECK-NOT: memref.transpose
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[BHTD:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[SKIP:.*]] = arith.constant 1 : i32
// CHECK: gpu.launch_func @moss_kernels::@streaming_attention_d64
// CHECK-SAME: %[[SCALE]] : f32, %[[BHTD]] : i32, %[[SKIP]] : i32, %{{.*}} : i32)
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<2x20x15x64xbf16> to tensor<2x20x15x64xbf16>
// CHECK-NOT: moss.
func.func @bhtd_skip_scale(%q: tensor<2x20x15x64xbf16>, %k: tensor<2x20x125x64xbf16>, %v: tensor<2x20x125x64xbf16>, %m: tensor<2x1x15x125xi1>) -> tensor<2x20x15x64xbf16> {
  %o = moss.streaming_attention %q, %k, %v, %m layout bhtd skip_empty_tiles scale(5.000000e-01) : tensor<2x20x15x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x20x125x64xbf16>, tensor<2x1x15x125xi1> -> tensor<2x20x15x64xbf16>
  return %o : tensor<2x20x15x64xbf16>
}

// -----

// Every attention op shares the one kernel.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-COUNT-1: gpu.func @streaming_attention_d64(
// CHECK-NOT: gpu.func
// CHECK-LABEL: func.func @two_layers
// CHECK-COUNT-2: gpu.launch_func @moss_kernels::@streaming_attention_d64 blocks
// CHECK-NOT: moss.
func.func @two_layers(%q: tensor<1x12x1x64xbf16>, %k: tensor<1x12x250x64xbf16>, %v: tensor<1x12x250x64xbf16>, %m: tensor<1x1x1x250xi1>) -> (tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>) {
  %a = moss.streaming_attention %q, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  %b = moss.streaming_attention %a, %k, %v, %m : tensor<1x12x1x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x12x250x64xbf16>, tensor<1x1x1x250xi1> -> tensor<1x12x1x64xbf16>
  return %a, %b : tensor<1x12x1x64xbf16>, tensor<1x12x1x64xbf16>
}
