//===- AttentionMask.cpp - Attention mask loads and bits ------------------===//
//
// How a lane loads its rows' mask bytes for its packed mask bits
// (AttentionMaskBits.cpp packs them): the word path (16 bytes a row a lane)
// for full tiles of a mask contiguous in S, the byte path for the rest, and
// the L1 prefetch of a later tile's lines.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"

using namespace mlir;

namespace moss::attention {

/// Loads the lane's 32 mask bytes of key tile `tile`: rows g, g+8 and keys
/// 8n + 2t + e, byte 4n + 2r + e (the accumulator's c index is 2r + e). The
/// byte path of maskBits (tail tiles and strided masks): every key is
/// clamped into range and the real ones are reported in `keyBits`; a tile
/// past the split's end loads nothing. Packed later, after the compute, so
/// the loads' latency hides behind it.
MaskLoads AttentionEmitter::loadMask(const Frame &f, Value tile,
                                     Value tileValid) {
  Value s = arg(kS);
  Value keyBase = laneKeyBase(f, tile);
  SmallVector<Type> types(maskLoadValues(f), i8);
  if (f.warpHasHighRows)
    types.back() = i32;
  types.push_back(i32);
  auto ifOp = scf::IfOp::create(b, loc, types, tileValid,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    // keyBits interleaved with the loads where rows g + 8 are unguarded (the
    // one-group function): that order is the one ptxas fits in its 168
    // registers.
    Value keyBits = constI32(0);
    SmallVector<Value> bytes =
        loadMaskRows(f, [&](int64_t n, int64_t r, int64_t e) {
          Value key = add(keyBase, 8 * n + e);
          Value byte = loadReadOnly(
              i8, elementPtr(f.maskRow[r], i8, clampedMaskOffset(key)), 1);
          if (!f.warpHasHighRows)
            keyBits =
                bitOr(keyBits, shl(toI32(lessU(key, s)), maskBit(n, r, e)));
          return byte;
        });
    if (f.warpHasHighRows)
      for (int64_t n = 0; n < kKeyGroups; ++n)
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t e = 0; e < 2; ++e)
            keyBits =
                bitOr(keyBits, shl(toI32(lessU(add(keyBase, 8 * n + e), s)),
                                   maskBit(n, r, e)));
    bytes.push_back(keyBits);
    scf::YieldOp::create(b, loc, bytes);
    b.setInsertionPointToEnd(ifOp.elseBlock());
    SmallVector<Value> none(
        maskLoadValues(f),
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
    if (f.warpHasHighRows)
      none.back() = constI32(0);
    none.push_back(constI32(0));
    scf::YieldOp::create(b, loc, none);
  }
  MaskLoads loads;
  int64_t count = maskLoadValues(f);
  for (int64_t i = 0; i < count; ++i)
    loads.bytes.push_back(ifOp.getResult(i));
  if (f.warpHasHighRows)
    loads.highBits = loads.bytes.pop_back_val();
  loads.keyBits = ifOp.getResult(count);
  return loads;
}

/// The 32 mask bytes in order (n, r, e), `load(n, r, e)` emitting each. With
/// f.warpHasHighRows (the grouped functions): the 16 bytes of row g in
/// order (n, e), then row g + 8's bits, loaded and packed only when a lane
/// of the warp has such a row (T > row0 + 8), else 0: decode steps (T <= 8)
/// read half the bytes.
SmallVector<Value> AttentionEmitter::loadMaskRows(
    const Frame &f, llvm::function_ref<Value(int64_t, int64_t, int64_t)> load) {
  SmallVector<Value> bytes;
  if (!f.warpHasHighRows) {
    for (int64_t n = 0; n < kKeyGroups; ++n)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          bytes.push_back(load(n, r, e));
    return bytes;
  }
  for (int64_t n = 0; n < kKeyGroups; ++n)
    for (int64_t e = 0; e < 2; ++e)
      bytes.push_back(load(n, 0, e));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, f.warpHasHighRows,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  Value high = constI32(0);
  for (int64_t n = 0; n < kKeyGroups; ++n)
    for (int64_t e = 0; e < 2; ++e)
      high = bitOr(high, shl(toI32(notZero(load(n, 1, e))), maskBit(n, 1, e)));
  scf::YieldOp::create(b, loc, high);
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, constI32(0));
  bytes.push_back(ifOp.getResult(0));
  return bytes;
}

