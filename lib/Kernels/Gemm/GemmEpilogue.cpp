//===- GemmEpilogue.cpp - Partial sums and the fused epilogue ------------===//
//
// The warps' FP32 partial tiles summed in a fixed order, and the fused
// epilogue with the rounding of the contract: v = bf16(acc); GELU bf16(0.5 v (1
// + erf(v / sqrt 2))) in FP32; LayerScale bf16(bf16(v scale[n]) + residual[m,
// n]), times 1 or 0 by the row's row_live byte (a decoder layer's padding
// frames leave it as zeros, as the reference's y * live). The QKV epilogue
// takes v on (GemmRopeCache.cpp).
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace moss::gemm {

std::pair<Value, Value> GemmEmitter::sumPartials(Value tile, Value mLocal,
                                                 Value nLocal) {
  const config::GemmLaunch &launch = shape.launch;
  Value base = tileOffset(mLocal, nLocal);
  // Warps in order wk = 0, 1, ...
  return sumGroups(launch.warpsK, [&](int64_t wk) {
    return elementPtr(tile, f32,
                      add(base, wk * launch.bm8 * launch.partialRowFloats));
  });
}

Value GemmEmitter::gelu(Value v) {
  Value erf = math::ErfOp::create(
      b, loc, arith::MulFOp::create(b, loc, v, constF32(kInvSqrt2)));
  Value halfV = arith::MulFOp::create(b, loc, constF32(0.5), v);
  return arith::MulFOp::create(
      b, loc, halfV, arith::AddFOp::create(b, loc, constF32(1.0), erf));
}

Value GemmEmitter::packBf16(ArrayRef<Value> values) {
  Value packed = LLVM::PoisonOp::create(b, loc, v8bf16);
  for (auto [i, v] : llvm::enumerate(values))
    packed = LLVM::InsertElementOp::create(b, loc, packed, v, constI32(i));
  return packed;
}

Value GemmEmitter::rowLiveFactor(Value rowLive, Value row) {
  Value isNull =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, rowLive,
                           LLVM::ZeroOp::create(b, loc, rowLive.getType()));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{f32}, isNull,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, constF32(1.0));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  // A plain load: the previous kernel in the stream may have written it.
  Type i8 = b.getI8Type();
  Value live =
      LLVM::LoadOp::create(b, loc, i8, elementPtr(rowLive, i8, toI64(row)));
  Value isLive = differ(live, constOf(live, 0));
  Value one = constF32(1.0);
  Value zero = constF32(0.0);
  scf::YieldOp::create(b, loc, select(isLive, one, zero));
  return ifOp.getResult(0);
}

Value GemmEmitter::applyEpilogue(Value lo, Value hi, Value rowOffset, Value n,
                                 Value scale, Value residual,
                                 Value liveFactor) {
  auto toBf16 = [&](Value v) {
    return arith::TruncFOp::create(b, loc, bf16, v);
  };
  auto toF32 = [&](Value v) { return arith::ExtFOp::create(b, loc, f32, v); };
  Value scales, residuals;
  if (shape.epilogue == config::kGemmEpilogueLayerScaleResidual) {
    Value col = toI64(n);
    scales = loadReadOnly16(v8bf16, elementPtr(scale, bf16, col));
    // Plain load: out may alias residual (in-place update).
    residuals = load16(v8bf16, elementPtr(residual, bf16, add(rowOffset, col)));
  }
  SmallVector<Value, 8> results;
  for (int64_t i = 0; i < 8; ++i) {
    // Contract: v = bf16(acc), then the mode's formula in FP32.
    Value rounded = toBf16(lane(i < 4 ? lo : hi, i % 4));
    switch (shape.epilogue) {
    case config::kGemmEpilogueGelu:
      results.push_back(toBf16(gelu(toF32(rounded))));
      break;
    case config::kGemmEpilogueLayerScaleResidual: {
      Value scaled = toBf16(arith::MulFOp::create(b, loc, toF32(rounded),
                                                  toF32(lane(scales, i))));
      Value y = toBf16(arith::AddFOp::create(b, loc, toF32(scaled),
                                             toF32(lane(residuals, i))));
      results.push_back(
          toBf16(arith::MulFOp::create(b, loc, toF32(y), liveFactor)));
      break;
    }
    default:
      results.push_back(rounded);
    }
  }
  return packBf16(results);
}

} // namespace moss::gemm
