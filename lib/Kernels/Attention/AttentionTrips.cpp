//===- AttentionTrips.cpp - Key-tile copies and trips ---------------------===//
//
// A trip's key tiles: which groups take part (with skip_empty_tiles, a
// reducing barrier per group), which copies of AttentionCopies.cpp bring
// K and V into the slots, and the wait for them.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"

using namespace mlir;

namespace moss::attention {

Value AttentionEmitter::validGroups(const Frame &f, Value trip) {
  Value first = mul(trip, f.groups);
  Value left =
      select(lessU(first, f.nTiles), sub(f.nTiles, first), constI32(0));
  Value count = minU(left, f.groups);
  return sub(arith::ShLIOp::create(b, loc, constI32(1), count), constI32(1));
}

Value AttentionEmitter::groupsWith(const Frame &f, Value pred) {
  auto loop = scf::ForOp::create(b, loc, constI32(0), f.groups, constI32(1),
                                 ValueRange{constI32(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(loop.getBody());
  Value g = loop.getInductionVar();
  Value mine = cmp(arith::CmpIPredicate::eq, f.group, g);
  Value any = toI32(barrierAny(both(mine, pred)));
  Value bits =
      bitOr(loop.getRegionIterArgs()[0], arith::ShLIOp::create(b, loc, any, g));
  scf::YieldOp::create(b, loc, bits);
  return loop.getResult(0);
}

Value AttentionEmitter::activeGroups(const Frame &f, Value noSkip, Value trip,
                                     Value bits, bool tripBarrier) {
  auto withMask = [&] {
    return groupsWith(
        f, both(myTileValid(f, trip), either(noSkip, notZero(bits))));
  };
  if (groupCount == 1)
    return withMask();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, noSkip,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  if (tripBarrier)
    barrier();
  scf::YieldOp::create(b, loc, validGroups(f, trip));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, withMask());
  return ifOp.getResult(0);
}

KvCopySource AttentionEmitter::kvSource(const Frame &f) {
  return {f.kv,    f.tid,          f.threads,      f.kHead,
          f.vHead, arg(kKStrideS), arg(kVStrideS), tmaCopies};
}

TensorTripSource AttentionEmitter::tensorSource(const Frame &f) {
  return {f.kv, f.tid, f.tripBarriers, arg(kKMap), arg(kVMap), f.groups,
          f.h,  f.b,   splitKvBarriers};
}

Value AttentionEmitter::tripBarrier(const Frame &f, Value stage, bool v) {
  assert((!v || splitKvBarriers) && "V mbarriers only with split barriers");
  return AttentionPieces::tripBarrier(f.kv, f.tripBarriers, stage, v);
}

/// cp.async of key tile `tile` (K and V, 64 rows each) into slot `slot`.
void AttentionEmitter::copyTile(const Frame &f, Value tile, Value slot) {
  // Full tiles of CTAs of 4 or 2 warps (the long-chunk and decode
  // launches): an unrolled copy at constant shared-memory offsets.
  Value full = isFullTile(tile);
  auto ofThreads = [&](int64_t threads) {
    return both(full,
                cmp(arith::CmpIPredicate::eq, f.threads, constI32(threads)));
  };
  emitIfElse(
      ofThreads(128), [&] { copyFullTile(kvSource(f), tile, slot, 128); },
      [&] {
        emitIfElse(
            ofThreads(64), [&] { copyFullTile(kvSource(f), tile, slot, 64); },
            [&] { copyTileAnyRows(kvSource(f), arg(kS), tile, slot); });
      });
}

void AttentionEmitter::initTripBarriers(const Frame &f, int64_t stages) {
  if (!tmaCopies)
    return;
  emitIf(isZero(f.tid), [&] {
    for (int64_t s = 0; s < stages; ++s)
      for (bool v : {false, true})
        if (!v || splitKvBarriers)
          NVVM::MBarrierInitOp::create(b, loc, tripBarrier(f, constI32(s), v),
                                       constI32(1), Value());
    // The async proxy (the TMA's complete_tx) sees the initialized
    // barriers; the CTA barrier before the first wait shows them to the
    // other threads.
    NVVM::FenceMbarrierInitOp::create(b, loc);
    emitAsyncProxyFence(b, loc);
  });
}

/// Copies the tiles of trip `trip` whose bit is set in `active` into the
/// slots of `stage`: thread 0 by the TMA engine, or every thread taking part
/// in every tile, as one cp.async group.
void AttentionEmitter::issueTrip(const Frame &f, Value trip, Value stage,
                                 Value active) {
  Value firstTile = add(f.tBegin, mul(trip, f.groups));
  auto copyByThreads = [&] {
    auto loop = scf::ForOp::create(b, loc, constI32(0), f.groups, constI32(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value g = loop.getInductionVar();
      Value on = notZero(bitAnd(arith::ShRUIOp::create(b, loc, active, g), 1));
      emitIf(on, [&] {
        copyTile(f, add(firstTile, g), add(mul(stage, f.groups), g));
      });
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };
  if (tmaCopies)
    issueTensorTrip(tensorSource(f), firstTile, stage, active);
  else
    copyByThreads();
}

void AttentionEmitter::waitTrip(const Frame &f, Value trip, Value stage,
                                int64_t stages) {
  // Q's cp.async group (and on the cp.async path the trip's) has landed.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (!tmaCopies)
    return;
  // Stage s serves trips s, s + stages, ...: the n-th has parity n % 2.
  // With split barriers this is K's; P V waits for V's (computeTile).
  emitSpinOnParity(b, loc, tripBarrier(f, stage), tripParity(trip, stages));
}

} // namespace moss::attention
