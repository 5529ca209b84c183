//===- HostCall.cpp - host code of a moss op: one runtime call ------------===//
#include "HostCall.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

Value moss::castToDynamicShape(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> shape(type.getRank(), ShapedType::kDynamic);
  return memref::CastOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), buffer);
}

Value moss::dynamicBufferOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
  return castToDynamicShape(b, loc, buffer);
}

void moss::emitRuntimeCall(RewriterBase &rw, Location loc, ModuleOp top,
                           StringRef callee, ValueRange args) {
  if (!top.lookupSymbol<func::FuncOp>(callee)) {
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToEnd(top.getBody());
    func::FuncOp::create(rw, loc, callee,
                         rw.getFunctionType(args.getTypes(), {}))
        .setPrivate();
  }
  func::CallOp::create(rw, loc, callee, TypeRange{}, args);
}
