//===- AttentionCopies.cpp - K/V tiles into shared memory -----------------===//
//
// The copies of a key tile's K and V rows into a slot: 16-byte cp.async by
// every thread (full tiles at constant offsets, or any tile with the rows
// past S zero-filled), or thread 0's boxes of the TMA engine completing on
// the stage's mbarrier. Either way the rows land swizzled (kvChunk), so
// each ldmatrix phase hits 32 distinct banks.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionPieces.h"

using namespace mlir;

namespace moss::attention {

Value AttentionPieces::kvChunk(Value chunk, Value row, bool tmaSwizzle) {
  // The TMA engine's 128-byte swizzle is chunk ^ (row % 8); the cp.async
  // slots use Q's swizzle.
  return bitXor(chunk, tmaSwizzle ? bitAnd(row, 7) : swizzle(bitAnd(row, 7)));
}

/// Full tile `tile` into `slot` by a CTA of `threads` threads: thread i
/// copies chunk i % 8 of key rows i / 8 + j * threads / 8, which keep the
/// row's swizzle (threads / 8 is a multiple of 8), so only the global
/// pointers step.
void AttentionPieces::copyFullTile(const KvCopySource &src, Value tile,
                                   Value slot, int64_t threads) {
  int64_t rowsPerPass = threads / kChunksPerRow;
  assert(rowsPerPass % 8 == 0 && kKeys % rowsPerPass == 0);
  Value chunk = bitAnd(src.tid, kChunksPerRow - 1);
  Value row = shrU(src.tid, 3);
  Value key = toI64(add(mul(tile, kKeys), row));
  Value srcCol = toI64(mul(chunk, 8));
  Value physChunk = kvChunk(chunk, row, src.tmaSwizzle);
  Value dst = add(mul(slot, kSlotElems), add(mul(row, kD), mul(physChunk, 8)));
  struct Operand {
    Value head, stride;
    int64_t smemOffset;
  };
  for (const Operand &op : {Operand{src.kHead, src.kStride, 0},
                            Operand{src.vHead, src.vStride, kTileElems}}) {
    Value from = elementPtr(op.head, bf16, add(mul(key, op.stride), srcCol));
    Value step = mul(op.stride, rowsPerPass);
    for (int64_t j = 0; j < kKeys / rowsPerPass; ++j) {
      if (j > 0)
        from = elementPtr(from, bf16, step);
      Value smem = elementPtr(src.kv, bf16,
                              add(dst, op.smemOffset + j * rowsPerPass * kD));
      NVVM::CpAsyncOp::create(b, loc, smem, from, 16,
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
void AttentionPieces::copyTileAnyRows(const KvCopySource &src, Value s,
                                      Value tile, Value slot) {
  Value chunk = bitAnd(src.tid, kChunksPerRow - 1);
  Value row0 = shrU(src.tid, 3);
  Value rowStep = shrU(src.threads, 3);
  Value pairStep = mul(rowStep, 2);
  Value keyBase = mul(tile, kKeys);
  Value full = isFullTile(tile, s);
  Value srcCol = toI64(mul(chunk, 8));
  Value stageBase = mul(slot, kSlotElems);
  struct Operand {
    Value head, stride;
    int64_t smemOffset;
  };
  const Operand operands[] = {{src.kHead, src.kStride, 0},
                              {src.vHead, src.vStride, kTileElems}};
  // Carried: per slot j, the K and V source pointers and the smem offset.
  SmallVector<Value> init, step;
  for (int64_t slot = 0; slot < 2; ++slot) {
    Value row = add(row0, mul(rowStep, slot));
    for (const Operand &op : operands)
      init.push_back(
          elementPtr(op.head, bf16,
                     add(mul(toI64(add(keyBase, row)), op.stride), srcCol)));
    Value physChunk = kvChunk(chunk, row, src.tmaSwizzle);
    init.push_back(add(stageBase, add(mul(row, kD), mul(physChunk, 8))));
  }
  for (const Operand &op : operands)
    step.push_back(mul(toI64(pairStep), op.stride));
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
          Value smem = elementPtr(src.kv, bf16, add(dst, op.smemOffset));
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

Value AttentionPieces::tripBarrier(Value kv, Value tripBarriers, Value stage,
                                   bool v) {
  // 8 bytes a stage: 2 floats; the V mbarrier of one stage after its K one
  // (the 16 bytes kAttentionTripBarrierBytes reserves).
  return elementPtr(kv, f32, add(tripBarriers, add(mul(stage, 2), v ? 2 : 0)));
}

void AttentionPieces::issueTensorTrip(const TensorTripSource &src,
                                      Value firstTile, Value stage,
                                      Value active) {
  emitIf(isZero(src.tid), [&] {
    // The slots were last read through the generic proxy (ldmatrix, ordered
    // before this by a CTA barrier); the TMA writes through the async one.
    emitAsyncProxyFence(b, loc);
    Value kBar = tripBarrier(src.kv, src.tripBarriers, stage, false);
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
      Value map;
      int64_t offset;
      Value bar;
    };
    auto issueBoxes = [&](std::initializer_list<Box> boxes) {
      for (int64_t g = 0; g < config::kAttentionMaxKvGroups; ++g) {
        Value gv = constI32(g);
        Value on =
            both(lessU(gv, src.groups), notZero(bitAnd(shrU(active, g), 1)));
        emitIf(on, [&] {
          Value slot = add(mul(stage, src.groups), gv);
          // Coordinates innermost first: d, key, h, b.
          SmallVector<Value> coords = {
              constI32(0), mul(add(firstTile, gv), kKeys), src.h, src.b};
          for (const Box &box : boxes) {
            Value dst = LLVM::AddrSpaceCastOp::create(
                b, loc, clusterPtr,
                elementPtr(src.kv, bf16,
                           add(mul(slot, kSlotElems), constI32(box.offset))));
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                b, loc, dst, box.map, coords, box.bar, ValueRange{}, Value(),
                Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
                NVVM::CTAGroupKindAttr(), Value());
          }
        });
      }
    };
    if (!src.splitKv) {
      // One mbarrier: each tile's K and V boxes complete on it.
      expect(kBar, config::kAttentionSlotBytes);
      issueBoxes({{src.kMap, 0, kBar}, {src.vMap, kTileElems, kBar}});
      return;
    }
    // g4_tma_kv: every tile's K box first, on K's mbarrier, then every V
    // box, on V's.
    Value vBar = tripBarrier(src.kv, src.tripBarriers, stage, /*v=*/true);
    expect(kBar, config::kAttentionSlotBytes / 2);
    expect(vBar, config::kAttentionSlotBytes / 2);
    issueBoxes({{src.kMap, 0, kBar}});
    issueBoxes({{src.vMap, kTileElems, vBar}});
  });
}

} // namespace moss::attention
