//===- TestAttentionPieces.cpp - The attention kernel's pieces alone ------===//
//
// Each piece of the attention kernel in a function of its own: the
// mma.sync stages of a key tile and the online softmax, the mask-bit
// packing, the K/V copies and TMA trips, the key-group and split merges
// and the output store.
//
//===----------------------------------------------------------------------===//
#include "PieceFunction.h"

#include "Attention/AttentionPieces.h"

using namespace mlir;

namespace moss::test {
namespace {

using namespace moss::attention;

SmallVector<Type> repeat(Type type, int64_t count) {
  return SmallVector<Type>(count, type);
}
SmallVector<Type> concat(std::initializer_list<ArrayRef<Type>> parts) {
  SmallVector<Type> all;
  for (ArrayRef<Type> part : parts)
    llvm::append_range(all, part);
  return all;
}
SmallVector<Value> flatten(ArrayRef<SmallVector<Value>> groups) {
  SmallVector<Value> all;
  for (const SmallVector<Value> &group : groups)
    llvm::append_range(all, group);
  return all;
}
/// Groups of 4 (the n8 accumulators) from a flat list.
SmallVector<SmallVector<Value>> groupsOf4(ArrayRef<Value> flat) {
  SmallVector<SmallVector<Value>> groups;
  for (size_t i = 0; i < flat.size(); i += 4)
    groups.emplace_back(flat.begin() + i, flat.begin() + i + 4);
  return groups;
}

constexpr int64_t kAcc = 4 * kDGroups;      // a lane's O accumulators
constexpr int64_t kScores = 4 * kKeyGroups; // a lane's S accumulators

} // namespace

bool emitAttentionPiece(OpBuilder &b, ModuleOp module, StringRef piece,
                        const AttentionPieceOptions &options,
                        std::string &error) {
  Location loc = module.getLoc();
  AttentionPieces p(b, loc);
  // The pieces' own types name the arguments (plus the generic pointer of a
  // CUtensorMap parameter).
  const AttentionPieces &t = p;
  const Type genericPtr = LLVM::LLVMPointerType::get(b.getContext());
  // A state's m[2], l[2] and acc.
  auto stateTypes = [&] { return repeat(t.f32, 4 + kAcc); };

  if (piece == "attention-qk") {
    // (kv, qLaneOff, kLane0, kLane1) -> S, n-major
    PieceFunction fn(b, module, piece, {t.sharedPtr, t.i32, t.i32, t.i32});
    fn.finish(flatten(p.scoresQK(fn.arg(0), fn.arg(1), fn.args(2, 2))));
    return true;
  }
  if (piece == "attention-softmax") {
    // (S, bits, whole, scaleLog2, m, l, acc) -> (p, m, l, acc)
    PieceFunction fn(
        b, module, piece,
        concat({repeat(t.f32, kScores), {t.i32, t.i1, t.f32}, stateTypes()}));
    RowState in = RowState::fromValues(fn.args(kScores + 3, 4 + kAcc));
    SoftmaxStep step =
        p.onlineSoftmax(groupsOf4(fn.args(0, kScores)), fn.arg(kScores),
                        fn.arg(kScores + 1), fn.arg(kScores + 2), in);
    SmallVector<Value> out = flatten(step.p);
    llvm::append_range(out, step.state.values());
    fn.finish(out);
    return true;
  }
  if (piece == "attention-pv") {
    // (kv, vLane x4, p, acc) -> acc
    PieceFunction fn(b, module, piece,
                     concat({{t.sharedPtr},
                             repeat(t.i32, kDGroups / 2),
                             repeat(t.f32, kScores),
                             repeat(t.f32, kAcc)}));
    const unsigned pFirst = 1 + kDGroups / 2;
    fn.finish(p.accumulatePV(fn.arg(0), fn.args(1, kDGroups / 2),
                             groupsOf4(fn.args(pFirst, kScores)),
                             fn.args(pFirst + kScores, kAcc)));
    return true;
  }
  if (piece == "attention-mask-pack") {
    // (32 bytes (n, r, e), keyBits, rowBits) -> bits
    PieceFunction fn(b, module, piece,
                     concat({repeat(t.i8, 4 * kKeyGroups), {t.i32, t.i32}}));
    MaskLoads loads;
    loads.bytes = fn.args(0, 4 * kKeyGroups);
    loads.keyBits = fn.arg(4 * kKeyGroups);
    fn.finish(p.packMask(loads, fn.arg(4 * kKeyGroups + 1)));
    return true;
  }
  if (piece == "attention-mask-realign") {
    // (per row 5 covering words and a shift) -> 8 words
    PieceFunction fn(b, module, piece, repeat(t.i32, kRawMaskValues));
    fn.finish(p.realignMaskWords(fn.args(0, kRawMaskValues)));
    return true;
  }
  if (piece == "attention-mask-exchange") {
    // (8 words, laneId, t) -> bits
    PieceFunction fn(b, module, piece, repeat(t.i32, 10));
    fn.finish(p.exchangeMaskWords(fn.args(0, 8), fn.arg(8), fn.arg(9)));
    return true;
  }
  if (piece == "attention-mask-positions") {
    // (slotRow, keyBase, S, qPos[2], rowBits) -> bits; with `pairs` a full
    // tile of an aligned row.
    PieceFunction fn(b, module, piece,
                     {t.globalPtr, t.i32, t.i32, t.i64, t.i64, t.i32});
    fn.finish(p.positionMaskBits(fn.arg(0), fn.arg(1), fn.arg(2), fn.args(3, 2),
                                 fn.arg(5), options.pairs));
    return true;
  }
  auto kvSource = [&](PieceFunction &fn) {
    return KvCopySource{fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3),
                        fn.arg(4), fn.arg(5), fn.arg(6), options.tmaSwizzle};
  };
  // kv, tid, threads, kHead, vHead, kStride, vStride, tile, slot
  SmallVector<Type> copyArgs = {t.sharedPtr, t.i32,       t.i32,
                                t.globalPtr, t.globalPtr, t.i64,
                                t.i64,       t.i32,       t.i32};
  if (piece == "attention-copy-full") {
    if (options.threads != 64 && options.threads != 128) {
      error = "attention-copy-full takes threads=64 or threads=128";
      return false;
    }
    PieceFunction fn(b, module, piece, copyArgs);
    p.copyFullTile(kvSource(fn), fn.arg(7), fn.arg(8), options.threads);
    fn.finish({});
    return true;
  }
  if (piece == "attention-copy-any") {
    // copyArgs, then S
    copyArgs.push_back(t.i32);
    PieceFunction fn(b, module, piece, copyArgs);
    p.copyTileAnyRows(kvSource(fn), fn.arg(9), fn.arg(7), fn.arg(8));
    fn.finish({});
    return true;
  }
  if (piece == "attention-tma-trip") {
    // (kv, tid, tripBarriers, kMap, vMap, groups, h, b, firstTile, stage,
    // active)
    PieceFunction fn(b, module, piece,
                     {t.sharedPtr, t.i32, t.i32, genericPtr, genericPtr, t.i32,
                      t.i32, t.i32, t.i32, t.i32, t.i32});
    TensorTripSource src{fn.arg(0), fn.arg(1), fn.arg(2),
                         fn.arg(3), fn.arg(4), fn.arg(5),
                         fn.arg(6), fn.arg(7), options.splitKv};
    p.issueTensorTrip(src, fn.arg(8), fn.arg(9), fn.arg(10));
    fn.finish({});
    return true;
  }
  if (piece == "attention-group-merge") {
    // (mine, groups, highRows, entries) -> merged state; group g's entry
    // at float (g - 1) * kMergeFloats of `entries`.
    PieceFunction fn(b, module, piece,
                     concat({stateTypes(), {t.i32, t.i1, t.sharedPtr}}));
    const unsigned first = 4 + kAcc;
    Value entries = fn.arg(first + 2);
    auto entryPtr = [&](Value g) {
      return p.elementPtr(entries, t.f32,
                          p.mul(p.sub(g, p.constI32(1)), kMergeFloats));
    };
    SmallVector<Value> mine = fn.args(0, first);
    fn.finish(options.groups >= 2
                  ? p.mergeEntriesAtOnce(mine, options.groups,
                                         fn.arg(first + 1), entryPtr)
                  : p.mergeEntriesInOrder(mine, fn.arg(first),
                                          fn.arg(first + 1), entryPtr));
    return true;
  }
  if (piece == "attention-split-push") {
    // (state, kv, entry, z, slotFloats, barrier): finalRows, then the push
    PieceFunction fn(b, module, piece,
                     concat({stateTypes(),
                             {t.sharedPtr, t.i32, t.i32, t.i32, t.sharedPtr}}));
    const unsigned first = 4 + kAcc;
    auto rows = p.finalRows(RowState::fromValues(fn.args(0, first)));
    p.pushSplitRows(rows, fn.arg(first), fn.arg(first + 1), fn.arg(first + 2),
                    fn.arg(first + 3), fn.arg(first + 4));
    fn.finish({});
    return true;
  }
  if (piece == "attention-split-merge") {
    // (splits, highRows, slots, slotFloats) -> per row l and acc; slot z's
    // float `offset` at z * slotFloats + offset of `slots`.
    PieceFunction fn(b, module, piece, {t.i32, t.i1, t.sharedPtr, t.i32});
    fn.finish(
        p.mergeSplitRows(fn.arg(0), fn.arg(1), [&](Value z, int64_t offset) {
          return p.elementPtr(fn.arg(2), t.f32,
                              p.add(p.mul(z, fn.arg(3)), offset));
        }));
    return true;
  }
  if (piece == "attention-store-row") {
    // (out, layout, heads, tq, b, h, laneCol, row, acc x16, l)
    PieceFunction fn(
        b, module, piece,
        concat({{t.globalPtr, t.i32, t.i32, t.i32, t.i32, t.i32, t.i64, t.i32},
                repeat(t.f32, 2 * kDGroups + 1)}));
    OutputRows dst{fn.arg(0), fn.arg(1), fn.arg(2), fn.arg(3),
                   fn.arg(4), fn.arg(5), fn.arg(6)};
    p.storeOutputRow(dst, fn.arg(7), fn.args(8, 2 * kDGroups),
                     fn.arg(8 + 2 * kDGroups));
    fn.finish({});
    return true;
  }
  error = ("unknown attention piece '" + piece + "'").str();
  return false;
}

} // namespace moss::test
