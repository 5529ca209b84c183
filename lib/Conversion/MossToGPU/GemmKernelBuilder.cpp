//===- GemmKernelBuilder.cpp - FFN GEMM kernels as gpu.func ops -----------===//
//
// Weight-streaming GEMM for small M (decoder FFN, M = 1..64). The kernel is
// bound by the latency and bandwidth of reading W once, so every CTA puts its
// whole K slice of W and x in flight at once: cp.async 16-byte copies into
// shared memory, one commit group per stage (a few bk blocks), and the MMAs of
// stage s start as soon as its group has landed (cp.async.wait_group +
// bar.sync).
//
// A and B are swapped: the MMA computes out^T = W * x^T, so the MMA's 16-row
// side walks 16 rows of W (n) and its 8-column side walks 8 rows of x (m).
// A (16x16, "row") is a W tile, B (16x8, "col") is x^T, i.e. x rows that are
// contiguous in k: both are plain row-major reads of the staged slab.
//
// K permutation. For a 32-wide k chunk, lane (g = lane/4, t = lane%4) loads
//   wLo = W[n0+g  ][k0+8t .. k0+8t+7]   (4 words of 2 bf16)
//   wHi = W[n0+g+8][k0+8t .. k0+8t+7]
//   xj  = x[m0+8j+g][k0+8t .. k0+8t+7]  (one per m8 tile j)
// PTX m16n8k16 fragments (ISA "Matrix Fragments for mma.m16n8k16"): lane
// (g, t) holds A rows g / g+8 at logical k {2t, 2t+1} (a0..a3) and
// {2t+8, 2t+9} (a4..a7), B column g at the same logical k (b0,b1 / b2,b3).
// MMA h (h = 0, 1) of the chunk uses A = {wLo[2h], wHi[2h], wLo[2h+1],
// wHi[2h+1]} and B = {xj[2h], xj[2h+1]}: logical k {2t,2t+1} is physical
// k0+8t+4h+{0,1} and {2t+8,2t+9} is k0+8t+4h+{2,3}, in A and B alike. Over
// t = 0..3 and h = 0..1 that is a bijection onto the 32 k of the chunk, and
// a dot product does not change under a permutation applied to both sides.
//
// Accumulator of m16n8: c0, c1 = out^T[n0+g][m0+2t, m0+2t+1], c2, c3 the
// same at n0+g+8.
//
// Warpgroup MMAs (docs/kernel-abi.md). bm = 64: wgmma m64nNk16 with x as A
// and W as B (N = bn). bn >= 64, bm <= 32: the same swap as above, each 64
// W rows as A of one warpgroup and x as B (N = bm8); warp w of warpgroup n
// then holds the accumulator of an m16n8 warp over W rows 64n + 16w.. (per
// n8 tile j as c0..c3 above), so the partial tiles are stored as the
// mma.sync kernels store theirs (H200, as a programmatic dependent: 3072 x
// 768 M = 16 2.46 -> 2.29 us, benchmarks/results/2026-12-04f-h200; 1280 x
// 5120 M = 30 on [32, 128, 128, 8] 6.41 -> 5.58, 2026-12-04h-h200).
//
// Split-K: the `split` CTAs of an output tile form one thread-block cluster
// (cluster dims (1, 1, split), rank = blockIdx.z), and rank r finishes a
// 1/split share of the tile. Each rank sums its warps' FP32 partial tiles
// and pushes each item's sum into the receive slot of the rank that
// finishes it (st.async into distributed shared memory, completing bytes on
// that rank's mbarrier); a rank waits for the bytes, adds the slots in the
// fixed order z = 0..split-1 and applies the epilogue. No workspace, no
// atomics, no cluster barrier after the MMAs (only the wait of one whose
// arrive, at the start, publishes the mbarriers' initialization).
//
//===----------------------------------------------------------------------===//

#include "moss/Conversion/MossToGPU/GemmKernelBuilder.h"
#include "KernelEmitter.h"
#include "NvvmSync.h"

#include "moss/Config/GemmLaunch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;

namespace moss {
namespace {

// 1/sqrt(2) for erf-GELU, as the contract writes it.
constexpr double kInvSqrt2 = 0.70710678118654752;

/// Kernel parameters, in the order of docs/kernel-abi.md.
enum KernelArg { kX, kW, kScale, kResidual, kOut, kM, kPrefetchW, kNumArgs };

/// Tile shape plus derived quantities used while emitting one kernel.
struct GemmShape {
  GemmKernelSpec spec;
  config::GemmLaunch launch;
  int64_t mTiles = 0;         ///< m8 tiles per warp: bm8 / 8.
  int64_t chunksPerStage = 0; ///< 32-wide k chunks per stage.
  int64_t colGroups = 0;      ///< bn / 8: 8-column groups per tile row.
  int64_t epilogueItems = 0;  ///< bm8 * bn / 8 (row, 8-column) groups.
};

/// Builder state plus the IR helpers of the kernel. Integer math is i32
/// except offsets that scale with the runtime m (those are i64).
class Emitter : public KernelEmitter {
public:
  Emitter(OpBuilder &b, Location loc, const GemmShape &shape)
      : KernelEmitter(b, loc), shape(shape), spec(shape.spec) {
    v8bf16 = VectorType::get({8}, bf16);
  }

