//===- GemmMma.cpp - mma.sync stages of the GEMM kernels -----------------===//
//
// A and B are swapped: the MMA computes out^T = W * x^T, so the MMA's 16-row
// side walks 16 rows of W (n) and its 8-column side walks 8 rows of x (m).
// A (16x16, "row") is a W tile, B (16x8, "col") is x^T, i.e. x rows that are
// contiguous in k: both are plain row-major reads of the staged slab.
//
// K permutation. For a 32-wide k chunk, lane (g = lane/4, t = lane%4) loads
//   wLo = W[n0+g  ][k0+8t .. k0+8t+7]   (4 words of 2 bf16)
//   wHi = W[n0+g+8][k0+8t .. k0+8t+7]
//   xj  = x[m0+8j+g][k0+8t .. k0+8t+7]  (one per m8 tile j)
// PTX m16n8k16 fragments (ISA "Matrix Fragments for mma.m16n8k16"): lane
// (g, t) holds A rows g / g+8 at logical k {2t, 2t+1} (a0..a3) and
// {2t+8, 2t+9} (a4..a7), B column g at the same logical k (b0,b1 / b2,b3).
// MMA h (h = 0, 1) of the chunk uses A = {wLo[2h], wHi[2h], wLo[2h+1],
// wHi[2h+1]} and B = {xj[2h], xj[2h+1]}: logical k {2t,2t+1} is physical
// k0+8t+4h+{0,1} and {2t+8,2t+9} is k0+8t+4h+{2,3}, in A and B alike. Over
// t = 0..3 and h = 0..1 that is a bijection onto the 32 k of the chunk, and
// a dot product does not change under a permutation applied to both sides.
//
// Accumulator of m16n8: c0, c1 = out^T[n0+g][m0+2t, m0+2t+1], c2, c3 the
// same at n0+g+8.
//
// Each warp (wn, wk) walks 16 W rows and every warpsK-th 32-wide k chunk of
// each stage, then stores its accumulator as a partial tile.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

using namespace mlir;

namespace moss::gemm {

SmallVector<Value> GemmEmitter::mmaChunk(Value wLo, Value wHi, ValueRange x,
                                         ValueRange acc) {
  SmallVector<Value> out(acc.begin(), acc.end());
  for (int64_t j = 0; j < shape.mTiles; ++j) {
    for (int64_t h = 0; h < 2; ++h) {
      // See the file header for why these words form valid fragments.
      Value a[] = {lane(wLo, 2 * h), lane(wHi, 2 * h), lane(wLo, 2 * h + 1),
                   lane(wHi, 2 * h + 1)};
      Value bFrag[] = {lane(x[j], 2 * h), lane(x[j], 2 * h + 1)};
      SmallVector<Value> d =
          mma(a, bFrag, ArrayRef<Value>(out).slice(4 * j, 4));
      for (int64_t i = 0; i < 4; ++i)
        out[4 * j + i] = d[i];
    }
  }
  return out;
}

SmallVector<Value> GemmEmitter::emitStages(Value slab, Value wn, Value wk,
                                           Value g, Value t) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t rowElems = launch.slabRowElems;
  const int64_t perStage = shape.chunksPerStage, warpsK = launch.warpsK;
  // Lane (g, t) reads W slab rows 16wn + g (+8) and x slab rows bn + 8j + g,
  // at k = 32c + 8t of chunk c.
  Value wLo = elementPtr(slab, bf16,
                         add(mul(add(mul(wn, 16), g), rowElems), mul(t, 8)));
  Value wHi = elementPtr(wLo, bf16, 8 * rowElems);
  SmallVector<Value> xRows;
  for (int64_t j = 0; j < shape.mTiles; ++j)
    xRows.push_back(elementPtr(
        slab, bf16, add(mul(add(g, spec.bn + 8 * j), rowElems), mul(t, 8))));

  SmallVector<Value> acc(4 * shape.mTiles, constF32(0.0));
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    // Stage `stage`'s group is the oldest one still pending: wait for it,
    // then bar.sync makes every thread's copies visible to every warp.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, launch.stages - 1 - stage);
    gpu::BarrierOp::create(b, loc);
    // Warp wk takes the stage's chunks c with c % warpsK == wk.
    const int64_t begin = stage * perStage;
    Value first = add(remU(add(wk, warpsK - begin % warpsK), warpsK), begin);
    auto loop = scf::ForOp::create(b, loc, first, constI32(begin + perStage),
                                   constI32(warpsK), acc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value offset = mul(loop.getInductionVar(), 32);
    Value lo = load16(v4i32, elementPtr(wLo, bf16, offset));
    Value hi = load16(v4i32, elementPtr(wHi, bf16, offset));
    SmallVector<Value> x;
    for (Value row : xRows)
      x.push_back(load16(v4i32, elementPtr(row, bf16, offset)));
    scf::YieldOp::create(b, loc, mmaChunk(lo, hi, x, loop.getRegionIterArgs()));
    b.setInsertionPointAfter(loop);
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  return acc;
}

void GemmEmitter::storePartials(Value tile, ValueRange acc, Value wn, Value wk,
                                Value g, Value t) {
  const int64_t stride = shape.launch.partialRowFloats;
  // Tile layout [warpsK][bm8][bn + pad]; lane owns rows 8j + 2t + {0,1} and
  // columns 16wn + g + {0,8} of its warp's slab (accumulator layout).
  Value row = add(mul(wk, shape.launch.bm8), mul(t, 2));
  Value base = add(mul(row, stride), add(mul(wn, 16), g));
  for (int64_t j = 0; j < shape.mTiles; ++j) {
    for (int64_t i = 0; i < 4; ++i) {
      int64_t rowDelta = 8 * j + (i & 1), colDelta = (i >> 1) * 8;
      Value ptr =
          elementPtr(tile, f32, add(base, rowDelta * stride + colDelta));
      LLVM::StoreOp::create(b, loc, acc[4 * j + i], ptr, /*alignment=*/4);
    }
  }
}

} // namespace moss::gemm
