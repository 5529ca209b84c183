//===- Passes.td - moss conversion passes ------------------*- tablegen -*-===//
#ifndef MOSS_CONVERSION_PASSES
#define MOSS_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def MossConvertToGPU : Pass<"moss-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower moss ops to generated GPU kernels and their launches";
  let description = [{
    Puts the kernel of every tiled `moss.linear` (a `gpu.func` of NVVM
    tensor-core ops with the epilogue fused in registers) and the attention
    kernels of `moss.streaming_attention` into the `moss_kernels`
    `gpu.module`, and replaces each op by its output buffer and one call of
    the runtime's entry point (`@moss_ffn_gemm`,
    `@moss_ffn_gemm_layerscale_residual`, `@moss_streaming_attention`),
    which applies the launch rules of moss::config at run time; a
    `vendor_fallback` op gets the call and no kernel. A `moss.linear` with
    neither a tile nor `vendor_fallback` is an error: run `moss-select-tiles`
    first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def MossKernelByvalArgs
    : Pass<"moss-kernel-byval-args", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the tensor maps of generated kernels by value";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which drops the argument attributes of
    a `gpu.func`. Every `llvm.func` of the module that carries
    `moss.byval_args` (the indices of pointer arguments that stand for a
    128-byte `CUtensorMap`) gets, on those arguments, `llvm.byval` of
    `!llvm.array<128 x i8>`, `llvm.align = 64` and `nvvm.grid_constant`:
    the PTX parameter is then a 128-byte `.param` that the TMA engine reads
    in place. The attribute is removed. An index that is out of range or
    names a non-pointer argument is an error.

    Example:

    ```mlir
    llvm.func @k(%map: !llvm.ptr) attributes {moss.byval_args = array<i32: 0>}
    // becomes
    llvm.func @k(%map: !llvm.ptr {llvm.align = 64 : i64,
        llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // MOSS_CONVERSION_PASSES
