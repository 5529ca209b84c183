//===- AttentionTrips.cpp - Key-tile copies and trips ---------------------===//
//
// A trip's key tiles: which groups take part (with skip_empty_tiles, a
// reducing barrier per group), the copies of K and V into the swizzled
// slots (boxes of the TMA engine, or every thread's cp.async), and the wait
// for them.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"

using namespace mlir;

namespace moss::attention {

Value AttentionEmitter::validGroups(Value trip) {
  Value first = mul(trip, mv.groups);
  Value left =
      select(lessU(first, mv.nTiles), sub(mv.nTiles, first), constI32(0));
  Value count = minU(left, mv.groups);
  return sub(arith::ShLIOp::create(b, loc, constI32(1), count), constI32(1));
}

Value AttentionEmitter::groupsWith(Value pred) {
  auto loop = scf::ForOp::create(b, loc, constI32(0), mv.groups, constI32(1),
                                 ValueRange{constI32(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(loop.getBody());
  Value g = loop.getInductionVar();
  Value mine = cmp(arith::CmpIPredicate::eq, mv.group, g);
  Value any = toI32(barrierAny(both(mine, pred)));
  Value bits =
      bitOr(loop.getRegionIterArgs()[0], arith::ShLIOp::create(b, loc, any, g));
  scf::YieldOp::create(b, loc, bits);
  return loop.getResult(0);
}

Value AttentionEmitter::activeGroups(int64_t kvGroups, Value noSkip, Value trip,
                                     Value bits, bool tripBarrier) {
  auto withMask = [&] {
    return groupsWith(both(myTileValid(trip), either(noSkip, notZero(bits))));
  };
  if (kvGroups == 1)
    return withMask();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, noSkip,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  if (tripBarrier)
    barrier();
  scf::YieldOp::create(b, loc, validGroups(trip));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, withMask());
  return ifOp.getResult(0);
}

/// cp.async of key tile `tile` (K and V, 64 rows each) into slot `slot`.
void AttentionEmitter::copyTile(Value tile, Value slot) {
  // Full tiles of CTAs of 4 or 2 warps (the long-chunk and decode
  // launches): an unrolled copy at constant shared-memory offsets.
  Value full = isFullTile(tile);
  auto ofThreads = [&](int64_t threads) {
    return both(full,
                cmp(arith::CmpIPredicate::eq, mv.threads, constI32(threads)));
  };
  emitIfElse(
      ofThreads(128), [&] { copyFullTile(tile, slot, 128); },
      [&] {
        emitIfElse(
            ofThreads(64), [&] { copyFullTile(tile, slot, 64); },
            [&] { copyTileAnyRows(tile, slot); });
      });
}

/// Full tile `tile` into `slot` by a CTA of `threads` threads: thread i
/// copies chunk i % 8 of key rows i / 8 + j * threads / 8, which keep the
/// row's swizzle (threads / 8 is a multiple of 8), so only the global
/// pointers step.
void AttentionEmitter::copyFullTile(Value tile, Value slot, int64_t threads) {
  int64_t rowsPerPass = threads / kChunksPerRow;
  assert(rowsPerPass % 8 == 0 && kKeys % rowsPerPass == 0);
  Value chunk = bitAnd(mv.tid, kChunksPerRow - 1);
  Value row = shrU(mv.tid, 3);
  Value key = toI64(add(mul(tile, kKeys), row));
  Value srcCol = toI64(mul(chunk, 8));
  Value physChunk = kvChunk(chunk, row);
  Value dst = add(mul(slot, kSlotElems), add(mul(row, kD), mul(physChunk, 8)));
  struct Operand {
    Value head;
    KernelArg stride;
    int64_t smemOffset;
  };
  for (const Operand &op : {Operand{mv.kHead, kKStrideS, 0},
                            Operand{mv.vHead, kVStrideS, kTileElems}}) {
    Value src =
        elementPtr(op.head, bf16, add(mul(key, arg(op.stride)), srcCol));
    Value step = mul(arg(op.stride), rowsPerPass);
    for (int64_t j = 0; j < kKeys / rowsPerPass; ++j) {
      if (j > 0)
        src = elementPtr(src, bf16, step);
      Value smem = elementPtr(mv.kv, bf16,
                              add(dst, op.smemOffset + j * rowsPerPass * kD));
      NVVM::CpAsyncOp::create(b, loc, smem, src, 16,
                              NVVM::LoadCacheModifierKind::CG,
                              /*cpSize=*/Value());
    }
  }
}

/// Any tile, any CTA size. Thread i copies 16-byte chunk i % 8 of key rows i /
/// 8, i / 8 + step, i / 8 + 2 step, ... (step = threads / 8), two rows a trip:
/// 2 step is a multiple of 8 for 1..4 warps, so each of the two slots keeps its
/// swizzle and a trip costs pointer bumps and four copies. Rows past S (tail
/// tile only) are zero-filled (src-size 0, read from the head's first row), so
/// P·V never reads garbage.
void AttentionEmitter::copyTileAnyRows(Value tile, Value slot) {
  Value s = arg(kS);
  Value chunk = bitAnd(mv.tid, kChunksPerRow - 1);
  Value row0 = shrU(mv.tid, 3);
  Value rowStep = shrU(mv.threads, 3);
  Value pairStep = mul(rowStep, 2);
  Value keyBase = mul(tile, kKeys);
  Value full = isFullTile(tile);
  Value srcCol = toI64(mul(chunk, 8));
  Value stageBase = mul(slot, kSlotElems);
  struct Operand {
    Value head;
    KernelArg stride;
    int64_t smemOffset;
  };
  const Operand operands[] = {{mv.kHead, kKStrideS, 0},
                              {mv.vHead, kVStrideS, kTileElems}};
  // Carried: per slot j, the K and V source pointers and the smem offset.
  SmallVector<Value> init, step;
  for (int64_t slot = 0; slot < 2; ++slot) {
    Value row = add(row0, mul(rowStep, slot));
    for (const Operand &op : operands)
      init.push_back(elementPtr(
          op.head, bf16,
          add(mul(toI64(add(keyBase, row)), arg(op.stride)), srcCol)));
    Value physChunk = kvChunk(chunk, row);
    init.push_back(add(stageBase, add(mul(row, kD), mul(physChunk, 8))));
  }
  for (const Operand &op : operands)
    step.push_back(mul(toI64(pairStep), arg(op.stride)));
  Value dstStep = mul(pairStep, kD);
  auto loop = scf::ForOp::create(b, loc, row0, constI32(kKeys), pairStep, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> next;
    for (int64_t slot = 0; slot < 2; ++slot) {
      Value row = add(loop.getInductionVar(), mul(rowStep, slot));
      auto copyRow = [&] {
        Value inRange = either(full, lessU(add(keyBase, row), s));
        Value bytes = select(inRange, constI32(16), constI32(0));
        Value dst = carried[3 * slot + 2];
        for (auto [i, op] : llvm::enumerate(operands)) {
          Value from = LLVM::SelectOp::create(b, loc, inRange,
                                              carried[3 * slot + i], op.head);
          Value smem = elementPtr(mv.kv, bf16, add(dst, op.smemOffset));
          NVVM::CpAsyncOp::create(b, loc, smem, from, 16,
                                  NVVM::LoadCacheModifierKind::CG, bytes);
        }
      };
      // Slot 1 can pass the tile's end only when 64 is not a multiple of
      // 2 step (3 warps).
      if (slot == 0)
        copyRow();
      else
        emitIf(lessU(row, kKeys), copyRow);
      for (int64_t i = 0; i < 2; ++i)
        next.push_back(elementPtr(carried[3 * slot + i], bf16, step[i]));
      next.push_back(add(carried[3 * slot + 2], dstStep));
    }
    scf::YieldOp::create(b, loc, next);
  }
}

Value AttentionEmitter::tripBarrier(Value stage, bool v) {
  // 8 bytes a stage: 2 floats; the V mbarrier of one stage after its K one
  // (the 16 bytes kAttentionTripBarrierBytes reserves).
  assert((!v || splitKvBarriers) && "V mbarriers only with split barriers");
  return elementPtr(mv.kv, f32,
                    add(mv.tripBarriers, add(mul(stage, 2), v ? 2 : 0)));
}

void AttentionEmitter::initTripBarriers(int64_t stages) {
  if (!tmaCopies)
    return;
  emitIf(isZero(mv.tid), [&] {
    for (int64_t s = 0; s < stages; ++s)
      for (bool v : {false, true})
        if (!v || splitKvBarriers)
          NVVM::MBarrierInitOp::create(b, loc, tripBarrier(constI32(s), v),
                                       constI32(1), Value());
    // The async proxy (the TMA's complete_tx) sees the initialized
    // barriers; the CTA barrier before the first wait shows them to the
    // other threads.
    NVVM::FenceMbarrierInitOp::create(b, loc);
    emitAsyncProxyFence(b, loc);
  });
}

void AttentionEmitter::issueTensorTrip(Value firstTile, Value stage,
                                       Value active) {
  emitIf(isZero(mv.tid), [&] {
    // The slots were last read through the generic proxy (ldmatrix, ordered
    // before this by a CTA barrier); the TMA writes through the async one.
    emitAsyncProxyFence(b, loc);
    Value kBar = tripBarrier(stage);
    // Every box completes its whole size, keys past S (zero-filled) too.
    Value tiles = LLVM::CtPopOp::create(b, loc, active);
    auto expect = [&](Value bar, int64_t bytesATile) {
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), bar, mul(tiles, constI32(bytesATile)),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
    };
    // Each active tile's boxes of the given maps, each box completing on its
    // mbarrier.
    struct Box {
      KernelArg map;
      int64_t offset;
      Value bar;
    };
    auto issueBoxes = [&](std::initializer_list<Box> boxes) {
      for (int64_t g = 0; g < config::kAttentionMaxKvGroups; ++g) {
        Value gv = constI32(g);
        Value on =
            both(lessU(gv, mv.groups), notZero(bitAnd(shrU(active, g), 1)));
        emitIf(on, [&] {
          Value slot = add(mul(stage, mv.groups), gv);
          // Coordinates innermost first: d, key, h, b.
          SmallVector<Value> coords = {
              constI32(0), mul(add(firstTile, gv), kKeys), mv.h, mv.b};
          for (const Box &box : boxes) {
            Value dst = LLVM::AddrSpaceCastOp::create(
                b, loc, clusterPtr,
                elementPtr(mv.kv, bf16,
                           add(mul(slot, kSlotElems), constI32(box.offset))));
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                b, loc, dst, arg(box.map), coords, box.bar, ValueRange{},
                Value(), Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
                NVVM::CTAGroupKindAttr(), Value());
          }
        });
      }
    };
    if (!splitKvBarriers) {
      // One mbarrier: each tile's K and V boxes complete on it.
      expect(kBar, config::kAttentionSlotBytes);
      issueBoxes({{kKMap, 0, kBar}, {kVMap, kTileElems, kBar}});
      return;
    }
    // g4_tma_kv: every tile's K box first, on K's mbarrier, then every V
    // box, on V's.
    Value vBar = tripBarrier(stage, /*v=*/true);
    expect(kBar, config::kAttentionSlotBytes / 2);
    expect(vBar, config::kAttentionSlotBytes / 2);
    issueBoxes({{kKMap, 0, kBar}});
    issueBoxes({{kVMap, kTileElems, vBar}});
  });
}

/// Copies the tiles of trip `trip` whose bit is set in `active` into the
/// slots of `stage`: thread 0 by the TMA engine, or every thread taking part
/// in every tile, as one cp.async group.
void AttentionEmitter::issueTrip(Value trip, Value stage, Value active) {
  Value firstTile = add(mv.tBegin, mul(trip, mv.groups));
  auto copyByThreads = [&] {
    auto loop = scf::ForOp::create(b, loc, constI32(0), mv.groups, constI32(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value g = loop.getInductionVar();
      Value on = notZero(bitAnd(arith::ShRUIOp::create(b, loc, active, g), 1));
      emitIf(on, [&] {
        copyTile(add(firstTile, g), add(mul(stage, mv.groups), g));
      });
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };
  if (tmaCopies)
    issueTensorTrip(firstTile, stage, active);
  else
    copyByThreads();
}

void AttentionEmitter::waitTrip(Value trip, Value stage, int64_t stages) {
  // Q's cp.async group (and on the cp.async path the trip's) has landed.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (!tmaCopies)
    return;
  // Stage s serves trips s, s + stages, ...: the n-th has parity n % 2.
  // With split barriers this is K's; P V waits for V's (computeTile).
  emitSpinOnParity(b, loc, tripBarrier(stage), tripParity(trip, stages));
}

} // namespace moss::attention
