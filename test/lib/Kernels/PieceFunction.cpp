//===- PieceFunction.cpp - A function around one kernel piece -------------===//
#include "PieceFunction.h"


using namespace mlir;

namespace moss::test {

PieceFunction::PieceFunction(OpBuilder &b, ModuleOp module, StringRef name,
                             ArrayRef<Type> args)
    : b(b) {
  Location loc = module.getLoc();
  auto pieces = module.lookupSymbol<gpu::GPUModuleOp>("pieces");
  if (!pieces) {
    b.setInsertionPointToEnd(module.getBody());
    pieces = gpu::GPUModuleOp::create(b, loc, "pieces");
  }
  b.setInsertionPointToEnd(pieces.getBody());
  fn = gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  b.setInsertionPointToStart(&fn.getBody().front());
}

SmallVector<Value> PieceFunction::args(unsigned first, unsigned count) {
  auto all = fn.getArguments().slice(first, count);
  return SmallVector<Value>(all.begin(), all.end());
}

void PieceFunction::finish(ValueRange results) {
  gpu::ReturnOp::create(b, fn.getLoc(), results);
  fn.setFunctionType(
      b.getFunctionType(fn.getArgumentTypes(), results.getTypes()));
}

} // namespace moss::test
