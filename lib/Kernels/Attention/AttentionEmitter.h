//===- AttentionEmitter.h - Emitter of the attention kernels ----*- C++ -*-===//
//
// The IR emitter of the streaming-attention kernels (the design is described
// at the top of AttentionKernelBuilder.cpp): constants of the fragment and
// mask layouts, the online-softmax state of a lane and the AttentionEmitter
// class, whose pieces live in AttentionMask.cpp (mask loads and bits),
// AttentionTrips.cpp (key-tile copies and trip bookkeeping), AttentionMerge.cpp
// (key-group and split merges, output stores) and AttentionKernelBuilder.cpp
// (the kernel body and the tile computation). Private to MossToGPU.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H
#define MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H

#include "Common/KernelEmitter.h"
#include "Common/MlirNames.h"
#include "Common/NvvmSync.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/AttentionParams.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>
#include <limits>
#include <tuple>

namespace moss::attention {

constexpr int64_t kD = config::kAttentionHeadDim;
constexpr int64_t kKeys = config::kAttentionKeysPerTile;
constexpr int64_t kRowsPerWarp = config::kAttentionRowsPerWarp;
constexpr int64_t kMaxThreads = 32 * config::kAttentionMaxWarps;
constexpr int64_t kTileElems = kKeys * kD;     // one K or V tile (bf16)
constexpr int64_t kSlotElems = 2 * kTileElems; // K then V
constexpr int64_t kChunksPerRow = kD * 2 / 16; // 16-byte chunks of a row
/// Per-lane floats a key group hands over in the merge: acc, m[2], l[2].
constexpr int64_t kMergeFloats = 4 * (kD / 8) + 4;
constexpr int64_t kKeyGroups = kKeys / 8; // n8 tiles of S
constexpr int64_t kDGroups = kD / 8;      // n8 tiles of O
/// Per-lane floats of one row a split hands over: m, l, acc (16).
constexpr int64_t kSplitRowFloats = 2 + 2 * kDGroups;
static_assert(2 * kSplitRowFloats == kMergeFloats,
              "a split's hand-over fits a key group's entry");
constexpr double kLog2e = 1.4426950408889634;
/// quadMaskWords' raw values: per row 5 covering words and a shift.
constexpr int64_t kRawMaskValues = 2 * 6;

static_assert(kD == 64 && kKeys == 64, "the fragment maps assume 64 x 64");
static_assert(config::kAttentionSlotBytes == kSlotElems * 2, "slot size");

/// Bit of (row g + 8r, key 8n + 2t + e) in a lane's packed mask word: key
/// group n = 2t' + h comes from quad lane t' (keys 16t'..16t'+15), the order
/// exchangeMaskWords produces; the byte path packs the same way.
constexpr int64_t maskBit(int64_t n, int64_t r, int64_t e) {
  return 16 * (n / 4) + 8 * e + 4 * r + 2 * (n % 2) + (n / 2) % 2;
}
/// The bits of row r (every key group and e).
constexpr uint32_t rowMaskBits(int64_t r) {
  uint32_t bits = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t e = 0; e < 2; ++e)
      bits |= 1u << maskBit(n, r, e);
  return bits;
}
static_assert((rowMaskBits(0) | rowMaskBits(1)) == 0xFFFFFFFFu &&
                  (rowMaskBits(0) & rowMaskBits(1)) == 0,
              "maskBit is a bijection onto 32 bits");

/// Kernel parameters (moss::config::kAttentionParams): kQ, kK, ... kVMap.
enum KernelArg {
#define MOSS_KERNEL_ARG(id, name, kind) k##id,
  MOSS_ATTENTION_PARAMS(MOSS_KERNEL_ARG)
#undef MOSS_KERNEL_ARG
      kNumArgs
};
static_assert(kNumArgs == config::kAttentionParamCount);

/// Online-softmax state of one lane: rows g and g+8 of its warp.
struct RowState {
  Value m[2], l[2];
  SmallVector<Value> acc; ///< kDGroups x 4 accumulators (O layout).

  /// The order in which loops carry, yield and hand over a state:
  /// m[0], m[1], l[0], l[1], acc.
  SmallVector<Value> values() const {
    SmallVector<Value> v = {m[0], m[1], l[0], l[1]};
    llvm::append_range(v, acc);
    return v;
  }
  static RowState fromValues(ValueRange v) {
    RowState st;
    st.m[0] = v[0];
    st.m[1] = v[1];
    st.l[0] = v[2];
    st.l[1] = v[3];
    st.acc.assign(v.begin() + 4, v.end());
    return st;
  }
};

