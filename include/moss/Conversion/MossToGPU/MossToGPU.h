//===- MossToGPU.h - lowering moss ops to GPU kernels -----------*- C++ -*-===//
#ifndef MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H
#define MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace moss {
/// Name of the `gpu.module` that holds every kernel generated for a module.
inline constexpr llvm::StringLiteral kKernelModuleName = "moss_kernels";
/// Runtime entry point that serves `vendor_fallback` GEMMs.
inline constexpr llvm::StringLiteral kVendorLinearFn = "moss_vendor_linear";

/// Patterns lowering tiled / fallback-marked `moss.linear` ops.
void populateLinearToGPUPatterns(mlir::RewritePatternSet &patterns);
} // namespace moss

#endif // MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H
