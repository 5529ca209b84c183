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

/// The lowering checks of a GEMM-backed op (moss.linear,
/// moss.qkv_rope_cache) with weight type `w` and whitelist mode `mode`:
/// a tile or vendor_fallback; with a tile, static N and K that it serves.
/// Emits the error on `op`.
mlir::LogicalResult checkGemmLowerable(mlir::Operation *op, TileAttr tile,
                                       bool vendorFallback,
                                       mlir::RankedTensorType w, int mode);

/// The kernel side of such an op: fails (the check reported why) without a
/// tile or vendor_fallback; with a tile, builds the GEMM kernel of (N, K,
/// mode, tile) into the kernels module of `op`'s module, once per kernel
/// name, emitting an error on `op` on failure.
mlir::LogicalResult buildGemmKernelOf(mlir::RewriterBase &rw,
                                      mlir::Operation *op, TileAttr tile,
                                      bool vendorFallback,
                                      mlir::RankedTensorType w, int mode);
} // namespace moss

#endif // MOSS_LIB_CONVERSION_MOSSTOGPU_KERNELMODULE_H