class AttentionEmitter : public KernelEmitter {
public:
  AttentionEmitter(OpBuilder &b, Location loc) : KernelEmitter(b, loc) {
    MLIRContext *ctx = b.getContext();
    i1 = b.getI1Type();
    i8 = b.getI8Type();
    v2bf16 = VectorType::get({2}, bf16);
    v4bf16 = VectorType::get({4}, bf16);
    ldmatrixResult =
        LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  }

  /// The kernel body for a fixed key-group count.
  void emitBody(StringRef smemName, int64_t kvGroups, bool split);
  /// One function for `kvGroups` key groups: with G a constant the group
  /// loops unroll and the other stage scheme drops out.
  void emitMainKernel(gpu::GPUModuleOp module, StringRef smemName,
                      const config::AttentionFunction &f);

private:
  FunctionType kernelType() {
    SmallVector<Type> args;
    for (const config::AttentionParamInfo &param : config::kAttentionParams)
      args.push_back(paramType(param.kind));
    return b.getFunctionType(args, {});
  }
  Type paramType(config::AttentionParamKind kind) {
    switch (kind) {
    case config::AttentionParamKind::GlobalPointer:
      return globalPtr;
    case config::AttentionParamKind::Int64:
      return i64;
    case config::AttentionParamKind::Int32:
      return i32;
    case config::AttentionParamKind::Float32:
      return f32;
    case config::AttentionParamKind::TensorMap:
      // Generic pointers until the pipeline's moss-kernel-byval-args makes
      // them byval .param grid constants.
      return LLVM::LLVMPointerType::get(b.getContext());
    }
    llvm_unreachable("unknown attention parameter kind");
  }
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name,
                              std::optional<int64_t> knownThreads);

  // --- scalar helpers --------------------------------------------------------
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
  Value cmp(arith::CmpIPredicate p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r);
  }
  Value isZero(Value v) {
    return cmp(arith::CmpIPredicate::eq, v, constOf(v, 0));
  }
  Value notZero(Value v) {
    return cmp(arith::CmpIPredicate::ne, v, constOf(v, 0));
  }
  Value toI32(Value v) { return arith::ExtUIOp::create(b, loc, i32, v); }
  /// The bit `mask` of the launch's flags parameter (zero or nonzero).
  Value flag(int64_t mask) { return both(arg(kFlags), constI32(mask)); }
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

  Value blockDim() {
    return gpuIndex(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x));
  }
  Value arg(KernelArg which) { return kernelArgs[which]; }

  // --- memory helpers --------------------------------------------------------
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

  // --- NVVM helpers ----------------------------------------------------------
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
  /// ldmatrix.x4 (.trans for `col`) of the shared K/V buffer; `offset` is
  /// this lane's row address in bf16 elements.
  SmallVector<Value> ldmatrix(Value offset, NVVM::MMALayout layout) {
    MLIRContext *ctx = b.getContext();
    Value frags = NVVM::LdMatrixOp::create(
        b, loc, ldmatrixResult, elementPtr(mv.kv, bf16, offset),
        b.getI32IntegerAttr(4), NVVM::MMALayoutAttr::get(ctx, layout),
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
    SmallVector<Value> words;
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(LLVM::ExtractValueOp::create(b, loc, frags, i));
    return words;
  }
  Value shuffleXor(Value v, int64_t offset) {
    return gpu::ShuffleOp::create(b, loc, v, constI32(offset), constI32(32),
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
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
  /// swz(r) of the file header, for r in [0, 8): Q's rows.
  Value swizzle(Value r) { return bitOr(shl(bitAnd(r, 1), 2), shrU(r, 1)); }
  /// The 16-byte chunk of K/V row `row` (any key of the tile) that holds
  /// logical chunk `chunk`: in the TMA function the engine's 128-byte
  /// swizzle, chunk ^ (row % 8); elsewhere Q's swizzle.
  Value kvChunk(Value chunk, Value row) {
    return bitXor(chunk, tmaCopies ? bitAnd(row, 7) : swizzle(bitAnd(row, 7)));
  }
  /// The function being built copies K and V by the TMA engine (g4_tma,
  /// g2_tma, g1_tma).
  bool tmaCopies = false;
  /// g4_tma_kv: K and V complete on mbarriers of their own, all K boxes
  /// issued first, so a warp's QK^T and softmax run while the V boxes still
  /// land.
  bool splitKvBarriers = false;
  /// Set around computeTile with splitKvBarriers: the V mbarrier and the
  /// trip's parity, spun on before P V.
  Value pvBarrier, pvParity;
  /// Its key-group count G (mv.groups as a constant).
  int64_t groupCount = 1;
  /// bar.sync 0 over the CTA.
  void barrier() { NVVM::Barrier0Op::create(b, loc); }
  Value constBool(bool v) {
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(v));
  }

  // --- main-kernel pieces ----------------------------------------------------
  struct MaskLoads {
    /// 32 bytes in order (n, r, e), or with mv.warpHasHighRows the 16 of row
    /// g in order (n, e) and row g + 8 already packed in highBits.
    SmallVector<Value> bytes;
    Value highBits;
    Value keyBits; ///< bits whose key is real (< S, tile valid).
  };
  /// Whether key tile `tile` holds 64 keys below S.
  Value isFullTile(Value tile) {
    return cmp(arith::CmpIPredicate::ule, add(mul(tile, kKeys), kKeys),
               arg(kS));
  }
  /// Byte offset of `key` in a mask row, the key clamped to S - 1.
  Value clampedMaskOffset(Value key) {
    return mul(toI64(minU(key, sub(arg(kS), constI32(1)))), arg(kMaskStrideS));
  }
  MaskLoads loadMask(Value tile, Value tileValid);
  SmallVector<Value>
  loadMaskRows(llvm::function_ref<Value(int64_t, int64_t, int64_t)> load);
  /// The bytes and packed bits a MaskLoads is made of, in loadMaskRows order.
  int64_t maskLoadValues() const {
    return mv.warpHasHighRows ? 2 * kKeyGroups + 1 : 4 * kKeyGroups;
  }
  Value packMask(const MaskLoads &loads);
  /// Whether tile `tile` takes the word path: a full, valid tile of a mask
  /// contiguous in S (else the tail path or the byte path, loadMask).
  Value wordPathTile(Value tile, Value tileValid) {
    return both(both(tileValid, isFullTile(tile)), mv.maskUnitStride);
  }
  /// Whether the tail tile takes the word path too (with tailWords, where
  /// mv.maskTailWords holds): its covering words clamped to each row's last
  /// word, the bits of keys past S cleared by keyBitsOf.
  Value tailPathTile(Value tile, Value tileValid) {
    return both(both(tileValid, mv.maskTailWords), mv.maskUnitStride);
  }
  /// Bit maskBit(n, r, e) set where key 8n + 2t + e of tile `tile` is < S.
  Value keyBitsOf(Value tile);
  /// The function takes tail tiles on the word path (tailPathTile): the
  /// one-pass one-group function.
  bool tailWords = false;
  /// maskBits in two steps: the loads (issued now), then the packing.
  struct PendingMask {
    Value fast;               ///< wordPathTile: `words` hold the tile
    SmallVector<Value> words; ///< quadMaskWords(raw) of the word path
    MaskLoads bytes;          ///< the byte path's loads
  };
  PendingMask loadMaskBits(Value tile, Value tileValid);
  Value packMaskBits(const PendingMask &pending);
  /// This lane's packed mask bits of key tile `tile` (maskBit order): both
  /// steps at once, in one branch rather than packMaskBits(loadMaskBits())'s
  /// two (the one-group function's code stays the one measured).
  Value maskBits(Value tile, Value tileValid);
  /// Raw: per row the 5 words that cover its 16 bytes and the shift that
  /// realignMaskWords needs (not yet applied, so that nothing waits for the
  /// loads), kRawMaskValues in all.
  SmallVector<Value> quadMaskWords(Value tile, bool raw = false,
                                   bool tail = false);
  SmallVector<Value> realignMaskWords(ArrayRef<Value> raw);
  Value exchangeMaskWords(ArrayRef<Value> rowWords);
  void prefetchMask(Value tile);
  /// This warp's key tile of trip `trip` and whether it is one of the
  /// split's tiles.
  Value myTileIndex(Value trip) { return add(mul(trip, mv.groups), mv.group); }
  Value myTile(Value trip) { return add(mv.tBegin, myTileIndex(trip)); }
  Value myTileValid(Value trip) {
    return lessU(myTileIndex(trip), mv.warpTiles);
  }
  /// Bit g set when group g's tile of `trip` exists (no mask consulted).
  Value validGroups(Value trip);
  /// Bit g set when any thread of group g passes `pred` (a CTA barrier per
  /// group).
  Value groupsWith(Value pred);
  /// The groups that copy and compute `trip`: those with a tile and, with
  /// skip_empty_tiles, a row that may see a key of it (`bits`: this
  /// thread's mask bits of its tile). With the flag off no mask is
  /// consulted, so the grouped functions spend one bar.sync (`tripBarrier`)
  /// or none instead of a reducing barrier per group.
  Value activeGroups(int64_t kvGroups, Value noSkip, Value trip, Value bits,
                     bool tripBarrier);
  void copyTile(Value tile, Value slot);
  void copyFullTile(Value tile, Value slot, int64_t threads);
  void copyTileAnyRows(Value tile, Value slot);
  /// TMA functions: stage `stage`'s mbarrier (after everything else); with
  /// splitKvBarriers the K boxes' (v = false) or the V boxes' (v = true).
  Value tripBarrier(Value stage, bool v = false);
  /// TMA functions, thread 0 at the start: one mbarrier a stage (one
  /// arrival), two with splitKvBarriers.
  void initTripBarriers(int64_t stages);
  /// The parity of trip `trip`'s phase on its stage's mbarriers.
  Value tripParity(Value trip, int64_t stages) {
    return bitAnd(divU(trip, constI32(stages)), 1);
  }
  /// Thread 0: the trip's bytes expected on the stage's mbarrier, and one
  /// box of k_map and one of v_map (64 keys x 128 bytes) a copied tile.
  void issueTensorTrip(Value firstTile, Value stage, Value active);
  /// The trip's tiles into `stage`'s slots (TMA or every thread's cp.async).
  void issueTrip(Value trip, Value stage, Value active);
  /// This thread may read trip `trip`'s tiles once the trip's first CTA
  /// barrier follows: its own cp.async copies (Q's too) have landed and, in
  /// a TMA function, stage `stage`'s mbarrier has completed the phase of
  /// that trip.
  void waitTrip(Value trip, Value stage, int64_t stages);
  /// Only with more than one key group.
  RowState mergeGroups(const RowState &state);
  /// Group 0's `mine` (RowState::values) merged with the entries of groups
  /// 1 .. G-1 at `entryPtr(g)`: one at a time (two groups) or all at once
  /// (three or more).
  SmallVector<Value>
  mergeEntriesInOrder(ArrayRef<Value> mine,
                      llvm::function_ref<Value(Value)> entryPtr);
  SmallVector<Value>
  mergeEntriesAtOnce(ArrayRef<Value> mine,
                     llvm::function_ref<Value(Value)> entryPtr);
  /// Vector v (4 floats, vectorFloats(v)) of a hand-over entry: its address
  /// and its floats loaded.
  Value entryVector(Value entry, int64_t v);
  SmallVector<Value> loadEntryVector(Value entry, int64_t v);
  /// `body()`, the work of rows g + 8, under `if (mv.warpHasHighRows)`
  /// where that is set, yielding `otherwise` when it does not hold: a warp
  /// without such rows (every decode step) neither hands them over nor
  /// merges them.
  SmallVector<Value> ifHighRows(ArrayRef<Value> otherwise,
                                llvm::function_ref<SmallVector<Value>()> body);
  /// Sets the lane's quad coordinates and rows from `lane` and the warp's
  /// first row; returns whether rows g and g+8 are below T.
  std::array<Value, 2> placeRows(Value lane, Value row0);
  /// One key tile for this warp's rows, masked by `bits`; where `whole`
  /// (warp-uniform, may be null) holds, every key is allowed for every row
  /// and the per-score selects are skipped.
  RowState computeTile(Value slot, Value bits, Value whole, const RowState &in);
  std::array<SmallVector<Value>, 2> finalRows(const RowState &state);
  void storeResult(const RowState &state);
  void mergeAndStoreSplits(const RowState &state);
  /// Float offset just past the key groups' merge entries (groups 1..G-1,
  /// one entry a compute thread of a group) and the floats of one group's
  /// entries: where a split's receive slots (of that size) or a TMA
  /// function's trip mbarriers start, as attentionMergeBytes lays them out.
  std::pair<Value, Value> groupEntriesEnd();
  /// Float offset of the split receive slots in the merge area, the floats
  /// of one slot, and the pointer to rank 0's receive mbarrier after them.
  std::tuple<Value, Value, Value> splitSlots();
  /// Split functions, at the start: thread 0 arms the receive mbarrier and
  /// every thread arrives (relaxed) at the cluster barrier that publishes it.
  void armSplitBarrier();
  void storeOutputRow(int64_t r, ArrayRef<Value> acc, Value l);
  /// `slotVector(z, offset)`: the 16-byte vector at float `offset` of this
  /// thread's part of split z's receive slot (mergeAndStoreSplits' layout).
  void mergeSplits(llvm::function_ref<Value(Value, int64_t)> slotVector);

  // Per-kernel values the pieces share.
  struct MainValues {
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
  } mv;

  Type i1, i8, ldmatrixResult;
  VectorType v2bf16, v4bf16;
  SmallVector<Value> kernelArgs;
};

} // namespace moss::attention

#endif // MOSS_LIB_KERNELS_ATTENTION_ATTENTIONEMITTER_H
