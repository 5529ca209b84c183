//===- AttentionMerge.cpp - Key-group and split merges --------------------===//
//
// The end of a CTA's walk: key groups hand their online-softmax state to
// group 0 through the merge area, and the merged rows are normalized and
// stored (the splits of a cluster merge in AttentionSplitMerge.cpp).
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"

#include <tuple>

using namespace mlir;

namespace moss::attention {

namespace {
/// A key group's hand-over is nine 16-byte vectors of RowState::values
/// floats: vector 0 holds m and l of both rows, vectors 1 + q (row g) and
/// 5 + q (row g + 8) the row's acc of key groups n = 2q, 2q + 1. Only the
/// first five exist without rows g + 8 (decode steps: ifHighRows).
SmallVector<int64_t> vectorFloats(int64_t v) {
  if (v == 0)
    return SmallVector<int64_t>{0, 1, 2, 3};
  int64_t r = (v - 1) / 4, q = (v - 1) % 4;
  SmallVector<int64_t> idx;
  for (int64_t n = 2 * q; n < 2 * q + 2; ++n)
    for (int64_t e = 0; e < 2; ++e)
      idx.push_back(4 + 4 * n + 2 * r + e);
  return idx;
}

/// Vectors of a hand-over, and those of rows g alone (decode steps).
constexpr int64_t kVectors = kMergeFloats / 4, kLowVectors = 5;

/// Row r's floats in RowState::values: m, l, then its acc vector by vector.
SmallVector<int64_t> rowFloats(int64_t r) {
  SmallVector<int64_t> idx = {r, 2 + r};
  for (int64_t v = 1 + 4 * r; v < 5 + 4 * r; ++v)
    llvm::append_range(idx, vectorFloats(v));
  return idx;
}
} // namespace

/// Key groups 1.. hand their online-softmax state to group 0 through the
/// merge area of shared memory (after the Q rows, so a group hands over as
/// soon as its own last tile is done); group 0 merges them in
/// order g = 1, 2, ... like the split merge (every m an integer, so the
/// rescales are exact powers of two and a group without an allowed key, m =
/// -inf, weighs exactly 0); with three or more groups all at once
/// (mergeEntriesAtOnce). Other warps keep their state, unused.
RowState AttentionEmitter::mergeGroups(const Frame &f, const RowState &state) {
  SmallVector<Value> mine = state.values();
  // Entry of the thread at place p of group g >= 1: the kMergeFloats floats
  // at ((g - 1) * perGroup + p) * kMergeFloats of the merge area (a stride
  // of 36 words: the 8 lanes of a vector phase hit distinct banks), so
  // every vector is a constant offset from one base.
  Value perGroup = divU(f.computeThreads, f.groups);
  Value place = sub(f.tid, mul(f.group, perGroup));
  auto entryPtr = [&](Value group) {
    Value entry = add(mul(sub(group, constI32(1)), perGroup), place);
    return elementPtr(f.kv, f32,
                      add(f.mergeBase, mul(entry, constI32(kMergeFloats))));
  };
  // The entries lie in the merge area, not in the slots that other warps
  // may still read: a group hands over as soon as its last tile is done.
  emitIf(both(notZero(f.group), f.computes), [&] {
    Value entry = entryPtr(f.group);
    auto storeVectors = [&](int64_t from, int64_t to) {
      for (int64_t v = from; v < to; ++v) {
        SmallVector<Value> values;
        for (int64_t i : vectorFloats(v))
          values.push_back(mine[i]);
        store(vectorOf(v4f32, values), entryVector(entry, v), 16);
      }
      return SmallVector<Value>();
    };
    storeVectors(0, kLowVectors);
    ifHighRows(f.warpHasHighRows, {},
               [&] { return storeVectors(kLowVectors, kVectors); });
  });
  barrier();
  Value merging = isZero(f.group);
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(mine).getTypes(), merging,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(
        b, loc,
        groupCount >= 3
            ? mergeEntriesAtOnce(mine, groupCount, f.warpHasHighRows, entryPtr)
            : mergeEntriesInOrder(mine, f.groups, f.warpHasHighRows, entryPtr));
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, mine);
  }
  return RowState::fromValues(ifOp.getResults());
}

