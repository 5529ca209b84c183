//===- AttentionEmitter.h - The attention kernel body -----------*- C++ -*-===//
//
// The body of the streaming-attention kernel functions (the design is
// described at the top of AttentionKernelBuilder.cpp): the function's
// constant variant and parameters, and the steps that compose the pieces of
// AttentionPieces.h over the key trips. The per-CTA values (the CTA's rows,
// tiles, lane offsets) are computed once into a Frame that emitBody owns
// and hands to each step by const reference. The steps live in
// AttentionMask.cpp (mask loads), AttentionTrips.cpp (trip bookkeeping and
// copies), AttentionTile.cpp (one key tile), AttentionMerge.cpp and
// AttentionSplitMerge.cpp (the merges and stores) and AttentionBody.cpp (the
// walk).
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H
#define MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H

#include "Attention/AttentionPieces.h"

#include <array>
#include <optional>
#include <tuple>

namespace moss::attention {

/// The values of one CTA that its steps read: computed in emitBody's
/// prologue, in IR order, and read-only after it.
struct Frame {
  Value tid, threads, g, t, b, h, z;
  Value laneId, rowWarps, rowWarp, groups, group;
  /// rowWarps * groups threads compute; warps past them (copy warps, a
  /// launch-rule choice for small grids) only share the K/V copies.
  Value computeThreads, computes;
  Value tBegin, nTiles;
  /// nTiles for compute warps, 0 for copy warps: they have no tile, so
  /// they load no mask bytes and compute nothing.
  Value warpTiles;
  Value rowValid[2], row[2];
  Value safeRow[2]; ///< i64 row, clamped to T - 1 (valid address).
  Value laneCol;    ///< i64 2t: the lane's first column in an n8 group.
  Value maskRow[2];
  Value rowBits;        ///< mask bits of rows below T (rowMaskBits).
  Value maskUnitStride; ///< mask contiguous in S.
  Value maskAligned;    ///< and every row 16-byte aligned.
  /// i64 address of the 4-byte word that holds the last byte (key S - 1)
  /// of the lane's rows g and g + 8: the tail tile's covering words stop
  /// there.
  Value maskLastWord[2];
  /// Warp-uniform: every lane's maskLastWord lies wholly inside the mask
  /// (not so only in warps holding its last row, where that row does not
  /// end on a word boundary): the tail tile may take the word path.
  Value maskTailWords;
  Value warpHasHighRows; ///< set: row g + 8 loads only when T > row0 + 8.
  Value kHead, vHead;
  Value qLaneOff; ///< lane's ldmatrix offset of its Q rows, d 0..15.
  Value scaleLog2;
  Value kv; ///< dynamic shared memory (slots, then Q rows), bf16 offsets.
  /// With TMA copies: float offset of the trips' mbarriers (the end).
  Value tripBarriers;
  /// Float offset of the merge area (after every warp's Q rows): the key
  /// groups' entries, then the split hand-over.
  Value mergeBase;
  Value kLaneOff; ///< lane's ldmatrix offset in a K tile, d chunk 0.
  Value vLaneOff; ///< lane's ldmatrix offset in a V tile, d pair 0.
  /// Positions functions: the row's slot positions and the i64 positions of
  /// the lane's query rows g and g + 8 (rows past T read row T - 1), and
  /// whether slotRow is 16-byte aligned (full tiles load key pairs).
  Value slotRow, qPos[2], slotPairs;
};

/// maskBits in two steps: the loads (issued now), then the packing.
struct PendingMask {
  Value fast;               ///< wordPathTile: `words` hold the tile
  SmallVector<Value> words; ///< quadMaskWords(raw) of the word path
  MaskLoads bytes;          ///< the byte path's loads
  Value bits;               ///< positions functions: the bits, computed at once
};

class AttentionEmitter : public AttentionPieces {
public:
  /// The body of function `fn` (config::attentionFunctionAt) whose
  /// parameters are `args` (config::kAttentionParams order).
  AttentionEmitter(OpBuilder &b, Location loc,
                   const config::AttentionFunction &fn, ValueRange args)
      : AttentionPieces(b, loc), args(args.begin(), args.end()),
        groupCount(fn.kvGroups), split(fn.split), tmaCopies(fn.tma),
        splitKvBarriers(fn.splitKv), positions(fn.positions),
        tailWords(fn.kvGroups == 1 && !fn.split && !fn.positions) {}

