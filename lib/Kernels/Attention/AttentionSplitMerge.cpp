//===- AttentionSplitMerge.cpp - The cluster hand-over of split-KV -------===//
//
// The end of a split launch's walk: the splits of one (b, h, row block), the
// CTAs of one cluster, push their online-softmax state into rank 0's receive
// slots by st.async, completing on rank 0's mbarrier; rank 0 merges the
// slots in a fixed order and stores the normalized rows.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"
#include "Attention/AttentionPieces.h"

#include <tuple>

using namespace mlir;

namespace moss::attention {

namespace {
/// Float offset in a split's receive slot of row r's (g, then g + 8) acc
/// vector q; vector 0 holds m and l of both rows.
int64_t splitAccOffset(int64_t r, int64_t q) {
  return 4 + 2 * kDGroups * r + 4 * q;
}

} // namespace

/// Split functions: the splits of one (b, h, row block) are the CTAs of one
/// thread-block cluster (1, 1, splits), rank z. Each hands its rows' (m, l,
/// acc) to rank 0 (st.async into receive slot z, its own with plain
/// stores); rank 0 waits on its mbarrier, merges the slots in order z = 0,
/// 1, ... and writes the output, so the result does not depend on which
/// split finished first. (With splits == 1 this is the one-pass result,
/// slower.)
void AttentionEmitter::mergeAndStoreSplits(const Frame &f,
                                           const RowState &state) {
  std::array<SmallVector<Value>, 2> rows = finalRows(state);
  // Receive slot z, after the key groups' entries (splitSlots), holds split
  // z's hand-over; group 0's thread tid at float 36 tid of it: (m, l) of
  // both rows, then row g's acc, then row g + 8's, as 16-byte vectors (a
  // stride of 36 words puts the 8 lanes of a vector phase on distinct
  // banks). Rank 0 writes its own slot, the others push theirs into rank
  // 0's with st.async, completing bytes on its mbarrier.
  // Plain variables, not a structured binding: the lambdas below capture
  // them, which C++17 does not allow for bindings (gcc accepts, clang not).
  Value slots, slotFloats, barrier;
  std::tie(slots, slotFloats, barrier) = splitSlots(f);
  Value entry = add(slots, mul(f.tid, kMergeFloats));
  // Rank 0's mbarrier is initialized (armSplitBarrier, then every rank's
  // relaxed arrive at the start).
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  Value writer = both(isZero(f.group), f.computes);
  emitIf(writer,
         [&] { pushSplitRows(rows, f.kv, entry, f.z, slotFloats, barrier); });
  // Rank 0 waits for the other splits' bytes and merges the slots in order
  // z = 0, 1, ...; the other ranks are done (their pushes need nothing of
  // them), and rank 0's slots live until it has read them.
  emitIf(both(writer, isZero(f.z)), [&] {
    emitSpinOnParity(b, loc, barrier);
    SmallVector<Value> sums = mergeSplitRows(
        arg(kSplits), f.warpHasHighRows, [&](Value z, int64_t offset) {
          return elementPtr(
              f.kv, f32, add(add(entry, mul(z, slotFloats)), constI32(offset)));
        });
    constexpr int64_t kRowSums = kSplitRowFloats - 1;
    for (int64_t r = 0; r < 2; ++r) {
      emitIf(f.rowValid[r], [&] {
        ArrayRef<Value> row =
            ArrayRef<Value>(sums).slice(r * kRowSums, kRowSums);
        storeOutputRow(outputRows(f), f.row[r], row.drop_front(), row[0]);
      });
    }
  });
}

void AttentionPieces::pushSplitRows(
    const std::array<SmallVector<Value>, 2> &rows, Value kv, Value entry,
    Value z, Value slotFloats, Value barrier) {
  // (m, l) of both rows, then row g's acc, then row g + 8's, as 16-byte
  // vectors at their float offsets in the slot.
  SmallVector<std::pair<int64_t, SmallVector<Value>>> vectors = {
      {0, {rows[0][0], rows[0][1], rows[1][0], rows[1][1]}}};
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t q = 0; q < kDGroups / 2; ++q)
      vectors.push_back(
          {splitAccOffset(r, q),
           SmallVector<Value>(ArrayRef<Value>(rows[r]).slice(2 + 4 * q, 4))});
  auto ifOp = scf::IfOp::create(b, loc, isZero(z), /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  for (auto &[offset, values] : vectors)
    store(vectorOf(v4f32, values),
          elementPtr(kv, f32, add(entry, constI32(offset))), 16);
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  Value mine = add(entry, mul(z, slotFloats));
  Value zero = constI32(0);
  Value remote =
      NVVM::MapaOp::create(b, loc, clusterPtr, elementPtr(kv, f32, mine), zero);
  Value remoteBarrier = NVVM::MapaOp::create(b, loc, clusterPtr, barrier, zero);
  for (auto &[offset, values] : vectors)
    emitStAsyncV4F32(b, loc, elementPtr(remote, f32, constI32(offset)), values,
                     remoteBarrier);
}

std::pair<Value, Value> AttentionEmitter::groupEntriesEnd(const Frame &f) {
  Value perGroup = divU(f.computeThreads, f.groups);
  Value entryFloats = mul(perGroup, kMergeFloats);
  return {add(f.mergeBase, mul(sub(f.groups, constI32(1)), entryFloats)),
          entryFloats};
}

std::tuple<Value, Value, Value> AttentionEmitter::splitSlots(const Frame &f) {
  auto [slots, slotFloats] = groupEntriesEnd(f);
  Value barrier =
      elementPtr(f.kv, f32, add(slots, mul(arg(kSplits), slotFloats)));
  return {slots, slotFloats, barrier};
}

void AttentionEmitter::armSplitBarrier(const Frame &f) {
  auto [slots, slotFloats, barrier] = splitSlots(f);
  // Rank 0 receives (splits - 1) slots of 36 floats a thread of group 0.
  Value bytes = select(isZero(f.z),
                       mul(sub(arg(kSplits), constI32(1)), mul(slotFloats, 4)),
                       constI32(0));
  armReceiveAndArrive(isZero(f.tid), barrier, bytes);
}

/// Rank 0 merges rows g and g + 8 of every split in order z = 0, 1, ... and
/// writes the output. First every split's m (unrolled to
/// kAttentionMaxSplits slots) for the common maximum M, then each float as
/// a chain of FMAs weighted by exp2(m_z - M): every m is an integer, so the
/// weights are exact powers of two and this rounds like rescaling the
/// running sums split by split, without that merge's dependent rounds of
/// maximum, exp2 and rescale. Slots are read kMergeGroup at a time so that
/// their loads overlap; the loop loads each slot's m and l again (one
/// 16-byte load) rather than holding eight slots' through it (the fully
/// unrolled form spilled g1_split). A split without an allowed key (m =
/// -inf) weighs 0.
SmallVector<Value> AttentionPieces::mergeSplitRows(
    Value splits, Value highRows,
    llvm::function_ref<Value(Value, int64_t)> slotVector) {
  constexpr int64_t kMergeGroup = 2;
  Value minusInf = negInf(), zeroF = constF32(0.0);
  // Slot z's four floats at `offset`; where z is past the splits, those of
  // `fallback` (a real slot, so the load stays in bounds; weighted 0).
  auto loadVector = [&](Value z, Value real, Value fallback, int64_t offset) {
    return loadFloats4(slotVector(select(real, z, fallback), offset));
  };
  Value mUse[2];
  {
    Value mMax[2] = {minusInf, minusInf};
    for (int64_t z = 0; z < config::kAttentionMaxSplits; ++z) {
      Value zv = constI32(z);
      Value real = z == 0 ? constBool(true) : lessU(zv, splits);
      SmallVector<Value> head = loadVector(zv, real, constI32(0), 0);
      for (int64_t r = 0; r < 2; ++r)
        mMax[r] = fmax(mMax[r], select(real, head[2 * r], minusInf));
    }
    for (int64_t r = 0; r < 2; ++r)
      mUse[r] = select(fcmp(arith::CmpFPredicate::OEQ, mMax[r], minusInf),
                       zeroF, mMax[r]);
  }
  // Row r's l and acc, the loop's values r * kRowSums ...
  constexpr int64_t kRowSums = kSplitRowFloats - 1;
  SmallVector<Value> init(2 * kRowSums, zeroF);
  auto loop = scf::ForOp::create(b, loc, constI32(0), splits,
                                 constI32(kMergeGroup), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value zBase = loop.getInductionVar();
    SmallVector<Value> run(loop.getRegionIterArgs());
    for (int64_t j = 0; j < kMergeGroup; ++j) {
      Value z = add(zBase, j);
      Value real = lessU(z, splits);
      SmallVector<Value> head = loadVector(z, real, zBase, 0);
      for (int64_t r = 0; r < 2; ++r) {
        ArrayRef<Value> before =
            ArrayRef<Value>(run).slice(r * kRowSums, kRowSums);
        auto mergeRow = [&] {
          Value m = select(real, head[2 * r], minusInf);
          Value w = exp2(fsub(m, mUse[r])); // 0 for an empty split
          SmallVector<Value> sums = {fma(w, head[2 * r + 1], before[0])};
          for (int64_t q = 0; q < kDGroups / 2; ++q) {
            SmallVector<Value> acc =
                loadVector(z, real, zBase, splitAccOffset(r, q));
            for (int64_t e = 0; e < 4; ++e)
              sums.push_back(fma(w, acc[e], before[1 + 4 * q + e]));
          }
          return sums;
        };
        SmallVector<Value> after =
            r == 0 ? mergeRow() : ifHighRows(highRows, before, mergeRow);
        std::copy(after.begin(), after.end(), run.begin() + r * kRowSums);
      }
    }
    scf::YieldOp::create(b, loc, run);
  }
  return SmallVector<Value>(loop.getResults());
}

} // namespace moss::attention
