// The QKV epilogue (GemmRopeCache.cpp): an item's 8 bf16 v = bf16(acc) of
// one head's 4 interleaved pairs; q and k turned in FP32 by
// float(position) * inv_freq (the quad's 4 frequencies picked by a select
// chain, no table in memory), each result rounded to bf16 once; v as it is.
// q goes to out [m, d]; k and v into the ring cache at slot position % S,
// and column 0's item writes the row's slot-table entry (-1 for padding),
// the cache and the table only when the batch row's positions are valid.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-rope tile=16,64,64,1 mode=5 n=2304" | FileCheck %s --check-prefix=ROPE
// RUN: moss-opt %s -moss-test-kernel-piece="piece=gemm-rope-cache-item tile=16,64,64,1 mode=5 n=2304" | FileCheck %s
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-rope tile=16,64,64,1 mode=3 n=2304" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-rope tile=16,32,64,1 mode=5 n=2208" 2>&1 | FileCheck %s --check-prefix=HEADS

// ROPE-LABEL: gpu.func @"gemm-rope"(%arg0: vector<8xbf16>, %arg1: i64, %arg2: i32) -> vector<8xbf16>
// The codec's frequencies (exp of the FP32 exponent): pair 3 is one ulp
// under 10000^(-6/64).
// ROPE: arith.constant dense<[1.000000e+00, 0.749894201, 0.562341332, 0.421696484]> : vector<4xf32>
// ROPE-COUNT-7: arith.select
// ROPE: %[[POS:.*]] = arith.sitofp %arg1 : i64 to f32
// ROPE-COUNT-4: math.cos
// ROPE-NOT: math.cos
// ROPE: arith.subf
// ROPE: arith.addf
// ROPE: arith.truncf %{{.*}} : f32 to bf16
// ROPE: gpu.return %{{.*}} : vector<8xbf16>

// CHECK-LABEL: gpu.func @"gemm-rope-cache-item"
// CHECK: arith.divui %arg2, %c768_i32
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: scf.if %{{.*}} -> (vector<8xbf16>) {
// CHECK-NEXT: scf.yield %arg0 : vector<8xbf16>
// CHECK-NEXT: } else {
// CHECK: math.sin
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// The batch row's positions: the first >= 0, then a loop over the rest.
// CHECK: arith.divui %arg1, %arg9 : i32
// CHECK: arith.cmpi sge
// CHECK: scf.for %{{.*}} = %{{.*}} to %arg9
// CHECK: scf.if
// CHECK: arith.remui %{{.*}} : i64
// CHECK: arith.select %{{.*}}, %arg7, %arg6 : !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: arith.select %{{.*}}, %{{.*}}, %c-1_i64 : i64
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: gpu.return

// MODE: the QKV epilogue's pieces need mode 5
// HEADS: N = 2208 is not 3 * d with d a multiple of 64
