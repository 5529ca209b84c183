// A lane's packed mask bits (AttentionMaskBits.cpp): the byte path's
// packing into bit maskBit(n, r, e) = 16 (n / 4) + 8 e + 4 r + 2 (n % 2) +
// (n / 2) % 2, the word path's realignment of unaligned rows and its
// exchange within the quad, and the positions functions' bits.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-pack" | FileCheck %s --check-prefix=PACK
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-realign" | FileCheck %s --check-prefix=REALIGN
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-exchange" | FileCheck %s --check-prefix=EXCHANGE
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-positions" | FileCheck %s --check-prefix=POSITIONS
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-positions pairs=true" | FileCheck %s --check-prefix=PAIRS

// Bytes in order (n, r, e): a nonzero byte sets its bit, then the bits of
// keys past S and of rows past T are cleared.
// PACK-LABEL: gpu.func @"attention-mask-pack"
// PACK: arith.cmpi ne, %arg0,
// PACK: %c0_i32{{.*}} = arith.constant 0 : i32
// PACK: arith.cmpi ne, %arg1,
// PACK: arith.constant 8 : i32
// PACK: arith.cmpi ne, %arg2,
// PACK: arith.constant 4 : i32
// PACK: arith.cmpi ne, %arg3,
// PACK: arith.constant 12 : i32
// PACK: arith.cmpi ne, %arg4,
// PACK: arith.constant 2 : i32
// PACK: arith.cmpi ne, %arg8,
// PACK: arith.constant 1 : i32
// PACK: arith.cmpi ne, %arg16,
// PACK: arith.constant 16 : i32
// PACK: arith.cmpi ne, %arg31,
// PACK: arith.constant 31 : i32
// PACK: %[[KEYS:.*]] = arith.andi %{{.*}}, %arg32 : i32
// PACK-NEXT: %[[ROWS:.*]] = arith.andi %[[KEYS]], %arg33 : i32
// PACK-NEXT: gpu.return %[[ROWS]] : i32

// Row r's four words: funnel shifts of neighbouring covering words by the
// row's shift (value 5 of the row).
// REALIGN-LABEL: gpu.func @"attention-mask-realign"
// REALIGN: llvm.intr.fshr(%arg1, %arg0, %arg5)
// REALIGN: llvm.intr.fshr(%arg4, %arg3, %arg5)
// REALIGN: llvm.intr.fshr(%arg7, %arg6, %arg11)
// REALIGN: llvm.intr.fshr(%arg10, %arg9, %arg11)
// REALIGN-NEXT: gpu.return

// Bit 7 of each byte set iff the byte is nonzero ((w & 0x7f7f7f7f) +
// 0x7f7f7f7f | w) & 0x80808080), then four idx shuffles in the quad and
// the 0x5555 select.
// EXCHANGE-LABEL: gpu.func @"attention-mask-exchange"
// EXCHANGE: arith.constant 2139062143 : i32
// EXCHANGE: arith.constant -2139062144 : i32
// EXCHANGE-COUNT-4: gpu.shuffle  idx
// EXCHANGE: arith.constant 21845 : i32
// EXCHANGE: gpu.return
// Positions: key keyBase + 8n + e reads its slot's int64 position (the
// index clamped to S - 1), is real below S and filled where >= 0, and is
// allowed for row r where 0 <= qPos[r] - position < S; 16 keys, two rows.
// POSITIONS-LABEL: gpu.func @"attention-mask-positions"
// POSITIONS-SAME: (%[[SLOTS:.*]]: !llvm.ptr<1>, %[[KEY:.*]]: i32, %[[S:.*]]: i32, %[[Q0:.*]]: i64, %[[Q1:.*]]: i64, %[[ROWS:.*]]: i32) -> i32
// POSITIONS: %[[WINDOW:.*]] = arith.extui %[[S]] : i32 to i64
// POSITIONS: %[[LAST:.*]] = arith.subi %[[S]], %c1_i32
// POSITIONS: %[[CLAMPED:.*]] = arith.minui %[[KEY]], %[[LAST]]
// POSITIONS: %[[P:.*]] = llvm.load %{{.*}} invariant {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// POSITIONS: %[[FILLED:.*]] = arith.cmpi sge, %[[P]], %c0_i64
// POSITIONS: %[[REAL:.*]] = arith.cmpi ult, %[[KEY]], %[[S]]
// POSITIONS: %[[OK:.*]] = arith.andi %[[REAL]], %[[FILLED]]
// POSITIONS: %[[AGE:.*]] = arith.subi %[[Q0]], %[[P]] : i64
// POSITIONS: %[[YOUNG:.*]] = arith.cmpi slt, %[[AGE]], %[[WINDOW]] : i64
// POSITIONS: %[[AFTER:.*]] = arith.cmpi sge, %[[AGE]], %c0_i64 : i64
// POSITIONS: arith.subi %[[Q1]], %[[P]] : i64
// POSITIONS-COUNT-15: llvm.load {{.*}} -> i64
// POSITIONS: %[[OUT:.*]] = arith.andi %{{.*}}, %[[ROWS]] : i32
// POSITIONS-NEXT: gpu.return %[[OUT]] : i32
// A full tile of a 16-byte aligned row: keys 8n + 2t and 8n + 2t + 1 in
// one 16-byte load, no clamp and no test against S.
// PAIRS-LABEL: gpu.func @"attention-mask-positions"
// PAIRS-NOT: arith.minui
// PAIRS-NOT: arith.cmpi ult
// PAIRS-COUNT-8: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<2xi64>
// PAIRS-NOT: llvm.load
// PAIRS: gpu.return
module {}