  FunctionType kernelType() {
    SmallVector<Type> args(kM, globalPtr);
    args.append({i32, i32}); // m, prefetch_w
    return b.getFunctionType(args, {});
  }

  void emitMainKernel(gpu::GPUModuleOp module);

private:
  // --- memory helpers --------------------------------------------------------
  /// 16-byte load of data that no kernel writes while this one runs, so the
  /// read-only (non-coherent) cache path is legal: ld.global.nc.v4.
  Value loadReadOnly16(Type type, Value ptr) {
    return LLVM::LoadOp::create(b, loc, type, ptr, /*alignment=*/16,
                                /*isVolatile=*/false, /*isNonTemporal=*/false,
                                /*isInvariant=*/true);
  }
  Value load16(Type type, Value ptr) {
    return LLVM::LoadOp::create(b, loc, type, ptr, /*alignment=*/16);
  }
  Value arg(KernelArg which) { return kernelArgs[which]; }
  void store16(Value value, Value ptr) {
    LLVM::StoreOp::create(b, loc, value, ptr, /*alignment=*/16);
  }

  // --- kernel pieces ---------------------------------------------------------
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name);
  void createSharedBuffer(gpu::GPUModuleOp module, StringRef name);

  /// cp.async of the CTA's slab: W rows [nCta, nCta + bn) and x rows
  /// [mCta, mCta + bm8) of K slice [kBase, kBase + kPerCta), one commit
  /// group per stage, with griddepcontrol.wait before any x copy. With
  /// prefetchW == 0: wait, then W and x of stage s in group s. Else W's
  /// stages first (groups 0..stages-1), then wait, then x's (groups stages +
  /// s): the same cp.async.wait_group counts serve both orders. x rows the
  /// CTA does not own are zero-filled, not read.
  void issueCopies(Value slab, Value tid, Value nCta, Value mCta, Value kBase,
                   Value m, Value prefetchW);
  /// Slab element offset of (slab row, k in the slice); x rows follow W's.
  Value slabOffset(Value slabRow, Value kSlice, bool isX);
  /// `body(piece)` for pieces tid, tid + threads, ... < pieces (unrolled).
  template <typename Fn> void forEachPiece(Value tid, int64_t pieces, Fn body);
  SmallVector<Value> emitStages(Value slab, Value wn, Value wk, Value g,
                                Value t);
  SmallVector<Value> mmaChunk(Value wLo, Value wHi, ValueRange x,
                              ValueRange acc);

  void storePartials(Value tile, ValueRange acc, Value wn, Value wk, Value g,
                     Value t);

  // --- warpgroup MMA (wgmma) kernels: bm == 64 or bn == 64 -----------------
  /// Slab element offset of (row, k) of a matrix of `rows` rows in the
  /// 128-byte swizzled K-major layout: atoms of 8 rows x 64 k (1024 bytes),
  /// 16-byte chunk c of row r stored at chunk c ^ (r % 8); atoms along the
  /// rows, then 64-k blocks of all rows. (The unswizzled core-matrix layout
  /// was 1.9-2.6x slower on an H200: benchmarks/results/2026-12-03f-h200.)
  Value swizzledOffset(Value row, Value k, int64_t rows);
  /// wgmma shared-memory descriptor of the swizzled matrix at `matrix`:
  /// start address >> 4, 1024-byte atom stride, 128-byte swizzle mode.
  Value matrixDescriptor(Value matrix);
  /// The stages of a wgmma kernel, both operands K-major: with bm = 64, x as
  /// A (64 x 16) and W as B (bn x 16); with W as A (bn >= 64), W as A and
  /// x as B (bm8 x 16), warpgroup `wgN` taking W rows [64 wgN, 64 wgN + 64).
  /// Warpgroup set `wgK` takes every warpsK-th chunk. Returns the
  /// warpgroup's N/2 accumulator floats.
  SmallVector<Value> emitWgmmaStages(Value slab, Value wgN, Value wgK);
  /// Accumulator of m64nNk16: warp w of the warpgroup holds rows 16w + g
  /// (+8), columns 8j + 2t (+1) of the warpgroup's 64 x bn tile.
  void storeWgmmaPartials(Value tile, ArrayRef<Value> acc, Value wg,
                          Value warpInGroup, Value g, Value t);
  /// Offset (floats) of (row mLocal, column nLocal) in a partial tile.
  Value tileOffset(Value mLocal, Value nLocal) {
    return add(mul(mLocal, shape.launch.partialRowFloats), nLocal);
  }
  /// Sum of the 8 floats at ptrOf(0), ptrOf(1), ... ptrOf(count - 1), added
  /// in that order (fixed: the result is bitwise reproducible).
  template <typename Fn>
  std::pair<Value, Value> sumGroups(int64_t count, Fn ptrOf);
  std::pair<Value, Value> sumPartials(Value tile, Value mLocal, Value nLocal);

