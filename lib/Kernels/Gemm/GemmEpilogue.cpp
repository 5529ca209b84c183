//===- GemmEpilogue.cpp - Partial sums, split-K hand-over, epilogue ------===//
//
// The warps' FP32 partial tiles summed in a fixed order, the st.async
// pushes of the split-K hand-over, and the fused epilogue with the rounding
// of the contract: v = bf16(acc); GELU bf16(0.5 v (1 + erf(v / sqrt 2))) in
// FP32; LayerScale bf16(bf16(v scale[n]) + residual[m, n]).
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"

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

Value GemmEmitter::applyEpilogue(Value lo, Value hi, Value rowOffset, Value n) {
  auto toBf16 = [&](Value v) {
    return arith::TruncFOp::create(b, loc, bf16, v);
  };
  auto toF32 = [&](Value v) { return arith::ExtFOp::create(b, loc, f32, v); };
  Value scales, residuals;
  if (spec.epilogue == 2) {
    Value col = toI64(n);
    scales = loadReadOnly16(v8bf16, elementPtr(arg(kScale), bf16, col));
    // Plain load: out may alias residual (in-place update).
    residuals =
        load16(v8bf16, elementPtr(arg(kResidual), bf16, add(rowOffset, col)));
  }
  SmallVector<Value, 8> results;
  for (int64_t i = 0; i < 8; ++i) {
    // Contract: v = bf16(acc), then the mode's formula in FP32.
    Value rounded = toBf16(lane(i < 4 ? lo : hi, i % 4));
    switch (spec.epilogue) {
    case 1:
      results.push_back(toBf16(gelu(toF32(rounded))));
      break;
    case 2: {
      Value scaled = toBf16(arith::MulFOp::create(b, loc, toF32(rounded),
                                                  toF32(lane(scales, i))));
      results.push_back(toBf16(arith::AddFOp::create(
          b, loc, toF32(scaled), toF32(lane(residuals, i)))));
      break;
    }
    default:
      results.push_back(rounded);
    }
  }
  return packBf16(results);
}

void GemmEmitter::armReceiveBarrier(Value tid, Value slice, Value barrier) {
  const int64_t share = shape.launch.shareItems;
  // Rank r finishes items [r * share, min((r + 1) * share, items)); each of
  // the other split - 1 ranks pushes 32 bytes an item.
  Value first = mul(slice, share);
  Value count = arith::MaxSIOp::create(
      b, loc, constI32(0),
      arith::MinSIOp::create(b, loc, constI32(share),
                             sub(constI32(shape.epilogueItems), first)));
  Value bytes = mul(count, (spec.split - 1) * 32);
  armReceiveAndArrive(equal(tid, 0), barrier, bytes);
}

void GemmEmitter::pushAsync(Value remote, Value value, Value remoteBarrier) {
  emitStAsyncV4F32(
      b, loc, remote,
      {lane(value, 0), lane(value, 1), lane(value, 2), lane(value, 3)},
      remoteBarrier);
}

} // namespace moss::gemm
