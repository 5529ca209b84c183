// moss-test-kernel-piece refuses what it cannot emit, naming it, and
// leaves the module as it was.
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=softmax" 2>&1 | FileCheck %s --check-prefix=FAMILY
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=attention-qkv" 2>&1 | FileCheck %s --check-prefix=ATTN
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-stages tile=16,32,64,1" 2>&1 | FileCheck %s --check-prefix=GEMM
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-copies tile=16,32,64" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not moss-opt %s -moss-test-kernel-piece="piece=gemm-copies tile=16,48,64,1" 2>&1 | FileCheck %s --check-prefix=ILLEGAL

// FAMILY: error: moss-test-kernel-piece: piece must name a gemm-* or attention-* piece, not 'softmax'
// ATTN: error: moss-test-kernel-piece: unknown attention piece 'attention-qkv'
// GEMM: error: moss-test-kernel-piece: unknown GEMM piece 'gemm-stages'
// TILE: error: moss-test-kernel-piece: tile must be bm,bn,bk,split
// ILLEGAL: error: moss-test-kernel-piece: tile bn=48 is not a power of two
// ILLEGAL-NOT: gpu.module
module {}
