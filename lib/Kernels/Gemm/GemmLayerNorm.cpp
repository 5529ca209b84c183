//===- GemmLayerNorm.cpp - The LayerNorm prologue of the GEMM kernels ----===//
//
// A LayerNorm mode normalises x before the product: y = bf16((x - mean) *
// rstd * gamma + beta), mean and variance in FP32 over the whole row of K.
// The statistics are needed before the first MMA, so x does not ride in the
// cp.async groups with W: the CTA loads its x slice with plain 16-byte loads
// into the slab (W keeps streaming meanwhile), each warp computes the
// (mean, M2) of its rows' slices in two passes over shared memory, the
// ranks of a split-K cluster trade those through distributed shared memory
// (Chan's combination of equal-sized parts, in the fixed order z = 0, 1,
// ..., so every rank gets the same bits), and the slice is normalised in
// place. The per-stage fence and bar.sync before the MMAs publish it.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace moss::gemm {

namespace {
/// 16-byte pieces (8 bf16) of one row of the CTA's K slice.
int64_t piecesPerRow(const GemmShape &shape) {
  return shape.launch.kPerCta / 8;
}
} // namespace

void GemmEmitter::loadXSlice(Value slab, Value x, Value tid, Value mCta,
                             Value kBase, Value m) {
  const int64_t perRow = piecesPerRow(shape);
  forEachPiece(tid, shape.launch.bm8 * perRow, [&](Value piece) {
    Value row = divU(piece, perRow);
    Value kSlice = mul(remU(piece, perRow), 8);
    Value xRow = add(mCta, row);
    // Rows the CTA does not own are zeros: their outputs are never stored,
    // and zeros keep them finite.
    Value owned = ownsTileRow(row, xRow, m);
    Value zeros = LLVM::ZeroOp::create(b, loc, v8bf16);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{v8bf16}, owned,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value src = elementPtr(
          x, bf16, add(mul(toI64(xRow), spec.k), toI64(add(kBase, kSlice))));
      scf::YieldOp::create(b, loc, load16(v8bf16, src));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, zeros);
    }
    store16(ifOp.getResult(0),
            elementPtr(slab, bf16,
                       slabOffset(add(row, spec.bn), kSlice, /*isX=*/true)));
  });
}

std::pair<Value, Value> GemmEmitter::sliceMoments(Value slab, Value row,
                                                  Value laneId) {
  const int64_t perRow = piecesPerRow(shape);
  const int64_t perLane = (perRow + 31) / 32;
  Value xRow = add(row, spec.bn);
  // The lane's pieces, lane + 32 i; past the row's end they count as none.
  SmallVector<Value> pieces;
  SmallVector<Value> valid;
  for (int64_t i = 0; i < perLane; ++i) {
    Value piece = add(laneId, 32 * i);
    Value inRow = (i + 1) * 32 > perRow ? lessU(piece, perRow) : Value();
    Value at = inRow ? select(inRow, piece, constI32(0)) : piece;
    pieces.push_back(load16(v8bf16, elementPtr(slab, bf16,
                                               slabOffset(xRow, mul(at, 8),
                                                          /*isX=*/true))));
    valid.push_back(inRow);
  }
  // Lane sums in piece order, then a butterfly over the warp: every lane
  // ends with the same bits (each step adds two equal partial sums).
  auto warpSum = [&](auto term) {
    Value sum = constF32(0.0);
    for (auto [piece, inRow] : llvm::zip(pieces, valid)) {
      for (int64_t e = 0; e < 8; ++e) {
        Value t = term(arith::ExtFOp::create(b, loc, f32, lane(piece, e)));
        if (inRow)
          t = select(inRow, t, constF32(0.0));
        sum = arith::AddFOp::create(b, loc, sum, t);
      }
    }
    for (int64_t offset = 16; offset >= 1; offset /= 2)
      sum = arith::AddFOp::create(b, loc, sum, shuffleXor(sum, offset));
    return sum;
  };
  Value count = constF32(static_cast<double>(shape.launch.kPerCta));
  Value mean =
      arith::DivFOp::create(b, loc, warpSum([](Value v) { return v; }), count);
  Value m2 = warpSum([&](Value v) {
    Value d = arith::SubFOp::create(b, loc, v, mean);
    return arith::MulFOp::create(b, loc, d, d).getResult();
  });
  return {mean, m2};
}

void GemmEmitter::publishMoments(Value slab, Value stats, Value tid,
                                 Value slice) {
  const config::GemmLaunch &launch = shape.launch;
  Value laneId = remU(tid, 32), warp = divU(tid, 32);
  Type v2f32 = VectorType::get({2}, f32);
  for (int64_t first = 0; first < launch.bm8; first += launch.warps) {
    Value row = add(warp, first);
    Value inTile =
        first + launch.warps > launch.bm8 ? lessU(row, launch.bm8) : Value();
    emitIf(inTile, [&] {
      auto [mean, m2] = sliceMoments(slab, row, laneId);
      emitIf(equal(laneId, 0), [&] {
        Value pair = LLVM::PoisonOp::create(b, loc, v2f32);
        pair = LLVM::InsertElementOp::create(b, loc, pair, mean, constI32(0));
        pair = LLVM::InsertElementOp::create(b, loc, pair, m2, constI32(1));
        Value slot = elementPtr(stats, v2f32, add(mul(slice, launch.bm8), row));
        if (spec.split == 1) {
          LLVM::StoreOp::create(b, loc, pair, slot, /*alignment=*/8);
          return;
        }
        for (int64_t z = 0; z < spec.split; ++z) {
          Value remote =
              NVVM::MapaOp::create(b, loc, clusterPtr, slot, constI32(z));
          LLVM::StoreOp::create(b, loc, pair, remote, /*alignment=*/8);
        }
      });
    });
  }
}