/// Full tiles of a mask contiguous in S take the word path (quadMaskWords:
/// 2 or 10 word loads instead of 32 byte loads); the rest loadMask's byte
/// path. Either way warp-uniform: a tile is per warp, strides per launch.
/// (The grouped functions, the only users, have no tail word path.)
PendingMask AttentionEmitter::loadMaskBits(const Frame &f, Value tile,
                                           Value tileValid) {
  PendingMask pending;
  if (positions) {
    pending.bits = positionBits(f, tile, tileValid);
    return pending;
  }
  pending.fast = wordPathTile(f, tile, tileValid);
  // One branch yields its own values and zeros in the other's places.
  SmallVector<Type> types(kRawMaskValues, i32);
  SmallVector<Value> wordZeros(kRawMaskValues, constI32(0)), byteZeros;
  for (int64_t i = 0; i < maskLoadValues(f); ++i)
    byteZeros.push_back(
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
  if (f.warpHasHighRows)
    byteZeros.back() = constI32(0);
  byteZeros.push_back(constI32(0));
  for (Value v : byteZeros)
    types.push_back(v.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, pending.fast,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    SmallVector<Value> yielded = quadMaskWords(f, tile, /*raw=*/true);
    llvm::append_range(yielded, byteZeros);
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointToEnd(ifOp.elseBlock());
    MaskLoads loads = loadMask(f, tile, tileValid);
    yielded = wordZeros;
    llvm::append_range(yielded, loads.bytes);
    if (loads.highBits)
      yielded.push_back(loads.highBits);
    yielded.push_back(loads.keyBits);
    scf::YieldOp::create(b, loc, yielded);
  }
  ValueRange results = ifOp.getResults();
  pending.words.assign(results.begin(), results.begin() + kRawMaskValues);
  int64_t count = maskLoadValues(f);
  for (int64_t i = 0; i < count; ++i)
    pending.bytes.bytes.push_back(results[kRawMaskValues + i]);
  if (f.warpHasHighRows)
    pending.bytes.highBits = pending.bytes.bytes.pop_back_val();
  pending.bytes.keyBits = results[kRawMaskValues + count];
  return pending;
}

Value AttentionEmitter::packMaskBits(const Frame &f,
                                     const PendingMask &pending) {
  if (pending.bits)
    return pending.bits;
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, pending.fast,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(
      b, loc,
      bitAnd(exchangeMaskWords(realignMaskWords(pending.words), f.laneId, f.t),
             f.rowBits));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, packMask(pending.bytes, f.rowBits));
  return ifOp.getResult(0);
}

Value AttentionEmitter::maskBits(const Frame &f, Value tile, Value tileValid) {
  if (positions)
    return positionBits(f, tile, tileValid);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32},
                                wordPathTile(f, tile, tileValid),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(
      b, loc,
      bitAnd(exchangeMaskWords(quadMaskWords(f, tile), f.laneId, f.t),
             f.rowBits));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  auto bytePath = [&] {
    return packMask(loadMask(f, tile, tileValid), f.rowBits);
  };
  if (!tailWords) {
    scf::YieldOp::create(b, loc, bytePath());
    return ifOp.getResult(0);
  }
  auto tailIf =
      scf::IfOp::create(b, loc, TypeRange{i32}, tailPathTile(f, tileValid),
                        /*withElseRegion=*/true);
  scf::YieldOp::create(b, loc, tailIf.getResult(0));
  b.setInsertionPointToEnd(tailIf.thenBlock());
  scf::YieldOp::create(
      b, loc,
      bitAnd(bitAnd(exchangeMaskWords(quadMaskWords(f, tile, false, true),
                                      f.laneId, f.t),
                    f.rowBits),
             keyBitsOf(f, tile)));
  b.setInsertionPointToEnd(tailIf.elseBlock());
  scf::YieldOp::create(b, loc, bytePath());
  return ifOp.getResult(0);
}

Value AttentionEmitter::keyBitsOf(const Frame &f, Value tile) {
  Value keyBase = laneKeyBase(f, tile);
  Value bits = constI32(0);
  for (int64_t n = 0; n < kKeyGroups; ++n)
    for (int64_t e = 0; e < 2; ++e) {
      Value real = toI32(lessU(add(keyBase, 8 * n + e), arg(kS)));
      bits = bitOr(bits, bitOr(shl(real, maskBit(n, 0, e)),
                               shl(real, maskBit(n, 1, e))));
    }
  return bits;
}

