//===- AttentionMask.cpp - Attention mask loads and bits ------------------===//
//
// How a lane turns its rows' mask bytes into its packed mask bits: the word
// path (16 bytes a row a lane, exchanged in the quad) for full tiles of a
// mask contiguous in S, the byte path for the rest, and the L1 prefetch of
// a later tile's lines.
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
AttentionEmitter::MaskLoads AttentionEmitter::loadMask(Value tile,
                                                       Value tileValid) {
  Value s = arg(kS);
  Value keyBase = add(mul(tile, kKeys), mul(mv.t, 2));
  SmallVector<Type> types(maskLoadValues(), i8);
  if (mv.warpHasHighRows)
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
        loadMaskRows([&](int64_t n, int64_t r, int64_t e) {
          Value key = add(keyBase, 8 * n + e);
          Value byte = loadReadOnly(
              i8, elementPtr(mv.maskRow[r], i8, clampedMaskOffset(key)), 1);
          if (!mv.warpHasHighRows)
            keyBits =
                bitOr(keyBits, shl(toI32(lessU(key, s)), maskBit(n, r, e)));
          return byte;
        });
    if (mv.warpHasHighRows)
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
        maskLoadValues(),
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
    if (mv.warpHasHighRows)
      none.back() = constI32(0);
    none.push_back(constI32(0));
    scf::YieldOp::create(b, loc, none);
  }
  MaskLoads loads;
  int64_t count = maskLoadValues();
  for (int64_t i = 0; i < count; ++i)
    loads.bytes.push_back(ifOp.getResult(i));
  if (mv.warpHasHighRows)
    loads.highBits = loads.bytes.pop_back_val();
  loads.keyBits = ifOp.getResult(count);
  return loads;
}

/// The 32 mask bytes in order (n, r, e), `load(n, r, e)` emitting each. With
/// mv.warpHasHighRows (the grouped functions): the 16 bytes of row g in
/// order (n, e), then row g + 8's bits, loaded and packed only when a lane
/// of the warp has such a row (T > row0 + 8), else 0: decode steps (T <= 8)
/// read half the bytes.
SmallVector<Value> AttentionEmitter::loadMaskRows(
    llvm::function_ref<Value(int64_t, int64_t, int64_t)> load) {
  SmallVector<Value> bytes;
  if (!mv.warpHasHighRows) {
    for (int64_t n = 0; n < kKeyGroups; ++n)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          bytes.push_back(load(n, r, e));
    return bytes;
  }
  for (int64_t n = 0; n < kKeyGroups; ++n)
    for (int64_t e = 0; e < 2; ++e)
      bytes.push_back(load(n, 0, e));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, mv.warpHasHighRows,
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

/// Bit maskBit(n, r, e) set when that (row, key) is allowed: a nonzero byte
/// of a real key and a row below T.
Value AttentionEmitter::packMask(const MaskLoads &loads) {
  Value bits = loads.highBits ? loads.highBits : constI32(0);
  const int64_t rows = loads.highBits ? 1 : 2;
  for (auto [i, byte] : llvm::enumerate(loads.bytes)) {
    int64_t n = static_cast<int64_t>(i) / (2 * rows);
    int64_t r = (i / 2) % rows, e = i % 2;
    bits = bitOr(bits, shl(toI32(notZero(byte)), maskBit(n, r, e)));
  }
  return bitAnd(bitAnd(bits, loads.keyBits), mv.rowBits);
}

/// Full tiles of a mask contiguous in S take the word path (quadMaskWords:
/// 2 or 10 word loads instead of 32 byte loads); the rest loadMask's byte
/// path. Either way warp-uniform: a tile is per warp, strides per launch.
/// (The grouped functions, the only users, have no tail word path.)
AttentionEmitter::PendingMask AttentionEmitter::loadMaskBits(Value tile,
                                                             Value tileValid) {
  PendingMask pending;
  pending.fast = wordPathTile(tile, tileValid);
  // One branch yields its own values and zeros in the other's places.
  SmallVector<Type> types(kRawMaskValues, i32);
  SmallVector<Value> wordZeros(kRawMaskValues, constI32(0)), byteZeros;
  for (int64_t i = 0; i < maskLoadValues(); ++i)
    byteZeros.push_back(
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
  if (mv.warpHasHighRows)
    byteZeros.back() = constI32(0);
  byteZeros.push_back(constI32(0));
  for (Value v : byteZeros)
    types.push_back(v.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, pending.fast,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    SmallVector<Value> yielded = quadMaskWords(tile, /*raw=*/true);
    llvm::append_range(yielded, byteZeros);
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointToEnd(ifOp.elseBlock());
    MaskLoads loads = loadMask(tile, tileValid);
    yielded = wordZeros;
    llvm::append_range(yielded, loads.bytes);
    if (loads.highBits)
      yielded.push_back(loads.highBits);
    yielded.push_back(loads.keyBits);
    scf::YieldOp::create(b, loc, yielded);
  }
  ValueRange results = ifOp.getResults();
  pending.words.assign(results.begin(), results.begin() + kRawMaskValues);
  int64_t count = maskLoadValues();
  for (int64_t i = 0; i < count; ++i)
    pending.bytes.bytes.push_back(results[kRawMaskValues + i]);
  if (mv.warpHasHighRows)
    pending.bytes.highBits = pending.bytes.bytes.pop_back_val();
  pending.bytes.keyBits = results[kRawMaskValues + count];
  return pending;
}

Value AttentionEmitter::packMaskBits(const PendingMask &pending) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, pending.fast,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(
      b, loc,
      bitAnd(exchangeMaskWords(realignMaskWords(pending.words)), mv.rowBits));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, packMask(pending.bytes));
  return ifOp.getResult(0);
}

