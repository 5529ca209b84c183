//===- GemmEmitter.h - Emitter of the FFN GEMM kernels ----------*- C++ -*-===//
//
// The IR emitter of the weight-streaming GEMM kernels (the design is
// described at the top of GemmKernelBuilder.cpp): the kernel's parameters,
// its tile shape and the GemmEmitter class. Its pieces take every value
// they read as an argument and return what they compute; the emitter holds
// only the builder and the kernel's constant shape, so a test can emit one
// piece into a function of its own (test/Kernels/Pieces). They live in
// GemmCopies.cpp (cp.async of the W and x slab), GemmMma.cpp (mma.sync
// stages), GemmWgmma.cpp (warpgroup MMA stages, the swizzled layout),
// GemmEpilogue.cpp (partial sums, the fused epilogue), GemmSplitK.cpp (the
// split-K hand-over), GemmLayerNorm.cpp (the LayerNorm prologue),
// GemmRopeCache.cpp (the QKV epilogue: RoPE and the ring cache) and
// GemmKernelBuilder.cpp (the kernel body). Private
// to the kernel builders and their tests.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_GEMM_GEMMEMITTER_H
#define MOSS_LIB_KERNELS_GEMM_GEMMEMITTER_H

#include "Common/KernelEmitter.h"
#include "Common/MlirNames.h"
#include "Common/NvvmSync.h"

#include "moss/Config/GemmLaunch.h"
#include "moss/Kernels/GemmKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <utility>