  Value applyEpilogue(Value lo, Value hi, Value rowOffset, Value n);

  // --- split-K hand-over through st.async ----------------------------------
  /// Thread 0 sets up the receive mbarrier (one arrival: its own, expecting
  /// the bytes the other ranks push) and every thread arrives (relaxed) at
  /// the cluster barrier whose wait, before the pushes, makes every rank's
  /// mbarrier initialized for the others.
  void armReceiveBarrier(Value tid, Value slice, Value barrier);
  /// st.async of 4 floats into another rank's shared memory, completing 16
  /// bytes on that rank's mbarrier.
  void pushAsync(Value remote, Value value, Value remoteBarrier);

  Value gelu(Value v);
  Value packBf16(ArrayRef<Value> values);

  const GemmShape &shape;
  const GemmKernelSpec &spec;
  VectorType v8bf16;
  SmallVector<Value> kernelArgs; ///< Arguments of the kernel being emitted.
};

gpu::GPUFuncOp Emitter::createKernel(gpu::GPUModuleOp module, StringRef name) {
  const config::GemmLaunch &launch = shape.launch;
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, name, kernelType());
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // Lowers to nvvm.maxntid: ptxas may then use up to 64K/threads registers.
  fn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(launch.threads), 1, 1}));
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
  if (spec.split > 1) // .reqnctapercluster 1, 1, split
    fn->setAttr(
        NVVM::NVVMDialect::getClusterDimAttrName(),
        b.getDenseI32ArrayAttr({1, 1, static_cast<int32_t>(spec.split)}));
  b.setInsertionPointToStart(&fn.getBody().front());
  kernelArgs.assign(fn.getArguments().begin(), fn.getArguments().end());
  return fn;
}

void Emitter::createSharedBuffer(gpu::GPUModuleOp module, StringRef name) {
  // `.extern .shared .align 16 .b8 name[]`: the launch's dynamic shared
  // memory (launch.sharedBytes), as gpu.dynamic_shared_memory lowers. The
  // wgmma layout's 128-byte swizzle repeats every 1024 bytes, from an
  // address that is a multiple of 1024.
  b.setInsertionPointToEnd(module.getBody());
  const int64_t alignment = shape.launch.wgmma ? 1024 : 16;
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                         /*isConstant=*/false, LLVM::Linkage::External, name,
                         Attribute(), alignment, kSharedSpace);
}

template <typename Fn>
void Emitter::forEachPiece(Value tid, int64_t pieces, Fn body) {
  const int64_t threads = shape.launch.threads;
  for (int64_t first = 0; first < pieces; first += threads) {
    Value piece = add(tid, first);
    Value inRange = first + threads > pieces ? lessU(piece, pieces) : Value();
    emitIf(inRange, [&] { body(piece); });
  }
}

Value Emitter::slabOffset(Value slabRow, Value kSlice, bool isX) {
  const config::GemmLaunch &launch = shape.launch;
  // Padded rows for mma.sync; for wgmma, W (rows [0, bn)) and x (rows
  // [bn, bn + 64)) are separate matrices in the swizzled layout.
  if (!launch.wgmma)
    return add(mul(slabRow, launch.slabRowElems), kSlice);
  if (!isX)
    return swizzledOffset(slabRow, kSlice, spec.bn);
  return add(swizzledOffset(add(slabRow, -spec.bn), kSlice, launch.bm8),
             spec.bn * launch.kPerCta);
}

