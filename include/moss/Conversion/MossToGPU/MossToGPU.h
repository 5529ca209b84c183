//===- MossToGPU.h - lowering moss ops to GPU kernels -----------*- C++ -*-===//
#ifndef MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H
#define MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace moss {
/// Name of the `gpu.module` that holds every kernel generated for a module.
inline constexpr llvm::StringLiteral kKernelModuleName = "moss_kernels";
/// The runtime entry points the host side of the ops calls (HostCall.h):
/// moss.linear (a second one with scale and residual for
/// layerscale_residual, a third with row_live too, a fourth with gamma, beta
/// and eps for the LayerNorm modes), moss.qkv_rope_cache and
/// moss.streaming_attention (a second one for the mask from positions).
inline constexpr llvm::StringLiteral kRuntimeLinearFn = "moss_ffn_gemm";
inline constexpr llvm::StringLiteral kRuntimeLinearScaleResidualFn =
    "moss_ffn_gemm_layerscale_residual";
inline constexpr llvm::StringLiteral kRuntimeLinearScaleResidualLiveFn =
    "moss_ffn_gemm_layerscale_residual_live";
inline constexpr llvm::StringLiteral kRuntimeLinearLayerNormFn =
    "moss_layernorm_gemm";
inline constexpr llvm::StringLiteral kRuntimeQkvRopeCacheFn =
    "moss_qkv_rope_cache";
inline constexpr llvm::StringLiteral kRuntimeAttentionFn =
    "moss_streaming_attention";
inline constexpr llvm::StringLiteral kRuntimeAttentionPositionsFn =
    "moss_streaming_attention_positions";
/// Attribute of a generated `gpu.func`: the indices of its pointer arguments
/// that are 128-byte structs passed by value (CUtensorMaps), which
/// moss-kernel-byval-args turns into byval grid constants after
/// convert-gpu-to-nvvm (that pass drops argument attributes).
inline constexpr llvm::StringLiteral kByvalArgsAttrName = "moss.byval_args";
/// Size and alignment of such an argument (a CUtensorMap).
inline constexpr int64_t kByvalArgBytes = 128;
inline constexpr int64_t kByvalArgAlign = 64;

class LinearOp;

/// Emits an error and fails when `op` cannot be lowered: neither a tile nor
/// vendor_fallback, dynamic N or K with a tile, or a tile that cannot serve
/// N and K. Run before the patterns, which assume it holds.
mlir::LogicalResult checkLinearLowerable(LinearOp op);

/// Patterns lowering tiled / fallback-marked `moss.linear` ops.
void populateLinearToGPUPatterns(mlir::RewritePatternSet &patterns);

class QkvRopeCacheOp;

/// checkLinearLowerable for `moss.qkv_rope_cache` (mode 5).
mlir::LogicalResult checkQkvRopeCacheLowerable(QkvRopeCacheOp op);

/// Patterns lowering tiled / fallback-marked `moss.qkv_rope_cache` ops
/// (lib/Conversion/MossToGPU/QkvRopeCacheToGPU.cpp).
void populateQkvRopeCacheToGPUPatterns(mlir::RewritePatternSet &patterns);

class StreamingAttentionOp;

/// Emits an error and fails when the generated attention kernel cannot serve
/// `op` (head dim D != 64).
mlir::LogicalResult checkAttentionLowerable(StreamingAttentionOp op);

/// Patterns lowering `moss.streaming_attention` to the generated attention
/// kernels (lib/Conversion/MossToGPU/AttentionToGPU.cpp).
void populateAttentionToGPUPatterns(mlir::RewritePatternSet &patterns);
} // namespace moss

#endif // MOSS_CONVERSION_MOSSTOGPU_MOSSTOGPU_H
