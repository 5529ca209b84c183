//===- GemmCopies.cpp - The CTA's slab of W and x ------------------------===//
//
// cp.async of a CTA's K slice of W and x into shared memory, one commit
// group per stage, in the order a programmatic launch wants (W first, then
// griddepcontrol.wait, then x) or the plain one.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

using namespace mlir;

namespace moss::gemm {

Value GemmEmitter::ownsTileRow(Value row, Value globalRow, Value m) {
  Value owned = lessU(globalRow, m);
  if (spec.bm < shape.launch.bm8) // rows past bm are the next CTA's
    owned = both(owned, lessU(row, spec.bm));
  return owned;
}

Value GemmEmitter::slabOffset(Value slabRow, Value kSlice, bool isX) {
  const config::GemmLaunch &launch = shape.launch;
  // Padded rows for mma.sync; for wgmma, W (rows [0, bn)) and x (rows
  // [bn, bn + 64)) are separate matrices in the swizzled layout.
  if (!launch.wgmma)
    return add(mul(slabRow, launch.slabRowElems), kSlice);
  if (!isX)
    return swizzledOffset(slabRow, kSlice, spec.bn);
  return add(swizzledOffset(add(slabRow, -spec.bn), kSlice, launch.bm8),
             spec.bn * launch.kPerCta);
}

void GemmEmitter::issueCopies(Value slab, Value x, Value w, Value tid,
                              Value nCta, Value mCta, Value kBase, Value m,
                              Value prefetchW) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t k = spec.k, stageK = launch.stageK;
  const int64_t piecesPerRow = stageK / 8; // 16-byte pieces of a stage row
  // W is read once: .cg (L2 only). x is read by every CTA of a row block:
  // .ca lets CTAs that share an SM hit L1 for it. That pays for split == 1
  // tiles and small split-K tiles (bm <= 16); a split-K tile of bm >= 32
  // reads an x slice too large to stay in L1 beside its neighbours', and a
  // wgmma tile (bm = 64) holds its SM alone, so both read x by .cg
  // (docs/performance.md has the measurements).
  const NVVM::LoadCacheModifierKind xCache =
      spec.bm < 64 && (spec.split == 1 || spec.bm <= 16)
          ? NVVM::LoadCacheModifierKind::CA
          : NVVM::LoadCacheModifierKind::CG;
  auto copy = [&](Value globalRow, Value slabRow, Value kInStage, int64_t stage,
                  Value base, bool isX, NVVM::LoadCacheModifierKind cache,
                  Value srcBytes) {
    Value kSlice = add(kInStage, stage * stageK);
    Value src = elementPtr(
        base, bf16, add(mul(toI64(globalRow), k), toI64(add(kBase, kSlice))));
    Value dst = elementPtr(slab, bf16, slabOffset(slabRow, kSlice, isX));
    NVVM::CpAsyncOp::create(b, loc, dst, src, /*size=*/16, cache, srcBytes);
  };
  auto copyW = [&](int64_t stage) {
    forEachPiece(tid, spec.bn * piecesPerRow, [&](Value piece) {
      Value row = divU(piece, piecesPerRow);
      Value kInStage = mul(remU(piece, piecesPerRow), 8);
      copy(add(nCta, row), row, kInStage, stage, w, /*isX=*/false,
           NVVM::LoadCacheModifierKind::CG, Value());
    });
  };
  auto copyX = [&](int64_t stage) {
    if (launch.layerNorm)
      return;
    forEachPiece(tid, launch.bm8 * piecesPerRow, [&](Value piece) {
      Value row = divU(piece, piecesPerRow);
      Value kInStage = mul(remU(piece, piecesPerRow), 8);
      Value xRow = add(mCta, row);
      // Rows the CTA does not own are zero-filled: src-size 0 reads
      // nothing, and mCta < m is a valid address.
      Value owned = ownsTileRow(row, xRow, m);
      Value srcBytes = select(owned, constI32(16), constI32(0));
      copy(select(owned, xRow, mCta), add(row, spec.bn), kInStage, stage, x,
           /*isX=*/true, xCache, srcBytes);
    });
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };
  auto waitForPreviousGrid = [&] {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  };
  auto ifOp =
      scf::IfOp::create(b, loc, differ(prefetchW, 0), /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    copyW(stage);
    commit();
  }
  waitForPreviousGrid();
  for (int64_t stage = 0; stage < launch.stages && !launch.layerNorm; ++stage) {
    copyX(stage);
    commit();
  }
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  waitForPreviousGrid();
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    copyW(stage);
    copyX(stage);
    commit();
  }
}

} // namespace moss::gemm
