//===- AttentionMaskBits.cpp - A lane's packed mask bits ------------------===//
//
// The pieces that turn mask bytes or words into a lane's packed mask word
// (bit maskBit(n, r, e) for row g + 8r, key 8n + 2t + e): the byte path's
// packing, the word path's realignment of unaligned rows and its exchange
// within the quad; and the bits of the positions functions, computed from
// the slots' and the queries' positions.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionPieces.h"

using namespace mlir;

namespace moss::attention {

/// Bit maskBit(n, r, e) set when that (row, key) is allowed: a nonzero byte
/// of a real key and a row below T.
Value AttentionPieces::packMask(const MaskLoads &loads, Value rowBits) {
  Value bits = loads.highBits ? loads.highBits : constI32(0);
  const int64_t rows = loads.highBits ? 1 : 2;
  for (auto [i, byte] : llvm::enumerate(loads.bytes)) {
    int64_t n = static_cast<int64_t>(i) / (2 * rows);
    int64_t r = (i / 2) % rows, e = i % 2;
    bits = bitOr(bits, shl(toI32(notZero(byte)), maskBit(n, r, e)));
  }
  return bitAnd(bitAnd(bits, loads.keyBits), rowBits);
}

/// quadMaskWords' raw values to its 8 words.
SmallVector<Value> AttentionPieces::realignMaskWords(ArrayRef<Value> raw) {
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
Value AttentionPieces::exchangeMaskWords(ArrayRef<Value> rowWords, Value laneId,
                                         Value t) {
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
  Value quadBase = bitAnd(laneId, ~int64_t{3});
  Value shift = add(mul(bitAnd(t, 1), 16), shrU(t, 1));
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

Value AttentionPieces::positionMaskBits(Value slotRow, Value keyBase, Value s,
                                        ArrayRef<Value> qPos, Value rowBits,
                                        bool pairs) {
  Value window = toI64(s), zero64 = constI64(0);
  Value lastKey = pairs ? Value() : sub(s, constI32(1));
  VectorType v2i64 = VectorType::get({2}, i64);
  Value bits = constI32(0);
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    // Keys 8n + 2t and 8n + 2t + 1 are neighbours: one 16-byte load where
    // the tile is full and the row 16-byte aligned (`pairs`).
    Value pair;
    if (pairs)
      pair = loadReadOnly(
          v2i64, elementPtr(slotRow, i64, toI64(add(keyBase, 8 * n))), 16);
    for (int64_t e = 0; e < 2; ++e) {
      Value key = add(keyBase, 8 * n + e);
      // Else keys past S read slot S - 1 (in bounds), cleared by the test.
      Value slot =
          pairs ? lane(pair, e)
                : loadReadOnly(
                      i64, elementPtr(slotRow, i64, toI64(minU(key, lastKey))),
                      8);
      Value filled = cmp(arith::CmpIPredicate::sge, slot, zero64);
      if (!pairs)
        filled = both(lessU(key, s), filled);
      for (int64_t r = 0; r < 2; ++r) {
        Value age = sub(qPos[r], slot);
        Value allowed =
            both(filled, both(cmp(arith::CmpIPredicate::sge, age, zero64),
                              cmp(arith::CmpIPredicate::slt, age, window)));
        bits = bitOr(bits, shl(toI32(allowed), maskBit(n, r, e)));
      }
    }
  }
  return bitAnd(bits, rowBits);
}

} // namespace moss::attention