namespace moss::gemm {

// 1/sqrt(2) for erf-GELU, as the contract writes it.
constexpr double kInvSqrt2 = 0.70710678118654752;

/// Kernel parameters, in the order of docs/kernel-abi.md and of the manifest's
/// config::gemmKernelArgNames(mode); only the kernels of a LayerNorm mode
/// have gamma, beta and eps, only those of layernorm_rope_cache the rest.
enum KernelArg {
  kX,
  kW,
  kScale,
  kResidual,
  kRowLive,
  kOut,
  kM,
  kPrefetchW,
  kGamma,
  kBeta,
  kEps,
  kPositions,
  kLive,
  kKCache,
  kVCache,
  kSlotPositions,
  kLength,
  kCapacity,
  kNumArgs
};

/// The QKV epilogue's parameters (mode layernorm_rope_cache): q is the
/// kernel's out, [m, d]; positions [B,T] i64 and live [B,T] i8 (m = B T
/// rows); the caches [B,H,S,64] bf16 and the slot table [B,S] i64; length
/// T and capacity S (i32).
struct RopeCacheOperands {
  mlir::Value q, positions, live, kCache, vCache, slotPositions, length,
      capacity;
};

/// Tile shape plus derived quantities used while emitting one kernel.
struct GemmShape {
  GemmKernelSpec spec;
  config::GemmLaunch launch;
  int64_t mTiles = 0;         ///< m8 tiles per warp: bm8 / 8.
  int64_t chunksPerStage = 0; ///< 32-wide k chunks per stage.
  int64_t colGroups = 0;      ///< bn / 8: 8-column groups per tile row.
  int64_t epilogueItems = 0;  ///< bm8 * bn / 8 (row, 8-column) groups.
  int epilogue = 0;           ///< The mode's epilogue (config::GemmEpilogue).
};
/// The shape of `spec`'s kernel (config::deriveGemmLaunch and what follows
/// from it); false with `reason` for an illegal tile or unknown mode.
bool deriveGemmShape(const GemmKernelSpec &spec, GemmShape &shape,
                     std::string &reason);

/// Builder state plus the IR helpers of the kernel. Integer math is i32
/// except offsets that scale with the runtime m (those are i64).
class GemmEmitter : public KernelEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc, const GemmShape &shape)
      : KernelEmitter(b, loc), shape(shape), spec(shape.spec) {
    v8bf16 = VectorType::get({8}, bf16);
  }

  FunctionType kernelType() {
    SmallVector<Type> args(kM, globalPtr);
    args.append({i32, i32}); // m, prefetch_w
    if (shape.launch.layerNorm)
      args.append({globalPtr, globalPtr, f32}); // gamma, beta, eps
    if (shape.epilogue == config::kGemmEpilogueRopeCache)
      args.append({globalPtr, globalPtr, globalPtr, globalPtr, globalPtr, i32,
                   i32}); // positions .. slot_positions, length, capacity
    return b.getFunctionType(args, {});
  }

  void emitMainKernel(gpu::GPUModuleOp module);

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
  void store16(Value value, Value ptr) {
    LLVM::StoreOp::create(b, loc, value, ptr, /*alignment=*/16);
  }

  // --- kernel pieces ---------------------------------------------------------
  /// cp.async of the CTA's slab (x and w: the kernel's operands): W rows [nCta,
  /// nCta + bn) and x rows [mCta, mCta + bm8) of K slice [kBase, kBase +
  /// kPerCta), one commit group per stage, with griddepcontrol.wait before any
  /// x copy. With prefetchW == 0: wait, then W and x of stage s in group s.
  /// Else W's stages first (groups 0..stages-1), then wait, then x's (groups
  /// stages + s): the same cp.async.wait_group counts serve both orders. x rows
  /// the CTA does not own are zero-filled, not read. A LayerNorm mode copies
  /// W alone (applyLayerNorm loads x), one group per stage in either order.
  void issueCopies(Value slab, Value x, Value w, Value tid, Value nCta,
                   Value mCta, Value kBase, Value m, Value prefetchW);
  /// Whether the CTA owns tile row `row` (global row `globalRow` of x and
  /// out): below m, and below bm (with bm < 8 the m8 tile's last rows are
  /// the next CTA's). The x copies and loads and the output stores ask it.
  Value ownsTileRow(Value row, Value globalRow, Value m);
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
  /// makes the wgmma reads of one atom hit the same banks.)
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

  /// The contract's epilogue of the 8 sums lo, hi of (row, columns n ..
  /// n + 7) as 8 bf16: scale, residual (the kernel's operands) and
  /// liveFactor (rowLiveFactor of the row) are read only by LayerScale +
  /// residual, whose result is multiplied by liveFactor and rounded again
  /// (exact: a live row keeps its value, a padding row becomes y * 0).
  Value applyEpilogue(Value lo, Value hi, Value rowOffset, Value n, Value scale,
                      Value residual, Value liveFactor);
  /// 1.0 (f32) when row `row` is live, 0.0 when it is padding: rowLive is
  /// the kernel's row_live operand, one byte per row (nonzero: live), or
  /// null for every row live.
  Value rowLiveFactor(Value rowLive, Value row);

  // --- split-K hand-over through st.async ----------------------------------
  /// Thread 0 sets up the receive mbarrier (one arrival: its own, expecting
  /// the bytes the other ranks push) and every thread arrives (relaxed) at
  /// the cluster barrier whose wait, before the pushes, makes every rank's
  /// mbarrier initialized for the others.
  void armReceiveBarrier(Value tid, Value slice, Value barrier);
  /// The bulk split-K hand-over (GemmLaunch::bulkHandover): after the send
  /// area is written, fenced and a bar.sync, thread 0's cp.async.bulk of
  /// each other rank's share into that rank's slot for this rank.
  void emitBulkHandover(Value tid, Value slice, Value send, Value recv,
                        Value recvBarrier);
  /// st.async of 4 floats into another rank's shared memory, completing 16
  /// bytes on that rank's mbarrier.
  void pushAsync(Value remote, Value value, Value remoteBarrier);
  /// After the partial tiles are stored: every item's sum (sumPartials) into
  /// the receive slot, for this rank, of the rank that finishes it, then the
  /// wait for the bytes this rank receives (GemmSplitK.cpp).
  void handOverSplitK(Value smem, Value tid, Value slice, Value recv,
                      Value recvBarrier);
  /// The finished sums of (mLocal, nLocal), one of this rank's items: the
  /// ranks' slots added in order z = 0..split-1.
  std::pair<Value, Value> sumReceived(Value recv, Value slice, Value mLocal,
                                      Value nLocal);

  Value gelu(Value v);
  Value packBf16(ArrayRef<Value> values);

  // --- the QKV epilogue (GemmRopeCache.cpp) ----------------------------------
  /// inv_freq of pairs 4 quad .. 4 quad + 3 of a head (config::
  /// ropeInverseFrequency), as 4 floats.
  Value ropeFrequencies(Value quad);
  /// The 8 bf16 `rounded` (4 interleaved pairs, the first pair 4 quad of its
  /// head) turned by `position` (i64): in FP32, (e, o) -> (e cos - o sin,
  /// e sin + o cos) with angle = float(position) * inv_freq, each result
  /// rounded to bf16.
  Value ropeRotate(Value rounded, Value position, Value quad);
  /// Whether batch row `batchRow`'s `length` positions are >= 0 and
  /// consecutive (i1).
  Value batchRowPositionsValid(Value positions, Value batchRow, Value length);
  /// Stores item (row, columns n .. n + 7) of the product, rounded to bf16:
  /// q (turned) into ops.q, k (turned) and v into the ring cache, and for
  /// column 0 the row's slot-table entry; the cache and the table only when
  /// the row's batch row has valid positions.
  void storeRopeCacheItem(Value rounded, Value row, Value n,
                          const RopeCacheOperands &ops);

  // --- LayerNorm prologue (GemmLayerNorm.cpp) --------------------------------
  /// The whole prologue, after issueCopies (so after griddepcontrol.wait):
  /// loadXSlice, bar.sync, publishMoments (split-K: between the wait of
  /// armReceiveBarrier's arrive and one more cluster barrier; else a
  /// bar.sync), normalizeXSlice. handOverSplitK must then skip its wait.
  void applyLayerNorm(Value slab, Value x, Value gamma, Value beta, Value eps,
                      Value tid, Value mCta, Value kBase, Value m, Value slice);
  /// Plain 16-byte loads of x rows [mCta, mCta + bm8) of the K slice from
  /// kBase into the slab's x rows; zeros for rows the CTA does not own.
  void loadXSlice(Value slab, Value x, Value tid, Value mCta, Value kBase,
                  Value m);
  /// (mean, M2) of the K slice of tile row `row` in the slab, in FP32: the
  /// lane's pieces lane + 32 i summed in order, then a butterfly over the
  /// warp (every lane gets the same bits); M2 = sum of (x - mean)^2, a
  /// second pass. Called by a whole warp.
  std::pair<Value, Value> sliceMoments(Value slab, Value row, Value laneId);
  /// Warp w takes tile rows w, w + warps, ...: lane 0 stores (mean, M2)
  /// into slot slice * bm8 + row of `stats`, in every rank with split > 1.
  void publishMoments(Value slab, Value stats, Value tid, Value slice);
  /// (mean, rstd) of tile row `row` from its `split` slots, combined in order
  /// z = 0, 1, ... (Chan's formula for equal parts): var = M2 / K, rstd =
  /// rsqrt(var + eps) (the hardware's rsqrt.approx.f32).
  std::pair<Value, Value> rowStatistics(Value stats, Value row, Value eps);
  /// The slab's x slice in place: bf16((x - mean) * rstd * gamma[k] +
  /// beta[k]) in FP32.
  void normalizeXSlice(Value slab, Value stats, Value tid, Value kBase,
                       Value gamma, Value beta, Value eps);

private:
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name);
  void createSharedBuffer(gpu::GPUModuleOp module, StringRef name);

  const GemmShape &shape;
  const GemmKernelSpec &spec;
  VectorType v8bf16;
};

template <typename Fn>
void GemmEmitter::forEachPiece(Value tid, int64_t pieces, Fn body) {
  const int64_t threads = shape.launch.threads;
  for (int64_t first = 0; first < pieces; first += threads) {
    Value piece = add(tid, first);
    Value inRange = first + threads > pieces ? lessU(piece, pieces) : Value();
    emitIf(inRange, [&] { body(piece); });
  }
}

template <typename Fn>
std::pair<Value, Value> GemmEmitter::sumGroups(int64_t count, Fn ptrOf) {
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

} // namespace moss::gemm

#endif // MOSS_LIB_KERNELS_GEMM_GEMMEMITTER_H