void Emitter::issueCopies(Value slab, Value tid, Value nCta, Value mCta,
                          Value kBase, Value m, Value prefetchW) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t k = spec.k, stageK = launch.stageK;
  const int64_t piecesPerRow = stageK / 8; // 16-byte pieces of a stage row
  // W is read once: .cg (L2 only). x is read by every CTA of a row block:
  // .ca lets CTAs that share an SM hit L1 for it. Measured on an H200
  // (benchmarks/results/2026-12-03b-h200): .ca wins for every split == 1
  // tile and for split-K tiles of bm <= 16; split-K tiles of bm >= 32 (a large
  // x slice per CTA) lose with it (768x3072 M = 64: 5.20 vs 5.05 us), and so
  // do the wgmma tiles (bm = 64), one CTA an SM: 64,3072,768,1 3.79 -> 3.38
  // us with .cg (benchmarks/results/2026-12-03f-h200).
  const NVVM::LoadCacheModifierKind xCache =
      spec.bm < 64 && (spec.split == 1 || spec.bm <= 16)
          ? NVVM::LoadCacheModifierKind::CA
          : NVVM::LoadCacheModifierKind::CG;
  auto copy = [&](Value globalRow, Value slabRow, Value kInStage, int64_t stage,
                  Value base, NVVM::LoadCacheModifierKind cache,
                  Value srcBytes) {
    Value kSlice = add(kInStage, stage * stageK);
    Value src = elementPtr(
        base, bf16, add(mul(toI64(globalRow), k), toI64(add(kBase, kSlice))));
    Value dst =
        elementPtr(slab, bf16, slabOffset(slabRow, kSlice, base == arg(kX)));
    NVVM::CpAsyncOp::create(b, loc, dst, src, /*size=*/16, cache, srcBytes);
  };
  auto copyW = [&](int64_t stage) {
    forEachPiece(tid, spec.bn * piecesPerRow, [&](Value piece) {
      Value row = divU(piece, piecesPerRow);
      Value kInStage = mul(remU(piece, piecesPerRow), 8);
      copy(add(nCta, row), row, kInStage, stage, arg(kW),
           NVVM::LoadCacheModifierKind::CG, Value());
    });
  };
  auto copyX = [&](int64_t stage) {
    forEachPiece(tid, launch.bm8 * piecesPerRow, [&](Value piece) {
      Value row = divU(piece, piecesPerRow);
      Value kInStage = mul(remU(piece, piecesPerRow), 8);
      Value xRow = add(mCta, row);
      // Rows past m, and rows past bm (the next CTA's), are zero-filled:
      // src-size 0 reads nothing, and mCta < m is a valid address.
      Value owned = lessU(xRow, m);
      if (spec.bm < launch.bm8)
        owned = both(owned, lessU(row, spec.bm));
      Value srcBytes = select(owned, constI32(16), constI32(0));
      copy(select(owned, xRow, mCta), add(row, spec.bn), kInStage, stage,
           arg(kX), xCache, srcBytes);
    });
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };
  auto waitForPreviousGrid = [&] {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  };
  Value prefetch = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         prefetchW, constI32(0));
  auto ifOp = scf::IfOp::create(b, loc, prefetch, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    copyW(stage);
    commit();
  }
  waitForPreviousGrid();
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    copyX(stage);
    commit();
  }
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  waitForPreviousGrid();
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    copyW(stage);
    copyX(stage);
    commit();
  }
}

SmallVector<Value> Emitter::mmaChunk(Value wLo, Value wHi, ValueRange x,
                                     ValueRange acc) {
  SmallVector<Value> out(acc.begin(), acc.end());
  for (int64_t j = 0; j < shape.mTiles; ++j) {
    for (int64_t h = 0; h < 2; ++h) {
      // See the file header for why these words form valid fragments.
      Value a[] = {lane(wLo, 2 * h), lane(wHi, 2 * h), lane(wLo, 2 * h + 1),
                   lane(wHi, 2 * h + 1)};
      Value bFrag[] = {lane(x[j], 2 * h), lane(x[j], 2 * h + 1)};
      SmallVector<Value> d =
          mma(a, bFrag, ArrayRef<Value>(out).slice(4 * j, 4));
      for (int64_t i = 0; i < 4; ++i)
        out[4 * j + i] = d[i];
    }
  }
  return out;
}

SmallVector<Value> Emitter::emitStages(Value slab, Value wn, Value wk, Value g,
                                       Value t) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t rowElems = launch.slabRowElems;
  const int64_t perStage = shape.chunksPerStage, warpsK = launch.warpsK;
  // Lane (g, t) reads W slab rows 16wn + g (+8) and x slab rows bn + 8j + g,
  // at k = 32c + 8t of chunk c.
  Value wLo = elementPtr(slab, bf16,
                         add(mul(add(mul(wn, 16), g), rowElems), mul(t, 8)));
  Value wHi = elementPtr(wLo, bf16, 8 * rowElems);
  SmallVector<Value> xRows;
  for (int64_t j = 0; j < shape.mTiles; ++j)
    xRows.push_back(elementPtr(
        slab, bf16, add(mul(add(g, spec.bn + 8 * j), rowElems), mul(t, 8))));

  SmallVector<Value> acc(4 * shape.mTiles, constF32(0.0));
  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    // Stage `stage`'s group is the oldest one still pending: wait for it,
    // then bar.sync makes every thread's copies visible to every warp.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, launch.stages - 1 - stage);
    gpu::BarrierOp::create(b, loc);
    // Warp wk takes the stage's chunks c with c % warpsK == wk.
    const int64_t begin = stage * perStage;
    Value first = add(remU(add(wk, warpsK - begin % warpsK), warpsK), begin);
    auto loop = scf::ForOp::create(b, loc, first, constI32(begin + perStage),
                                   constI32(warpsK), acc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value offset = mul(loop.getInductionVar(), 32);
    Value lo = load16(v4i32, elementPtr(wLo, bf16, offset));
    Value hi = load16(v4i32, elementPtr(wHi, bf16, offset));
    SmallVector<Value> x;
    for (Value row : xRows)
      x.push_back(load16(v4i32, elementPtr(row, bf16, offset)));
    scf::YieldOp::create(b, loc, mmaChunk(lo, hi, x, loop.getRegionIterArgs()));
    b.setInsertionPointAfter(loop);
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  return acc;
}

