//===- AttentionKernelBuilder.cpp - attention kernels as gpu.func ---------===//
//
// Flash-attention style kernel for D = 64, one CTA per (b, h, block of query
// rows, key split). Each warp owns 16 query rows (the MMA's m side). The CTA
// has rowWarps x kvGroups warps: warp w takes rows of row warp w % rowWarps
// and the key tiles of group w / rowWarps. A trip loads kvGroups key tiles
// (one per group) at once; group g computes tile trip * kvGroups + g, so short
// chunks (T <= 32) keep four warps busy on one row block, and the groups'
// online-softmax states merge in shared memory at the end.
//
// Copies. Every thread takes part in every tile of a trip with 16-byte
// cp.async (one commit group per trip; cp.async.bulk of 128-byte rows was
// measured 1.4-3x slower on an H200: the copy engine serializes small
// copies).
// Copy warps: a CTA of two or three key groups of one row warp may carry
// warps past its rowWarps x kvGroups compute warps (the launch rule adds them
// in grids of at most one CTA an SM). They take part in every copy and
// barrier, and have no rows, no tile, no Q area and nothing to compute. A
// warp puts its cp.async copies in flight at about 16 bytes a cycle, so four
// warps instead of two halve the time a trip of 32 KiB takes (H200, H=20
// S=125 B=1 T=1: 3.57 -> 3.37 us, 3.12 -> 2.90 with PDL). The one- and
// four-group functions are built without them: there `computes` is the
// constant true (with the per-thread tests the one-group function's decode
// grids of 320 CTAs got 0.4 us slower).
// Two stages double-buffer the trips for 1..2 groups; 3..4 groups use one
// stage (copy after the compute), so dynamic shared memory stays <= 4 slots
// of 16 KiB.
//
// QK^T. Q is A (row), K^T is B (col), k = d. Lane (g = lane/4, t = lane%4)
// holds the standard m16n8k16 fragments: q[row g / g+8][16kk + 2t (+8)] from
// the warp's Q rows, copied once into shared memory and read per tile with
// ldmatrix.x4 (the trips need the 16 registers they would hold), and
// k[key g][16kk + 2t (+8)] from shared memory with ldmatrix.x4 (four 8x8
// blocks: one key group, four d chunks). Accumulator n (keys 8n..8n+7): c0, c1
// = S[row g][8n+2t, +1], c2, c3 = S[row g+8][same keys].
//
// PV. P is A: the S accumulators of key groups 2j and 2j+1, rounded to bf16,
// are exactly the A fragment of k-step j (FA2's register reuse). V is B
// ("col": two keys of one d per register), read transposed from shared memory
// with ldmatrix.x4.trans.
//
// Shared memory. K and V tiles are [64 keys][64 d] bf16, 128 bytes a row; the
// 16-byte chunk c of key row r sits at chunk c ^ swz(r % 8) with
// swz(r) = ((r & 1) << 2) | (r >> 1), a bijection on 0..7: each ldmatrix
// phase (8 consecutive keys, one logical chunk) hits 32 distinct banks. (The
// low bit is moved up so that 16-byte accesses of keys g, g+1 at chunks 0..3
// would also be conflict-free.)
//
// Online softmax in FP32 and base 2: c = scale * log2(e), masked s -> -inf;
// per row m = running max of s * c rounded up to an integer (every rescale is
// then an exact power of two), p = ex2.approx.ftz(fma(s, c, -m)), l = running
// sum (lane partials, summed over the quad
// at the end). A key tile that is fully masked for a row changes
// nothing: m stays, alpha = 1 by select (not by exp2(0)), p = exp2(-inf) = 0,
// and P·V adds exact zeros. That makes `skip_empty_tiles` (a CTA-wide OR of
// the mask bits through bar.red.or, one tile ahead) bit-exact, and lets a
// warp skip the compute of a tile its rows all mask (vote.any) and the
// mask selects of a tile its rows see whole (vote.all). Rows without
// an allowed key keep m = -inf, l = 0, acc = 0 and are written as 0 (1/l is
// guarded; exp2 never sees -inf - -inf).
//
// Mask. The bits of the tile two ahead are packed at the end of each trip:
// its L1 lines are prefetched before the compute and its bytes loaded after
// it, so they do not occupy 32 registers across the compute. Bit
// maskBit(n, r, e) of a lane's word is (row g + 8r, key 8n + 2t + e). A full
// tile of a mask contiguous in S loads as words (16 bytes of a row per lane,
// nonzero bytes to bits, exchanged in the quad: quadMaskWords and
// exchangeMaskWords); tails and strided masks load bytes (the rows g + 8 only
// where the warp has them) and pack them in the same order.
//
// Registers. The one-group function keeps three CTAs of 4 warps an SM (168
// registers, .minnctapersm 3); the grouped ones, launched for small grids
// only, two (.minnctapersm 2: up to 255).
//
// Split-KV. Each G has a one-pass function (every key tile, the output
// written directly; splits is not read) and a split one: split z of
// gridDim.z walks key tiles [z*tps, min(tiles, (z+1)*tps)), and the splits
// of a (b, h, row block) are one thread-block cluster (1, 1, splits), rank
// z: each pushes its FP32 (m, l, acc) with st.async into its receive slot
// in rank 0's shared memory, completing on rank 0's mbarrier, and rank 0
// merges the slots in order z = 0, 1, ... and writes the output
// (docs/kernel-abi.md, ABI version 8 and on). Against rank 0 reading every rank
// through distributed shared memory between two cluster barriers (ABI 7)
// that took 0.1-1.2 us off the H200's split launches of the decoder's
// cases (benchmarks/results/2026-12-04c-h200); against the global-memory
// merge before it (partials in a workspace, a fence and a counter per row
// block) the clusters had saved 0.5-2.0 us. One function serving one pass
// and splits cost the unsplit launches up to 1.1 us
// (benchmarks/results/2026-12-04b-h200).
//
//===----------------------------------------------------------------------===//

#include "moss/Conversion/MossToGPU/AttentionKernelBuilder.h"
#include "NvvmSync.h"

#include "moss/Config/AttentionLaunch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

#include <array>
#include <limits>
#include <tuple>

using namespace mlir;

namespace moss {
namespace {

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

/// Kernel parameters, in the order of docs/kernel-abi.md.
enum KernelArg {
  kQ,
  kK,
  kV,
  kMask,
  kOut,
  kQStrideB,
  kQStrideH,
  kQStrideT,
  kKStrideB,
  kKStrideH,
  kKStrideS,
  kVStrideB,
  kVStrideH,
  kVStrideS,
  kMaskStrideB,
  kMaskStrideT,
  kMaskStrideS,
  kB,
  kH,
  kT,
  kS,
  kScale,
  kLayout,
  kSkip,
  kSplits,
  kNumArgs
};

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

class AttentionEmitter {
public:
  AttentionEmitter(OpBuilder &b, Location loc) : b(b), loc(loc) {
    MLIRContext *ctx = b.getContext();
    i1 = b.getI1Type();
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    f32 = b.getF32Type();
    bf16 = b.getBF16Type();
    globalPtr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
    sharedPtr = LLVM::LLVMPointerType::get(ctx, kSharedSpace);
    clusterPtr = LLVM::LLVMPointerType::get(ctx, kSharedClusterSpace);
    v4i32 = VectorType::get({4}, i32);
    v4f32 = VectorType::get({4}, f32);
    v2bf16 = VectorType::get({2}, bf16);
    v4bf16 = VectorType::get({4}, bf16);
    mmaResult = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    ldmatrixResult =
        LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  }

  /// The kernel body for a fixed key-group count.
  void emitBody(StringRef smemName, int64_t kvGroups, bool split);
  /// One function for `kvGroups` key groups: with G a constant the group
  /// loops unroll and the other stage scheme drops out (measured on an H200:
  /// a G-generic body cost 10 % at T = 480, G = 1).
  void emitMainKernel(gpu::GPUModuleOp module, StringRef name,
                      StringRef smemName, int64_t kvGroups, bool split);

private:
  FunctionType kernelType() {
    SmallVector<Type> args(kQStrideB, globalPtr);
    args.append(kB - kQStrideB, i64);
    args.append({i32, i32, i32, i32, f32, i32, i32, i32});
    return b.getFunctionType(args, {});
  }
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name,
                              std::optional<int64_t> knownThreads);

