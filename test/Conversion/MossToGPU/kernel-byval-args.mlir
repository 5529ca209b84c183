// RUN: moss-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(moss-kernel-byval-args))' | FileCheck %s

// The arguments moss.byval_args names become 128-byte byval grid constants
// (the CUtensorMaps the TMA engine reads in place); the others and the
// attribute's neighbours stay as they are, and the attribute goes.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @two_maps(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-SAME: attributes {nvvm.kernel}
// CHECK-NOT: moss.byval_args
// CHECK: llvm.func @untouched(%{{.*}}: !llvm.ptr) attributes {nvvm.kernel}
gpu.module @kernels {
  llvm.func @two_maps(%x: !llvm.ptr<1>, %n: i32, %k: !llvm.ptr, %v: !llvm.ptr) attributes {moss.byval_args = array<i32: 2, 3>, nvvm.kernel} {
    llvm.return
  }
  llvm.func @untouched(%p: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{moss.byval_args names argument 2 of a function with 2 arguments}}
  llvm.func @out_of_range(%x: !llvm.ptr, %y: !llvm.ptr) attributes {moss.byval_args = array<i32: 2>} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{moss.byval_args names argument 0 of type 'i32', not a pointer}}
  llvm.func @not_a_pointer(%n: i32) attributes {moss.byval_args = array<i32: 0>} {
    llvm.return
  }
}
