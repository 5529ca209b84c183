//===- KernelModule.h - the gpu.module that holds moss kernels --*- C++ -*-===//
#ifndef MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H
#define MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H

#include "moss/Dialect/Moss/IR/MossAttrs.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace moss {
/// Returns the `moss_kernels` gpu.module of `top`, creating it (and marking
/// `top` a GPU container module) if needed. Every lowering puts its kernels
/// there, so one gpu-module-to-binary run serializes them all.
mlir::gpu::GPUModuleOp getOrCreateKernelModule(mlir::RewriterBase &rw,
                                               mlir::ModuleOp top);

/// Builds the GEMM kernel of (n, k, mode, tile) into the kernels module of
/// `op`'s module, once per kernel name; emits an error on `op` on failure.
/// moss.linear and moss.qkv_rope_cache share it.
mlir::LogicalResult buildGemmKernelOf(mlir::RewriterBase &rw,
                                      mlir::Operation *op, TileAttr tile,
                                      int64_t n, int64_t k, int mode);
} // namespace moss

#endif // MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H