void Emitter::storePartials(Value tile, ValueRange acc, Value wn, Value wk,
                            Value g, Value t) {
  const int64_t stride = shape.launch.partialRowFloats;
  // Tile layout [warpsK][bm8][bn + pad]; lane owns rows 8j + 2t + {0,1} and
  // columns 16wn + g + {0,8} of its warp's slab (accumulator layout).
  Value row = add(mul(wk, shape.launch.bm8), mul(t, 2));
  Value base = add(mul(row, stride), add(mul(wn, 16), g));
  for (int64_t j = 0; j < shape.mTiles; ++j) {
    for (int64_t i = 0; i < 4; ++i) {
      int64_t rowDelta = 8 * j + (i & 1), colDelta = (i >> 1) * 8;
      Value ptr =
          elementPtr(tile, f32, add(base, rowDelta * stride + colDelta));
      LLVM::StoreOp::create(b, loc, acc[4 * j + i], ptr, /*alignment=*/4);
    }
  }
}

Value Emitter::swizzledOffset(Value row, Value k, int64_t rows) {
  Value r8 = remU(row, 8);
  Value chunk = arith::XOrIOp::create(b, loc, remU(divU(k, 8), 8), r8);
  Value atom = add(mul(divU(k, 64), rows / 8), divU(row, 8));
  return add(mul(atom, 512), add(mul(r8, 64), mul(chunk, 8)));
}

Value Emitter::matrixDescriptor(Value matrix) {
  Value address = LLVM::PtrToIntOp::create(b, loc, i64, matrix);
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, address, constI64(4)),
      constI64(0x3FFF));
  // Leading offset (bits 16-29) unused by swizzled K-major layouts (1 by
  // convention); stride offset (bits 32-45) = 1024 bytes between 8-row
  // atoms; layout type (bits 62-63) 1 = 128-byte swizzle.
  const int64_t fields =
      (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constI64(fields));
}