/// Two groups: group 0 adds group 1's entry to its state (a loop over the
/// entries in order g = 1, 2, ..., rescaling the running state each round).
SmallVector<Value> AttentionPieces::mergeEntriesInOrder(
    ArrayRef<Value> mine, Value groups, Value highRows,
    llvm::function_ref<Value(Value)> entryPtr) {
  auto loop =
      scf::ForOp::create(b, loc, constI32(1), groups, constI32(1), mine);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value entry = entryPtr(loop.getInductionVar());
    SmallVector<Value> run(loop.getRegionIterArgs());
    // Group g's floats, loaded a vector at a time (rows g + 8 only where
    // the warp has them).
    auto loadVectors = [&](int64_t from, int64_t to) {
      SmallVector<Value> floats;
      for (int64_t v = from; v < to; ++v)
        llvm::append_range(floats, loadEntryVector(entry, v));
      return floats;
    };
    SmallVector<Value> other(kMergeFloats);
    auto place4 = [&](int64_t from, ArrayRef<Value> floats) {
      for (int64_t v = from, k = 0; k < static_cast<int64_t>(floats.size());
           ++v)
        for (int64_t i : vectorFloats(v))
          other[i] = floats[k++];
    };
    place4(0, loadVectors(0, kLowVectors));
    // Row r: m, l and its acc in `run` / `other` (rowFloats).
    auto mergeRow = [&](int64_t r) {
      SmallVector<int64_t> idx = rowFloats(r);
      Value mRun = run[idx[0]], mOther = other[idx[0]];
      Value mNew = fmax(mRun, mOther);
      Value mUse = select(fcmp(arith::CmpFPredicate::OEQ, mNew, negInf()),
                          constF32(0.0), mNew);
      Value alpha = exp2(fsub(mRun, mUse));
      Value w = exp2(fsub(mOther, mUse));
      SmallVector<Value> out = {mNew};
      for (size_t j = 1; j < idx.size(); ++j)
        out.push_back(fma(w, other[idx[j]], fmul(run[idx[j]], alpha)));
      return out;
    };
    SmallVector<Value> low = mergeRow(0);
    SmallVector<Value> keepHigh;
    for (int64_t i : rowFloats(1))
      keepHigh.push_back(run[i]);
    SmallVector<Value> high = ifHighRows(highRows, keepHigh, [&] {
      place4(kLowVectors, loadVectors(kLowVectors, kVectors));
      return mergeRow(1);
    });
    SmallVector<Value> out(kMergeFloats);
    for (int64_t r = 0; r < 2; ++r) {
      SmallVector<int64_t> idx = rowFloats(r);
      for (auto [j, i] : llvm::enumerate(idx))
        out[i] = (r == 0 ? low : high)[j];
    }
    scf::YieldOp::create(b, loc, out);
  }
  return SmallVector<Value>(loop.getResults());
}

/// Group 0 of a function of three or more groups merges the other entries
/// at once: every entry's m first, the common maximum M, then each float as
/// a chain of FMAs weighted by exp2(m_g - M) in order g = 0, 1, ... (every m
/// is an integer, so the weights are exact powers of two and this rounds
/// like merging one entry at a time, without its G - 1 dependent rounds of
/// load, exp2 and FMA). The loads of all entries can be in flight together.
SmallVector<Value>
AttentionPieces::mergeEntriesAtOnce(ArrayRef<Value> mine, int64_t groupCount,
                                    Value highRows,
                                    llvm::function_ref<Value(Value)> entryPtr) {
  SmallVector<Value> entries;
  for (int64_t g = 1; g < groupCount; ++g)
    entries.push_back(entryPtr(constI32(g)));
  // Vector 0: m and l of both rows (RowState::values order).
  SmallVector<SmallVector<Value>> heads;
  for (Value entry : entries)
    heads.push_back(loadEntryVector(entry, 0));
  // Row r's floats in rowFloats order.
  auto mergeRow = [&](int64_t r) {
    Value m = mine[r];
    for (const SmallVector<Value> &head : heads)
      m = fmax(m, head[r]);
    Value mUse =
        select(fcmp(arith::CmpFPredicate::OEQ, m, negInf()), constF32(0.0), m);
    SmallVector<Value> weights = {exp2(fsub(mine[r], mUse))};
    for (const SmallVector<Value> &head : heads)
      weights.push_back(exp2(fsub(head[r], mUse)));
    SmallVector<Value> out = {m};
    Value l = fmul(mine[2 + r], weights[0]);
    for (auto [g, head] : llvm::enumerate(heads))
      l = fma(weights[g + 1], head[2 + r], l);
    out.push_back(l);
    for (int64_t v = 1 + 4 * r; v < 5 + 4 * r; ++v) {
      SmallVector<SmallVector<Value>> others;
      for (Value entry : entries)
        others.push_back(loadEntryVector(entry, v));
      for (auto [q, i] : llvm::enumerate(vectorFloats(v))) {
        Value acc = fmul(mine[i], weights[0]);
        for (auto [g, other] : llvm::enumerate(others))
          acc = fma(weights[g + 1], other[q], acc);
        out.push_back(acc);
      }
    }
    return out;
  };
  SmallVector<Value> out(mine);
  auto place = [&](int64_t r, ArrayRef<Value> row) {
    for (auto [j, i] : llvm::enumerate(rowFloats(r)))
      out[i] = row[j];
  };
  place(0, mergeRow(0));
  SmallVector<Value> keepHigh;
  for (int64_t i : rowFloats(1))
    keepHigh.push_back(mine[i]);
  place(1, ifHighRows(highRows, keepHigh, [&] { return mergeRow(1); }));
  return out;
}

