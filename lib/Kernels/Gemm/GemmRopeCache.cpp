//===- GemmRopeCache.cpp - The QKV epilogue: RoPE and the ring cache ------===//
//
// The epilogue of a decoder layer's QKV projection (mode
// layernorm_rope_cache; docs/kernel-abi.md, "The QKV epilogue"). Column n of
// the [m, 3d] product is part n / d (q, k, v), head (n % d) / 64 and dim
// n % 64, so an item's 8 columns are 4 interleaved pairs of one head. The
// rounding is the reference layer's: v = bf16(acc), then q and k turned in
// FP32 by angle = float(position) * inv_freq[pair] and rounded once. q goes
// to out ([m, d], i.e. [B,T,H,64]); k and v go into the ring cache
// [B,H,S,64] at slot position % S, and the row's slot-table entry becomes
// its position (-1 for a padding frame), as RingKvCache.append does. A
// batch row whose positions are negative or not consecutive writes nothing
// into the cache or the table: the kernel cannot report it, but it never
// writes outside them.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace moss::gemm {

Value GemmEmitter::ropeFrequencies(Value quad) {
  // Quad q holds pairs 4q .. 4q + 3 of a head: one constant vector each,
  // picked by a select chain (no table in memory).
  auto quadConstant = [&](int64_t q) -> Value {
    SmallVector<float, 4> values;
    for (int64_t j = 0; j < 4; ++j)
      values.push_back(
          config::ropeInverseFrequency(static_cast<int>(4 * q + j)));
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(v4f32, ArrayRef<float>(values)));
  };
  Value frequencies = quadConstant(0);
  for (int64_t q = 1; q < config::kRopeHeadDim / 8; ++q)
    frequencies = select(equal(quad, q), quadConstant(q), frequencies);
  return frequencies;
}

Value GemmEmitter::ropeRotate(Value rounded, Value position, Value quad) {
  Value frequencies = ropeFrequencies(quad);
  Value angleBase = arith::SIToFPOp::create(b, loc, f32, position);
  auto toF32 = [&](Value v) { return arith::ExtFOp::create(b, loc, f32, v); };
  auto mulF = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  SmallVector<Value, 8> results;
  for (int64_t j = 0; j < 4; ++j) {
    Value angle = mulF(angleBase, lane(frequencies, j));
    Value cos = math::CosOp::create(b, loc, angle);
    Value sin = math::SinOp::create(b, loc, angle);
    Value even = toF32(lane(rounded, 2 * j));
    Value odd = toF32(lane(rounded, 2 * j + 1));
    // Named in order: the IR (and so the PTX) must not depend on the host
    // compiler's order of evaluating arguments.
    Value evenCos = mulF(even, cos);
    Value oddSin = mulF(odd, sin);
    Value turnedEven = arith::SubFOp::create(b, loc, evenCos, oddSin);
    Value evenSin = mulF(even, sin);
    Value oddCos = mulF(odd, cos);
    Value turnedOdd = arith::AddFOp::create(b, loc, evenSin, oddCos);
    results.push_back(arith::TruncFOp::create(b, loc, bf16, turnedEven));
    results.push_back(arith::TruncFOp::create(b, loc, bf16, turnedOdd));
  }
  return packBf16(results);
}

Value GemmEmitter::batchRowPositionsValid(Value positions, Value batchRow,
                                          Value length) {
  Value base = mul(toI64(batchRow), toI64(length));
  auto positionAt = [&](Value index) {
    return LLVM::LoadOp::create(b, loc, i64, elementPtr(positions, i64, index),
                                /*alignment=*/8)
        .getResult();
  };
  Value first = positionAt(base);
  Value zero = constI64(0);
  Value valid = cmp(arith::CmpIPredicate::sge, first, zero);
  auto loop = scf::ForOp::create(b, loc, constI32(1), length, constI32(1),
                                 ValueRange{valid});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value position = positionAt(add(base, toI64(t)));
    Value consecutive = equal(position, add(first, toI64(t)));
    Value nonNegative = cmp(arith::CmpIPredicate::sge, position, zero);
    Value ok =
        both(loop.getRegionIterArgs()[0], both(consecutive, nonNegative));
    scf::YieldOp::create(b, loc, ok);
  }
  return loop.getResult(0);
}

void GemmEmitter::storeRopeCacheItem(Value rounded, Value row, Value n,
                                     const RopeCacheOperands &ops) {
  const int64_t dModel = spec.n / 3;
  const int64_t heads = dModel / config::kRopeHeadDim;
  Value part = divU(n, dModel);
  Value col = sub(n, mul(part, dModel));
  Value head = divU(col, config::kRopeHeadDim);
  Value dim = remU(col, config::kRopeHeadDim);
  Value rowI64 = toI64(row);
  Value position = LLVM::LoadOp::create(
      b, loc, i64, elementPtr(ops.positions, i64, rowI64), /*alignment=*/8);
  Value isQ = equal(part, 0), isV = equal(part, 2);

  // v as it is; q and k turned (the sin and cos only where needed).
  auto turned = scf::IfOp::create(b, loc, TypeRange{v8bf16}, isV,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(turned.thenBlock());
    scf::YieldOp::create(b, loc, rounded);
    b.setInsertionPointToStart(turned.elseBlock());
    scf::YieldOp::create(b, loc, ropeRotate(rounded, position, divU(dim, 8)));
  }
  Value item = turned.getResult(0);

  emitIf(isQ, [&] {
    Value offset = add(mul(rowI64, dModel), toI64(col));
    store16(item, elementPtr(ops.q, bf16, offset));
  });
  // The cache rows and the slot table (column 0's item) of a batch row
  // with valid positions.
  Value isFirstColumn = equal(n, 0);
  Value writesCache =
      arith::OrIOp::create(b, loc, differ(part, 0), isFirstColumn);
  emitIf(writesCache, [&] {
    Value batchRow = divU(row, ops.length);
    emitIf(batchRowPositionsValid(ops.positions, batchRow, ops.length), [&] {
      Value capacity = toI64(ops.capacity);
      Value slot = remU(position, capacity);
      emitIf(differ(part, 0), [&] {
        Value cacheRow = add(
            mul(add(mul(toI64(batchRow), heads), toI64(head)), capacity), slot);
        Value offset = add(mul(cacheRow, config::kRopeHeadDim), toI64(dim));
        Value cache = select(isV, ops.vCache, ops.kCache);
        store16(item, elementPtr(cache, bf16, offset));
      });
      emitIf(isFirstColumn, [&] {
        Value live = LLVM::LoadOp::create(
            b, loc, b.getI8Type(), elementPtr(ops.live, b.getI8Type(), rowI64),
            /*alignment=*/1);
        Value entry = select(differ(live, 0), position, constI64(-1));
        Value tableIndex = add(mul(toI64(batchRow), capacity), slot);
        LLVM::StoreOp::create(b, loc, entry,
                              elementPtr(ops.slotPositions, i64, tableIndex),
                              /*alignment=*/8);
      });
    });
  });
}

} // namespace moss::gemm