SmallVector<Value> Emitter::emitWgmmaStages(Value slab, Value wgN, Value wgK) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t groups = launch.warpsK, perStage = shape.chunksPerStage;
  const bool weightsA = launch.wgmmaWeightsA;
  const int64_t n = weightsA ? launch.bm8 : spec.bn, accCount = n / 2;
  Value xDesc =
      matrixDescriptor(elementPtr(slab, bf16, spec.bn * launch.kPerCta));
  // W as A: warpgroup wgN's 64 rows are the 8 atoms from atom 8 wgN of
  // every 64-k block (swizzledOffset's order).
  Value wDesc = matrixDescriptor(launch.wgmmaGroupsN > 1
                                     ? elementPtr(slab, bf16, mul(wgN, 64 * 64))
                                     : slab);
  // k16 step s of a matrix of `rows` rows: 32 bytes into 64-k block s / 4
  // (blocks are rows / 8 atoms of 1024 bytes); the hardware applies the
  // swizzle to the advanced start address.
  auto atStep = [&](Value desc, Value step, int64_t rows) {
    const int64_t blockBytes = rows / 8 * 1024;
    Value s64 = toI64(step);
    Value bytes = add(mul(divU(s64, 4), blockBytes), mul(remU(s64, 4), 32));
    return add(desc, arith::ShRUIOp::create(b, loc, bytes, constI64(4)));
  };

  MLIRContext *ctx = b.getContext();
  Type accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(accCount, f32));
  Value zero = LLVM::PoisonOp::create(b, loc, accType);
  for (int64_t i = 0; i < accCount; ++i)
    zero = LLVM::InsertValueOp::create(b, loc, zero, constF32(0.0), i);
  // One accumulator: 2 or 4 independent chains summed at the end measured
  // the same or 1 % slower on an H200 (benchmarks/results/2026-12-03f-h200).
  Value acc = zero;
  auto shapeAttr = NVVM::MMAShapeAttr::get(ctx, 64, n, 16);

  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    // Stage `stage`'s copies have landed for this thread; the proxy fence
    // makes them visible to the tensor core's (async proxy) reads, bar.sync
    // to every warpgroup.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, launch.stages - 1 - stage);
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    // Warpgroup set wgK takes chunks begin + wgK, begin + wgK + groups, ...
    for (int64_t i = 0; i < perStage / groups; ++i) {
      Value chunk = add(wgK, stage * perStage + i * groups);
      for (int64_t h = 0; h < 2; ++h) {
        Value step = add(mul(chunk, 2), h);
        Value wStep = atStep(wDesc, step, spec.bn);
        Value xStep = atStep(xDesc, step, launch.bm8);
        acc = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, accType, acc, weightsA ? wStep : xStep,
            weightsA ? xStep : wStep, shapeAttr, NVVM::WGMMATypes::bf16,
            NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32,
            NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
            NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
            /*satfinite=*/nullptr);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> values;
  for (int64_t i = 0; i < accCount; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  return values;
}

void Emitter::storeWgmmaPartials(Value tile, ArrayRef<Value> acc, Value wg,
                                 Value warpInGroup, Value g, Value t) {
  const int64_t stride = shape.launch.partialRowFloats;
  // Tile layout [warpgroup][64][bn + pad], (m, n) as in the output.
  Value row = add(mul(wg, shape.launch.bm8), add(mul(warpInGroup, 16), g));
  Value base = add(mul(row, stride), mul(t, 2));
  for (int64_t j = 0; j < spec.bn / 8; ++j) {
    for (int64_t i = 0; i < 4; ++i) {
      int64_t offset = (i >> 1) * 8 * stride + 8 * j + (i & 1);
      LLVM::StoreOp::create(b, loc, acc[4 * j + i],
                            elementPtr(tile, f32, add(base, offset)),
                            /*alignment=*/4);
    }
  }
}

template <typename Fn>
std::pair<Value, Value> Emitter::sumGroups(int64_t count, Fn ptrOf) {
  Value lo, hi;
  for (int64_t i = 0; i < count; ++i) {
    Value ptr = ptrOf(i);
    Value partLo = load16(v4f32, ptr);
    Value partHi = load16(v4f32, elementPtr(ptr, f32, 4));
    lo = lo ? arith::AddFOp::create(b, loc, lo, partLo).getResult() : partLo;
    hi = hi ? arith::AddFOp::create(b, loc, hi, partHi).getResult() : partHi;
  }
  return {lo, hi};
}

std::pair<Value, Value> Emitter::sumPartials(Value tile, Value mLocal,
                                             Value nLocal) {
  const config::GemmLaunch &launch = shape.launch;
  Value base = tileOffset(mLocal, nLocal);
  // Warps in order wk = 0, 1, ...
  return sumGroups(launch.warpsK, [&](int64_t wk) {
    return elementPtr(tile, f32,
                      add(base, wk * launch.bm8 * launch.partialRowFloats));
  });
}

Value Emitter::gelu(Value v) {
  Value erf = math::ErfOp::create(
      b, loc, arith::MulFOp::create(b, loc, v, constF32(kInvSqrt2)));
  Value halfV = arith::MulFOp::create(b, loc, constF32(0.5), v);
  return arith::MulFOp::create(
      b, loc, halfV, arith::AddFOp::create(b, loc, constF32(1.0), erf));
}

Value Emitter::packBf16(ArrayRef<Value> values) {
  Value packed = LLVM::PoisonOp::create(b, loc, v8bf16);
  for (auto [i, v] : llvm::enumerate(values))
    packed = LLVM::InsertElementOp::create(b, loc, packed, v, constI32(i));
  return packed;
}

Value Emitter::applyEpilogue(Value lo, Value hi, Value rowOffset, Value n) {
  auto toBf16 = [&](Value v) {
    return arith::TruncFOp::create(b, loc, bf16, v);
  };
  auto toF32 = [&](Value v) { return arith::ExtFOp::create(b, loc, f32, v); };
  Value scales, residuals;
  if (spec.epilogue == 2) {
    Value col = toI64(n);
    scales = loadReadOnly16(v8bf16, elementPtr(arg(kScale), bf16, col));
    // Plain load: out may alias residual (in-place update).
    residuals =
        load16(v8bf16, elementPtr(arg(kResidual), bf16, add(rowOffset, col)));
  }
  SmallVector<Value, 8> results;
  for (int64_t i = 0; i < 8; ++i) {
    // Contract: v = bf16(acc), then the mode's formula in FP32.
    Value rounded = toBf16(lane(i < 4 ? lo : hi, i % 4));
    switch (spec.epilogue) {
    case 1:
      results.push_back(toBf16(gelu(toF32(rounded))));
      break;
    case 2: {
      Value scaled = toBf16(arith::MulFOp::create(b, loc, toF32(rounded),
                                                  toF32(lane(scales, i))));
      results.push_back(toBf16(arith::AddFOp::create(
          b, loc, toF32(scaled), toF32(lane(residuals, i)))));
      break;
    }
    default:
      results.push_back(rounded);
    }
  }
  return packBf16(results);
}

void Emitter::armReceiveBarrier(Value tid, Value slice, Value barrier) {
  const int64_t share = shape.launch.shareItems;
  // Rank r finishes items [r * share, min((r + 1) * share, items)); each of
  // the other split - 1 ranks pushes 32 bytes an item.
  Value first = mul(slice, share);
  Value count = arith::MaxSIOp::create(
      b, loc, constI32(0),
      arith::MinSIOp::create(b, loc, constI32(share),
                             sub(constI32(shape.epilogueItems), first)));
  Value bytes = mul(count, (spec.split - 1) * 32);
  armReceiveAndArrive(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, constI32(0)),
      barrier, bytes);
}

