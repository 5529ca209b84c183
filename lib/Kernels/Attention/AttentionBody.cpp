//===- AttentionBody.cpp - The walk of an attention kernel function ------===//
//
// The body of one attention function (the design is described at the top
// of AttentionKernelBuilder.cpp): the CTA's frame (its rows, its split's
// key tiles, the lane's offsets, the mask's paths), the Q copy, the trips
// over the key tiles with their copies, mask bits and tile computes, and
// the merges and stores at the end.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"

using namespace mlir;

namespace moss::attention {

std::array<Value, 2> AttentionEmitter::placeRows(Frame &f, Value lane,
                                                 Value row0) {
  f.g = divU(lane, 4);
  f.t = remU(lane, 4);
  Value tq = arg(kT);
  Value lastRow = sub(tq, constI32(1));
  std::array<Value, 2> rowValid;
  for (int64_t r = 0; r < 2; ++r) {
    f.row[r] = add(add(row0, f.g), 8 * r);
    rowValid[r] = lessU(f.row[r], tq);
    f.safeRow[r] = toI64(select(rowValid[r], f.row[r], lastRow));
  }
  f.laneCol = toI64(mul(f.t, 2));
  return rowValid;
}

void AttentionEmitter::emitBody(StringRef smemName) {
  const int64_t kvGroups = groupCount;
  Frame f;
  f.tid = threadIdx();
  f.threads = blockDim();
  f.laneId = remU(f.tid, 32);
  Value warp = divU(f.tid, 32);
  Value heads = arg(kH), tq = arg(kT), s = arg(kS);
  Value bh = blockIdx(gpu::Dimension::x);
  f.b = divU(bh, heads);
  f.h = remU(bh, heads);
  // A one-pass function walks every key tile whatever gridDim.z says.
  f.z = split ? blockIdx(gpu::Dimension::z) : constI32(0);
  f.groups = constI32(kvGroups);
  // The launch rule's row warps, min(4, ceil(T / 16)); the warps past
  // rowWarps * groups are copy warps.
  if (config::attentionHasCopyWarps(kvGroups)) {
    f.rowWarps = minU(divU(add(tq, constI32(kRowsPerWarp - 1)), kRowsPerWarp),
                      constI32(config::kAttentionMaxWarps));
    f.computeThreads = mul(mul(f.rowWarps, f.groups), 32);
    f.computes = lessU(f.tid, f.computeThreads);
  } else {
    f.rowWarps = divU(divU(f.threads, 32), f.groups);
    f.computeThreads = f.threads;
    f.computes = constBool(true);
  }
  // With one group every compute warp is a row warp of group 0: constants,
  // so no group bookkeeping stays live through the trips. (A copy warp's
  // rows are past its row block's and never valid.)
  f.rowWarp = kvGroups == 1 ? warp : remU(warp, f.rowWarps);
  f.group = kvGroups == 1 ? constI32(0) : divU(warp, f.rowWarps);
  const bool twoStages = config::attentionStages(kvGroups) == 2;
  Value row0 =
      add(mul(blockIdx(gpu::Dimension::y), mul(f.rowWarps, kRowsPerWarp)),
          mul(f.rowWarp, kRowsPerWarp));
  Value warpHasRows = both(lessU(row0, tq), f.computes);
  // Short chunks: a warp without rows g + 8 (T <= row0 + 8, every decode
  // step) skips their mask bytes.
  if (kvGroups > 1)
    f.warpHasHighRows = lessU(add(row0, 8), tq);
  std::array<Value, 2> rowValid = placeRows(f, f.laneId, row0);
  for (Value &valid : rowValid)
    valid = both(valid, f.computes);

  // This split's key tiles [tBegin, tBegin + nTiles), in trips of G.
  Value keyTiles = divU(add(s, kKeys - 1), kKeys);
  Value splits = split ? arg(kSplits) : constI32(1);
  Value perSplit = divU(sub(add(keyTiles, splits), constI32(1)), splits);
  f.tBegin = mul(f.z, perSplit);
  Value tEnd = minU(add(f.tBegin, perSplit), keyTiles);
  f.nTiles = select(lessU(f.tBegin, tEnd), sub(tEnd, f.tBegin), constI32(0));
  f.warpTiles = select(f.computes, f.nTiles, constI32(0));
  Value trips = divU(sub(add(f.nTiles, f.groups), constI32(1)), f.groups);

  // Q, once, into the warp's own 16 x 64 area after the slots (chunks
  // swizzled like K's) by cp.async, so no load latency blocks the K/V
  // copies behind it: lane l copies chunk l % 8 of rows l / 8 + 4i. Rows
  // past T read row T-1 and are never stored.
  Value b64 = toI64(f.b), h64 = toI64(f.h);
  f.kv = LLVM::AddressOfOp::create(b, loc, sharedPtr, smemName);
  Value slotElems =
      constI32(config::attentionStages(kvGroups) * kvGroups * kSlotElems);
  Value qOff = add(slotElems, mul(warp, kRowsPerWarp * kD));
  f.mergeBase = divU(
      add(slotElems, mul(divU(f.computeThreads, 32), kRowsPerWarp * kD)), 2);
  if (tmaCopies) {
    // The trips' mbarriers after the key groups' merge entries (a one-pass
    // function has no split area).
    assert(!split && "TMA copies only in one-pass functions");
    f.tripBarriers = groupEntriesEnd(f).first;
    // Shared memory only, so before the wait: it overlaps the previous
    // kernel.
    initTripBarriers(f, config::attentionStages(kvGroups));
  }
  // Programmatic dependent launch (docs/kernel-abi.md, ABI 4): every read of
  // q, k, v and mask and every write follow this wait, so a
  // programmatic launch overlaps only the launch and the index math above
  // with the previous kernel. Without one it does nothing.
  emitIf(notZero(flag(config::kAttentionFlagEarlyTrigger)), [&] {
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  });
  NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Value qHead = elementPtr(
      arg(kQ), bf16, add(mul(b64, arg(kQStrideB)), mul(h64, arg(kQStrideH))));
  if (split)
    armSplitBarrier(f);
  {
    Value chunk = remU(f.laneId, kChunksPerRow);
    Value firstRow = divU(f.laneId, kChunksPerRow);
    Value lastRow = sub(tq, constI32(1));
    // Copy warps have no Q rows (nor room for them).
    emitIf(f.computes, [&] {
      for (int64_t i = 0; i < kRowsPerWarp * kChunksPerRow / 32; ++i) {
        Value row = add(firstRow, 4 * i); // row % 8 = firstRow % 8 + 4 (i % 2)
        Value tRow = minU(add(row0, row), lastRow);
        Value src = elementPtr(
            qHead, bf16,
            add(mul(toI64(tRow), arg(kQStrideT)), toI64(mul(chunk, 8))));
        Value phys = bitXor(chunk, swizzle(bitAnd(row, 7)));
        Value dst = add(qOff, add(mul(row, kD), mul(phys, 8)));
        NVVM::CpAsyncOp::create(b, loc, elementPtr(f.kv, bf16, dst), src, 16,
                                NVVM::LoadCacheModifierKind::CG,
                                /*cpSize=*/Value());
      }
    });
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    Value lane = f.laneId;
    Value qRowInTile = add(remU(lane, 8), mul(bitAnd(shrU(lane, 3), 1), 8));
    Value qChunk = bitXor(shrU(lane, 4), swizzle(remU(lane, 8)));
    f.qLaneOff = add(add(qOff, mul(qRowInTile, kD)), mul(qChunk, 8));
  }
  f.kHead = elementPtr(arg(kK), bf16,
                       add(mul(b64, arg(kKStrideB)), mul(h64, arg(kKStrideH))));
  f.vHead = elementPtr(arg(kV), bf16,
                       add(mul(b64, arg(kVStrideB)), mul(h64, arg(kVStrideH))));
  if (positions) {
    // The mask from positions (positionMaskBits): the row's slot positions
    // and the positions of the lane's query rows.
    f.slotRow = elementPtr(arg(kSlotPositions), i64,
                           mul(b64, arg(kSlotPositionsStrideB)));
    Value qRow = elementPtr(arg(kQueryPositions), i64,
                            mul(b64, arg(kQueryPositionsStrideB)));
    for (int64_t r = 0; r < 2; ++r)
      f.qPos[r] = loadReadOnly(i64, elementPtr(qRow, i64, f.safeRow[r]), 8);
    f.slotPairs =
        isZero(bitAnd(LLVM::PtrToIntOp::create(b, loc, i64, f.slotRow), 15));
  } else {
    Value maskHead = elementPtr(arg(kMask), i8, mul(b64, arg(kMaskStrideB)));
    for (int64_t r = 0; r < 2; ++r)
      f.maskRow[r] =
          elementPtr(maskHead, i8, mul(f.safeRow[r], arg(kMaskStrideT)));
  }
  f.rowBits =
      bitOr(select(rowValid[0], constI32(static_cast<int32_t>(rowMaskBits(0))),
                   constI32(0)),
            select(rowValid[1], constI32(static_cast<int32_t>(rowMaskBits(1))),
                   constI32(0)));
  if (!positions) {
    // Tiles of a mask contiguous in S load as words (quadMaskWords); full
    // ones as one 16-byte vector per lane and row when the base and the row
    // strides are multiples of 16 (a tile starts at a multiple of 64 keys):
    // S = 400 rows, not S = 125 or 250.
    f.maskUnitStride =
        cmp(arith::CmpIPredicate::eq, arg(kMaskStrideS), constI64(1));
    Value maskBase = LLVM::PtrToIntOp::create(b, loc, i64, arg(kMask));
    Value alignBits =
        bitOr(maskBase, bitOr(arg(kMaskStrideB), arg(kMaskStrideT)));
    f.maskAligned = isZero(bitAnd(alignBits, 15));
    // The tail tile on the word path too (tailWords), in the one-pass
    // one-group function (long chunks): its covering words stop at each row's
    // last word, which the mask's own bytes (the first element to the last,
    // whatever the strides) must hold whole. Only warps holding the mask's
    // last row, where that row does not end on a word boundary, take the byte
    // path instead. Words pay over bytes where a function walks many trips (the
    // long chunks); in the functions that serve decode steps, a trip or two,
    // the extra address work of the word path outweighs the loads it saves.
    if (tailWords) {
      Value one64 = constI64(1), wordMask = constI64(~int64_t{3});
      Value lastKey = sub(toI64(s), one64);
      Value maskEnd = maskBase;
      const std::pair<KernelArg, KernelArg> dims[] = {
          {kB, kMaskStrideB}, {kT, kMaskStrideT}, {kS, kMaskStrideS}};
      for (auto [size, stride] : dims)
        maskEnd = add(maskEnd, mul(sub(toI64(arg(size)), one64), arg(stride)));
      Value safeWord = bitAnd(sub(maskEnd, constI64(3)), wordMask);
      Value inside = constBool(true);
      for (int64_t r = 0; r < 2; ++r) {
        f.maskLastWord[r] = bitAnd(
            add(LLVM::PtrToIntOp::create(b, loc, i64, f.maskRow[r]), lastKey),
            wordMask);
        inside = both(inside, cmp(arith::CmpIPredicate::ule, f.maskLastWord[r],
                                  safeWord));
      }
      f.maskTailWords = warpAll(inside);
    }
  }
  f.scaleLog2 = fmul(arg(kScale), constF32(kLog2e));
  Value noSkip = isZero(flag(config::kAttentionFlagSkipEmptyTiles));

  // ldmatrix: lane l addresses row l % 8 of 8x8 block l / 8. K: block i is
  // d chunk 4c + i of key group n. V (transposed): blocks 1 and 3 are keys
  // 8..15 of the k-step, blocks 2 and 3 the second d group of the pair.
  Value matrix = divU(f.laneId, 8), matrixRow = remU(f.laneId, 8);
  // Only the first chunk's offsets stay live: the others differ by an XOR
  // of the chunk bits (computeTile), which frees registers for the trips.
  f.kLaneOff =
      add(mul(matrixRow, kD), mul(kvChunk(matrix, matrixRow, tmaCopies), 8));
  Value vRow = add(mul(bitAnd(matrix, 1), 8), matrixRow);
  f.vLaneOff = add(mul(vRow, kD),
                   mul(kvChunk(shrU(matrix, 1), matrixRow, tmaCopies), 8));

  // Prologue: trip 0's copies (at once unless tiles may be skipped) and the
  // mask bits of this warp's tiles of trips 0 and 1. The grouped functions
  // (short grids: decode steps, first chunks) issue trip 0's mask loads
  // first, so that their latency hides behind the copies' issue, and pack
  // them after. It costs two-trip walks of two row warps with unaligned
  // mask rows; choosing the order by trip count at run time lost the gains
  // (the loads twice, more code), and so did loading trip 1's mask early
  // too.
  Value zeroI32 = constI32(0), oneI32 = constI32(1);
  Value hasTrip = lessU(zeroI32, trips);
  std::optional<PendingMask> pending0;
  if (kvGroups > 1)
    pending0 = loadMaskBits(f, myTile(f, zeroI32), myTileValid(f, zeroI32));
  emitIf(both(noSkip, hasTrip),
         [&] { issueTrip(f, zeroI32, zeroI32, validGroups(f, zeroI32)); });
  Value bits0 = pending0
                    ? packMaskBits(f, *pending0)
                    : maskBits(f, myTile(f, zeroI32), myTileValid(f, zeroI32));
  // Trip t's mask bits only where trip t exists: the branch is uniform over
  // the CTA, and a decode step's one trip (the last two of any walk) need
  // not pack the zeros of tiles past its end. Only in the grouped functions
  // (decode steps, short chunks): g1_split spills with the branch under its
  // 168 registers.
  auto tripMaskBits = [&](Value trip) {
    if (kvGroups == 1)
      return maskBits(f, myTile(f, trip), myTileValid(f, trip));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, lessU(trip, trips),
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(b, loc,
                         maskBits(f, myTile(f, trip), myTileValid(f, trip)));
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, constI32(0));
    return ifOp.getResult(0);
  };
  Value bits1 = tripMaskBits(oneI32);
  Value active0 = activeGroups(f, noSkip, zeroI32, bits0,
                               /*tripBarrier=*/false);
  emitIf(both(isZero(noSkip), hasTrip),
         [&] { issueTrip(f, zeroI32, zeroI32, active0); });