  // --- scalar helpers --------------------------------------------------------
  Value constI32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value constI64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value constF32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value constOf(Value like, int64_t v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(like.getType(), v));
  }
  Value negInf() { return constF32(-std::numeric_limits<double>::infinity()); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value add(Value l, int64_t r) { return r == 0 ? l : add(l, constOf(l, r)); }
  Value sub(Value l, Value r) { return arith::SubIOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulIOp::create(b, loc, l, r); }
  Value mul(Value l, int64_t r) { return r == 1 ? l : mul(l, constOf(l, r)); }
  Value divU(Value l, Value r) { return arith::DivUIOp::create(b, loc, l, r); }
  Value divU(Value l, int64_t r) { return divU(l, constOf(l, r)); }
  Value remU(Value l, Value r) { return arith::RemUIOp::create(b, loc, l, r); }
  Value remU(Value l, int64_t r) { return remU(l, constOf(l, r)); }
  Value minU(Value l, Value r) { return arith::MinUIOp::create(b, loc, l, r); }
  Value bitAnd(Value l, Value r) { return arith::AndIOp::create(b, loc, l, r); }
  Value bitAnd(Value l, int64_t r) { return bitAnd(l, constOf(l, r)); }
  Value bitOr(Value l, Value r) { return arith::OrIOp::create(b, loc, l, r); }
  Value both(Value l, Value r) { return bitAnd(l, r); }
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
  Value lessU(Value l, Value r) { return cmp(arith::CmpIPredicate::ult, l, r); }
  Value lessU(Value l, int64_t r) { return lessU(l, constOf(l, r)); }
  Value isZero(Value v) {
    return cmp(arith::CmpIPredicate::eq, v, constOf(v, 0));
  }
  Value notZero(Value v) {
    return cmp(arith::CmpIPredicate::ne, v, constOf(v, 0));
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
  Value toI64(Value v) { return arith::ExtUIOp::create(b, loc, i64, v); }
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

  Value threadIdx() {
    return gpuIndex(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  }
  Value blockDim() {
    return gpuIndex(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x));
  }
  Value blockIdx(gpu::Dimension d) {
    return gpuIndex(gpu::BlockIdOp::create(b, loc, d));
  }
  Value gpuIndex(Value index) {
    return arith::IndexCastUIOp::create(b, loc, i32, index);
  }
  Value arg(KernelArg which) { return kernelArgs[which]; }

  // --- memory helpers --------------------------------------------------------
  Value elementPtr(Value base, Type elem, Value offset) {
    return LLVM::GEPOp::create(b, loc, base.getType(), elem, base,
                               ValueRange{offset});
  }
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
  Value lane(Value vec, int64_t i) {
    return LLVM::ExtractElementOp::create(b, loc, vec, constI32(i));
  }
  Value vectorOf(VectorType type, ArrayRef<Value> values) {
    Value vec = LLVM::PoisonOp::create(b, loc, type);
    for (auto [i, v] : llvm::enumerate(values))
      vec = LLVM::InsertElementOp::create(b, loc, vec, v, constI32(i));
    return vec;
  }
  /// Two f32 rounded to bf16 and packed into one 32-bit MMA register (the
  /// first value in the low half).
  Value packBf16x2(Value lo, Value hi) {
    Value pair = vectorOf(v2bf16, {arith::TruncFOp::create(b, loc, bf16, lo),
                                   arith::TruncFOp::create(b, loc, bf16, hi)});
    return LLVM::BitcastOp::create(b, loc, i32, pair);
  }

  // --- NVVM helpers ----------------------------------------------------------
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> c) {
    Value d = NVVM::MmaOp::create(
        b, loc, mmaResult, a, bFrag, c, ArrayRef<int64_t>{16, 8, 16},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> out;
    for (int64_t i = 0; i < 4; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return out;
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

  /// Emits `body` under `if (cond)`.
  template <typename Fn> void emitIf(Value cond, Fn body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body();
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
  /// swz(r) of the file header, for r in [0, 8).
  Value swizzle(Value r) { return bitOr(shl(bitAnd(r, 1), 2), shrU(r, 1)); }
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
  /// contiguous in S (else the byte path, loadMask).
  Value wordPathTile(Value tile, Value tileValid) {
    return both(both(tileValid, isFullTile(tile)), mv.maskUnitStride);
  }
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
  SmallVector<Value> quadMaskWords(Value tile, bool raw = false);
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
  void issueTrip(Value trip, Value stage, Value active);
  void waitTrip();
  /// Only with more than one key group.
  RowState mergeGroups(const RowState &state);
  /// `body()`, the work of rows g + 8, under `if (mv.warpHasHighRows)`
  /// where that is set, yielding `otherwise` when it does not hold: a warp
  /// without such rows (every decode step) neither hands them over nor
  /// merges them (H200, H=12 S=250 B=1 T=1: 4.43 -> 4.21 us).
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
  /// Float offset of the split receive slots in the merge area, the floats
  /// of one slot, and the pointer to rank 0's receive mbarrier after them.
  std::tuple<Value, Value, Value> splitSlots();
  /// Split functions, at the start: thread 0 arms the receive mbarrier and
  /// every thread arrives (relaxed) at the cluster barrier that publishes it.
  void armSplitBarrier();
  void storeOutputRow(int64_t r, ArrayRef<Value> acc, Value l);
  /// `loadSplit(z)`: split z's rows g and g + 8, each as m, l, acc
  /// (kSplitRowFloats).
  void mergeSplits(llvm::function_ref<SmallVector<Value>(Value)> loadSplit);

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
    Value rowBits;         ///< mask bits of rows below T (rowMaskBits).
    Value maskUnitStride;  ///< mask contiguous in S.
    Value maskAligned;     ///< and every row 16-byte aligned.
    Value warpHasHighRows; ///< set: row g + 8 loads only when T > row0 + 8.
    Value kHead, vHead;
    Value qLaneOff; ///< lane's ldmatrix offset of its Q rows, d 0..15.
    Value scaleLog2;
    Value kv; ///< dynamic shared memory (slots, then Q rows), bf16 offsets.
    /// Float offset of the merge area (after every warp's Q rows): the key
    /// groups' entries, then the split hand-over.
    Value mergeBase;
    Value kLaneOff; ///< lane's ldmatrix offset in a K tile, d chunk 0.
    Value vLaneOff; ///< lane's ldmatrix offset in a V tile, d pair 0.
  } mv;

  OpBuilder &b;
  Location loc;
  Type i1, i8, i32, i64, f32, bf16, globalPtr, sharedPtr, clusterPtr, mmaResult,
      ldmatrixResult;
  VectorType v4i32, v4f32, v2bf16, v4bf16;
  SmallVector<Value> kernelArgs;
};

gpu::GPUFuncOp
AttentionEmitter::createKernel(gpu::GPUModuleOp module, StringRef name,
                               std::optional<int64_t> knownThreads) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, name, kernelType());
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  if (knownThreads) {
    fn.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(*knownThreads), 1, 1}));
  } else {
    // blockDim.x is 32 * warps (1..4 warps): a bound, not a fixed size.
    fn->setAttr(
        NVVM::NVVMDialect::getMaxntidAttrName(),
        b.getDenseI32ArrayAttr({static_cast<int32_t>(kMaxThreads), 1, 1}));
  }
  b.setInsertionPointToStart(&fn.getBody().front());
  kernelArgs.assign(fn.getArguments().begin(), fn.getArguments().end());
  return fn;
}

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
  scf::YieldOp::create(b, loc, packMask(loadMask(tile, tileValid)));
  return ifOp.getResult(0);
}

