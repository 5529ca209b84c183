//===- AttentionKernelBuilder.cpp - attention kernels as gpu.func ---------===//
//
// Flash-attention style kernel for D = 64, one CTA per (b, h, block of query
// rows, key split). Each warp owns 16 query rows (the MMA's m side); the CTA's
// 1..4 warps share K/V tiles of 64 keys that cp.async streams into a double
// buffer in shared memory while the previous tile is being computed.
//
// QK^T. Q is A (row), K^T is B (col), k = d. Lane (g = lane/4, t = lane%4)
// holds the standard m16n8k16 fragments: q[row g / g+8][16kk + 2t (+8)] as
// 32-bit words loaded once from global memory, and k[key g][16kk + 2t (+8)]
// from shared memory with ldmatrix.x4 (four 8x8 blocks: one key group, four
// d chunks). Accumulator n (keys 8n..8n+7): c0, c1 = S[row g][8n+2t, +1],
// c2, c3 = S[row g+8][same keys].
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
// Online softmax in FP32 and base 2: x = s * scale * log2(e), masked -> -inf;
// per row m = running max rounded up to an integer (every rescale is then an
// exact power of two), l = running sum (lane partials, summed over the quad
// at the end). A key tile that is fully masked for a row changes
// nothing: m stays, alpha = 1 by select (not by exp2(0)), p = exp2(-inf) = 0,
// and P·V adds exact zeros. That makes `skip_empty_tiles` (a CTA-wide OR of
// the mask bits through bar.red.or, one tile ahead) bit-exact. Rows without
// an allowed key keep m = -inf, l = 0, acc = 0 and are written as 0 (1/l is
// guarded; exp2 never sees -inf - -inf).
//
// Split-KV. Split z of gridDim.z walks key tiles [z*tps, min(tiles,
// (z+1)*tps)) and, when splits > 1, writes (acc[64], m, l) in FP32 to the
// workspace; the combine kernel merges the splits in order z = 0, 1, ... and
// writes the output.
//
//===----------------------------------------------------------------------===//

#include "moss/Conversion/MossToGPU/AttentionKernelBuilder.h"

#include "moss/Config/AttentionLaunch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

#include <limits>

using namespace mlir;

namespace moss {
namespace {

constexpr unsigned kGlobalSpace = 1; // CUDA global memory
constexpr unsigned kSharedSpace = 3; // CUDA shared memory

constexpr int64_t kD = config::kAttentionHeadDim;
constexpr int64_t kKeys = config::kAttentionKeysPerTile;
constexpr int64_t kRowsPerWarp = config::kAttentionRowsPerWarp;
constexpr int64_t kMaxThreads = 32 * config::kAttentionMaxWarps;
constexpr int64_t kTileElems = kKeys * kD;      // one K or V tile (bf16)
constexpr int64_t kStageElems = 2 * kTileElems; // K then V
constexpr int64_t kChunksPerRow = kD * 2 / 16;  // 16-byte chunks of a row
constexpr int64_t kChunksPerTile = kKeys * kChunksPerRow;
constexpr int64_t kKeyGroups = kKeys / 8; // n8 tiles of S
constexpr int64_t kDGroups = kD / 8;      // n8 tiles of O
constexpr double kLog2e = 1.4426950408889634;

static_assert(kD == 64 && kKeys == 64, "the fragment maps assume 64 x 64");

/// Kernel parameters, in the order of docs/kernel-abi.md.
enum KernelArg {
  kQ,
  kK,
  kV,
  kMask,
  kOut,
  kWorkspace,
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
    v4i32 = VectorType::get({4}, i32);
    v2f32 = VectorType::get({2}, f32);
    v4f32 = VectorType::get({4}, f32);
    v2bf16 = VectorType::get({2}, bf16);
    v4bf16 = VectorType::get({4}, bf16);
    mmaResult = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    ldmatrixResult =
        LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  }