std::pair<Value, Value> GemmEmitter::rowStatistics(Value stats, Value row,
                                                   Value eps) {
  const config::GemmLaunch &launch = shape.launch;
  Type v2f32 = VectorType::get({2}, f32);
  SmallVector<Value> means, m2s;
  for (int64_t z = 0; z < spec.split; ++z) {
    Value pair = LLVM::LoadOp::create(
        b, loc, v2f32, elementPtr(stats, v2f32, add(row, z * launch.bm8)),
        /*alignment=*/8);
    means.push_back(lane(pair, 0));
    m2s.push_back(lane(pair, 1));
  }
  auto addF = [&](Value l, Value r) {
    return arith::AddFOp::create(b, loc, l, r).getResult();
  };
  Value mean = means[0], m2 = m2s[0];
  if (spec.split > 1) {
    // Chan et al. for `split` parts of kPerCta values each, in order z.
    Value sum = means[0];
    for (int64_t z = 1; z < spec.split; ++z)
      sum = addF(sum, means[z]);
    mean = arith::DivFOp::create(b, loc, sum,
                                 constF32(static_cast<double>(spec.split)));
    Value parts = constF32(static_cast<double>(launch.kPerCta));
    for (int64_t z = 0; z < spec.split; ++z) {
      Value d = arith::SubFOp::create(b, loc, means[z], mean);
      Value spread = arith::MulFOp::create(b, loc, parts,
                                           arith::MulFOp::create(b, loc, d, d));
      Value part = addF(m2s[z], spread);
      m2 = z == 0 ? part : addF(m2, part);
    }
  }
  Value variance =
      arith::DivFOp::create(b, loc, m2, constF32(static_cast<double>(spec.k)));
  // rsqrt.approx.f32 (relative error <= 2^-22), as PyTorch's CUDA
  // LayerNorm computes it; LLVM folds a division by sqrt into it anyway.
  Value rstd = math::RsqrtOp::create(b, loc, addF(variance, eps));
  return {mean, rstd};
}

void GemmEmitter::normalizeXSlice(Value slab, Value stats, Value tid,
                                  Value kBase, Value gamma, Value beta,
                                  Value eps) {
  const int64_t perRow = piecesPerRow(shape);
  forEachPiece(tid, shape.launch.bm8 * perRow, [&](Value piece) {
    Value row = divU(piece, perRow);
    Value kSlice = mul(remU(piece, perRow), 8);
    auto [mean, rstd] = rowStatistics(stats, row, eps);
    Value col = toI64(add(kBase, kSlice));
    Value g = loadReadOnly16(v8bf16, elementPtr(gamma, bf16, col));
    Value be = loadReadOnly16(v8bf16, elementPtr(beta, bf16, col));
    Value ptr = elementPtr(slab, bf16,
                           slabOffset(add(row, spec.bn), kSlice, /*isX=*/true));
    Value xs = load16(v8bf16, ptr);
    auto toF32 = [&](Value v) {
      return arith::ExtFOp::create(b, loc, f32, v).getResult();
    };
    SmallVector<Value, 8> ys;
    for (int64_t e = 0; e < 8; ++e) {
      Value centred = arith::SubFOp::create(b, loc, toF32(lane(xs, e)), mean);
      Value scaled = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, centred, rstd),
          toF32(lane(g, e)));
      ys.push_back(arith::TruncFOp::create(
          b, loc, bf16,
          arith::AddFOp::create(b, loc, scaled, toF32(lane(be, e)))));
    }
    store16(packBf16(ys), ptr);
  });
}

void GemmEmitter::applyLayerNorm(Value slab, Value x, Value gamma, Value beta,
                                 Value eps, Value tid, Value mCta, Value kBase,
                                 Value m, Value slice) {
  const config::GemmLaunch &launch = shape.launch;
  Value stats = elementPtr(slab, b.getI8Type(), launch.statsOffset);
  loadXSlice(slab, x, tid, mCta, kBase, m);
  gpu::BarrierOp::create(b, loc);
  // Split-K: this wait completes the arrive of armReceiveBarrier, so every
  // rank has started (its shared memory may be written) and its receive
  // mbarrier is initialized; handOverSplitK then waits no more.
  if (spec.split > 1)
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  publishMoments(slab, stats, tid, slice);
  if (spec.split > 1) { // every rank's moments have landed in every rank
    NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  } else {
    gpu::BarrierOp::create(b, loc);
  }
  normalizeXSlice(slab, stats, tid, kBase, gamma, beta, eps);
}

} // namespace moss::gemm