/// Quad lane t loads keys 16t..16t+15 of rows g and g+8 (16 bytes each) as
/// 4 words a row: one vector load when every row is 16-byte aligned (S =
/// 400) and the tile full, else the 4-byte words that cover them (5 loads,
/// the fifth only when the bytes straddle it; in a tail tile each clamped to
/// the row's last word) shifted into place. Rows g + 8 only where the warp
/// has them (ifHighRows), else zeros.
SmallVector<Value> AttentionEmitter::quadMaskWords(const Frame &f, Value tile,
                                                   bool raw, bool tail) {
  Value keyOff = toI64(add(mul(tile, kKeys), mul(f.t, 16)));
  const int64_t perRow = raw ? kRawMaskValues / 2 : 4;
  // The 4-byte words covering each row's 16 bytes (raw: and the shift).
  auto coveringWords = [&](ArrayRef<int64_t> rows) {
    SmallVector<Value> words;
    for (int64_t r : rows) {
      Value rowBytes = elementPtr(f.maskRow[r], i8, keyOff);
      Value misalign = arith::TruncIOp::create(
          b, loc, i32,
          bitAnd(LLVM::PtrToIntOp::create(b, loc, i64, rowBytes), 3));
      Value base = elementPtr(rowBytes, i8, sub(constI64(0), toI64(misalign)));
      Value shift = mul(misalign, 8);
      // In the tail, words past the row's last word (keys >= S) reread that
      // word: no byte past the row is read.
      auto loadWord = [&](Value address) {
        if (tail)
          address = LLVM::IntToPtrOp::create(
              b, loc, globalPtr,
              minU(LLVM::PtrToIntOp::create(b, loc, i64, address),
                   f.maskLastWord[r]));
        return loadReadOnly(i32, address, 4);
      };
      SmallVector<Value> covering;
      for (int64_t i = 0; i < 4; ++i)
        covering.push_back(loadWord(elementPtr(base, i8, constI64(4 * i))));
      // The fifth word holds a byte of the row only when misaligned; when
      // aligned it is never used, so it reloads the first (in bounds).
      Value fifth = LLVM::SelectOp::create(
          b, loc, notZero(misalign), elementPtr(base, i8, constI64(16)), base);
      covering.push_back(loadWord(fifth));
      if (raw) {
        llvm::append_range(words, covering);
        words.push_back(shift);
        continue;
      }
      for (int64_t i = 0; i < 4; ++i)
        words.push_back(
            LLVM::FshrOp::create(b, loc, covering[i + 1], covering[i], shift));
    }
    return words;
  };
  auto loadRows = [&](ArrayRef<int64_t> rows) {
    // A tail tile takes the covering words whatever the alignment.
    if (tail)
      return coveringWords(rows);
    auto ifOp =
        scf::IfOp::create(b, loc, SmallVector<Type>(perRow * rows.size(), i32),
                          f.maskAligned, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    SmallVector<Value> words;
    for (int64_t r : rows) {
      Value rowBytes = elementPtr(f.maskRow[r], i8, keyOff);
      Value v = loadReadOnly(v4i32, rowBytes, /*alignment=*/16);
      for (int64_t i = 0; i < 4; ++i)
        words.push_back(lane(v, i));
      if (raw) // realigned by a shift of 0
        words.append({lane(v, 3), constI32(0)});
    }
    scf::YieldOp::create(b, loc, words);
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, coveringWords(rows));
    return SmallVector<Value>(ifOp.getResults());
  };
  if (!f.warpHasHighRows)
    return loadRows({0, 1});
  SmallVector<Value> words = loadRows({0});
  llvm::append_range(words, ifHighRows(f.warpHasHighRows,
                                       SmallVector<Value>(perRow, constI32(0)),
                                       [&] { return loadRows({1}); }));
  return words;
}

/// Brings the L1 lines of key tile `tile`'s mask rows g and g+8 in: the
/// quad's lanes take the first and the last key of the two rows (keys
/// clamped into range, so any tile index is safe).
void AttentionEmitter::prefetchMask(const Frame &f, Value tile) {
  // The positions functions' slot positions are a 512-byte run a tile,
  // which every lane of the CTA reads: nothing to bring in ahead.
  if (positions)
    return;
  Value key = add(mul(tile, kKeys), mul(bitAnd(f.t, 1), kKeys - 1));
  Value offset = clampedMaskOffset(key);
  Value row =
      LLVM::SelectOp::create(b, loc, lessU(f.t, 2), f.maskRow[0], f.maskRow[1]);
  NVVM::PrefetchOp::create(
      b, loc,
      NVVM::PrefetchCacheLevelAttr::get(b.getContext(),
                                        NVVM::PrefetchCacheLevel::L1),
      /*evictPriority=*/nullptr, elementPtr(row, i8, offset),
      /*predicate=*/Value(), /*tensormap=*/nullptr, /*uniform=*/nullptr,
      /*in_param_space=*/nullptr);
}

Value AttentionEmitter::positionBits(const Frame &f, Value tile,
                                     Value tileValid) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, tileValid,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  Value keyBase = laneKeyBase(f, tile);
  auto pairsIf = scf::IfOp::create(b, loc, TypeRange{i32},
                                   both(isFullTile(tile), f.slotPairs),
                                   /*withElseRegion=*/true);
  scf::YieldOp::create(b, loc, pairsIf.getResult(0));
  for (bool pairs : {true, false}) {
    b.setInsertionPointToEnd(pairs ? pairsIf.thenBlock() : pairsIf.elseBlock());
    scf::YieldOp::create(b, loc,
                         positionMaskBits(f.slotRow, keyBase, arg(kS), f.qPos,
                                          f.rowBits, pairs));
  }
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, constI32(0));
  return ifOp.getResult(0);
}

} // namespace moss::attention