  void emitMainKernel(gpu::GPUModuleOp module, StringRef name,
                      StringRef kvName);
  void emitCombineKernel(gpu::GPUModuleOp module, StringRef name);

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
  Value exp2(Value v) { return math::Exp2Op::create(b, loc, v); }
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
  /// swz(r) of the file header, for r in [0, 8).
  Value swizzle(Value r) { return bitOr(shl(bitAnd(r, 1), 2), shrU(r, 1)); }

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
  Value warpAny(Value pred) {
    return NVVM::VoteSyncOp::create(
        b, loc, i1, constI32(-1), pred,
        NVVM::VoteSyncKindAttr::get(b.getContext(), NVVM::VoteSyncKind::any));
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

  // --- main-kernel pieces ----------------------------------------------------
  struct MaskLoads {
    SmallVector<Value> bytes; ///< 32 bytes: bit 4n + c of the packed mask.
    SmallVector<Value> valid; ///< whether each byte is a real (row, key).
  };
  MaskLoads loadMask(Value tile, Value tileValid);
  Value packMask(const MaskLoads &loads);
  void copyTile(Value tile, Value stage);
  RowState computeTile(Value stage, Value bits, const RowState &in);
  void storeResult(const RowState &state);

  // Per-kernel values the pieces share.
  struct MainValues {
    Value tid, threads, g, t, b, h, z;
    Value rowValid[2], row[2];
    Value maskRow[2];
    Value kHead, vHead;
    SmallVector<Value> q[4]; ///< A fragment of k-step kk (d 16kk..16kk+15).
    Value scaleLog2;
    Value kv;          ///< shared K/V double buffer (bf16 elements).
    Value kLaneOff[2]; ///< lane's ldmatrix row offset, d half 0 / 1.
    Value vLaneOff[4]; ///< lane's ldmatrix row offset, d pair 0..3.
  } mv;

  OpBuilder &b;
  Location loc;
  Type i1, i8, i32, i64, f32, bf16, globalPtr, sharedPtr, mmaResult,
      ldmatrixResult;
  VectorType v4i32, v2f32, v4f32, v2bf16, v4bf16;
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
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
  b.setInsertionPointToStart(&fn.getBody().front());
  kernelArgs.assign(fn.getArguments().begin(), fn.getArguments().end());
  return fn;
}

/// Loads the lane's 32 mask bytes of key tile `tile`: rows g, g+8 and keys
/// 8n + 2t + {0, 1}. Every address is in bounds (rows and keys clamped); the
/// `valid` flags say which bytes count. Packed later, after the compute, so
/// the loads' latency hides behind it.
AttentionEmitter::MaskLoads AttentionEmitter::loadMask(Value tile,
                                                       Value tileValid) {
  MaskLoads loads;
  Value s = arg(kS);
  Value lastKey = sub(s, constI32(1));
  Value keyBase = add(mul(tile, kKeys), mul(mv.t, 2));
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    for (int64_t e = 0; e < 2; ++e) {
      Value key = add(keyBase, 8 * n + e);
      Value keyValid = both(tileValid, lessU(key, s));
      Value offset = mul(toI64(minU(key, lastKey)), arg(kMaskStrideS));
      for (int64_t r = 0; r < 2; ++r) {
        loads.bytes.push_back(
            loadReadOnly(i8, elementPtr(mv.maskRow[r], i8, offset), 1));
        loads.valid.push_back(both(keyValid, mv.rowValid[r]));
      }
    }
  }
  // Reorder to bit index 4n + 2r + e (the accumulator's c index is 2r + e).
  MaskLoads ordered;
  for (int64_t n = 0; n < kKeyGroups; ++n)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t from = 4 * n + 2 * e + r;
        ordered.bytes.push_back(loads.bytes[from]);
        ordered.valid.push_back(loads.valid[from]);
      }
  return ordered;
}

Value AttentionEmitter::packMask(const MaskLoads &loads) {
  Value bits = constI32(0);
  for (auto [i, byte] : llvm::enumerate(loads.bytes)) {
    Value allowed = both(loads.valid[i], notZero(byte));
    bits = bitOr(bits, shl(toI32(allowed), static_cast<int64_t>(i)));
  }
  return bits;
}

