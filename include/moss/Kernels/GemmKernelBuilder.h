//===- GemmKernelBuilder.h - FFN GEMM kernels as gpu.func ops ---*- C++ -*-===//
//
// Builds the weight-streaming GEMM kernels of `moss.linear` (out = x * W^T,
// BF16 in, FP32 accumulate, fused epilogue) as gpu.func ops made of upstream
// dialects (arith, math, scf, gpu, llvm) and NVVM tensor-core ops
// (nvvm.mma.sync bf16 m16n8k16). The parameter list is the kernel ABI of
// docs/kernel-abi.md; the warp layout comes from
// moss::config::deriveGemmLaunch.
//
// Pointer parameters are `!llvm.ptr<1>` (CUDA global address space). A device
// pointer from cuMemAlloc is a valid global address, so the runtime passes its
// CUdeviceptr values unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_KERNELS_GEMMKERNELBUILDER_H
#define MOSS_KERNELS_GEMMKERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>

namespace moss {

/// One generated GEMM: out[M,N] = epilogue(prologue(x)[M,K] * w[N,K]^T), M a
/// runtime argument, N and K static, tile [bm, bn, bk, split] from the
/// whitelist.
struct GemmKernelSpec {
  int64_t n = 0, k = 0;
  int mode = 0; ///< The whitelist key's mode (moss/Config/GemmMode.h).
  int64_t bm = 0, bn = 0, bk = 0, split = 1;
  std::string name; ///< Kernel symbol.
};

/// Appends the kernel of `spec` to `module`: `<name>`, plus one addrspace-3
/// external llvm.mlir.global (`__<name>_smem`, the launch's dynamic shared
/// memory: the staged W and x slab, then the FP32 partial tiles). With
/// split > 1 the kernel carries `nvvm.cluster_dim = [1, 1, split]` and the
/// cluster reduces the K slices through distributed shared memory. The kernel
/// takes (x, w, scale, residual, row_live, out: !llvm.ptr<1>, m, prefetch_w:
/// i32), and in a LayerNorm mode also (gamma, beta: !llvm.ptr<1>, eps: f32),
/// and carries `gpu.kernel` and `known_block_size`. Emits an error at `loc` and
/// returns failure for an illegal spec (tile rule of docs/kernel-abi.md,
/// unknown mode, empty or already used name). The insertion point of `b` is
/// restored on return. Dialects that must be loaded: gpu, llvm, nvvm, arith,
/// math, scf.
mlir::LogicalResult buildGemmKernels(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::gpu::GPUModuleOp module,
                                     const GemmKernelSpec &spec);

} // namespace moss

#endif // MOSS_KERNELS_GEMMKERNELBUILDER_H
