//===- TestGemmPieces.cpp - The GEMM kernel's pieces, one at a time -------===//
//
// Each piece of the GEMM kernel in a function of its own: the slab copies,
// the mma.sync and warpgroup-MMA stages, the wgmma descriptor, the fused
// epilogue, the split-K hand-over, the LayerNorm prologue and the QKV
// epilogue (RoPE, the ring cache), for the shape of a given tile.
//
//===----------------------------------------------------------------------===//
#include "PieceFunction.h"

#include "Gemm/GemmEmitter.h"

using namespace mlir;

namespace moss::test {

bool emitGemmPiece(OpBuilder &b, ModuleOp module, StringRef piece, int64_t n,
                   int64_t k, ArrayRef<int64_t> tile, int64_t mode,
                   std::string &error) {
  if (tile.size() != 4) {
    error = "tile must be bm,bn,bk,split";
    return false;
  }
  GemmKernelSpec spec;
  spec.n = n;
  spec.k = k;
  spec.mode = static_cast<int>(mode);
  spec.bm = tile[0];
  spec.bn = tile[1];
  spec.bk = tile[2];
  spec.split = tile[3];
  gemm::GemmShape shape;
  if (!gemm::deriveGemmShape(spec, shape, error))
    return false;
  Location loc = module.getLoc();
  auto emitter = [&] { return gemm::GemmEmitter(b, loc, shape); };
  // The emitter's own types name the arguments.
  const gemm::GemmEmitter t = emitter();

  if (piece == "gemm-copies") {
    // (slab, x, w, tid, nCta, mCta, kBase, m, prefetchW)
    PieceFunction fn(b, module, piece,
                     {t.sharedPtr, t.globalPtr, t.globalPtr, t.i32, t.i32,
                      t.i32, t.i32, t.i32, t.i32});
    emitter().issueCopies(fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3), fn.arg(4),
                          fn.arg(5), fn.arg(6), fn.arg(7), fn.arg(8));
    fn.finish({});
    return true;
  }
  if (piece == "gemm-mma-stages") {
    if (shape.launch.wgmma) {
      error = "the tile takes the warpgroup-MMA stages";
      return false;
    }
    // (slab, wn, wk, g, t) -> the warp's accumulators
    PieceFunction fn(b, module, piece,
                     {t.sharedPtr, t.i32, t.i32, t.i32, t.i32});
    fn.finish(emitter().emitStages(fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3),
                                   fn.arg(4)));
    return true;
  }
  if (piece == "gemm-wgmma-stages") {
    if (!shape.launch.wgmma) {
      error = "the tile takes the mma.sync stages";
      return false;
    }
    // (slab, wgN, wgK) -> the warpgroup's accumulators
    PieceFunction fn(b, module, piece, {t.sharedPtr, t.i32, t.i32});
    fn.finish(emitter().emitWgmmaStages(fn.arg(0), fn.arg(1), fn.arg(2)));
    return true;
  }
  if (piece == "gemm-wgmma-descriptor") {
    // (matrix, row, k) -> (descriptor, swizzled offset of (row, k))
    PieceFunction fn(b, module, piece, {t.sharedPtr, t.i32, t.i32});
    gemm::GemmEmitter e = emitter();
    Value desc = e.matrixDescriptor(fn.arg(0));
    fn.finish({desc, e.swizzledOffset(fn.arg(1), fn.arg(2), spec.bn)});
    return true;
  }
  if (piece == "gemm-epilogue") {
    // (lo, hi, rowOffset, n, scale, residual, liveFactor) -> 8 bf16
    PieceFunction fn(
        b, module, piece,
        {t.v4f32, t.v4f32, t.i64, t.i32, t.globalPtr, t.globalPtr, t.f32});
    fn.finish(emitter().applyEpilogue(fn.arg(0), fn.arg(1), fn.arg(2),
                                      fn.arg(3), fn.arg(4), fn.arg(5),
                                      fn.arg(6)));
    return true;
  }
  if (piece == "gemm-row-live") {
    // (row_live, row) -> 1.0 or 0.0
    PieceFunction fn(b, module, piece, {t.globalPtr, t.i32});
    fn.finish(emitter().rowLiveFactor(fn.arg(0), fn.arg(1)));
    return true;
  }
  if (piece == "gemm-split-k") {
    if (spec.split < 2) {
      error = "the split-K hand-over needs split > 1";
      return false;
    }
    // (smem, tid, slice, recv, recvBarrier, mLocal, nLocal) -> the sums of
    // one of this rank's items
    PieceFunction fn(
        b, module, piece,
        {t.sharedPtr, t.i32, t.i32, t.sharedPtr, t.sharedPtr, t.i32, t.i32});
    gemm::GemmEmitter e = emitter();
    e.handOverSplitK(fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3), fn.arg(4));
    auto [lo, hi] = e.sumReceived(fn.arg(3), fn.arg(2), fn.arg(5), fn.arg(6));
    fn.finish({lo, hi});
    return true;
  }
  if (piece == "gemm-layernorm" || piece == "gemm-slice-moments" ||
      piece == "gemm-row-statistics") {
    if (!shape.launch.layerNorm) {
      error = "the LayerNorm pieces need mode 3 or 4";
      return false;
    }
  }
  if (piece == "gemm-layernorm") {
    // (slab, x, gamma, beta, eps, tid, mCta, kBase, m, slice)
    PieceFunction fn(b, module, piece,
                     {t.sharedPtr, t.globalPtr, t.globalPtr, t.globalPtr, t.f32,
                      t.i32, t.i32, t.i32, t.i32, t.i32});
    emitter().applyLayerNorm(fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3),
                             fn.arg(4), fn.arg(5), fn.arg(6), fn.arg(7),
                             fn.arg(8), fn.arg(9));
    fn.finish({});
    return true;
  }
  if (piece == "gemm-slice-moments") {
    // (slab, row, laneId) -> (mean, M2)
    PieceFunction fn(b, module, piece, {t.sharedPtr, t.i32, t.i32});
    auto [mean, m2] = emitter().sliceMoments(fn.arg(0), fn.arg(1), fn.arg(2));
    fn.finish({mean, m2});
    return true;
  }
  if (piece == "gemm-row-statistics") {
    // (stats, row, eps) -> (mean, rstd)
    PieceFunction fn(b, module, piece, {t.sharedPtr, t.i32, t.f32});
    auto [mean, rstd] =
        emitter().rowStatistics(fn.arg(0), fn.arg(1), fn.arg(2));
    fn.finish({mean, rstd});
    return true;
  }
  if (piece == "gemm-rope" || piece == "gemm-rope-cache-item") {
    if (shape.epilogue != config::kGemmEpilogueRopeCache) {
      error = "the QKV epilogue's pieces need mode 5";
      return false;
    }
  }
  if (piece == "gemm-rope") {
    // (8 bf16, position, quad) -> the 8 bf16 turned
    PieceFunction fn(b, module, piece,
                     {VectorType::get({8}, t.bf16), t.i64, t.i32});
    fn.finish(emitter().ropeRotate(fn.arg(0), fn.arg(1), fn.arg(2)));
    return true;
  }
  if (piece == "gemm-rope-cache-item") {
    // (8 bf16, row, n, q, positions, live, k_cache, v_cache, slot_positions,
    // length, capacity)
    PieceFunction fn(b, module, piece,
                     {VectorType::get({8}, t.bf16), t.i32, t.i32, t.globalPtr,
                      t.globalPtr, t.globalPtr, t.globalPtr, t.globalPtr,
                      t.globalPtr, t.i32, t.i32});
    gemm::RopeCacheOperands ops{fn.arg(3), fn.arg(4), fn.arg(5), fn.arg(6),
                                fn.arg(7), fn.arg(8), fn.arg(9), fn.arg(10)};
    emitter().storeRopeCacheItem(fn.arg(0), fn.arg(1), fn.arg(2), ops);
    fn.finish({});
    return true;
  }
  error = ("unknown GEMM piece '" + piece + "'").str();
  return false;
}

} // namespace moss::test
