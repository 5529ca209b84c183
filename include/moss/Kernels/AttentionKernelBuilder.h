//===- AttentionKernelBuilder.h - attention kernels as gpu.func -*- C++ -*-===//
//
// Builds the streaming-attention kernels of `moss.streaming_attention`
// (D = 64; B, H, T, S, strides, scale, layout, skip flag and split count are
// runtime arguments) as gpu.func ops made of upstream dialects (arith, scf,
// gpu, llvm, math) and NVVM ops: mma.sync bf16 m16n8k16 with FP32
// accumulation for QK^T and PV, ldmatrix, cp.async, vote and a reducing
// barrier. The parameter list and launch rule are the "Attention kernel ABI"
// of docs/kernel-abi.md (moss::config::deriveAttentionLaunch).
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_KERNELS_ATTENTIONKERNELBUILDER_H
#define MOSS_KERNELS_ATTENTIONKERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

namespace moss {

/// Appends to `module` the kernels `streaming_attention_d64_g1` .. `_g4`
/// (one per key-group count, split-KV merged inside them) and the external
/// addrspace-3 llvm.mlir.global `__streaming_attention_d64_smem` (their
/// dynamic shared memory). Each kernel takes the parameters of
/// moss::config::attentionKernelArgNames() (pointers `!llvm.ptr<1>`, strides
/// i64, sizes and flags i32, scale f32) and carries `gpu.kernel`. Emits an
/// error at `loc` and fails when one of the symbols already exists. The
/// insertion point of `b` is restored on return. Dialects that must be loaded:
/// gpu, llvm, nvvm, arith, math, scf.
mlir::LogicalResult buildAttentionKernels(mlir::OpBuilder &b,
                                          mlir::Location loc,
                                          mlir::gpu::GPUModuleOp module);

} // namespace moss

#endif // MOSS_KERNELS_ATTENTIONKERNELBUILDER_H