  /// The kernel body for the function's key-group count, into `smemName`.
  void emitBody(StringRef smemName);

private:
  Value arg(KernelArg which) const { return args[which]; }
  /// The bit `mask` of the launch's flags parameter (zero or nonzero).
  Value flag(int64_t mask) { return both(arg(kFlags), constI32(mask)); }
  Value blockDim() {
    return gpuIndex(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x));
  }
  Value isFullTile(Value tile) {
    return AttentionPieces::isFullTile(tile, arg(kS));
  }
  /// Key 64 tile + 2t: the lane's first key of tile `tile` (its keys are
  /// that + 8n + e, maskBit's order).
  Value laneKeyBase(const Frame &f, Value tile) {
    return add(mul(tile, kKeys), mul(f.t, 2));
  }
  /// Byte offset of `key` in a mask row, the key clamped to S - 1.
  Value clampedMaskOffset(Value key) {
    return mul(toI64(minU(key, sub(arg(kS), constI32(1)))), arg(kMaskStrideS));
  }
  /// Sets the lane's quad coordinates and rows from `lane` and the warp's
  /// first row; returns whether rows g and g+8 are below T.
  std::array<Value, 2> placeRows(Frame &f, Value lane, Value row0);

  // --- mask loads (AttentionMask.cpp) ----------------------------------------
  MaskLoads loadMask(const Frame &f, Value tile, Value tileValid);
  SmallVector<Value>
  loadMaskRows(const Frame &f,
               llvm::function_ref<Value(int64_t, int64_t, int64_t)> load);
  /// The bytes and packed bits a MaskLoads is made of, in loadMaskRows order.
  int64_t maskLoadValues(const Frame &f) const {
    return f.warpHasHighRows ? 2 * kKeyGroups + 1 : 4 * kKeyGroups;
  }
  /// Whether tile `tile` takes the word path: a full, valid tile of a mask
  /// contiguous in S (else the tail path or the byte path, loadMask).
  Value wordPathTile(const Frame &f, Value tile, Value tileValid) {
    return both(both(tileValid, isFullTile(tile)), f.maskUnitStride);
  }
  /// Whether the tail tile takes the word path too (with tailWords, where
  /// f.maskTailWords holds): its covering words clamped to each row's last
  /// word, the bits of keys past S cleared by keyBitsOf.
  Value tailPathTile(const Frame &f, Value tileValid) {
    return both(both(tileValid, f.maskTailWords), f.maskUnitStride);
  }
  /// Bit maskBit(n, r, e) set where key 8n + 2t + e of tile `tile` is < S.
  Value keyBitsOf(const Frame &f, Value tile);
  PendingMask loadMaskBits(const Frame &f, Value tile, Value tileValid);
  Value packMaskBits(const Frame &f, const PendingMask &pending);
  /// This lane's packed mask bits of key tile `tile` (maskBit order): both
  /// steps at once, in one branch rather than packMaskBits(loadMaskBits())'s
  /// two (the one-group function's code stays the one measured).
  Value maskBits(const Frame &f, Value tile, Value tileValid);
  /// Raw: per row the 5 words that cover its 16 bytes and the shift that
  /// realignMaskWords needs (not yet applied, so that nothing waits for the
  /// loads), kRawMaskValues in all.
  SmallVector<Value> quadMaskWords(const Frame &f, Value tile, bool raw = false,
                                   bool tail = false);
  void prefetchMask(const Frame &f, Value tile);
  /// Positions functions: this lane's mask bits of tile `tile` (none for a
  /// tile past the split's end).
  Value positionBits(const Frame &f, Value tile, Value tileValid);