Value AttentionEmitter::maskBits(Value tile, Value tileValid) {
  auto ifOp =
      scf::IfOp::create(b, loc, TypeRange{i32}, wordPathTile(tile, tileValid),
                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(
      b, loc, bitAnd(exchangeMaskWords(quadMaskWords(tile)), mv.rowBits));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  auto bytePath = [&] { return packMask(loadMask(tile, tileValid)); };
  if (!tailWords) {
    scf::YieldOp::create(b, loc, bytePath());
    return ifOp.getResult(0);
  }
  auto tailIf =
      scf::IfOp::create(b, loc, TypeRange{i32}, tailPathTile(tile, tileValid),
                        /*withElseRegion=*/true);
  scf::YieldOp::create(b, loc, tailIf.getResult(0));
  b.setInsertionPointToEnd(tailIf.thenBlock());
  scf::YieldOp::create(
      b, loc,
      bitAnd(bitAnd(exchangeMaskWords(quadMaskWords(tile, false, true)),
                    mv.rowBits),
             keyBitsOf(tile)));
  b.setInsertionPointToEnd(tailIf.elseBlock());
  scf::YieldOp::create(b, loc, bytePath());
  return ifOp.getResult(0);
}

Value AttentionEmitter::keyBitsOf(Value tile) {
  Value keyBase = add(mul(tile, kKeys), mul(mv.t, 2));
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
SmallVector<Value> AttentionEmitter::quadMaskWords(Value tile, bool raw,
                                                   bool tail) {
  Value keyOff = toI64(add(mul(tile, kKeys), mul(mv.t, 16)));
  const int64_t perRow = raw ? kRawMaskValues / 2 : 4;
  // The 4-byte words covering each row's 16 bytes (raw: and the shift).
  auto coveringWords = [&](ArrayRef<int64_t> rows) {
    SmallVector<Value> words;
    for (int64_t r : rows) {
      Value rowBytes = elementPtr(mv.maskRow[r], i8, keyOff);
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
                   mv.maskLastWord[r]));
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
                          mv.maskAligned, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    SmallVector<Value> words;
    for (int64_t r : rows) {
      Value rowBytes = elementPtr(mv.maskRow[r], i8, keyOff);
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
  if (!mv.warpHasHighRows)
    return loadRows({0, 1});
  SmallVector<Value> words = loadRows({0});
  llvm::append_range(words, ifHighRows(SmallVector<Value>(perRow, constI32(0)),
                                       [&] { return loadRows({1}); }));
  return words;
}

/// quadMaskWords' raw values to its 8 words.
SmallVector<Value> AttentionEmitter::realignMaskWords(ArrayRef<Value> raw) {
  SmallVector<Value> words;
  const int64_t perRow = kRawMaskValues / 2;
  for (int64_t r = 0; r < 2; ++r) {
    ArrayRef<Value> row = raw.slice(perRow * r, perRow);
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(LLVM::FshrOp::create(b, loc, row[i + 1], row[i], row[5]));
  }
  return words;
}

/// The lane's 8 words (4 a row, quadMaskWords: keys 16t..16t+15 of rows g
/// and g+8) to its mask bits: each nonzero byte becomes one bit of a word X
/// (bit 8p + 4r + i for byte p of 32-bit word i of row r), and the quad
/// exchanges X: from lane t' a lane needs keys 16t' + 8h + 2t + e, i.e.
/// words i = 2h + t/2 and bytes p = 2(t%2) + e, which one shift by
/// 16(t%2) + t/2 and the mask 0x5555 select (at bit 8e + 4r + 2h). Lane t'
/// then lands at + t'%2 + 16(t'/2): maskBit's order.
Value AttentionEmitter::exchangeMaskWords(ArrayRef<Value> rowWords) {
  Value x = constI32(0);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t i = 0; i < 4; ++i) {
      Value w = rowWords[4 * r + i];
      // Bit 7 of each byte: set iff the byte is nonzero.
      Value low = add(bitAnd(w, 0x7f7f7f7f), 0x7f7f7f7f);
      Value high = bitAnd(bitOr(low, w), static_cast<int32_t>(0x80808080u));
      x = bitOr(x, shrU(high, 7 - (4 * r + i)));
    }
  }
  Value quadBase = bitAnd(mv.laneId, ~int64_t{3});
  Value shift = add(mul(bitAnd(mv.t, 1), 16), shrU(mv.t, 1));
  Value bits = constI32(0);
  for (int64_t from = 0; from < 4; ++from) {
    Value theirs = gpu::ShuffleOp::create(b, loc, x, add(quadBase, from),
                                          constI32(32), gpu::ShuffleMode::IDX)
                       .getShuffleResult();
    Value mine = bitAnd(arith::ShRUIOp::create(b, loc, theirs, shift), 0x5555);
    bits = bitOr(bits, shl(mine, from % 2 + 16 * (from / 2)));
  }
  return bits;
}

/// Brings the L1 lines of key tile `tile`'s mask rows g and g+8 in: the
/// quad's lanes take the first and the last key of the two rows (keys
/// clamped into range, so any tile index is safe).
void AttentionEmitter::prefetchMask(Value tile) {
  Value key = add(mul(tile, kKeys), mul(bitAnd(mv.t, 1), kKeys - 1));
  Value offset = clampedMaskOffset(key);
  Value row = LLVM::SelectOp::create(b, loc, lessU(mv.t, 2), mv.maskRow[0],
                                     mv.maskRow[1]);
  NVVM::PrefetchOp::create(
      b, loc,
      NVVM::PrefetchCacheLevelAttr::get(b.getContext(),
                                        NVVM::PrefetchCacheLevel::L1),
      /*evictPriority=*/nullptr, elementPtr(row, i8, offset),
      /*predicate=*/Value(), /*tensormap=*/nullptr, /*uniform=*/nullptr,
      /*in_param_space=*/nullptr);
}

} // namespace moss::attention