/// cp.async of key tile `tile` (K and V, 64 rows each) into buffer `stage`;
/// rows past S are zero-filled (src-size 0), so P·V never reads garbage.
void AttentionEmitter::copyTile(Value tile, Value stage) {
  Value s = arg(kS);
  Value keyBase = mul(tile, kKeys);
  Value stageBase = mul(stage, kStageElems);
  auto loop =
      scf::ForOp::create(b, loc, mv.tid, constI32(kChunksPerTile), mv.threads);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value c = loop.getInductionVar();
    Value keyRow = shrU(c, 3);
    Value chunk = bitAnd(c, kChunksPerRow - 1);
    Value key = add(keyBase, keyRow);
    Value inRange = lessU(key, s);
    Value safeKey = toI64(select(inRange, key, constI32(0)));
    Value physChunk = bitXor(chunk, swizzle(bitAnd(keyRow, 7)));
    Value dst = add(stageBase, add(mul(keyRow, kD), mul(physChunk, 8)));
    Value srcCol = toI64(mul(chunk, 8));
    Value bytes = select(inRange, constI32(16), constI32(0));
    struct Operand {
      Value head;
      KernelArg stride;
      int64_t smemOffset;
    };
    for (Operand op : {Operand{mv.kHead, kKStrideS, 0},
                       Operand{mv.vHead, kVStrideS, kTileElems}}) {
      Value src =
          elementPtr(op.head, bf16, add(mul(safeKey, arg(op.stride)), srcCol));
      Value smem = elementPtr(mv.kv, bf16, add(dst, op.smemOffset));
      NVVM::CpAsyncOp::create(b, loc, smem, src, 16,
                              NVVM::LoadCacheModifierKind::CG, bytes);
    }
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

RowState AttentionEmitter::computeTile(Value stage, Value bits,
                                       const RowState &in) {
  Value kBase = mul(stage, kStageElems);
  Value vBase = add(kBase, kTileElems);

  // S = Q K^T: accumulator n holds keys 8n .. 8n+7.
  SmallVector<SmallVector<Value>> sAcc;
  Value zero = constF32(0.0);
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    SmallVector<Value> acc(4, zero);
    for (int64_t c = 0; c < 2; ++c) {
      Value offset = add(add(kBase, mv.kLaneOff[c]), 8 * n * kD);
      SmallVector<Value> k = ldmatrix(offset, NVVM::MMALayout::row);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t kk = 2 * c + h;
        Value kFrag[] = {k[2 * h], k[2 * h + 1]};
        acc = mma(mv.q[kk], kFrag, acc);
      }
    }
    sAcc.push_back(acc);
  }

  // Masked, scaled scores (base 2) and the new row maxima.
  Value minusInf = negInf();
  SmallVector<SmallVector<Value>> x(kKeyGroups);
  Value tileMax[2] = {minusInf, minusInf};
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    for (int64_t c = 0; c < 4; ++c) {
      Value bit = bitAnd(shrU(bits, 4 * n + c), 1);
      Value v = select(notZero(bit), fmul(sAcc[n][c], mv.scaleLog2), minusInf);
      x[n].push_back(v);
      tileMax[c / 2] = fmax(tileMax[c / 2], v);
    }
  }
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
    rowMax = math::CeilOp::create(b, loc, rowMax);
    Value mNew = fmax(in.m[r], rowMax);
    Value noKey = fcmp(arith::CmpFPredicate::OEQ, mNew, minusInf);
    mUse[r] = select(noKey, zero, mNew);
    Value same = fcmp(arith::CmpFPredicate::OEQ, mNew, in.m[r]);
    alpha[r] = select(same, constF32(1.0), exp2(fsub(in.m[r], mUse[r])));
    out.m[r] = mNew;
  }
  // p = exp2(x - m): masked keys give exp2(-inf) = 0 exactly.
  SmallVector<SmallVector<Value>> p(kKeyGroups);
  Value rowSum[2];
  for (int64_t r = 0; r < 2; ++r)
    rowSum[r] = fmul(in.l[r], alpha[r]);
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    for (int64_t c = 0; c < 4; ++c) {
      Value pv = exp2(fsub(x[n][c], mUse[c / 2]));
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
      Value offset = add(add(vBase, mv.vLaneOff[pair]), 16 * j * kD);
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

/// Splits == 1: normalized bf16 output in the requested layout. Splits > 1:
/// FP32 (acc, m, l) into the workspace for the combine kernel.
void AttentionEmitter::storeResult(const RowState &state) {
  Value l[2];
  for (int64_t r = 0; r < 2; ++r) {
    Value sum = fadd(state.l[r], shuffleXor(state.l[r], 1));
    l[r] = fadd(sum, shuffleXor(sum, 2));
  }
  Value bsz = arg(kB), heads = arg(kH), tq = arg(kT);
  Value bh = add(mul(toI64(mv.b), toI64(heads)), toI64(mv.h));
  Value col = toI64(mul(mv.t, 2));
  Value single = cmp(arith::CmpIPredicate::eq, arg(kSplits), constI32(1));
  auto ifOp = scf::IfOp::create(b, loc, single, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value bthd = isZero(arg(kLayout));
    for (int64_t r = 0; r < 2; ++r) {
      emitIf(mv.rowValid[r], [&] {
        Value inv = safeReciprocal(l[r]);
        Value row = toI64(mv.row[r]);
        Value bthdRow =
            add(mul(add(mul(toI64(mv.b), toI64(tq)), row), toI64(heads)),
                toI64(mv.h));
        Value bhtdRow = add(mul(bh, toI64(tq)), row);
        Value rowOffset = mul(select(bthd, bthdRow, bhtdRow), kD);
        Value base = elementPtr(arg(kOut), bf16, add(rowOffset, col));
        for (int64_t n = 0; n < kDGroups; ++n) {
          Value packed = packBf16x2(fmul(state.acc[4 * n + 2 * r], inv),
                                    fmul(state.acc[4 * n + 2 * r + 1], inv));
          store(packed, elementPtr(base, bf16, constI32(8 * n)), 4);
        }
      });
    }
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    // Row (z, b, h, t) of the workspace; (m, l) after all acc rows.
    Value rows = mul(bh, toI64(tq)); // b*H + h, times T: this head's first
    Value totalRows = mul(mul(toI64(bsz), toI64(heads)), toI64(tq)); // B*H*T
    Value splitBase = mul(toI64(mv.z), totalRows);
    Value mlBase = elementPtr(arg(kWorkspace), f32,
                              mul(mul(toI64(arg(kSplits)), totalRows), kD));
    for (int64_t r = 0; r < 2; ++r) {
      emitIf(mv.rowValid[r], [&] {
        Value wsRow = add(splitBase, add(rows, toI64(mv.row[r])));
        Value base = elementPtr(arg(kWorkspace), f32, add(mul(wsRow, kD), col));
        for (int64_t n = 0; n < kDGroups; ++n) {
          Value pair = vectorOf(
              v2f32, {state.acc[4 * n + 2 * r], state.acc[4 * n + 2 * r + 1]});
          store(pair, elementPtr(base, f32, constI32(8 * n)), 8);
        }
        emitIf(isZero(mv.t), [&] {
          store(vectorOf(v2f32, {state.m[r], l[r]}),
                elementPtr(mlBase, f32, mul(wsRow, 2)), 8);
        });
      });
    }
  }
}

void AttentionEmitter::emitMainKernel(gpu::GPUModuleOp module, StringRef name,
                                      StringRef kvName) {
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, loc,
                         LLVM::LLVMArrayType::get(bf16, 2 * kStageElems),
                         /*isConstant=*/false, LLVM::Linkage::Internal, kvName,
                         Attribute(), /*alignment=*/16, kSharedSpace);
  createKernel(module, name, std::nullopt);

  mv.tid = threadIdx();
  mv.threads = blockDim();
  Value laneId = remU(mv.tid, 32), warp = divU(mv.tid, 32);
  mv.g = divU(laneId, 4);
  mv.t = remU(laneId, 4);
  Value heads = arg(kH), tq = arg(kT), s = arg(kS);
  Value bh = blockIdx(gpu::Dimension::x);
  mv.b = divU(bh, heads);
  mv.h = remU(bh, heads);
  mv.z = blockIdx(gpu::Dimension::z);
  Value warps = divU(mv.threads, 32);
  Value row0 = add(mul(blockIdx(gpu::Dimension::y), mul(warps, kRowsPerWarp)),
                   mul(warp, kRowsPerWarp));
  Value warpHasRows = lessU(row0, tq);
  Value lastRow = sub(tq, constI32(1));
  Value safeRow[2];
  for (int64_t r = 0; r < 2; ++r) {
    mv.row[r] = add(add(row0, mv.g), 8 * r);
    mv.rowValid[r] = lessU(mv.row[r], tq);
    safeRow[r] = toI64(select(mv.rowValid[r], mv.row[r], lastRow));
  }

  // This split's key tiles [tBegin, tBegin + nTiles).
  Value keyTiles = divU(add(s, kKeys - 1), kKeys);
  Value splits = arg(kSplits);
  Value perSplit = divU(sub(add(keyTiles, splits), constI32(1)), splits);
  Value tBegin = mul(mv.z, perSplit);
  Value tEnd = minU(add(tBegin, perSplit), keyTiles);
  Value nTiles = select(lessU(tBegin, tEnd), sub(tEnd, tBegin), constI32(0));

  // Q words, once: rows past T read row T-1 and are never stored.
  Value b64 = toI64(mv.b), h64 = toI64(mv.h);
  Value qHead = elementPtr(
      arg(kQ), bf16, add(mul(b64, arg(kQStrideB)), mul(h64, arg(kQStrideH))));
  Value laneCol = toI64(mul(mv.t, 2));
  Value qRow[2];
  for (int64_t r = 0; r < 2; ++r)
    qRow[r] =
        elementPtr(qHead, bf16, add(mul(safeRow[r], arg(kQStrideT)), laneCol));
  for (int64_t kk = 0; kk < 4; ++kk)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t r = 0; r < 2; ++r)
        mv.q[kk].push_back(loadReadOnly(
            i32, elementPtr(qRow[r], bf16, constI32(16 * kk + 8 * half)), 4));
  mv.kHead = elementPtr(
      arg(kK), bf16, add(mul(b64, arg(kKStrideB)), mul(h64, arg(kKStrideH))));
  mv.vHead = elementPtr(
      arg(kV), bf16, add(mul(b64, arg(kVStrideB)), mul(h64, arg(kVStrideH))));
  Value maskHead = elementPtr(arg(kMask), i8, mul(b64, arg(kMaskStrideB)));
  for (int64_t r = 0; r < 2; ++r)
    mv.maskRow[r] =
        elementPtr(maskHead, i8, mul(safeRow[r], arg(kMaskStrideT)));
  mv.scaleLog2 = fmul(arg(kScale), constF32(kLog2e));
  Value noSkip = isZero(arg(kSkip));

  mv.kv = LLVM::AddressOfOp::create(b, loc, sharedPtr, kvName);
  // ldmatrix: lane l addresses row l % 8 of 8x8 block l / 8. K: block i is
  // d chunk 4c + i of key group n. V (transposed): blocks 1 and 3 are keys
  // 8..15 of the k-step, blocks 2 and 3 the second d group of the pair.
  Value matrix = divU(laneId, 8), matrixRow = remU(laneId, 8);
  Value swzR = swizzle(matrixRow);
  for (int64_t c = 0; c < 2; ++c)
    mv.kLaneOff[c] =
        add(mul(matrixRow, kD), mul(bitXor(add(matrix, 4 * c), swzR), 8));
  Value vRow = add(mul(bitAnd(matrix, 1), 8), matrixRow);
  for (int64_t pair = 0; pair < kDGroups / 2; ++pair)
    mv.vLaneOff[pair] = add(
        mul(vRow, kD), mul(bitXor(add(shrU(matrix, 1), 2 * pair), swzR), 8));

  // Prologue: the first tile's copy (at once unless it may be skipped, so
  // that it overlaps the mask loads) and the mask bits of two tiles.
  Value zeroI32 = constI32(0);
  Value hasTile = lessU(zeroI32, nTiles);
  emitIf(both(noSkip, hasTile), [&] { copyTile(tBegin, zeroI32); });
  Value bits0 = packMask(loadMask(tBegin, hasTile));
  Value bits1 = packMask(loadMask(add(tBegin, 1), lessU(constI32(1), nTiles)));
  Value active0 = barrierAny(both(hasTile, either(noSkip, notZero(bits0))));
  emitIf(both(notZero(arg(kSkip)), active0),
         [&] { copyTile(tBegin, zeroI32); });

  SmallVector<Value> init = {bits0, bits1, active0};
  Value minusInf = negInf(), zeroF = constF32(0.0);
  init.append({minusInf, minusInf, zeroF, zeroF});
  init.append(kDGroups * 4, zeroF);
  auto loop = scf::ForOp::create(b, loc, zeroI32, nTiles, constI32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value k = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value bitsCur = carried[0], bitsNext = carried[1], activeCur = carried[2];
    RowState state;
    state.m[0] = carried[3];
    state.m[1] = carried[4];
    state.l[0] = carried[5];
    state.l[1] = carried[6];
    state.acc.assign(carried.begin() + 7, carried.end());

    Value tile = add(tBegin, k);
    Value stage = bitAnd(k, 1);
    // This thread's copies of `tile` are done; the barrier makes everyone's
    // visible and frees the other buffer (its tile was computed last turn).
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    Value hasNext = lessU(add(k, 1), nTiles);
    Value activeNext =
        barrierAny(both(hasNext, either(noSkip, notZero(bitsNext))));
    emitIf(activeNext,
           [&] { copyTile(add(tile, 1), bitXor(stage, constI32(1))); });
    MaskLoads after = loadMask(add(tile, 2), lessU(add(k, 2), nTiles));

    Value compute = both(both(activeCur, warpHasRows),
                         either(noSkip, warpAny(notZero(bitsCur))));
    SmallVector<Value> stateValues = {state.m[0], state.m[1], state.l[0],
                                      state.l[1]};
    llvm::append_range(stateValues, state.acc);
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(stateValues).getTypes(),
                                  compute, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToEnd(ifOp.thenBlock());
      RowState next = computeTile(stage, bitsCur, state);
      SmallVector<Value> yielded = {next.m[0], next.m[1], next.l[0], next.l[1]};
      llvm::append_range(yielded, next.acc);
      scf::YieldOp::create(b, loc, yielded);
      b.setInsertionPointToEnd(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, stateValues);
    }
    SmallVector<Value> yielded = {bitsNext, packMask(after), activeNext};
    llvm::append_range(yielded, ifOp.getResults());
    scf::YieldOp::create(b, loc, yielded);
  }
  RowState final;
  final.m[0] = loop.getResult(3);
  final.m[1] = loop.getResult(4);
  final.l[0] = loop.getResult(5);
  final.l[1] = loop.getResult(6);
  final.acc.assign(loop.getResults().begin() + 7, loop.getResults().end());
  storeResult(final);
  gpu::ReturnOp::create(b, loc);
}