/// bf16 of acc / l for row r of this lane (16 values: d = 8n + 2t, +1),
/// stored in the requested layout.
void AttentionPieces::storeOutputRow(const OutputRows &dst, Value queryRow,
                                     ArrayRef<Value> acc, Value l) {
  Value heads = toI64(dst.heads), tq = toI64(dst.tq);
  Value b64 = toI64(dst.b), h64 = toI64(dst.h), row = toI64(queryRow);
  Value bthdRow = add(mul(add(mul(b64, tq), row), heads), h64);
  Value bhtdRow = add(mul(add(mul(b64, heads), h64), tq), row);
  Value rowOffset = mul(select(isZero(dst.layout), bthdRow, bhtdRow), kD);
  Value base = elementPtr(dst.out, bf16, add(rowOffset, dst.laneCol));
  Value inv = safeReciprocal(l);
  for (int64_t n = 0; n < kDGroups; ++n) {
    Value packed = packBf16x2(fmul(acc[2 * n], inv), fmul(acc[2 * n + 1], inv));
    store(packed, elementPtr(base, bf16, constI32(8 * n)), 4);
  }
}

/// Rows g and g+8 of this lane as m, l (summed over the quad), then acc in
/// column order (d = 8n + 2t, +1).
std::array<SmallVector<Value>, 2>
AttentionPieces::finalRows(const RowState &state) {
  std::array<SmallVector<Value>, 2> rows;
  for (int64_t r = 0; r < 2; ++r) {
    Value sum = fadd(state.l[r], shuffleXor(state.l[r], 1));
    rows[r] = {state.m[r], fadd(sum, shuffleXor(sum, 2))};
    for (int64_t n = 0; n < kDGroups; ++n)
      for (int64_t e = 0; e < 2; ++e)
        rows[r].push_back(state.acc[4 * n + 2 * r + e]);
  }
  return rows;
}

/// One-pass functions: the normalized bf16 output.
OutputRows AttentionEmitter::outputRows(const Frame &f) {
  return {arg(kOut), arg(kLayout), arg(kH), arg(kT), f.b, f.h, f.laneCol};
}

void AttentionEmitter::storeResult(const Frame &f, const RowState &state) {
  std::array<SmallVector<Value>, 2> rows = finalRows(state);
  for (int64_t r = 0; r < 2; ++r)
    emitIf(f.rowValid[r], [&] {
      storeOutputRow(outputRows(f), f.row[r],
                     ArrayRef<Value>(rows[r]).drop_front(2), rows[r][1]);
    });
}

SmallVector<Value>
AttentionPieces::ifHighRows(Value highRows, ArrayRef<Value> otherwise,
                            llvm::function_ref<SmallVector<Value>()> body) {
  if (!highRows)
    return body();
  if (otherwise.empty()) {
    emitIf(highRows, [&] { body(); });
    return {};
  }
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(otherwise).getTypes(),
                                highRows, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, body());
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, otherwise);
  return SmallVector<Value>(ifOp.getResults());
}

} // namespace moss::attention