void Emitter::pushAsync(Value remote, Value value, Value remoteBarrier) {
  emitStAsyncV4F32(
      b, loc, remote,
      {lane(value, 0), lane(value, 1), lane(value, 2), lane(value, 3)},
      remoteBarrier);
}

void Emitter::emitMainKernel(gpu::GPUModuleOp module) {
  const config::GemmLaunch &launch = shape.launch;
  std::string bufferName = "__" + spec.name + "_smem";
  createSharedBuffer(module, bufferName);
  createKernel(module, spec.name);

  Value tid = threadIdx();
  Value laneId = remU(tid, 32), warp = divU(tid, 32);
  Value g = divU(laneId, 4), t = remU(laneId, 4);
  Value wn = remU(warp, launch.warpsN), wk = divU(warp, launch.warpsN);
  Value m = arg(kM);
  Value nCta = mul(blockIdx(gpu::Dimension::x), spec.bn);
  Value mCta = mul(blockIdx(gpu::Dimension::y), spec.bm);
  // With a cluster of (1, 1, split) and gridDim.z = split, blockIdx.z is both
  // the K slice and the CTA's rank in its cluster.
  Value slice = spec.split > 1 ? blockIdx(gpu::Dimension::z) : constI32(0);

  Value smem = LLVM::AddressOfOp::create(b, loc, sharedPtr, bufferName);
  // Programmatic dependent launch (docs/kernel-abi.md): the next kernel may
  // be scheduled once every CTA of this one runs; x, scale, residual and
  // out are touched only after griddepcontrol.wait. Without a programmatic
  // launch both instructions do nothing.
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
  Value recv, recvBarrier;
  if (spec.split > 1) {
    recv = elementPtr(smem, b.getI8Type(), launch.recvOffset);
    recvBarrier = elementPtr(smem, b.getI8Type(), launch.recvBarrierOffset);
    armReceiveBarrier(tid, slice, recvBarrier);
  }
  issueCopies(smem, tid, nCta, mCta, mul(slice, launch.kPerCta), m,
              arg(kPrefetchW));
  // Warpgroup wg = (wgK, wgN), wgN fastest.
  Value wg = launch.wgmma ? divU(warp, 4) : Value();
  const bool wideA = launch.wgmmaGroupsN > 1;
  Value wgN = wideA ? remU(wg, launch.wgmmaGroupsN) : constI32(0);
  Value wgK = wideA ? divU(wg, launch.wgmmaGroupsN) : wg;
  SmallVector<Value> acc = launch.wgmma ? emitWgmmaStages(smem, wgN, wgK)
                                        : emitStages(smem, wn, wk, g, t);
  // The partial tiles reuse the slab: wait until every warp is done with it.
  gpu::BarrierOp::create(b, loc);
  if (launch.wgmmaWeightsA) // the mma.sync accumulator layout of warp
    storePartials(smem, acc,
                  wideA ? add(mul(wgN, 4), remU(warp, 4)) : remU(warp, 4), wgK,
                  g, t); // (4 wgN + w % 4, wgK)
  else if (launch.wgmma)
    storeWgmmaPartials(smem, acc, wgK, remU(warp, 4), g, t);
  else
    storePartials(smem, acc, wn, wk, g, t);

  // Each thread finishes (row, 8 columns) groups; consecutive threads take
  // consecutive column groups so the 16-byte stores coalesce. A split-K rank
  // finishes items [rank * share, (rank + 1) * share). `body` gets the
  // group's tile row, its output row and column.
  const int64_t items = shape.epilogueItems;
  auto forEachItem = [&](bool rankShare, auto body) {
    const int64_t share = rankShare ? launch.shareItems : items;
    Value rankBase = rankShare ? mul(slice, share) : Value();
    for (int64_t first = 0; first < share; first += launch.threads) {
      Value local = add(tid, first);
      Value item = rankBase ? add(rankBase, local) : local;
      Value mLocal = divU(item, shape.colGroups);
      Value nLocal = mul(remU(item, shape.colGroups), 8);
      Value row = add(mCta, mLocal);
      Value store = lessU(row, m);
      if (spec.bm < launch.bm8) // rows past bm belong to the next CTA
        store = both(store, lessU(mLocal, spec.bm));
      if (first + launch.threads > share)
        store = both(store, lessU(local, share));
      if (share * spec.split > items)
        store = both(store, lessU(item, items));
      emitIf(store, [&] { body(mLocal, nLocal, row, add(nCta, nLocal)); });
    }
  };
  auto writeOut = [&](Value lo, Value hi, Value row, Value n) {
    Value rowOffset = mul(toI64(row), spec.n);
    Value outPtr = elementPtr(arg(kOut), bf16, add(rowOffset, toI64(n)));
    store16(applyEpilogue(lo, hi, rowOffset, n), outPtr);
  };

  gpu::BarrierOp::create(b, loc);
  if (spec.split == 1) {
    forEachItem(false, [&](Value mLocal, Value nLocal, Value row, Value n) {
      auto [lo, hi] = sumPartials(smem, mLocal, nLocal);
      writeOut(lo, hi, row, n);
    });
    gpu::ReturnOp::create(b, loc);
    return;
  }

  // Split-K: each rank sums its warps' tiles item by item and pushes the
  // sum of an item to the rank that finishes it (st.async into that rank's
  // receive slot for this rank, completing bytes on its mbarrier), or
  // stores it into its own slot. A rank waits for the bytes the others
  // push, then adds the slots in the fixed order z = 0..split-1
  // (deterministic, as the ABI requires) and applies the epilogue. No
  // cluster barrier after the MMAs: nobody reads another rank's memory, and
  // a rank's slots stay alive until it has received them.
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  const int64_t share = launch.shareItems;
  forEachPiece(tid, shape.epilogueItems, [&](Value item) {
    Value mLocal = divU(item, shape.colGroups);
    Value nLocal = mul(remU(item, shape.colGroups), 8);
    auto [lo, hi] = sumPartials(smem, mLocal, nLocal);
    Value owner = divU(item, share);
    Value offset = mul(add(mul(slice, share), sub(item, mul(owner, share))), 8);
    Value mine =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, owner, slice);
    auto ifOp = scf::IfOp::create(b, loc, mine, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value ptr = elementPtr(recv, f32, offset);
    store16(lo, ptr);
    store16(hi, elementPtr(ptr, f32, 4));
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    Value remote = NVVM::MapaOp::create(b, loc, clusterPtr,
                                        elementPtr(recv, f32, offset), owner);
    Value remoteBarrier =
        NVVM::MapaOp::create(b, loc, clusterPtr, recvBarrier, owner);
    pushAsync(remote, lo, remoteBarrier);
    pushAsync(elementPtr(remote, f32, 4), hi, remoteBarrier);
  });
  gpu::BarrierOp::create(b, loc); // this rank's own slot
  emitSpinOnParity(b, loc, recvBarrier);
  forEachItem(true, [&](Value mLocal, Value nLocal, Value row, Value n) {
    Value item = add(mul(mLocal, shape.colGroups), divU(nLocal, 8));
    Value index = sub(item, mul(slice, share));
    auto [lo, hi] = sumGroups(spec.split, [&](int64_t z) {
      return elementPtr(recv, f32, mul(add(index, z * share), 8));
    });
    writeOut(lo, hi, row, n);
  });
  gpu::ReturnOp::create(b, loc);
}

