//===- AttentionPieces.h - The pieces of the attention kernel ---*- C++ -*-===//
//
// The attention kernel's pieces, each taking every value it reads as an
// argument and returning what it computes: the mma.sync stages of one key
// tile (QK^T, P V) and the online softmax between them, the mask-bit
// packing, the K/V copies (cp.async and TMA boxes), the key-group and
// cluster merges and the output epilogue. AttentionPieces holds only the
// builder, so a test emits one piece into a function of its own
// (test/Kernels/Pieces); the kernel body (AttentionEmitter) composes them.
//
// The pieces address shared memory through LLVM pointers and emit NVVM ops:
// upstream nvgpu's TMA, mbarrier and ldmatrix ops take memrefs and
// !nvgpu.mbarrier.group values, which the kernel's one dynamic shared
// buffer, carved at run-time offsets, does not have (docs/design.md).
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_ATTENTION_ATTENTIONPIECES_H
#define MOSS_LIB_KERNELS_ATTENTION_ATTENTIONPIECES_H

#include "Attention/AttentionLayout.h"
#include "Common/KernelEmitter.h"
#include "Common/MlirNames.h"
#include "Common/NvvmSync.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <limits>

namespace moss::attention {

/// The lane's 32 mask bytes of a tile, loaded but not yet packed (the byte
/// path of the mask bits).
struct MaskLoads {
  /// 32 bytes in order (n, r, e), or where the warp guards rows g + 8 the
  /// 16 of row g in order (n, e) and row g + 8 already packed in highBits.
  SmallVector<Value> bytes;
  Value highBits;
  Value keyBits; ///< bits whose key is real (< S, tile valid).
};

/// Where a K/V tile comes from and goes to, for the cp.async copies.
struct KvCopySource {
  Value kv;               ///< dynamic shared memory, bf16 offsets
  Value tid, threads;     ///< i32 thread index and CTA size
  Value kHead, vHead;     ///< the (b, h) rows of k and v
  Value kStride, vStride; ///< i64 elements between keys
  bool tmaSwizzle;        ///< slots in the TMA engine's 128-byte swizzle
};

/// What the TMA copies of a trip need: thread 0 arms the stage's
/// mbarrier(s) and issues one box of k_map and one of v_map a tile.
struct TensorTripSource {
  Value kv, tid;
  Value tripBarriers; ///< float offset of the trips' mbarriers in kv
  Value kMap, vMap;   ///< the CUtensorMap parameters
  Value groups, h, b; ///< i32 key groups, head and batch of the CTA
  bool splitKv;       ///< V boxes complete on a second mbarrier
};

/// Where and how the output rows are stored ([B,T,H,D] or [B,H,T,D]).
struct OutputRows {
  Value out, layout;     ///< the out pointer and the layout parameter
  Value heads, tq, b, h; ///< i32
  Value laneCol;         ///< i64 2t: the lane's first column in an n8 group
};

/// One online-softmax step: the probabilities (bf16-rounded in P V) and
/// the state with acc already rescaled, before P V adds to it.
struct SoftmaxStep {
  SmallVector<SmallVector<Value>> p;
  RowState state;
};

class AttentionPieces : public KernelEmitter {
public:
  AttentionPieces(OpBuilder &b, Location loc) : KernelEmitter(b, loc) {
    MLIRContext *ctx = b.getContext();
    i1 = b.getI1Type();
    i8 = b.getI8Type();
    v2bf16 = VectorType::get({2}, bf16);
    v4bf16 = VectorType::get({4}, bf16);
    ldmatrixResult =
        LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  }

  // --- one key tile on mma.sync (AttentionTile.cpp) -------------------------
  /// S = Q K^T of one tile: Q's A fragments by ldmatrix at qLaneOff (an XOR
  /// of 16 kk elements a k-step), K's at kLane[c] for d half c. Returns
  /// kKeyGroups accumulators of 4 (keys 8n .. 8n + 7).
  SmallVector<SmallVector<Value>> scoresQK(Value kv, Value qLaneOff,
                                           ArrayRef<Value> kLane);
  /// The online softmax of one tile in base 2: masked scores (bit
  /// maskBit(n, r, e) of `bits`; `whole`, warp-uniform and possibly null,
  /// skips the selects), the integer row maxima, p = exp2(s c - m), l and
  /// the rescaled acc.
  SoftmaxStep onlineSoftmax(ArrayRef<SmallVector<Value>> scores, Value bits,
                            Value whole, Value scaleLog2, const RowState &in);
  /// acc += P V, V by ldmatrix.trans at vLane[pair] (d pairs).
  SmallVector<Value> accumulatePV(Value kv, ArrayRef<Value> vLane,
                                  ArrayRef<SmallVector<Value>> p,
                                  ArrayRef<Value> acc);

