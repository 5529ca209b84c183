// The output epilogue (AttentionPieces::storeOutputRow): acc / l rounded to
// bf16 pairs, 0 for a row without an allowed key, stored at the row of
// [B,T,H,D] (layout 0) or [B,H,T,D].
// RUN: moss-opt %s -moss-test-kernel-piece="piece=attention-store-row" | FileCheck %s

// CHECK-LABEL: gpu.func @"attention-store-row"
// CHECK-SAME: (%[[OUT:.*]]: !llvm.ptr<1>, %[[LAYOUT:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[COL:.*]]: i64, %{{.*}}: i32,
// ((b T + row) H + h) and ((b H + h) T + row):
// CHECK: %[[BT:.*]] = arith.muli %[[B:.*]], %[[T:.*]] : i64
// CHECK-NEXT: %[[BTR:.*]] = arith.addi %[[BT]], %[[ROW:.*]] : i64
// CHECK-NEXT: %[[BTRH:.*]] = arith.muli %[[BTR]], %[[H:.*]] : i64
// CHECK-NEXT: %[[BTHD:.*]] = arith.addi %[[BTRH]], %[[HEAD:.*]] : i64
// CHECK-NEXT: %[[BH:.*]] = arith.muli %[[B]], %[[H]] : i64
// CHECK-NEXT: %[[BHH:.*]] = arith.addi %[[BH]], %[[HEAD]] : i64
// CHECK-NEXT: %[[BHHT:.*]] = arith.muli %[[BHH]], %[[T]] : i64
// CHECK-NEXT: %[[BHTD:.*]] = arith.addi %[[BHHT]], %[[ROW]] : i64
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[LAYOUT]]
// CHECK: %[[ROWOFF:.*]] = arith.select %[[IS0]], %[[BTHD]], %[[BHTD]] : i64
// CHECK: %[[D:.*]] = arith.muli %[[ROWOFF]], %c64_i64
// CHECK: arith.addi %[[D]], %[[COL]]
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %arg24, %{{.*}} : f32
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %arg24 : f32
// CHECK: %[[SAFE:.*]] = arith.select %[[POS]], %[[INV]], %{{.*}} : f32
// CHECK: arith.mulf %arg8, %[[SAFE]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NEXT: gpu.return
module {}