/// PTX identifiers allow more, but generated names never need more than this.
bool isPlainIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

} // namespace

LogicalResult buildGemmKernels(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp module,
                               const GemmKernelSpec &spec) {
  auto fail = [&]() {
    return emitError(loc) << "cannot build GEMM kernel '" << spec.name
                          << "' (N=" << spec.n << ", K=" << spec.k << ", tile ["
                          << spec.bm << "," << spec.bn << "," << spec.bk << ","
                          << spec.split << "]): ";
  };
  GemmShape shape;
  shape.spec = spec;
  config::GemmTile tile{spec.bm, spec.bn, spec.bk, spec.split};
  std::string reason;
  if (!config::deriveGemmLaunch(spec.n, spec.k, tile, shape.launch, reason))
    return fail() << reason;
  if (spec.epilogue < 0 || spec.epilogue > 2)
    return fail() << "unknown epilogue " << spec.epilogue
                  << " (expected 0 none, 1 gelu, 2 layerscale_residual)";
  if (!isPlainIdentifier(spec.name))
    return fail() << "kernel name must match [A-Za-z_][A-Za-z0-9_]*";
  for (std::string symbol : {spec.name, "__" + spec.name + "_smem"}) {
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return fail() << "symbol '" << symbol << "' already exists in "
                    << module.getName();
  }

  shape.mTiles = shape.launch.bm8 / 8;
  shape.chunksPerStage = shape.launch.stageK / 32;
  shape.colGroups = spec.bn / 8;
  shape.epilogueItems = shape.launch.bm8 * spec.bn / 8;

  OpBuilder::InsertionGuard guard(b);
  Emitter emitter(b, loc, shape);
  emitter.emitMainKernel(module);
  return success();
}

} // namespace moss