  // The first waits on the trip's mbarrier follow thread 0's
  // initialization.
  if (tmaCopies)
    barrier();

  SmallVector<Value> init = {bits0, bits1, active0};
  Value minusInf = negInf(), zeroF = constF32(0.0);
  init.append({minusInf, minusInf, zeroF, zeroF});
  init.append(kDGroups * 4, zeroF);
  auto loop = scf::ForOp::create(b, loc, zeroI32, trips, oneI32, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value k = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value bitsCur = carried[0], bitsNext = carried[1], activeCur = carried[2];
    RowState state = RowState::fromValues(carried.drop_front(3));

    // Two stages alternate (trip k uses stage k % 2); one stage takes every
    // trip.
    Value stage = twoStages ? bitAnd(k, 1) : zeroI32;
    waitTrip(f, k, stage, twoStages ? 2 : 1);
    // The groups' barriers make every thread's copies of this trip visible
    // and, with two stages, free the other stage (computed last trip).
    Value next = add(k, 1);
    Value hasNext = lessU(next, trips);
    Value activeNext = activeGroups(f, noSkip, next, bitsNext,
                                    /*tripBarrier=*/true);
    if (twoStages)
      emitIf(hasNext,
             [&] { issueTrip(f, next, bitXor(stage, oneI32), activeNext); });
    // Trip k+2's mask: lines into L1 now, loaded and packed after the
    // compute (holding its 32 bytes across the compute costs 32 registers).
    Value tripAfter = add(k, 2);
    Value tileAfter = myTile(f, tripAfter);
    prefetchMask(f, tileAfter);

    Value mine =
        notZero(bitAnd(arith::ShRUIOp::create(b, loc, activeCur, f.group), 1));
    // A warp whose rows allow no key of the tile skips its compute: such a
    // tile changes nothing (see the header), so this is exact. The
    // one-group function (long chunks, large grids) does so whatever
    // skip_empty_tiles says; the
    // grouped ones only with it (the extra vote spilled them under the
    // 168-register cap they had then; not re-measured since).
    Value anyKey = warpAny(notZero(bitsCur));
    Value compute = both(both(mine, warpHasRows),
                         kvGroups == 1 ? anyKey : either(noSkip, anyKey));
    // g4_tma_kv: the trip's V mbarrier and phase, spun on before P V and
    // after the tile.
    Value vBarrier, vParity;
    if (splitKvBarriers) {
      vBarrier = tripBarrier(f, stage, /*v=*/true);
      vParity = tripParity(k, twoStages ? 2 : 1);
    }
    SmallVector<Value> stateValues = state.values();
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(stateValues).getTypes(),
                                  compute, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToEnd(ifOp.thenBlock());
      Value slot = add(mul(stage, f.groups), f.group);
      // A tile every row of the warp sees whole (most tiles of a full
      // window) skips the 32 mask selects of each lane (not in the
      // two-group function, whose decode steps it made slower).
      Value whole =
          kvGroups != 2
              ? warpAll(cmp(arith::CmpIPredicate::eq, bitsCur, f.rowBits))
              : Value();
      scf::YieldOp::create(
          b, loc,
          computeTile(f, slot, bitsCur, whole, state, vBarrier, vParity)
              .values());
      b.setInsertionPointToEnd(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, stateValues);
    }
    // Every thread sees the trip's V bytes land, also where it computed
    // nothing: before the next trip's copies reuse the barrier and before
    // the CTA may exit with boxes in flight to its shared memory.
    if (splitKvBarriers)
      emitSpinOnParity(b, loc, vBarrier, vParity);
    // One stage: the next trip overwrites the slots just computed.
    if (!twoStages)
      emitIf(hasNext, [&] {
        barrier();
        issueTrip(f, next, zeroI32, activeNext);
      });
    Value bitsAfter = tripMaskBits(tripAfter);
    SmallVector<Value> yielded = {bitsNext, bitsAfter, activeNext};
    llvm::append_range(yielded, ifOp.getResults());
    scf::YieldOp::create(b, loc, yielded);
  }
  // The next kernel may be scheduled once every CTA got past its last key
  // tile (or triggered at the start, kAttentionFlagEarlyTrigger: a CTA's
  // first trigger counts, as when each of its threads executes one).
  // Triggering here rather than at the start keeps a waiting grid from
  // taking the SM slots this grid's later CTAs need (the launch rule's early
  // trigger is for grids that leave slots free). Unconditional, so that
  // no flag stays live across the key loop (g1_split spilled with one).
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
  RowState walked = RowState::fromValues(loop.getResults().drop_front(3));
  RowState final = kvGroups > 1 ? mergeGroups(f, walked) : walked;
  // Group 0's warps hold the merged rows; the others only take part in the
  // barriers of the store.
  Value writer = both(isZero(f.group), f.computes);
  for (int64_t r = 0; r < 2; ++r)
    f.rowValid[r] = both(rowValid[r], writer);
  if (split)
    mergeAndStoreSplits(f, final);
  else
    storeResult(f, final);
}

} // namespace moss::attention
