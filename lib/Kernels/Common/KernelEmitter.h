//===- KernelEmitter.h - What the kernel builders' emitters share -*- C++
//-*-===//
//
// The builder state, the common types and the scalar IR helpers of the GEMM
// and attention kernel emitters: integer math in i32 or i64 (a constant
// takes the type of the value it meets), thread and block indices as i32,
// typed pointer steps.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_COMMON_KERNELEMITTER_H
#define MOSS_LIB_KERNELS_COMMON_KERNELEMITTER_H

#include "Common/NvvmSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

namespace moss {

class KernelEmitter {
public:
  using Value = mlir::Value;
  using Type = mlir::Type;

  KernelEmitter(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {
    mlir::MLIRContext *ctx = b.getContext();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    f32 = b.getF32Type();
    bf16 = b.getBF16Type();
    globalPtr = mlir::LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
    sharedPtr = mlir::LLVM::LLVMPointerType::get(ctx, kSharedSpace);
    clusterPtr = mlir::LLVM::LLVMPointerType::get(ctx, kSharedClusterSpace);
    v4i32 = mlir::VectorType::get({4}, i32);
    v4f32 = mlir::VectorType::get({4}, f32);
    mmaResult =
        mlir::LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  }

  // --- constants and integer math --------------------------------------------
  Value constI32(int64_t v) {
    return mlir::arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value constI64(int64_t v) {
    return mlir::arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value constF32(double v) {
    return mlir::arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// `v` of `like`'s integer type.
  Value constOf(Value like, int64_t v) {
    return mlir::arith::ConstantOp::create(b, loc,
                                           b.getIntegerAttr(like.getType(), v));
  }
  Value add(Value l, Value r) {
    return mlir::arith::AddIOp::create(b, loc, l, r);
  }
  Value add(Value l, int64_t r) { return r == 0 ? l : add(l, constOf(l, r)); }
  Value sub(Value l, Value r) {
    return mlir::arith::SubIOp::create(b, loc, l, r);
  }
  Value mul(Value l, Value r) {
    return mlir::arith::MulIOp::create(b, loc, l, r);
  }
  Value mul(Value l, int64_t r) { return r == 1 ? l : mul(l, constOf(l, r)); }
  Value divU(Value l, Value r) {
    return mlir::arith::DivUIOp::create(b, loc, l, r);
  }
  Value divU(Value l, int64_t r) { return divU(l, constOf(l, r)); }
  Value remU(Value l, Value r) {
    return mlir::arith::RemUIOp::create(b, loc, l, r);
  }
  Value remU(Value l, int64_t r) { return remU(l, constOf(l, r)); }
  Value cmp(mlir::arith::CmpIPredicate p, Value l, Value r) {
    return mlir::arith::CmpIOp::create(b, loc, p, l, r);
  }
  Value lessU(Value l, Value r) {
    return cmp(mlir::arith::CmpIPredicate::ult, l, r);
  }
  Value lessU(Value l, int64_t r) { return lessU(l, constOf(l, r)); }
  Value equal(Value l, Value r) {
    return cmp(mlir::arith::CmpIPredicate::eq, l, r);
  }
  Value equal(Value l, int64_t r) { return equal(l, constOf(l, r)); }
  Value differ(Value l, Value r) {
    return cmp(mlir::arith::CmpIPredicate::ne, l, r);
  }
  Value differ(Value l, int64_t r) { return differ(l, constOf(l, r)); }
  /// Logical and of two i1 (bitwise for wider integers).
  Value both(Value l, Value r) {
    return mlir::arith::AndIOp::create(b, loc, l, r);
  }
  Value select(Value c, Value t, Value f) {
    return mlir::arith::SelectOp::create(b, loc, c, t, f);
  }
  Value toI64(Value v) { return mlir::arith::ExtUIOp::create(b, loc, i64, v); }

  // --- indices and pointers --------------------------------------------------
  Value threadIdx() {
    return gpuIndex(
        mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x));
  }
  Value blockIdx(mlir::gpu::Dimension d) {
    return gpuIndex(mlir::gpu::BlockIdOp::create(b, loc, d));
  }
  Value gpuIndex(Value index) {
    return mlir::arith::IndexCastUIOp::create(b, loc, i32, index);
  }
  /// &base[offset] for elements of type `elem` (offset i32 or i64).
  Value elementPtr(Value base, Type elem, Value offset) {
    return mlir::LLVM::GEPOp::create(b, loc, base.getType(), elem, base,
                                     mlir::ValueRange{offset});
  }
  Value elementPtr(Value base, Type elem, int64_t offset) {
    return offset == 0 ? base : elementPtr(base, elem, constI32(offset));
  }
  Value lane(Value vec, int64_t i) {
    return mlir::LLVM::ExtractElementOp::create(b, loc, vec, constI32(i));
  }
  /// The value of lane (lane ^ offset) of the warp.
  Value shuffleXor(Value v, int64_t offset) {
    return mlir::gpu::ShuffleOp::create(b, loc, v, constI32(offset),
                                        constI32(32),
                                        mlir::gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  // --- control flow and cluster hand-overs -----------------------------------
  /// Emits `body` under `if (cond)`; cond may be null (always true).
  template <typename Fn> void emitIf(Value cond, Fn body) {
    if (!cond) {
      body();
      return;
    }
    auto ifOp = mlir::scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body();
  }
  /// The start of a push merge: the thread where `isFirstThread` holds arms
  /// this CTA's receive mbarrier for `bytes` (emitArmReceiveBarrier), and
  /// every thread arrives (relaxed) at the cluster barrier whose wait, before
  /// the first push, makes every CTA's mbarrier initialized for the others.
  void armReceiveAndArrive(Value isFirstThread, Value barrier, Value bytes) {
    emitIf(isFirstThread,
           [&] { emitArmReceiveBarrier(b, loc, barrier, bytes); });
    mlir::NVVM::ClusterArriveRelaxedOp::create(b, loc,
                                               /*aligned=*/mlir::UnitAttr());
  }

  // --- tensor cores ----------------------------------------------------------
  /// mma.sync.m16n8k16 row.col, bf16 inputs, f32 accumulators: d = a b + c.
  llvm::SmallVector<Value> mma(llvm::ArrayRef<Value> a,
                               llvm::ArrayRef<Value> bFrag,
                               llvm::ArrayRef<Value> c) {
    Value d = mlir::NVVM::MmaOp::create(
        b, loc, mmaResult, a, bFrag, c, llvm::ArrayRef<int64_t>{16, 8, 16},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<mlir::NVVM::MMATypes, 2>{mlir::NVVM::MMATypes::bf16,
                                            mlir::NVVM::MMATypes::bf16},
        std::array<mlir::NVVM::MMALayout, 2>{mlir::NVVM::MMALayout::row,
                                             mlir::NVVM::MMALayout::col});
    llvm::SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(mlir::LLVM::ExtractValueOp::create(b, loc, d, i));
    return out;
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
  Type i32, i64, f32, bf16, globalPtr, sharedPtr, clusterPtr, mmaResult;
  mlir::VectorType v4i32, v4f32;
};

} // namespace moss

#endif // MOSS_LIB_KERNELS_COMMON_KERNELEMITTER_H
