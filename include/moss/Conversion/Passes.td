//===- Passes.td - moss conversion passes ------------------*- tablegen -*-===//
#ifndef MOSS_CONVERSION_PASSES
#define MOSS_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def MossConvertToGPU : Pass<"moss-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower moss ops to generated GPU kernels and their launches";
  let description = [{
    Turns every tiled `moss.linear` into a `gpu.module` holding its kernel(s)
    (a `gpu.func` of NVVM tensor-core ops with the epilogue fused in
    registers; plus a reduce kernel when `split` > 1) and replaces the op by
    buffer materialization and `gpu.launch_func`, with M passed at run time.
    A `vendor_fallback` op becomes a call to the runtime's vendor path
    (`@moss_vendor_linear`). An op with neither is an error: run
    `moss-select-tiles` first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

#endif // MOSS_CONVERSION_PASSES