  // --- mask bits (AttentionMaskBits.cpp)
  // --------------------------------------
  /// Bit maskBit(n, r, e) set when that (row, key) is allowed: a nonzero byte
  /// of a real key (loads.keyBits) and a row below T (rowBits).
  Value packMask(const MaskLoads &loads, Value rowBits);
  /// quadMaskWords' raw values (per row 5 covering words and a shift) to its
  /// 8 words.
  SmallVector<Value> realignMaskWords(ArrayRef<Value> raw);
  /// The lane's 8 words (keys 16t .. 16t + 15 of rows g and g + 8) to its
  /// mask bits, exchanged in the quad.
  Value exchangeMaskWords(ArrayRef<Value> rowWords, Value laneId, Value t);

  /// The mask bits of keys keyBase + 8n + e (keyBase = 64 tile + 2t) from
  /// positions: key s of the row's slot positions `slotRow` (int64) is
  /// allowed for the query at position qPos[r] (i64) where it is below S,
  /// its slot holds a frame (position >= 0), not after the query and less
  /// than S frames older; rowBits clears rows past T. With `pairs` (a full
  /// tile of a 16-byte aligned row) each key pair is one 16-byte load.
  Value positionMaskBits(Value slotRow, Value keyBase, Value s,
                         ArrayRef<Value> qPos, Value rowBits, bool pairs);

  // --- K/V copies (AttentionCopies.cpp)
  // ---------------------------------------
  /// Whether key tile `tile` holds 64 keys below S.
  Value isFullTile(Value tile, Value s) {
    return cmp(arith::CmpIPredicate::ule, add(mul(tile, kKeys), kKeys), s);
  }
  /// The 16-byte chunk of K/V row `row` that holds logical chunk `chunk`.
  Value kvChunk(Value chunk, Value row, bool tmaSwizzle);
  /// Full tile `tile` into slot `slot` by a CTA of `threads` threads.
  void copyFullTile(const KvCopySource &src, Value tile, Value slot,
                    int64_t threads);
  /// Any tile, any CTA size; keys from S on zero-filled.
  void copyTileAnyRows(const KvCopySource &src, Value s, Value tile,
                       Value slot);
  /// Stage `stage`'s mbarrier: K's (v = false) or, with split barriers, V's.
  Value tripBarrier(Value kv, Value tripBarriers, Value stage, bool v);
  /// Thread 0: the trip's expected bytes and the boxes of the tiles of trip
  /// `firstTile` .. whose bit is set in `active`, into `stage`'s slots.
  void issueTensorTrip(const TensorTripSource &src, Value firstTile,
                       Value stage, Value active);

  // --- merges (AttentionMerge.cpp, AttentionSplitMerge.cpp) ------------------
  /// Group 0's state `mine` merged with the entries of groups 1 .. G-1 at
  /// entryPtr(g), one at a time (a loop to `groups`) or all at once
  /// (`groupCount` constant). `highRows` (may be null) guards rows g + 8.
  SmallVector<Value>
  mergeEntriesInOrder(ArrayRef<Value> mine, Value groups, Value highRows,
                      llvm::function_ref<Value(Value)> entryPtr);
  SmallVector<Value>
  mergeEntriesAtOnce(ArrayRef<Value> mine, int64_t groupCount, Value highRows,
                     llvm::function_ref<Value(Value)> entryPtr);
  /// Vector v (4 floats) of a key group's hand-over entry: its address and
  /// its floats loaded.
  Value entryVector(Value entry, int64_t v) {
    return elementPtr(entry, f32, constI32(4 * v));
  }
  SmallVector<Value> loadEntryVector(Value entry, int64_t v) {
    return loadFloats4(entryVector(entry, v));
  }
  /// Rows g and g + 8 of the lane as m, l (summed over the quad), acc.
  std::array<SmallVector<Value>, 2> finalRows(const RowState &state);
  /// A split's hand-over of `rows` (finalRows) into rank 0's receive slot z
  /// at float `entry` of kv: plain stores for rank 0, st.async completing
  /// on rank 0's mbarrier `barrier` for the others.
  void pushSplitRows(const std::array<SmallVector<Value>, 2> &rows, Value kv,
                     Value entry, Value z, Value slotFloats, Value barrier);
  /// Rank 0's merge of the `splits` slots (slotVector(z, offset): the 16
  /// bytes at float offset of this thread's part of slot z), in order z = 0,
  /// 1, ...: per row r its l then 16 acc at r * (kSplitRowFloats - 1).
  SmallVector<Value>
  mergeSplitRows(Value splits, Value highRows,
                 llvm::function_ref<Value(Value, int64_t)> slotVector);

