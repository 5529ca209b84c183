//===- KernelModule.h - the gpu.module that holds moss kernels --*- C++ -*-===//
#ifndef MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H
#define MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace moss {
/// Returns the `moss_kernels` gpu.module of `top`, creating it (and marking
/// `top` a GPU container module) if needed. Every lowering puts its kernels
/// there, so one gpu-module-to-binary run serializes them all.
mlir::gpu::GPUModuleOp getOrCreateKernelModule(mlir::RewriterBase &rw,
                                               mlir::ModuleOp top);
} // namespace moss

#endif // MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H
