//===- NvvmSync.h - Address spaces and pushes into cluster CTAs -*- C++ -*-===//
//
// What the GEMM and attention kernel builders share: the NVVM address spaces
// they use and the pieces of a merge that pushes partial results into
// another CTA of the cluster (st.async or cp.async.bulk, completing on that
// CTA's mbarrier).
// A push completes on the receiver's own mbarrier, so the receiver waits for
// exactly the bytes it needs, where a release/acquire cluster barrier with
// remote loads made both CTAs wait for each other and then for the loads.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_COMMON_NVVMSYNC_H
#define MOSS_LIB_KERNELS_COMMON_NVVMSYNC_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace moss {

constexpr unsigned kGlobalSpace = 1;        // CUDA global memory
constexpr unsigned kSharedSpace = 3;        // CUDA shared memory (own CTA)
constexpr unsigned kSharedClusterSpace = 7; // shared::cluster (DSMEM)

/// Inline PTX `text` with side effects and no results, its operands bound
/// by `constraints`: what the NVVM dialect has no op for.
inline void emitPtx(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::ValueRange operands, llvm::StringRef text,
                    llvm::StringRef constraints) {
  mlir::LLVM::InlineAsmOp::create(
      b, loc, mlir::TypeRange(), operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      mlir::LLVM::tailcallkind::TailCallKind::None,
      mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
}

/// fence.proxy.async.shared::cta: this thread's generic-proxy accesses of
/// its CTA's shared memory are ordered before its later async-proxy ones
/// (TMA and bulk copies, wgmma operand reads, mbarrier complete_tx).
inline void emitAsyncProxyFence(mlir::OpBuilder &b, mlir::Location loc) {
  mlir::NVVM::FenceProxyOp::create(
      b, loc, mlir::NVVM::ProxyKind::async_shared,
      mlir::NVVM::SharedSpaceAttr::get(b.getContext(),
                                       mlir::NVVM::SharedSpace::shared_cta));
}

/// Thread 0's set-up of a receive mbarrier: one arrival (its own, at once)
/// expecting `bytes` of st.async stores from other CTAs of the cluster. The
/// fence makes the initialization visible to the cluster once a cluster
/// barrier (relaxed arrive here or later, wait before the first remote
/// store) orders it.
inline void emitArmReceiveBarrier(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value barrier, mlir::Value bytes) {
  mlir::Value one =
      mlir::arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1));
  mlir::NVVM::MBarrierInitOp::create(b, loc, barrier, one, mlir::Value());
  mlir::NVVM::FenceMbarrierInitOp::create(b, loc);
  mlir::NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, mlir::Type(), barrier, bytes, mlir::NVVM::MemScopeKind::CTA,
      /*relaxed=*/false, mlir::Value());
}

/// st.async of four f32 into another CTA's shared memory (`remote`, a
/// shared::cluster pointer from mapa), completing 16 bytes on that CTA's
/// mbarrier (`remoteBarrier`, likewise). The NVVM dialect has no op for it.
inline void emitStAsyncV4F32(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value remote,
                             llvm::ArrayRef<mlir::Value> values,
                             mlir::Value remoteBarrier) {
  auto i64 = b.getI64Type();
  llvm::SmallVector<mlir::Value> operands = {
      mlir::LLVM::PtrToIntOp::create(b, loc, i64, remote)};
  operands.append(values.begin(), values.end());
  operands.push_back(
      mlir::LLVM::PtrToIntOp::create(b, loc, i64, remoteBarrier));
  emitPtx(b, loc, operands,
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [$0], "
          "{$1, $2, $3, $4}, [$5];",
          "l,f,f,f,f,l");
}

/// cp.async.bulk of `bytes` (i32, a multiple of 16) from this CTA's shared
/// memory (`src`) into another CTA's (`dst`, from mapa), completing the
/// bytes on that CTA's mbarrier (`remoteBarrier`, from mapa). Inline PTX:
/// nvvm.cp.async.bulk.shared.cluster.shared.cta types its mbarrier as
/// shared::cta, but it lives in the destination CTA.
inline void emitBulkCopyToCluster(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value dst, mlir::Value src,
                                  mlir::Value bytes,
                                  mlir::Value remoteBarrier) {
  auto i64 = b.getI64Type();
  mlir::Value operands[] = {
      mlir::LLVM::PtrToIntOp::create(b, loc, i64, dst),
      mlir::LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), src), bytes,
      mlir::LLVM::PtrToIntOp::create(b, loc, i64, remoteBarrier)};
  emitPtx(
      b, loc, operands,
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
      "[$0], [$1], $2, [$3];",
      "l,r,r,l");
}

/// Spins until the phase of a CTA-local mbarrier with parity `parity` (i32,
/// 0 or 1; null: the constant 0, an immediate) has completed. A spin: NVVM's
/// try_wait.parity carries a suspend-time hint, and a suspended warp wakes
/// later than the phase completes, which the short waits of these kernels
/// cannot afford.
inline void emitSpinOnParity(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value barrier,
                             mlir::Value parity = mlir::Value()) {
  llvm::SmallVector<mlir::Value, 2> operands = {barrier};
  if (parity)
    operands.push_back(parity);
  std::string text = std::string("{ .reg .pred p; R${:uid}: "
                                 "mbarrier.try_wait.parity.shared.b64 p, "
                                 "[$0], ") +
                     (parity ? "$1" : "0") + "; @!p bra R${:uid}; }";
  emitPtx(b, loc, operands, text, parity ? "r,r" : "r");
}

} // namespace moss

#endif // MOSS_LIB_KERNELS_COMMON_NVVMSYNC_H