  // --- the output epilogue (AttentionMerge.cpp) ------------------------------
  /// bf16 of acc / l (0 where l == 0) for query row `row` of this lane.
  void storeOutputRow(const OutputRows &dst, Value row, ArrayRef<Value> acc,
                      Value l);

  // --- helpers
  // -----------------------------------------------------------------
  /// `body()` under `if (highRows)` yielding `otherwise` when it does not
  /// hold; `body()` alone where highRows is null.
  SmallVector<Value> ifHighRows(Value highRows, ArrayRef<Value> otherwise,
                                llvm::function_ref<SmallVector<Value>()> body);
  Value negInf() { return constF32(-std::numeric_limits<double>::infinity()); }
  Value minU(Value l, Value r) { return arith::MinUIOp::create(b, loc, l, r); }
  Value bitAnd(Value l, Value r) { return arith::AndIOp::create(b, loc, l, r); }
  Value bitAnd(Value l, int64_t r) { return bitAnd(l, constOf(l, r)); }
  Value bitOr(Value l, Value r) { return arith::OrIOp::create(b, loc, l, r); }
  Value either(Value l, Value r) { return bitOr(l, r); }
  Value bitXor(Value l, Value r) { return arith::XOrIOp::create(b, loc, l, r); }
  Value shl(Value l, int64_t r) {
    return arith::ShLIOp::create(b, loc, l, constOf(l, r));
  }
  Value shrU(Value l, int64_t r) {
    return arith::ShRUIOp::create(b, loc, l, constOf(l, r));
  }
  Value isZero(Value v) {
    return cmp(arith::CmpIPredicate::eq, v, constOf(v, 0));
  }
  Value notZero(Value v) {
    return cmp(arith::CmpIPredicate::ne, v, constOf(v, 0));
  }
  Value toI32(Value v) { return arith::ExtUIOp::create(b, loc, i32, v); }
  Value fadd(Value l, Value r) { return arith::AddFOp::create(b, loc, l, r); }
  Value fsub(Value l, Value r) { return arith::SubFOp::create(b, loc, l, r); }
  Value fmul(Value l, Value r) { return arith::MulFOp::create(b, loc, l, r); }
  Value fmax(Value l, Value r) {
    return arith::MaxNumFOp::create(b, loc, l, r);
  }
  Value fcmp(arith::CmpFPredicate p, Value l, Value r) {
    return arith::CmpFOp::create(b, loc, p, l, r);
  }
  /// 2^v with ex2.approx.ftz: one MUFU op. (math.exp2 lowers to the non-ftz
  /// form, which wraps it in denormal scaling; results below 2^-126 only
  /// ever weigh a probability that rounds away in bf16.)
  Value exp2(Value v) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
               ValueRange{v})
        .getResult(0);
  }
  Value fma(Value a, Value x, Value c) {
    return math::FmaOp::create(b, loc, a, x, c);
  }
  /// 1/l, or 0 for a row without an allowed key (l == 0).
  Value safeReciprocal(Value l) {
    Value one = constF32(1.0);
    Value positive = fcmp(arith::CmpFPredicate::OGT, l, constF32(0.0));
    return select(positive, arith::DivFOp::create(b, loc, one, l),
                  constF32(0.0));
  }
  Value constBool(bool v) {
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(v));
  }
  /// bar.sync 0 over the CTA.
  void barrier() { NVVM::Barrier0Op::create(b, loc); }
  /// swz(r) of AttentionKernelBuilder.cpp's header, r in [0, 8): Q's rows.
  Value swizzle(Value r) { return bitOr(shl(bitAnd(r, 1), 2), shrU(r, 1)); }

  /// Load of data no kernel writes while this one runs (ld.global.nc).
  Value loadReadOnly(Type type, Value ptr, unsigned alignment) {
    return LLVM::LoadOp::create(b, loc, type, ptr, alignment,
                                /*isVolatile=*/false, /*isNonTemporal=*/false,
                                /*isInvariant=*/true);
  }
  Value load(Type type, Value ptr, unsigned alignment) {
    return LLVM::LoadOp::create(b, loc, type, ptr, alignment);
  }
  void store(Value value, Value ptr, unsigned alignment) {
    LLVM::StoreOp::create(b, loc, value, ptr, alignment);
  }
  Value vectorOf(VectorType type, ArrayRef<Value> values) {
    Value vec = LLVM::PoisonOp::create(b, loc, type);
    for (auto [i, v] : llvm::enumerate(values))
      vec = LLVM::InsertElementOp::create(b, loc, vec, v, constI32(i));
    return vec;
  }
  /// The four floats of the 16-byte vector at `ptr` (shared memory).
  SmallVector<Value> loadFloats4(Value ptr) {
    Value vec = load(v4f32, ptr, 16);
    SmallVector<Value> floats;
    for (int64_t i = 0; i < 4; ++i)
      floats.push_back(lane(vec, i));
    return floats;
  }
  /// Two f32 rounded to bf16 and packed into one 32-bit MMA register (the
  /// first value in the low half).
  Value packBf16x2(Value lo, Value hi) {
    Value pair = vectorOf(v2bf16, {arith::TruncFOp::create(b, loc, bf16, lo),
                                   arith::TruncFOp::create(b, loc, bf16, hi)});
    return LLVM::BitcastOp::create(b, loc, i32, pair);
  }

  /// bar.red.or.pred over the CTA: a barrier that also returns whether any
  /// thread's `pred` is true.
  Value barrierAny(Value pred) {
    auto barrier = NVVM::BarrierOp::create(
        b, loc, i32, /*barrierId=*/Value(), /*numberOfThreads=*/Value(),
        NVVM::BarrierReductionAttr::get(b.getContext(),
                                        NVVM::BarrierReduction::OR),
        toI32(pred));
    return notZero(barrier.getRes());
  }
  Value warpAny(Value pred) { return vote(NVVM::VoteSyncKind::any, pred); }
  Value warpAll(Value pred) { return vote(NVVM::VoteSyncKind::all, pred); }
  Value vote(NVVM::VoteSyncKind kind, Value pred) {
    return NVVM::VoteSyncOp::create(
        b, loc, i1, constI32(-1), pred,
        NVVM::VoteSyncKindAttr::get(b.getContext(), kind));
  }
  /// ldmatrix.x4 (.trans for `col`) of shared memory `kv`; `offset` is this
  /// lane's row address in bf16 elements.
  SmallVector<Value> ldmatrix(Value kv, Value offset, NVVM::MMALayout layout) {
    MLIRContext *ctx = b.getContext();
    Value frags = NVVM::LdMatrixOp::create(
        b, loc, ldmatrixResult, elementPtr(kv, bf16, offset),
        b.getI32IntegerAttr(4), NVVM::MMALayoutAttr::get(ctx, layout),
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
    SmallVector<Value> words;
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(LLVM::ExtractValueOp::create(b, loc, frags, i));
    return words;
  }
  /// Emits `then` under `if (cond)` and `otherwise` under its else.
  template <typename Then, typename Else>
  void emitIfElse(Value cond, Then then, Else otherwise) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    then();
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    otherwise();
  }

  Type i1, i8, ldmatrixResult;
  VectorType v2bf16, v4bf16;
};

} // namespace moss::attention

#endif // MOSS_LIB_KERNELS_ATTENTION_ATTENTIONPIECES_H
