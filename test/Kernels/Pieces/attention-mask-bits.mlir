// A lane's packed mask bits (AttentionMaskBits.cpp): the byte path's
// packing into bit maskBit(n, r, e) = 16 (n / 4) + 8 e + 4 r + 2 (n % 2) +
// (n / 2) % 2, the word path's realignment of unaligned rows and its
// exchange within the quad.
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-pack" | FileCheck %s --check-prefix=PACK
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-realign" | FileCheck %s --check-prefix=REALIGN
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-mask-exchange" | FileCheck %s --check-prefix=EXCHANGE

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
module {}