  // --- trips (AttentionTrips.cpp) --------------------------------------------
  /// This warp's key tile of trip `trip` and whether it is one of the
  /// split's tiles.
  Value myTileIndex(const Frame &f, Value trip) {
    return add(mul(trip, f.groups), f.group);
  }
  Value myTile(const Frame &f, Value trip) {
    return add(f.tBegin, myTileIndex(f, trip));
  }
  Value myTileValid(const Frame &f, Value trip) {
    return lessU(myTileIndex(f, trip), f.warpTiles);
  }
  /// Bit g set when group g's tile of `trip` exists (no mask consulted).
  Value validGroups(const Frame &f, Value trip);
  /// Bit g set when any thread of group g passes `pred` (a CTA barrier per
  /// group).
  Value groupsWith(const Frame &f, Value pred);
  /// The groups that copy and compute `trip`: those with a tile and, with
  /// skip_empty_tiles, a row that may see a key of it (`bits`: this
  /// thread's mask bits of its tile). With the flag off no mask is
  /// consulted, so the grouped functions spend one bar.sync (`tripBarrier`)
  /// or none instead of a reducing barrier per group.
  Value activeGroups(const Frame &f, Value noSkip, Value trip, Value bits,
                     bool tripBarrier);
  KvCopySource kvSource(const Frame &f);
  /// Stage `stage`'s mbarrier of the TMA functions (V's: splitKvBarriers).
  Value tripBarrier(const Frame &f, Value stage, bool v = false);
  TensorTripSource tensorSource(const Frame &f);
  void copyTile(const Frame &f, Value tile, Value slot);
  /// TMA functions, thread 0 at the start: one mbarrier a stage (one
  /// arrival), two with splitKvBarriers.
  void initTripBarriers(const Frame &f, int64_t stages);
  /// The parity of trip `trip`'s phase on its stage's mbarriers.
  Value tripParity(Value trip, int64_t stages) {
    return bitAnd(divU(trip, constI32(stages)), 1);
  }
  /// The trip's tiles into `stage`'s slots (TMA or every thread's cp.async).
  void issueTrip(const Frame &f, Value trip, Value stage, Value active);
  /// This thread may read trip `trip`'s tiles once the trip's first CTA
  /// barrier follows: its own cp.async copies (Q's too) have landed and, in
  /// a TMA function, stage `stage`'s mbarrier has completed the phase of
  /// that trip.
  void waitTrip(const Frame &f, Value trip, Value stage, int64_t stages);

  // --- one tile, merges, stores ----------------------------------------------
  /// One key tile for this warp's rows, masked by `bits`; where `whole`
  /// (warp-uniform, may be null) holds, every key is allowed for every row
  /// and the per-score selects are skipped. Where pvBarrier is set (split K
  /// and V barriers), P V first spins on it for pvParity.
  RowState computeTile(const Frame &f, Value slot, Value bits, Value whole,
                       const RowState &in, Value pvBarrier, Value pvParity);
  /// Only with more than one key group.
  RowState mergeGroups(const Frame &f, const RowState &state);
  OutputRows outputRows(const Frame &f);
  void storeResult(const Frame &f, const RowState &state);
  void mergeAndStoreSplits(const Frame &f, const RowState &state);
  /// Float offset just past the key groups' merge entries (groups 1..G-1,
  /// one entry a compute thread of a group) and the floats of one group's
  /// entries: where a split's receive slots (of that size) or a TMA
  /// function's trip mbarriers start, as attentionMergeBytes lays them out.
  std::pair<Value, Value> groupEntriesEnd(const Frame &f);
  /// Float offset of the split receive slots in the merge area, the floats
  /// of one slot, and the pointer to rank 0's receive mbarrier after them.
  std::tuple<Value, Value, Value> splitSlots(const Frame &f);
  /// Split functions, at the start: thread 0 arms the receive mbarrier and
  /// every thread arrives (relaxed) at the cluster barrier that publishes it.
  void armSplitBarrier(const Frame &f);

  const SmallVector<Value> args;
  /// The function's key-group count G: with G a constant the group loops
  /// unroll and the other stage scheme drops out.
  const int64_t groupCount;
  /// A split function (split-KV over a cluster) rather than a one-pass one.
  const bool split;
  /// The function copies K and V by the TMA engine (g4_tma, g2_tma,
  /// g1_tma, g4_tma_kv).
  const bool tmaCopies;
  /// g4_tma_kv: K and V complete on mbarriers of their own, all K boxes
  /// issued first, so a warp's QK^T and softmax run while the V boxes still
  /// land.
  const bool splitKvBarriers;
  /// The mask comes from slot_positions and query_positions
  /// (positionMaskBits), not from the bool mask.
  const bool positions;
  /// The function takes tail tiles on the word path (tailPathTile): the
  /// one-pass one-group mask function.
  const bool tailWords;
};

} // namespace moss::attention

#endif // MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H