/// One thread per (row, 4 d): merges the splits' (acc, m, l) in order
/// z = 0, 1, ... and writes bf16 in the requested layout.
void AttentionEmitter::emitCombineKernel(gpu::GPUModuleOp module,
                                         StringRef name) {
  createKernel(module, name, config::kAttentionCombineThreads);
  constexpr int64_t threadsPerRow =
      config::kAttentionCombineThreads / config::kAttentionCombineRowsPerCta;
  static_assert(threadsPerRow * 4 == kD, "4 d per combine thread");
  Value tid = threadIdx();
  Value d = mul(remU(tid, threadsPerRow), 4);
  Value heads = toI64(arg(kH)), tq = toI64(arg(kT));
  Value rows = mul(mul(toI64(arg(kB)), heads), tq);
  Value row = add(mul(toI64(blockIdx(gpu::Dimension::x)),
                      config::kAttentionCombineRowsPerCta),
                  toI64(divU(tid, threadsPerRow)));
  emitIf(lessU(row, rows), [&] {
    Value splits = arg(kSplits);
    Value ws = arg(kWorkspace);
    Value mlBase = elementPtr(ws, f32, mul(mul(toI64(splits), rows), kD));
    Value zero = constI32(0), one = constI32(1);
    Value minusInf = negInf();
    // Pass 1: the largest split maximum.
    auto maxLoop =
        scf::ForOp::create(b, loc, zero, splits, one, ValueRange{minusInf});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(maxLoop.getBody());
      Value wsRow = add(mul(toI64(maxLoop.getInductionVar()), rows), row);
      Value m = loadReadOnly(f32, elementPtr(mlBase, f32, mul(wsRow, 2)), 8);
      scf::YieldOp::create(b, loc, fmax(maxLoop.getRegionIterArgs()[0], m));
    }
    Value mMax = maxLoop.getResult(0);
    // Pass 2: weighted sums in split order (deterministic).
    Value zeroF = constF32(0.0);
    SmallVector<Value> init(5, zeroF); // l, then acc[d .. d+3]
    auto sumLoop = scf::ForOp::create(b, loc, zero, splits, one, init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(sumLoop.getBody());
      Value wsRow = add(mul(toI64(sumLoop.getInductionVar()), rows), row);
      Value ml = loadReadOnly(v2f32, elementPtr(mlBase, f32, mul(wsRow, 2)), 8);
      Value m = lane(ml, 0), l = lane(ml, 1);
      Value acc = loadReadOnly(
          v4f32, elementPtr(ws, f32, add(mul(wsRow, kD), toI64(d))), 16);
      // A split without an allowed key has m = -inf and weighs nothing,
      // also when every split is empty (mMax = -inf).
      Value empty = fcmp(arith::CmpFPredicate::OEQ, m, minusInf);
      Value w = select(empty, zeroF, exp2(fsub(m, mMax)));
      ValueRange carried = sumLoop.getRegionIterArgs();
      SmallVector<Value> next = {fadd(carried[0], fmul(w, l))};
      for (int64_t i = 0; i < 4; ++i)
        next.push_back(fadd(carried[1 + i], fmul(w, lane(acc, i))));
      scf::YieldOp::create(b, loc, next);
    }
    Value inv = safeReciprocal(sumLoop.getResult(0));
    SmallVector<Value> values;
    for (int64_t i = 0; i < 4; ++i)
      values.push_back(arith::TruncFOp::create(
          b, loc, bf16, fmul(sumLoop.getResult(1 + i), inv)));
    // row = (b*H + h)*T + t; bthd stores it at ((b*T + t)*H + h).
    Value t = remU(row, tq), bh = divU(row, tq);
    Value h = remU(bh, heads), bIdx = divU(bh, heads);
    Value bthdRow = add(mul(add(mul(bIdx, tq), t), heads), h);
    Value outRow = select(isZero(arg(kLayout)), bthdRow, row);
    Value ptr = elementPtr(arg(kOut), bf16, add(mul(outRow, kD), toI64(d)));
    store(vectorOf(v4bf16, values), ptr, 8);
  });
  gpu::ReturnOp::create(b, loc);
}

} // namespace

LogicalResult buildAttentionKernels(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module) {
  std::string name = config::kAttentionKernelName;
  std::string combine = name + config::kAttentionCombineSuffix;
  std::string kv = "__" + name + "_kv";
  for (const std::string &symbol : {name, combine, kv})
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return emitError(loc)
             << "cannot build attention kernel '" << name << "': symbol '"
             << symbol << "' already exists in " << module.getName();
  OpBuilder::InsertionGuard guard(b);
  AttentionEmitter emitter(b, loc);
  emitter.emitMainKernel(module, name, kv);
  AttentionEmitter combineEmitter(b, loc);
  combineEmitter.emitCombineKernel(module, combine);
  return success();
}

} // namespace moss