/// Quad lane t loads keys 16t..16t+15 of rows g and g+8 (16 bytes each) as
/// 4 words a row: one vector load when every row is 16-byte aligned (S =
/// 400), else the 4-byte words that cover them (5 loads, the fifth only when
/// the bytes straddle it) shifted into place. Rows g + 8 only where the warp
/// has them (ifHighRows), else zeros.
SmallVector<Value> AttentionEmitter::quadMaskWords(Value tile, bool raw) {
  Value keyOff = toI64(add(mul(tile, kKeys), mul(mv.t, 16)));
  const int64_t perRow = raw ? kRawMaskValues / 2 : 4;
  auto loadRows = [&](ArrayRef<int64_t> rows) {
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
    words.clear();
    for (int64_t r : rows) {
      Value rowBytes = elementPtr(mv.maskRow[r], i8, keyOff);
      Value misalign = arith::TruncIOp::create(
          b, loc, i32,
          bitAnd(LLVM::PtrToIntOp::create(b, loc, i64, rowBytes), 3));
      Value base = elementPtr(rowBytes, i8, sub(constI64(0), toI64(misalign)));
      Value shift = mul(misalign, 8);
      SmallVector<Value> covering;
      for (int64_t i = 0; i < 4; ++i)
        covering.push_back(
            loadReadOnly(i32, elementPtr(base, i8, constI64(4 * i)), 4));
      // The fifth word holds a byte of the row only when misaligned; when
      // aligned it is never used, so it reloads the first (in bounds).
      Value fifth = LLVM::SelectOp::create(
          b, loc, notZero(misalign), elementPtr(base, i8, constI64(16)), base);
      covering.push_back(loadReadOnly(i32, fifth, 4));
      if (raw) {
        llvm::append_range(words, covering);
        words.push_back(shift);
        continue;
      }
      for (int64_t i = 0; i < 4; ++i)
        words.push_back(
            LLVM::FshrOp::create(b, loc, covering[i + 1], covering[i], shift));
    }
    scf::YieldOp::create(b, loc, words);
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

Value AttentionEmitter::validGroups(Value trip) {
  Value first = mul(trip, mv.groups);
  Value left =
      select(lessU(first, mv.nTiles), sub(mv.nTiles, first), constI32(0));
  Value count = minU(left, mv.groups);
  return sub(arith::ShLIOp::create(b, loc, constI32(1), count), constI32(1));
}

Value AttentionEmitter::groupsWith(Value pred) {
  auto loop = scf::ForOp::create(b, loc, constI32(0), mv.groups, constI32(1),
                                 ValueRange{constI32(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(loop.getBody());
  Value g = loop.getInductionVar();
  Value mine = cmp(arith::CmpIPredicate::eq, mv.group, g);
  Value any = toI32(barrierAny(both(mine, pred)));
  Value bits =
      bitOr(loop.getRegionIterArgs()[0], arith::ShLIOp::create(b, loc, any, g));
  scf::YieldOp::create(b, loc, bits);
  return loop.getResult(0);
}

Value AttentionEmitter::activeGroups(int64_t kvGroups, Value noSkip, Value trip,
                                     Value bits, bool tripBarrier) {
  auto withMask = [&] {
    return groupsWith(both(myTileValid(trip), either(noSkip, notZero(bits))));
  };
  if (kvGroups == 1)
    return withMask();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, noSkip,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  if (tripBarrier)
    barrier();
  scf::YieldOp::create(b, loc, validGroups(trip));
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, withMask());
  return ifOp.getResult(0);
}

/// cp.async of key tile `tile` (K and V, 64 rows each) into slot `slot`.
void AttentionEmitter::copyTile(Value tile, Value slot) {
  // Full tiles of CTAs of 4 or 2 warps (the long-chunk and decode
  // launches): an unrolled copy at constant shared-memory offsets.
  Value full = isFullTile(tile);
  auto ofThreads = [&](int64_t threads) {
    return both(full,
                cmp(arith::CmpIPredicate::eq, mv.threads, constI32(threads)));
  };
  emitIfElse(
      ofThreads(128), [&] { copyFullTile(tile, slot, 128); },
      [&] {
        emitIfElse(
            ofThreads(64), [&] { copyFullTile(tile, slot, 64); },
            [&] { copyTileAnyRows(tile, slot); });
      });
}

/// Full tile `tile` into `slot` by a CTA of `threads` threads: thread i
/// copies chunk i % 8 of key rows i / 8 + j * threads / 8, which keep the
/// row's swizzle (threads / 8 is a multiple of 8), so only the global
/// pointers step.
void AttentionEmitter::copyFullTile(Value tile, Value slot, int64_t threads) {
  int64_t rowsPerPass = threads / kChunksPerRow;
  assert(rowsPerPass % 8 == 0 && kKeys % rowsPerPass == 0);
  Value chunk = bitAnd(mv.tid, kChunksPerRow - 1);
  Value row = shrU(mv.tid, 3);
  Value key = toI64(add(mul(tile, kKeys), row));
  Value srcCol = toI64(mul(chunk, 8));
  Value physChunk = bitXor(chunk, swizzle(bitAnd(row, 7)));
  Value dst = add(mul(slot, kSlotElems), add(mul(row, kD), mul(physChunk, 8)));
  struct Operand {
    Value head;
    KernelArg stride;
    int64_t smemOffset;
  };
  for (const Operand &op : {Operand{mv.kHead, kKStrideS, 0},
                            Operand{mv.vHead, kVStrideS, kTileElems}}) {
    Value src =
        elementPtr(op.head, bf16, add(mul(key, arg(op.stride)), srcCol));
    Value step = mul(arg(op.stride), rowsPerPass);
    for (int64_t j = 0; j < kKeys / rowsPerPass; ++j) {
      if (j > 0)
        src = elementPtr(src, bf16, step);
      Value smem = elementPtr(mv.kv, bf16,
                              add(dst, op.smemOffset + j * rowsPerPass * kD));
      NVVM::CpAsyncOp::create(b, loc, smem, src, 16,
                              NVVM::LoadCacheModifierKind::CG,
                              /*cpSize=*/Value());
    }
  }
}

/// Any tile, any CTA size. Thread i copies 16-byte chunk i % 8 of key rows i /
/// 8, i / 8 + step, i / 8 + 2 step, ... (step = threads / 8), two rows a trip:
/// 2 step is a multiple of 8 for 1..4 warps, so each of the two slots keeps its
/// swizzle and a trip costs pointer bumps and four copies. Rows past S (tail
/// tile only) are zero-filled (src-size 0, read from the head's first row), so
/// P·V never reads garbage.
void AttentionEmitter::copyTileAnyRows(Value tile, Value slot) {
  Value s = arg(kS);
  Value chunk = bitAnd(mv.tid, kChunksPerRow - 1);
  Value row0 = shrU(mv.tid, 3);
  Value rowStep = shrU(mv.threads, 3);
  Value pairStep = mul(rowStep, 2);
  Value keyBase = mul(tile, kKeys);
  Value full = isFullTile(tile);
  Value srcCol = toI64(mul(chunk, 8));
  Value stageBase = mul(slot, kSlotElems);
  struct Operand {
    Value head;
    KernelArg stride;
    int64_t smemOffset;
  };
  const Operand operands[] = {{mv.kHead, kKStrideS, 0},
                              {mv.vHead, kVStrideS, kTileElems}};
  // Carried: per slot j, the K and V source pointers and the smem offset.
  SmallVector<Value> init, step;
  for (int64_t slot = 0; slot < 2; ++slot) {
    Value row = add(row0, mul(rowStep, slot));
    for (const Operand &op : operands)
      init.push_back(elementPtr(
          op.head, bf16,
          add(mul(toI64(add(keyBase, row)), arg(op.stride)), srcCol)));
    Value physChunk = bitXor(chunk, swizzle(bitAnd(row, 7)));
    init.push_back(add(stageBase, add(mul(row, kD), mul(physChunk, 8))));
  }
  for (const Operand &op : operands)
    step.push_back(mul(toI64(pairStep), arg(op.stride)));
  Value dstStep = mul(pairStep, kD);
  auto loop = scf::ForOp::create(b, loc, row0, constI32(kKeys), pairStep, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> next;
    for (int64_t slot = 0; slot < 2; ++slot) {
      Value row = add(loop.getInductionVar(), mul(rowStep, slot));
      auto copyRow = [&] {
        Value inRange = either(full, lessU(add(keyBase, row), s));
        Value bytes = select(inRange, constI32(16), constI32(0));
        Value dst = carried[3 * slot + 2];
        for (auto [i, op] : llvm::enumerate(operands)) {
          Value from = LLVM::SelectOp::create(b, loc, inRange,
                                              carried[3 * slot + i], op.head);
          Value smem = elementPtr(mv.kv, bf16, add(dst, op.smemOffset));
          NVVM::CpAsyncOp::create(b, loc, smem, from, 16,
                                  NVVM::LoadCacheModifierKind::CG, bytes);
        }
      };
      // Slot 1 can pass the tile's end only when 64 is not a multiple of
      // 2 step (3 warps).
      if (slot == 0)
        copyRow();
      else
        emitIf(lessU(row, kKeys), copyRow);
      for (int64_t i = 0; i < 2; ++i)
        next.push_back(elementPtr(carried[3 * slot + i], bf16, step[i]));
      next.push_back(add(carried[3 * slot + 2], dstStep));
    }
    scf::YieldOp::create(b, loc, next);
  }
}

/// Copies the tiles of trip `trip` whose bit is set in `active` into the
/// slots of `stage` (every thread takes part in every tile) as one cp.async
/// group.
void AttentionEmitter::issueTrip(Value trip, Value stage, Value active) {
  Value firstTile = add(mv.tBegin, mul(trip, mv.groups));
  auto loop = scf::ForOp::create(b, loc, constI32(0), mv.groups, constI32(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value g = loop.getInductionVar();
    Value on = notZero(bitAnd(arith::ShRUIOp::create(b, loc, active, g), 1));
    emitIf(on,
           [&] { copyTile(add(firstTile, g), add(mul(stage, mv.groups), g)); });
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

/// This thread's copies of the trip are done (the trip's first CTA barrier
/// then makes everyone's visible).
void AttentionEmitter::waitTrip() {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
}

SmallVector<Value>
AttentionEmitter::ifHighRows(ArrayRef<Value> otherwise,
                             llvm::function_ref<SmallVector<Value>()> body) {
  if (!mv.warpHasHighRows)
    return body();
  if (otherwise.empty()) {
    emitIf(mv.warpHasHighRows, [&] { body(); });
    return {};
  }
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(otherwise).getTypes(),
                                mv.warpHasHighRows, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, body());
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, otherwise);
  return SmallVector<Value>(ifOp.getResults());
}

/// Key groups 1.. hand their online-softmax state to group 0 through the
/// merge area of shared memory (after the Q rows, so a group hands over as
/// soon as its own last tile is done); group 0 merges them in
/// order g = 1, 2, ... like the split merge (every m an integer, so the
/// rescales are exact powers of two and a group without an allowed key, m =
/// -inf, weighs exactly 0). Other warps keep their state, unused.
RowState AttentionEmitter::mergeGroups(const RowState &state) {
  SmallVector<Value> mine = state.values();
  // A hand-over is nine 16-byte vectors of RowState::values floats: vector 0
  // holds m and l of both rows, vectors 1 + q (row g) and 5 + q (row g + 8)
  // the row's acc of key groups n = 2q, 2q + 1. Only the first five exist
  // without rows g + 8 (decode steps: ifHighRows).
  auto vectorFloats = [](int64_t v) {
    if (v == 0)
      return SmallVector<int64_t>{0, 1, 2, 3};
    int64_t r = (v - 1) / 4, q = (v - 1) % 4;
    SmallVector<int64_t> idx;
    for (int64_t n = 2 * q; n < 2 * q + 2; ++n)
      for (int64_t e = 0; e < 2; ++e)
        idx.push_back(4 + 4 * n + 2 * r + e);
    return idx;
  };
  constexpr int64_t kVectors = kMergeFloats / 4, kLowVectors = 5;
  // Entry of the thread at place p of group g >= 1: the kMergeFloats floats
  // at ((g - 1) * perGroup + p) * kMergeFloats of the merge area (a stride
  // of 36 words: the 8 lanes of a vector phase hit distinct banks), so
  // every vector is a constant offset from one base.
  Value perGroup = divU(mv.computeThreads, mv.groups);
  Value place = sub(mv.tid, mul(mv.group, perGroup));
  auto entryPtr = [&](Value group) {
    Value entry = add(mul(sub(group, constI32(1)), perGroup), place);
    return elementPtr(mv.kv, f32,
                      add(mv.mergeBase, mul(entry, constI32(kMergeFloats))));
  };
  auto vectorPtr = [&](Value entry, int64_t v) {
    return elementPtr(entry, f32, constI32(4 * v));
  };
  // The entries lie in the merge area, not in the slots that other warps
  // may still read: a group hands over as soon as its last tile is done.
  emitIf(both(notZero(mv.group), mv.computes), [&] {
    Value entry = entryPtr(mv.group);
    auto storeVectors = [&](int64_t from, int64_t to) {
      for (int64_t v = from; v < to; ++v) {
        SmallVector<Value> values;
        for (int64_t i : vectorFloats(v))
          values.push_back(mine[i]);
        store(vectorOf(v4f32, values), vectorPtr(entry, v), 16);
      }
      return SmallVector<Value>();
    };
    storeVectors(0, kLowVectors);
    ifHighRows({}, [&] { return storeVectors(kLowVectors, kVectors); });
  });
  barrier();
  Value merging = isZero(mv.group);
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(mine).getTypes(), merging,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    auto loop =
        scf::ForOp::create(b, loc, constI32(1), mv.groups, constI32(1), mine);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToEnd(loop.getBody());
      Value entry = entryPtr(loop.getInductionVar());
      SmallVector<Value> run(loop.getRegionIterArgs());
      // Group g's floats, loaded a vector at a time (rows g + 8 only where
      // the warp has them).
      auto loadVectors = [&](int64_t from, int64_t to) {
        SmallVector<Value> floats;
        for (int64_t v = from; v < to; ++v) {
          Value vec = load(v4f32, vectorPtr(entry, v), 16);
          for (int64_t i = 0; i < 4; ++i)
            floats.push_back(lane(vec, i));
        }
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
      // Row r: m, l and its acc in `run` / `other` (RowState::values order).
      auto rowFloats = [&](int64_t r) {
        SmallVector<int64_t> idx = {r, 2 + r};
        for (int64_t v = 1 + 4 * r; v < 5 + 4 * r; ++v)
          llvm::append_range(idx, vectorFloats(v));
        return idx;
      };
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
      SmallVector<Value> high = ifHighRows(keepHigh, [&] {
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
    scf::YieldOp::create(b, loc, loop.getResults());
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, mine);
  }
  return RowState::fromValues(ifOp.getResults());
}

RowState AttentionEmitter::computeTile(Value slot, Value bits, Value whole,
                                       const RowState &in) {
  Value kBase = mul(slot, kSlotElems);
  Value vBase = add(kBase, kTileElems);

  // The lane's addresses: chunk (matrix + 4c) ^ swz = (matrix ^ swz) ^ 4c
  // (matrix < 4), so d half c is an XOR of 32 elements; likewise V pair p is
  // an XOR of 16p. The tile bases are multiples of 4096 elements, above
  // every bit the XORs touch.
  Value kLane[2], vLane[kDGroups / 2];
  kLane[0] = add(kBase, mv.kLaneOff);
  kLane[1] = bitXor(kLane[0], constI32(4 * 8));
  vLane[0] = add(vBase, mv.vLaneOff);
  for (int64_t pair = 1; pair < kDGroups / 2; ++pair)
    vLane[pair] = bitXor(vLane[0], constI32(2 * pair * 8));

  // Q's A fragments from the warp's copy in shared memory (kept there, not
  // in 16 registers, through the trips): k-step kk is chunk 2kk + lane/16,
  // an XOR of 16 kk elements.
  SmallVector<Value> q[4];
  for (int64_t kk = 0; kk < 4; ++kk)
    q[kk] =
        ldmatrix(bitXor(mv.qLaneOff, constI32(16 * kk)), NVVM::MMALayout::row);

  // S = Q K^T: accumulator n holds keys 8n .. 8n+7.
  SmallVector<SmallVector<Value>> sAcc;
  Value zero = constF32(0.0);
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    SmallVector<Value> acc(4, zero);
    for (int64_t c = 0; c < 2; ++c) {
      Value offset = add(kLane[c], 8 * n * kD);
      SmallVector<Value> k = ldmatrix(offset, NVVM::MMALayout::row);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t kk = 2 * c + h;
        Value kFrag[] = {k[2 * h], k[2 * h + 1]};
        acc = mma(q[kk], kFrag, acc);
      }
    }
    sAcc.push_back(acc);
  }

  // Masked raw scores and the new row maxima. The scale (times log2 e) is
  // applied once to the maximum and folded into p's FMA below: scale > 0, so
  // round(max(s) * c) = max(round(s * c)).
  Value minusInf = negInf();
  // Scores (n-major, 4 per key group), then the lane's two row maxima.
  auto maskScores = [&](bool masked) {
    SmallVector<Value> scores;
    Value rowMax[2] = {minusInf, minusInf};
    for (int64_t n = 0; n < kKeyGroups; ++n) {
      for (int64_t c = 0; c < 4; ++c) {
        Value v = sAcc[n][c];
        if (masked)
          v = select(notZero(bitAnd(shrU(bits, maskBit(n, c / 2, c % 2)), 1)),
                     v, minusInf);
        scores.push_back(v);
        rowMax[c / 2] = fmax(rowMax[c / 2], v);
      }
    }
    scores.append({rowMax[0], rowMax[1]});
    return scores;
  };
  SmallVector<Value> scores;
  if (whole) {
    SmallVector<Type> types(4 * kKeyGroups + 2, f32);
    auto ifOp =
        scf::IfOp::create(b, loc, types, whole, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, maskScores(false));
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, maskScores(true));
    scores.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  } else {
    scores = maskScores(true);
  }
  SmallVector<SmallVector<Value>> x(kKeyGroups);
  for (int64_t n = 0; n < kKeyGroups; ++n)
    x[n].assign(scores.begin() + 4 * n, scores.begin() + 4 * n + 4);
  Value tileMax[2] = {scores[4 * kKeyGroups], scores[4 * kKeyGroups + 1]};
  RowState out;
  Value mUse[2], alpha[2];
  for (int64_t r = 0; r < 2; ++r) {
    // The quad (lanes 4g .. 4g+3) shares rows g and g+8.
    Value rowMax = fmax(tileMax[r], shuffleXor(tileMax[r], 1));
    rowMax = fmax(rowMax, shuffleXor(rowMax, 2));
    // An integer maximum makes every rescale an exact power of two, so a
    // p rounded to bf16 is the same value whichever maximum it was taken
    // against: split-KV and single pass then differ only by FP32 summation
    // order. ceil(-inf) = -inf.
    rowMax = math::CeilOp::create(b, loc, fmul(rowMax, mv.scaleLog2));
    Value mNew = fmax(in.m[r], rowMax);
    Value noKey = fcmp(arith::CmpFPredicate::OEQ, mNew, minusInf);
    mUse[r] = select(noKey, zero, mNew);
    Value same = fcmp(arith::CmpFPredicate::OEQ, mNew, in.m[r]);
    alpha[r] = select(same, constF32(1.0), exp2(fsub(in.m[r], mUse[r])));
    out.m[r] = mNew;
  }
  // p = exp2(s * c - m), one FMA: masked keys give exp2(-inf) = 0 exactly.
  SmallVector<SmallVector<Value>> p(kKeyGroups);
  Value rowSum[2], negM[2];
  for (int64_t r = 0; r < 2; ++r) {
    rowSum[r] = fmul(in.l[r], alpha[r]);
    negM[r] = arith::NegFOp::create(b, loc, mUse[r]);
  }
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    for (int64_t c = 0; c < 4; ++c) {
      Value pv = exp2(fma(x[n][c], mv.scaleLog2, negM[c / 2]));
      p[n].push_back(pv);
      rowSum[c / 2] = fadd(rowSum[c / 2], pv);
    }
  }
  out.l[0] = rowSum[0];
  out.l[1] = rowSum[1];
  for (int64_t i = 0; i < kDGroups * 4; ++i)
    out.acc.push_back(fmul(in.acc[i], alpha[(i % 4) / 2]));

  // O += P V, k-step j = keys 16j .. 16j+15.
  for (int64_t j = 0; j < kKeys / 16; ++j) {
    Value a[] = {packBf16x2(p[2 * j][0], p[2 * j][1]),
                 packBf16x2(p[2 * j][2], p[2 * j][3]),
                 packBf16x2(p[2 * j + 1][0], p[2 * j + 1][1]),
                 packBf16x2(p[2 * j + 1][2], p[2 * j + 1][3])};
    for (int64_t pair = 0; pair < kDGroups / 2; ++pair) {
      Value offset = add(vLane[pair], 16 * j * kD);
      SmallVector<Value> v = ldmatrix(offset, NVVM::MMALayout::col);
      for (int64_t half = 0; half < 2; ++half) {
        int64_t n = 2 * pair + half;
        Value vFrag[] = {v[2 * half], v[2 * half + 1]};
        SmallVector<Value> acc =
            mma(a, vFrag, ArrayRef<Value>(out.acc).slice(4 * n, 4));
        std::copy(acc.begin(), acc.end(), out.acc.begin() + 4 * n);
      }
    }
  }
  return out;
}

/// bf16 of acc / l for row r of this lane (16 values: d = 8n + 2t, +1),
/// stored in the requested layout.
void AttentionEmitter::storeOutputRow(int64_t r, ArrayRef<Value> acc, Value l) {
  Value heads = toI64(arg(kH)), tq = toI64(arg(kT));
  Value b64 = toI64(mv.b), h64 = toI64(mv.h), row = toI64(mv.row[r]);
  Value bthdRow = add(mul(add(mul(b64, tq), row), heads), h64);
  Value bhtdRow = add(mul(add(mul(b64, heads), h64), tq), row);
  Value rowOffset = mul(select(isZero(arg(kLayout)), bthdRow, bhtdRow), kD);
  Value base = elementPtr(arg(kOut), bf16, add(rowOffset, mv.laneCol));
  Value inv = safeReciprocal(l);
  for (int64_t n = 0; n < kDGroups; ++n) {
    Value packed = packBf16x2(fmul(acc[2 * n], inv), fmul(acc[2 * n + 1], inv));
    store(packed, elementPtr(base, bf16, constI32(8 * n)), 4);
  }
}

/// Rows g and g+8 of this lane as m, l (summed over the quad), then acc in
/// column order (d = 8n + 2t, +1).
std::array<SmallVector<Value>, 2>
AttentionEmitter::finalRows(const RowState &state) {
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
void AttentionEmitter::storeResult(const RowState &state) {
  std::array<SmallVector<Value>, 2> rows = finalRows(state);
  for (int64_t r = 0; r < 2; ++r)
    emitIf(mv.rowValid[r], [&] {
      storeOutputRow(r, ArrayRef<Value>(rows[r]).drop_front(2), rows[r][1]);
    });
}

/// Split functions: the splits of one (b, h, row block) are the CTAs of one
/// thread-block cluster (1, 1, splits), rank z. Each hands its rows' (m, l,
/// acc) to rank 0 (st.async into receive slot z, its own with plain
/// stores); rank 0 waits on its mbarrier, merges the slots in order z = 0,
/// 1, ... and writes the output, so the result does not depend on which
/// split finished first. (With splits == 1 this is the one-pass result,
/// slower.)
void AttentionEmitter::mergeAndStoreSplits(const RowState &state) {
  std::array<SmallVector<Value>, 2> rows = finalRows(state);
  // Receive slot z, after the key groups' entries (splitSlots), holds split
  // z's hand-over; group 0's thread tid at float 36 tid of it: (m, l) of
  // both rows, then row g's acc, then row g + 8's, as 16-byte vectors (a
  // stride of 36 words puts the 8 lanes of a vector phase on distinct
  // banks). Rank 0 writes its own slot, the others push theirs into rank
  // 0's with st.async, completing bytes on its mbarrier.
  auto [slots, slotFloats, barrier] = splitSlots();
  Value entry = add(slots, mul(mv.tid, kMergeFloats));
  auto accAt = [](int64_t r, int64_t q) {
    return 4 + 2 * kDGroups * r + 4 * q;
  };
  SmallVector<std::pair<int64_t, SmallVector<Value>>> vectors = {
      {0, {rows[0][0], rows[0][1], rows[1][0], rows[1][1]}}};
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t q = 0; q < kDGroups / 2; ++q)
      vectors.push_back(
          {accAt(r, q),
           SmallVector<Value>(ArrayRef<Value>(rows[r]).slice(2 + 4 * q, 4))});
  // Rank 0's mbarrier is initialized (armSplitBarrier, then every rank's
  // relaxed arrive at the start).
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  Value writer = both(isZero(mv.group), mv.computes);
  emitIf(writer, [&] {
    auto ifOp = scf::IfOp::create(b, loc, isZero(mv.z),
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    for (auto &[offset, values] : vectors)
      store(vectorOf(v4f32, values),
            elementPtr(mv.kv, f32, add(entry, constI32(offset))), 16);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    Value mine = add(entry, mul(mv.z, slotFloats));
    Value zero = constI32(0);
    Value remote = NVVM::MapaOp::create(b, loc, clusterPtr,
                                        elementPtr(mv.kv, f32, mine), zero);
    Value remoteBarrier =
        NVVM::MapaOp::create(b, loc, clusterPtr, barrier, zero);
    for (auto &[offset, values] : vectors)
      emitStAsyncV4F32(b, loc, elementPtr(remote, f32, constI32(offset)),
                       values, remoteBarrier);
  });
  // Rank 0 waits for the other splits' bytes and merges the slots in order
  // z = 0, 1, ...; the other ranks are done (their pushes need nothing of
  // them), and rank 0's slots live until it has read them.
  emitIf(both(writer, isZero(mv.z)), [&] {
    emitSpinOnPhase0(b, loc, barrier);
    mergeSplits([&](Value z) {
      Value base = add(entry, mul(z, slotFloats));
      auto vectorAt = [&](int64_t i) {
        return elementPtr(mv.kv, f32, add(base, constI32(i)));
      };
      Value ml = load(v4f32, vectorAt(0), 16);
      SmallVector<Value> v;
      for (int64_t r = 0; r < 2; ++r) {
        v.append({lane(ml, 2 * r), lane(ml, 2 * r + 1)});
        auto loadAcc = [&] {
          SmallVector<Value> acc;
          for (int64_t q = 0; q < kDGroups / 2; ++q) {
            Value four = load(v4f32, vectorAt(accAt(r, q)), 16);
            for (int64_t e = 0; e < 4; ++e)
              acc.push_back(lane(four, e));
          }
          return acc;
        };
        llvm::append_range(
            v, r == 0
                   ? loadAcc()
                   : ifHighRows(SmallVector<Value>(2 * kDGroups, constF32(0.0)),
                                loadAcc));
      }
      return v;
    });
  });
}

std::tuple<Value, Value, Value> AttentionEmitter::splitSlots() {
  Value perGroup = divU(mv.computeThreads, mv.groups);
  Value slotFloats = mul(perGroup, kMergeFloats);
  Value slots = add(mv.mergeBase, mul(sub(mv.groups, constI32(1)), slotFloats));
  Value barrier =
      elementPtr(mv.kv, f32, add(slots, mul(arg(kSplits), slotFloats)));
  return {slots, slotFloats, barrier};
}

void AttentionEmitter::armSplitBarrier() {
  auto [slots, slotFloats, barrier] = splitSlots();
  // Rank 0 receives (splits - 1) slots of 36 floats a thread of group 0.
  Value bytes = select(isZero(mv.z),
                       mul(sub(arg(kSplits), constI32(1)), mul(slotFloats, 4)),
                       constI32(0));
  emitIf(isZero(mv.tid),
         [&] { emitArmReceiveBarrier(b, loc, barrier, bytes); });
  NVVM::ClusterArriveRelaxedOp::create(b, loc, /*aligned=*/UnitAttr());
}

/// Merges rows g and g+8 of every split in order z = 0, 1, ... and writes
/// the output. Online: each split rescales the running sums by
/// exp2(m_old - m_new); every m is an integer, so that is an exact power of
/// two and the result equals weighting split z by exp2(m_z - max m). Splits
/// are read kMergeGroup at a time so that their loads overlap (one round
/// trip per group, not per split). A split without an allowed key (m =
/// -inf) weighs 0.
void AttentionEmitter::mergeSplits(
    llvm::function_ref<SmallVector<Value>(Value)> loadSplit) {
  constexpr int64_t kMergeGroup = 2;
  Value splits = arg(kSplits);
  Value minusInf = negInf(), zeroF = constF32(0.0);
  SmallVector<Value> init;
  for (int64_t r = 0; r < 2; ++r) {
    init.append({minusInf, zeroF});
    init.append(2 * kDGroups, zeroF);
  }
  auto loop = scf::ForOp::create(b, loc, constI32(0), splits,
                                 constI32(kMergeGroup), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value zBase = loop.getInductionVar();
    SmallVector<Value> run(loop.getRegionIterArgs().begin(),
                           loop.getRegionIterArgs().end());
    // Every load of the group first, then the arithmetic.
    struct SplitRow {
      Value real;
      SmallVector<Value> values; // m, l, acc
    };
    SmallVector<SplitRow> loaded;
    for (int64_t j = 0; j < kMergeGroup; ++j) {
      Value z = add(zBase, j);
      Value real = lessU(z, splits);
      Value zSafe = select(real, z, zBase);
      SmallVector<Value> v = loadSplit(zSafe);
      for (int64_t r = 0; r < 2; ++r)
        loaded.push_back({real, SmallVector<Value>(ArrayRef<Value>(v).slice(
                                    r * kSplitRowFloats, kSplitRowFloats))});
    }
    for (int64_t j = 0; j < kMergeGroup; ++j) {
      for (int64_t r = 0; r < 2; ++r) {
        const SplitRow &in = loaded[2 * j + r];
        ArrayRef<Value> before =
            ArrayRef<Value>(run).slice(r * kSplitRowFloats, kSplitRowFloats);
        auto mergeRow = [&] {
          SmallVector<Value> state(before);
          Value m = select(in.real, in.values[0], minusInf);
          Value mNew = fmax(state[0], m);
          Value mUse = select(fcmp(arith::CmpFPredicate::OEQ, mNew, minusInf),
                              zeroF, mNew);
          Value alpha = exp2(fsub(state[0], mUse)); // 0 while nothing was seen
          Value w = exp2(fsub(m, mUse));            // 0 for an empty split
          state[0] = mNew;
          for (int64_t i = 1; i < kSplitRowFloats; ++i)
            state[i] = fma(w, in.values[i], fmul(state[i], alpha));
          return state;
        };
        SmallVector<Value> after =
            r == 0 ? mergeRow() : ifHighRows(before, mergeRow);
        std::copy(after.begin(), after.end(),
                  run.begin() + r * kSplitRowFloats);
      }
    }
    scf::YieldOp::create(b, loc, run);
  }
  for (int64_t r = 0; r < 2; ++r) {
    emitIf(mv.rowValid[r], [&] {
      auto results =
          loop.getResults().slice(r * kSplitRowFloats, kSplitRowFloats);
      SmallVector<Value> acc(results.begin() + 2, results.end());
      storeOutputRow(r, acc, results[1]);
    });
  }
}

std::array<Value, 2> AttentionEmitter::placeRows(Value lane, Value row0) {
  mv.g = divU(lane, 4);
  mv.t = remU(lane, 4);
  Value tq = arg(kT);
  Value lastRow = sub(tq, constI32(1));
  std::array<Value, 2> rowValid;
  for (int64_t r = 0; r < 2; ++r) {
    mv.row[r] = add(add(row0, mv.g), 8 * r);
    rowValid[r] = lessU(mv.row[r], tq);
    mv.safeRow[r] = toI64(select(rowValid[r], mv.row[r], lastRow));
  }
  mv.laneCol = toI64(mul(mv.t, 2));
  return rowValid;
}

void AttentionEmitter::emitMainKernel(gpu::GPUModuleOp module, StringRef name,
                                      StringRef smemName, int64_t kvGroups,
                                      bool split) {
  gpu::GPUFuncOp fn = createKernel(module, name, std::nullopt);
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              b.getI32IntegerAttr(config::attentionMinCtasPerSm(kvGroups)));
  emitBody(smemName, kvGroups, split);
  gpu::ReturnOp::create(b, loc);
}

void AttentionEmitter::emitBody(StringRef smemName, int64_t kvGroups,
                                bool split) {
  mv.tid = threadIdx();
  mv.threads = blockDim();
  mv.laneId = remU(mv.tid, 32);
  Value warp = divU(mv.tid, 32);
  Value heads = arg(kH), tq = arg(kT), s = arg(kS);
  Value bh = blockIdx(gpu::Dimension::x);
  mv.b = divU(bh, heads);
  mv.h = remU(bh, heads);
  // A one-pass function walks every key tile whatever gridDim.z says.
  mv.z = split ? blockIdx(gpu::Dimension::z) : constI32(0);
  mv.groups = constI32(kvGroups);
  // The launch rule's row warps, min(4, ceil(T / 16)); the warps past
  // rowWarps * groups are copy warps.
  if (config::attentionHasCopyWarps(kvGroups)) {
    mv.rowWarps = minU(divU(add(tq, constI32(kRowsPerWarp - 1)), kRowsPerWarp),
                       constI32(config::kAttentionMaxWarps));
    mv.computeThreads = mul(mul(mv.rowWarps, mv.groups), 32);
    mv.computes = lessU(mv.tid, mv.computeThreads);
  } else {
    mv.rowWarps = divU(divU(mv.threads, 32), mv.groups);
    mv.computeThreads = mv.threads;
    mv.computes = constBool(true);
  }
  // With one group every compute warp is a row warp of group 0: constants,
  // so no group bookkeeping stays live through the trips. (A copy warp's
  // rows are past its row block's and never valid.)
  mv.rowWarp = kvGroups == 1 ? warp : remU(warp, mv.rowWarps);
  mv.group = kvGroups == 1 ? constI32(0) : divU(warp, mv.rowWarps);
  const bool twoStages = config::attentionStages(kvGroups) == 2;
  Value row0 =
      add(mul(blockIdx(gpu::Dimension::y), mul(mv.rowWarps, kRowsPerWarp)),
          mul(mv.rowWarp, kRowsPerWarp));
  Value warpHasRows = both(lessU(row0, tq), mv.computes);
  // Short chunks: a warp without rows g + 8 (T <= row0 + 8, every decode
  // step) skips their mask bytes (H200, H=20 S=125 B=1 T=1, with the
  // grouped functions' other changes: 4.22 -> 3.76 us).
  if (kvGroups > 1)
    mv.warpHasHighRows = lessU(add(row0, 8), tq);
  std::array<Value, 2> rowValid = placeRows(mv.laneId, row0);
  for (Value &valid : rowValid)
    valid = both(valid, mv.computes);

  // This split's key tiles [tBegin, tBegin + nTiles), in trips of G.
  Value keyTiles = divU(add(s, kKeys - 1), kKeys);
  Value splits = split ? arg(kSplits) : constI32(1);
  Value perSplit = divU(sub(add(keyTiles, splits), constI32(1)), splits);
  mv.tBegin = mul(mv.z, perSplit);
  Value tEnd = minU(add(mv.tBegin, perSplit), keyTiles);
  mv.nTiles = select(lessU(mv.tBegin, tEnd), sub(tEnd, mv.tBegin), constI32(0));
  mv.warpTiles = select(mv.computes, mv.nTiles, constI32(0));
  Value trips = divU(sub(add(mv.nTiles, mv.groups), constI32(1)), mv.groups);

  // Q, once, into the warp's own 16 x 64 area after the slots (chunks
  // swizzled like K's) by cp.async, so no load latency blocks the K/V
  // copies behind it: lane l copies chunk l % 8 of rows l / 8 + 4i. Rows
  // past T read row T-1 and are never stored.
  Value b64 = toI64(mv.b), h64 = toI64(mv.h);
  mv.kv = LLVM::AddressOfOp::create(b, loc, sharedPtr, smemName);
  // Programmatic dependent launch (docs/kernel-abi.md, ABI 4): every read of
  // q, k, v and mask and every write follow this wait, so a
  // programmatic launch overlaps only the launch and the index math above
  // with the previous kernel. Without one it does nothing.
  NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Value qHead = elementPtr(
      arg(kQ), bf16, add(mul(b64, arg(kQStrideB)), mul(h64, arg(kQStrideH))));
  Value slotElems =
      constI32(config::attentionStages(kvGroups) * kvGroups * kSlotElems);
  Value qOff = add(slotElems, mul(warp, kRowsPerWarp * kD));
  mv.mergeBase = divU(
      add(slotElems, mul(divU(mv.computeThreads, 32), kRowsPerWarp * kD)), 2);
  if (split)
    armSplitBarrier();
  {
    Value chunk = remU(mv.laneId, kChunksPerRow);
    Value firstRow = divU(mv.laneId, kChunksPerRow);
    Value lastRow = sub(tq, constI32(1));
    // Copy warps have no Q rows (nor room for them).
    emitIf(mv.computes, [&] {
      for (int64_t i = 0; i < kRowsPerWarp * kChunksPerRow / 32; ++i) {
        Value row = add(firstRow, 4 * i); // row % 8 = firstRow % 8 + 4 (i % 2)
        Value tRow = minU(add(row0, row), lastRow);
        Value src = elementPtr(
            qHead, bf16,
            add(mul(toI64(tRow), arg(kQStrideT)), toI64(mul(chunk, 8))));
        Value phys = bitXor(chunk, swizzle(bitAnd(row, 7)));
        Value dst = add(qOff, add(mul(row, kD), mul(phys, 8)));
        NVVM::CpAsyncOp::create(b, loc, elementPtr(mv.kv, bf16, dst), src, 16,
                                NVVM::LoadCacheModifierKind::CG,
                                /*cpSize=*/Value());
      }
    });
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    Value lane = mv.laneId;
    Value qRowInTile = add(remU(lane, 8), mul(bitAnd(shrU(lane, 3), 1), 8));
    Value qChunk = bitXor(shrU(lane, 4), swizzle(remU(lane, 8)));
    mv.qLaneOff = add(add(qOff, mul(qRowInTile, kD)), mul(qChunk, 8));
  }
  mv.kHead = elementPtr(
      arg(kK), bf16, add(mul(b64, arg(kKStrideB)), mul(h64, arg(kKStrideH))));
  mv.vHead = elementPtr(
      arg(kV), bf16, add(mul(b64, arg(kVStrideB)), mul(h64, arg(kVStrideH))));
  Value maskHead = elementPtr(arg(kMask), i8, mul(b64, arg(kMaskStrideB)));
  for (int64_t r = 0; r < 2; ++r)
    mv.maskRow[r] =
        elementPtr(maskHead, i8, mul(mv.safeRow[r], arg(kMaskStrideT)));
  mv.rowBits =
      bitOr(select(rowValid[0], constI32(static_cast<int32_t>(rowMaskBits(0))),
                   constI32(0)),
            select(rowValid[1], constI32(static_cast<int32_t>(rowMaskBits(1))),
                   constI32(0)));
  // Full tiles of a mask contiguous in S load as words (quadMaskWords);
  // as one 16-byte vector per lane and row when the base and the row
  // strides are multiples of 16 (a tile starts at a multiple of 64 keys):
  // S = 400 rows, not S = 125 or 250.
  mv.maskUnitStride =
      cmp(arith::CmpIPredicate::eq, arg(kMaskStrideS), constI64(1));
  Value maskBase = LLVM::PtrToIntOp::create(b, loc, i64, arg(kMask));
  Value alignBits =
      bitOr(maskBase, bitOr(arg(kMaskStrideB), arg(kMaskStrideT)));
  mv.maskAligned = isZero(bitAnd(alignBits, 15));
  mv.scaleLog2 = fmul(arg(kScale), constF32(kLog2e));
  Value noSkip = isZero(arg(kSkip));

  // ldmatrix: lane l addresses row l % 8 of 8x8 block l / 8. K: block i is
  // d chunk 4c + i of key group n. V (transposed): blocks 1 and 3 are keys
  // 8..15 of the k-step, blocks 2 and 3 the second d group of the pair.
  Value matrix = divU(mv.laneId, 8), matrixRow = remU(mv.laneId, 8);
  // Only the first chunk's offsets stay live: the others differ by an XOR
  // of the chunk bits (computeTile), which frees registers for the trips.
  Value swzR = swizzle(matrixRow);
  mv.kLaneOff = add(mul(matrixRow, kD), mul(bitXor(matrix, swzR), 8));
  Value vRow = add(mul(bitAnd(matrix, 1), 8), matrixRow);
  mv.vLaneOff = add(mul(vRow, kD), mul(bitXor(shrU(matrix, 1), swzR), 8));

  // Prologue: trip 0's copies (at once unless tiles may be skipped) and the
  // mask bits of this warp's tiles of trips 0 and 1. The grouped functions
  // (short grids: decode steps, first chunks) issue trip 0's mask loads
  // first, so that their latency hides behind the copies' issue, and pack
  // them after (H200: H=20 S=125 B=1 T=1 3.76 -> 3.55 us, T=8 4.12 -> 3.62;
  // H=12 S=250 B=16 T=8 6.7 -> 5.6). It costs H=12 S=250 T=32 (two trips
  // of two row warps, unaligned mask rows) 5.5 -> 6.2 us; choosing the
  // order by trip count at run time lost the gains (the loads twice, more
  // code), and so did loading trip 1's mask early too.
  Value zeroI32 = constI32(0), oneI32 = constI32(1);
  Value hasTrip = lessU(zeroI32, trips);
  std::optional<PendingMask> pending0;
  if (kvGroups > 1)
    pending0 = loadMaskBits(myTile(zeroI32), myTileValid(zeroI32));
  emitIf(both(noSkip, hasTrip),
         [&] { issueTrip(zeroI32, zeroI32, validGroups(zeroI32)); });
  Value bits0 = pending0 ? packMaskBits(*pending0)
                         : maskBits(myTile(zeroI32), myTileValid(zeroI32));
  Value bits1 = maskBits(myTile(oneI32), myTileValid(oneI32));
  Value active0 = activeGroups(kvGroups, noSkip, zeroI32, bits0,
                               /*tripBarrier=*/false);
  emitIf(both(notZero(arg(kSkip)), hasTrip),
         [&] { issueTrip(zeroI32, zeroI32, active0); });

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
    waitTrip();
    // The groups' barriers make every thread's copies of this trip visible
    // and, with two stages, free the other stage (computed last trip).
    Value next = add(k, 1);
    Value hasNext = lessU(next, trips);
    Value activeNext = activeGroups(kvGroups, noSkip, next, bitsNext,
                                    /*tripBarrier=*/true);
    if (twoStages)
      emitIf(hasNext,
             [&] { issueTrip(next, bitXor(stage, oneI32), activeNext); });
    // Trip k+2's mask: lines into L1 now, loaded and packed after the
    // compute (holding its 32 bytes across the compute costs 32 registers).
    Value tripAfter = add(k, 2);
    Value tileAfter = myTile(tripAfter);
    prefetchMask(tileAfter);

    Value mine =
        notZero(bitAnd(arith::ShRUIOp::create(b, loc, activeCur, mv.group), 1));
    // A warp whose rows allow no key of the tile skips its compute: such a
    // tile changes nothing (see the header), so this is exact. The
    // one-group function (long chunks, large grids) does so whatever
    // skip_empty_tiles says (H200, H=12 S=400 B=16 T=480: 86 -> 72 us); the
    // grouped ones only with it (the extra vote spilled them under the
    // 168-register cap they had then; not re-measured since).
    Value anyKey = warpAny(notZero(bitsCur));
    Value compute = both(both(mine, warpHasRows),
                         kvGroups == 1 ? anyKey : either(noSkip, anyKey));
    SmallVector<Value> stateValues = state.values();
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(stateValues).getTypes(),
                                  compute, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToEnd(ifOp.thenBlock());
      Value slot = add(mul(stage, mv.groups), mv.group);
      // A tile every row of the warp sees whole (most tiles of a full
      // window) skips the 32 mask selects of each lane (not in the
      // two-group function: 0.1-0.2 us slower there on H200 decode steps).
      Value whole =
          kvGroups != 2
              ? warpAll(cmp(arith::CmpIPredicate::eq, bitsCur, mv.rowBits))
              : Value();
      scf::YieldOp::create(b, loc,
                           computeTile(slot, bitsCur, whole, state).values());
      b.setInsertionPointToEnd(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, stateValues);
    }
    // One stage: the next trip overwrites the slots just computed.
    if (!twoStages)
      emitIf(hasNext, [&] {
        barrier();
        issueTrip(next, zeroI32, activeNext);
      });
    Value bitsAfter = maskBits(tileAfter, myTileValid(tripAfter));
    SmallVector<Value> yielded = {bitsNext, bitsAfter, activeNext};
    llvm::append_range(yielded, ifOp.getResults());
    scf::YieldOp::create(b, loc, yielded);
  }
  // The next kernel may be scheduled once every CTA got past its last key
  // tile. Triggering here rather than at the start keeps a waiting grid from
  // sitting beside this one's tiles (H200: the 320-CTA grids of H=20 B=16,
  // T <= 32, 0.15-0.7 us slower with an early trigger, 0.3-0.6 us faster with
  // this one; benchmarks/results/2026-12-04-h200).
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
  RowState walked = RowState::fromValues(loop.getResults().drop_front(3));
  RowState final = kvGroups > 1 ? mergeGroups(walked) : walked;
  // Group 0's warps hold the merged rows; the others only take part in the
  // barriers of the store.
  Value writer = both(isZero(mv.group), mv.computes);
  for (int64_t r = 0; r < 2; ++r)
    mv.rowValid[r] = both(rowValid[r], writer);
  if (split)
    mergeAndStoreSplits(final);
  else
    storeResult(final);
}

} // namespace

LogicalResult buildAttentionKernels(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module) {
  std::string smem = "__" + std::string(config::kAttentionKernelName) + "_smem";
  SmallVector<std::string> symbols = {smem};
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    config::AttentionFunction f = config::attentionFunctionAt(i);
    symbols.push_back(config::attentionKernelSymbol(f.kvGroups, f.split));
  }
  for (const std::string &symbol : symbols)
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return emitError(loc)
             << "cannot build the attention kernels: symbol '" << symbol
             << "' already exists in " << module.getName();
  OpBuilder::InsertionGuard guard(b);
  // Dynamic shared memory (the launch rule's sharedBytes), shared by the
  // functions: stages * kv_groups slots, then each warp's Q rows.
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                         /*isConstant=*/false, LLVM::Linkage::External, smem,
                         Attribute(),
                         /*alignment=*/16, kSharedSpace);
  // In the manifest's order: the one-pass functions, then the split ones.
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    config::AttentionFunction f = config::attentionFunctionAt(i);
    AttentionEmitter emitter(b, loc);
    emitter.emitMainKernel(module,
                           config::attentionKernelSymbol(f.kvGroups, f.split),
                           smem, f.kvGroups, f.split);
  }
  return success();
}

} // namespace moss
