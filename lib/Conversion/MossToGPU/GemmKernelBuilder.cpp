//===- GemmKernelBuilder.cpp - FFN GEMM kernels as gpu.func ops -----------===//
//
// Weight-streaming GEMM for small M (decoder FFN, M = 1..64). The kernel is
// bound by reading W once, so it skips shared-memory staging: every lane loads
// its tensor-core fragments straight from global memory with 16-byte loads.
//
// A and B are swapped: the MMA computes out^T = W * x^T, so the MMA's 16-row
// side walks 16 rows of W (n) and its 8-column side walks 8 rows of x (m).
// A (16x16, "row") is a W tile, B (16x8, "col") is x^T, i.e. x rows that are
// contiguous in k: both are plain row-major reads of the inputs.
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
//===----------------------------------------------------------------------===//

#include "moss/Conversion/MossToGPU/GemmKernelBuilder.h"

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

constexpr unsigned kGlobalSpace = 1; // CUDA global memory
constexpr unsigned kSharedSpace = 3; // CUDA shared memory

// Padding (floats) of each row of the shared partial tile: lane (g, t) writes
// row 2t, column g, so a row stride of bn + 4 puts the four t's 8 banks apart
// and the warp's 32 stores hit 32 distinct banks. Keeps 16-byte alignment.
constexpr int64_t kPartialRowPad = 4;

// The k loop is software-pipelined in stages: the loads of stage i+1 are
// issued before the MMAs of stage i (checked in the SASS: the LDG.128s of the
// next stage precede the HMMAs). A stage is a whole k block when its
// fragments fit the register budget, else a power-of-two part of it: two
// stages live at once, and two blocks at the tile rule's cap
// (2 x 32 loads x 4 regs) would spill.
constexpr int64_t kMaxLoadsPerStage = 16;
// Registers per thread besides the two stages and the accumulators
// (addresses, indices, predicates), measured on ptxas 13.0 output.
constexpr int64_t kRegisterOverhead = 40;

// 1/sqrt(2) for erf-GELU, as the contract writes it.
constexpr double kInvSqrt2 = 0.70710678118654752;

/// Kernel parameters, in the order of docs/kernel-abi.md.
enum KernelArg { kX, kW, kScale, kResidual, kOut, kWorkspace, kM, kNumArgs };

/// Tile shape plus derived quantities used while emitting one kernel.
struct GemmShape {
  GemmKernelSpec spec;
  config::GemmLaunch launch;
  int64_t mTiles = 0;           ///< m8 tiles per warp: bm8 / 8.
  int64_t chunksPerStage = 0;   ///< 32-wide k chunks per pipeline stage.
  int64_t stagesPerBlock = 0;   ///< (bk / 32) / chunksPerStage.
  int64_t loadsPerChunk = 0;    ///< 16-byte loads per lane per chunk.
  int64_t kPerSlice = 0;        ///< K / split.
  int64_t partialRowStride = 0; ///< floats per row of the shared tile.
  int64_t colGroups = 0;        ///< bn / 8: 8-column groups per tile row.
  int64_t epilogueItems = 0;    ///< bm8 * bn / 8 (row, 8-column) groups.
};

/// Builder state plus the small IR helpers both kernels use. Integer math is
/// i32 except offsets that scale with the runtime m (those are i64).
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, const GemmShape &shape)
      : b(b), loc(loc), shape(shape), spec(shape.spec) {
    MLIRContext *ctx = b.getContext();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    f32 = b.getF32Type();
    bf16 = b.getBF16Type();
    globalPtr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
    sharedPtr = LLVM::LLVMPointerType::get(ctx, kSharedSpace);
    v4i32 = VectorType::get({4}, i32);
    v4f32 = VectorType::get({4}, f32);
    v8bf16 = VectorType::get({8}, bf16);
    mmaResult = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  }

  FunctionType kernelType() {
    SmallVector<Type> args(kM, globalPtr);
    args.push_back(i32);
    return b.getFunctionType(args, {});
  }

  void emitMainKernel(gpu::GPUModuleOp module);

private:
  // --- scalar and pointer helpers ------------------------------------------
  Value constI32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value constI64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value constF32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulIOp::create(b, loc, l, r); }
  Value add(Value l, int64_t r) { return r == 0 ? l : add(l, constOf(l, r)); }
  Value mul(Value l, int64_t r) { return r == 1 ? l : mul(l, constOf(l, r)); }
  Value divU(Value l, int64_t r) {
    return arith::DivUIOp::create(b, loc, l, constOf(l, r));
  }
  Value remU(Value l, int64_t r) {
    return arith::RemUIOp::create(b, loc, l, constOf(l, r));
  }
  Value lessU(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, l, r);
  }
  Value lessU(Value l, int64_t r) { return lessU(l, constOf(l, r)); }
  Value both(Value l, Value r) { return arith::AndIOp::create(b, loc, l, r); }
  Value toI64(Value v) { return arith::ExtUIOp::create(b, loc, i64, v); }
  Value constOf(Value like, int64_t v) {
    return like.getType() == i64 ? constI64(v) : constI32(v);
  }

  Value threadIdx() {
    return gpuIndex(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  }
  Value blockIdx(gpu::Dimension d) {
    return gpuIndex(gpu::BlockIdOp::create(b, loc, d));
  }
  Value gpuIndex(Value index) {
    return arith::IndexCastUIOp::create(b, loc, i32, index);
  }

  /// &base[offset] for elements of type `elem` (offset i32 or i64).
  Value elementPtr(Value base, Type elem, Value offset) {
    return LLVM::GEPOp::create(b, loc, base.getType(), elem, base,
                               ValueRange{offset});
  }
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
  Value lane(Value vec, int64_t i) {
    return LLVM::ExtractElementOp::create(b, loc, vec, constI32(i));
  }

  // --- kernel pieces ---------------------------------------------------------
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name,
                              int64_t threads);
  LLVM::GlobalOp createPartialTile(gpu::GPUModuleOp module, StringRef name);

  struct FragmentPointers {
    Value wLo, wHi;               ///< W rows n0+g and n0+g+8, at k = 8t.
    SmallVector<Value> x;         ///< per m8 tile: x row (clamped), k = 8t.
    SmallVector<Value> xRowValid; ///< per m8 tile: row < m.
  };
  FragmentPointers fragmentPointers(Value nRow, Value mCta, Value kBase,
                                    Value t, Value g, Value m);
  SmallVector<Value> loadStage(const FragmentPointers &ptrs, Value kOffset);
  SmallVector<Value> mmaStage(const FragmentPointers &ptrs,
                              ValueRange fragments, ValueRange acc);
  SmallVector<Value> mmaChunk(Value wLo, Value wHi, ValueRange x,
                              ValueRange acc);
  Value stageOffset(Value stage, Value wk);
  SmallVector<Value> emitKLoop(const FragmentPointers &ptrs, Value wk);

  void storePartials(Value tile, ValueRange acc, Value wn, Value wk, Value g,
                     Value t);
  std::pair<Value, Value> sumPartials(Value tile, Value mLocal, Value nLocal);

  Value applyEpilogue(Value lo, Value hi, Value rowOffset, Value n);
  Value gelu(Value v);
  Value packBf16(ArrayRef<Value> values);

  /// Emits `body` under `if (cond)`; cond may be null (always true).
  template <typename Fn> void emitIf(Value cond, Fn body) {
    if (!cond) {
      body();
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body();
  }

  OpBuilder &b;
  Location loc;
  const GemmShape &shape;
  const GemmKernelSpec &spec;
  Type i32, i64, f32, bf16, globalPtr, sharedPtr, mmaResult;
  VectorType v4i32, v4f32, v8bf16;
  SmallVector<Value> kernelArgs; ///< Arguments of the kernel being emitted.
};

gpu::GPUFuncOp Emitter::createKernel(gpu::GPUModuleOp module, StringRef name,
                                     int64_t threads) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, name, kernelType());
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // Lowers to nvvm.maxntid: ptxas may then use up to 64K/threads registers.
  fn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  // .minnctapersm 1: without it ptxas 13 trades a few spilled bytes for a
  // higher occupancy target on the register-heavy tiles (bm = 32).
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
  b.setInsertionPointToStart(&fn.getBody().front());
  kernelArgs.assign(fn.getArguments().begin(), fn.getArguments().end());
  return fn;
}

LLVM::GlobalOp Emitter::createPartialTile(gpu::GPUModuleOp module,
                                          StringRef name) {
  const config::GemmLaunch &launch = shape.launch;
  int64_t floats = launch.warpsK * launch.bm8 * shape.partialRowStride;
  b.setInsertionPointToEnd(module.getBody());
  return LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(f32, floats),
                                /*isConstant=*/false, LLVM::Linkage::Internal,
                                name, Attribute(), /*alignment=*/16,
                                kSharedSpace);
}

Emitter::FragmentPointers Emitter::fragmentPointers(Value nRow, Value mCta,
                                                    Value kBase, Value t,
                                                    Value g, Value m) {
  const int64_t k = spec.k;
  FragmentPointers ptrs;
  Value kLane = toI64(add(kBase, mul(t, 8)));
  ptrs.wLo = elementPtr(arg(kW), bf16, add(mul(toI64(nRow), k), kLane));
  ptrs.wHi = elementPtr(ptrs.wLo, bf16, constI64(8 * k));
  // Rows >= m read row m-1 (always valid: no CTA runs when m == 0) and the
  // loaded value is replaced by zero, so no load leaves the x allocation.
  Value lastRow = arith::SubIOp::create(b, loc, m, constI32(1));
  for (int64_t j = 0; j < shape.mTiles; ++j) {
    Value row = add(add(mCta, g), 8 * j);
    Value valid = lessU(row, m);
    Value safeRow = arith::SelectOp::create(b, loc, valid, row, lastRow);
    ptrs.x.push_back(
        elementPtr(arg(kX), bf16, add(mul(toI64(safeRow), k), kLane)));
    ptrs.xRowValid.push_back(valid);
  }
  return ptrs;
}

SmallVector<Value> Emitter::loadStage(const FragmentPointers &ptrs,
                                      Value kOffset) {
  SmallVector<Value> fragments;
  for (int64_t c = 0; c < shape.chunksPerStage; ++c) {
    Value offset = add(kOffset, 32 * c);
    fragments.push_back(
        loadReadOnly16(v4i32, elementPtr(ptrs.wLo, bf16, offset)));
    fragments.push_back(
        loadReadOnly16(v4i32, elementPtr(ptrs.wHi, bf16, offset)));
    for (int64_t j = 0; j < shape.mTiles; ++j)
      fragments.push_back(
          loadReadOnly16(v4i32, elementPtr(ptrs.x[j], bf16, offset)));
  }
  return fragments;
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
      ValueRange c(ArrayRef<Value>(out).slice(4 * j, 4));
      Value d = NVVM::MmaOp::create(
          b, loc, mmaResult, a, bFrag, c, ArrayRef<int64_t>{16, 8, 16},
          /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                        NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      for (int64_t i = 0; i < 4; ++i)
        out[4 * j + i] = LLVM::ExtractValueOp::create(b, loc, d, i);
    }
  }
  return out;
}

SmallVector<Value> Emitter::mmaStage(const FragmentPointers &ptrs,
                                     ValueRange fragments, ValueRange acc) {
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(v4i32));
  SmallVector<Value> out(acc.begin(), acc.end());
  for (int64_t c = 0; c < shape.chunksPerStage; ++c) {
    ValueRange chunk =
        fragments.slice(c * shape.loadsPerChunk, shape.loadsPerChunk);
    // Zero x rows >= m here, where the MMA consumes them: a select next to
    // the (prefetch) load would stall the warp on that load.
    SmallVector<Value> x;
    for (int64_t j = 0; j < shape.mTiles; ++j)
      x.push_back(arith::SelectOp::create(b, loc, ptrs.xRowValid[j],
                                          chunk[2 + j], zero));
    out = mmaChunk(chunk[0], chunk[1], x, out);
  }
  return out;
}

/// k offset (inside the CTA's K slice) of the warp's `stage`-th stage: warp
/// wk owns k blocks wk, wk + warpsK, ... and walks each in stagesPerBlock
/// stages.
Value Emitter::stageOffset(Value stage, Value wk) {
  const int64_t perBlock = shape.stagesPerBlock;
  Value block = add(wk, mul(divU(stage, perBlock), shape.launch.warpsK));
  Value offset = mul(block, spec.bk);
  if (perBlock == 1)
    return offset;
  return add(offset, mul(remU(stage, perBlock), 32 * shape.chunksPerStage));
}

SmallVector<Value> Emitter::emitKLoop(const FragmentPointers &ptrs, Value wk) {
  const config::GemmLaunch &launch = shape.launch;
  // Warp-uniform trip count: ceil((kBlocks - wk) / warpsK) blocks; warpsK <=
  // kBlocks, so every warp owns at least one.
  Value ownedBlocks = divU(
      add(arith::SubIOp::create(b, loc, constI32(launch.kBlocksPerCta), wk),
          launch.warpsK - 1),
      launch.warpsK);
  Value stages = mul(ownedBlocks, shape.stagesPerBlock);

  SmallVector<Value> init = loadStage(ptrs, stageOffset(constI32(0), wk));
  const size_t numFragments = init.size();
  init.append(4 * shape.mTiles, constF32(0.0));

  auto loop =
      scf::ForOp::create(b, loc, constI32(0), stages, constI32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(loop.getBody());
  ValueRange carried = loop.getRegionIterArgs();
  ValueRange current = carried.take_front(numFragments);
  // Prefetch: the next stage's loads go out before this stage's MMAs.
  Value next = add(loop.getInductionVar(), 1);
  auto prefetch =
      scf::IfOp::create(b, loc, current.getTypes(), lessU(next, stages),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToEnd(prefetch.thenBlock());
    scf::YieldOp::create(b, loc, loadStage(ptrs, stageOffset(next, wk)));
    b.setInsertionPointToEnd(prefetch.elseBlock());
    scf::YieldOp::create(b, loc, current);
  }
  SmallVector<Value> yielded(prefetch.getResults());
  llvm::append_range(yielded,
                     mmaStage(ptrs, current, carried.drop_front(numFragments)));
  scf::YieldOp::create(b, loc, yielded);
  return SmallVector<Value>(loop.getResults().drop_front(numFragments));
}

void Emitter::storePartials(Value tile, ValueRange acc, Value wn, Value wk,
                            Value g, Value t) {
  const int64_t stride = shape.partialRowStride;
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

std::pair<Value, Value> Emitter::sumPartials(Value tile, Value mLocal,
                                             Value nLocal) {
  const int64_t stride = shape.partialRowStride;
  Value base = add(mul(mLocal, stride), nLocal);
  Value lo, hi;
  // Fixed order wk = 0, 1, ... keeps the result bitwise reproducible.
  for (int64_t wk = 0; wk < shape.launch.warpsK; ++wk) {
    Value ptr =
        elementPtr(tile, f32, add(base, wk * shape.launch.bm8 * stride));
    Value partLo = load16(v4f32, ptr);
    Value partHi = load16(v4f32, elementPtr(ptr, f32, constI32(4)));
    lo = lo ? arith::AddFOp::create(b, loc, lo, partLo).getResult() : partLo;
    hi = hi ? arith::AddFOp::create(b, loc, hi, partHi).getResult() : partHi;
  }
  return {lo, hi};
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

void Emitter::emitMainKernel(gpu::GPUModuleOp module) {
  const config::GemmLaunch &launch = shape.launch;
  std::string tileName = "__" + spec.name + "_partials";
  createPartialTile(module, tileName);
  createKernel(module, spec.name, launch.threads);

  Value tid = threadIdx();
  Value laneId = remU(tid, 32), warp = divU(tid, 32);
  Value g = divU(laneId, 4), t = remU(laneId, 4);
  Value wn = remU(warp, launch.warpsN), wk = divU(warp, launch.warpsN);
  Value m = arg(kM);
  Value nCta = mul(blockIdx(gpu::Dimension::x), spec.bn);
  Value mCta = mul(blockIdx(gpu::Dimension::y), spec.bm);
  Value slice = spec.split > 1 ? blockIdx(gpu::Dimension::z) : constI32(0);

  Value nRow = add(add(nCta, mul(wn, 16)), g);
  FragmentPointers ptrs =
      fragmentPointers(nRow, mCta, mul(slice, shape.kPerSlice), t, g, m);
  SmallVector<Value> acc = emitKLoop(ptrs, wk);

  Value tile = LLVM::AddressOfOp::create(b, loc, sharedPtr, tileName);
  storePartials(tile, acc, wn, wk, g, t);
  gpu::BarrierOp::create(b, loc);

  // Each thread finishes (row, 8 columns) groups; consecutive threads take
  // consecutive column groups so the 16-byte stores coalesce. `body` gets the
  // group's tile row, its output row and column.
  const int64_t items = shape.epilogueItems;
  auto forEachItem = [&](auto body) {
    for (int64_t first = 0; first < items; first += launch.threads) {
      Value item = add(tid, first);
      Value mLocal = divU(item, shape.colGroups);
      Value nLocal = mul(remU(item, shape.colGroups), 8);
      Value row = add(mCta, mLocal);
      Value store = lessU(row, m);
      if (spec.bm < launch.bm8) // rows past bm belong to the next CTA
        store = both(store, lessU(mLocal, spec.bm));
      if (first + launch.threads > items)
        store = both(store, lessU(item, items));
      emitIf(store, [&] { body(mLocal, nLocal, row, add(nCta, nLocal)); });
    }
  };
  auto writeOut = [&](Value lo, Value hi, Value row, Value n) {
    Value rowOffset = mul(toI64(row), spec.n);
    Value outPtr = elementPtr(arg(kOut), bf16, add(rowOffset, toI64(n)));
    store16(applyEpilogue(lo, hi, rowOffset, n), outPtr);
  };

  if (spec.split == 1) {
    forEachItem([&](Value mLocal, Value nLocal, Value row, Value n) {
      auto [lo, hi] = sumPartials(tile, mLocal, nLocal);
      writeOut(lo, hi, row, n);
    });
    gpu::ReturnOp::create(b, loc);
    return;
  }

  // Split-K, reduced in this kernel (docs/kernel-abi.md): every CTA writes
  // its FP32 partial tile to workspace partials[slice][row][n] ...
  Value partials = elementPtr(arg(kWorkspace), f32,
                              constI64(config::kGemmSplitCounterBytes / 4));
  Value sliceStride = mul(toI64(m), spec.n);
  auto partialPtr = [&](Value sliceIndex, Value row, Value n) {
    Value wsRow = add(mul(toI64(sliceIndex), toI64(m)), toI64(row));
    return elementPtr(partials, f32, add(mul(wsRow, spec.n), toI64(n)));
  };
  forEachItem([&](Value mLocal, Value nLocal, Value row, Value n) {
    auto [lo, hi] = sumPartials(tile, mLocal, nLocal);
    Value wsPtr = partialPtr(slice, row, n);
    store16(lo, wsPtr);
    store16(hi, elementPtr(wsPtr, f32, constI32(4)));
  });
  // ... then, once all of the CTA's stores are done (barrier), thread 0
  // releases them (fence.acq_rel.gpu) and counts the CTA in on the output
  // tile's counter. The CTA that sees split - 1 arrived last: it acquires the
  // other slices (second fence), resets the counter for the next call (no
  // CTA of this launch touches it again) and tells the CTA through a
  // reducing barrier.
  gpu::BarrierOp::create(b, loc);
  Value tileIndex = add(mul(blockIdx(gpu::Dimension::y), launch.gridX),
                        blockIdx(gpu::Dimension::x));
  Value counter = elementPtr(arg(kWorkspace), i32, tileIndex);
  Value isThread0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, constI32(0));
  auto arrive = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, isThread0,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(arrive.thenBlock());
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
    Value arrived = LLVM::AtomicRMWOp::create(
        b, loc, LLVM::AtomicBinOp::add, counter, constI32(1),
        LLVM::AtomicOrdering::monotonic, "device", /*alignment=*/4);
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       arrived, constI32(spec.split - 1));
    emitIf(last, [&] {
      LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
      LLVM::StoreOp::create(b, loc, constI32(0), counter, /*alignment=*/4);
    });
    scf::YieldOp::create(b, loc, last);
    b.setInsertionPointToStart(arrive.elseBlock());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult());
  }
  auto lastBarrier = NVVM::BarrierOp::create(
      b, loc, i32, /*barrierId=*/Value(), /*numberOfThreads=*/Value(),
      NVVM::BarrierReductionAttr::get(b.getContext(),
                                      NVVM::BarrierReduction::OR),
      arith::ExtUIOp::create(b, loc, i32, arrive.getResult(0)));
  Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       lastBarrier.getRes(), constI32(0));
  emitIf(isLast, [&] {
    forEachItem([&](Value, Value, Value row, Value n) {
      Value first = partialPtr(constI32(0), row, n);
      Value lo, hi;
      // Slices in order z = 0..split-1: deterministic, as the ABI requires.
      // Plain (coherent) loads: other CTAs of this launch wrote them.
      for (int64_t z = 0; z < spec.split; ++z) {
        Value ptr =
            z == 0 ? first : elementPtr(first, f32, mul(sliceStride, z));
        Value partLo = load16(v4f32, ptr);
        Value partHi = load16(v4f32, elementPtr(ptr, f32, constI32(4)));
        lo =
            lo ? arith::AddFOp::create(b, loc, lo, partLo).getResult() : partLo;
        hi =
            hi ? arith::AddFOp::create(b, loc, hi, partHi).getResult() : partHi;
      }
      writeOut(lo, hi, row, n);
    });
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
  for (std::string symbol : {spec.name, "__" + spec.name + "_partials"}) {
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return fail() << "symbol '" << symbol << "' already exists in "
                    << module.getName();
  }

  const config::GemmLaunch &launch = shape.launch;
  shape.mTiles = launch.bm8 / 8;
  shape.loadsPerChunk = 2 + shape.mTiles;
  // 64K registers per SM shared by the CTA, at most 255 per thread.
  int64_t registers = std::min<int64_t>(255, 65536 / launch.threads);
  int64_t maxStageLoads = std::min<int64_t>(
      kMaxLoadsPerStage,
      (registers - kRegisterOverhead - 4 * shape.mTiles) / (2 * 4));
  shape.chunksPerStage = spec.bk / 32;
  while (shape.chunksPerStage > 1 &&
         shape.chunksPerStage * shape.loadsPerChunk > maxStageLoads)
    shape.chunksPerStage /= 2;
  shape.stagesPerBlock = spec.bk / 32 / shape.chunksPerStage;
  shape.kPerSlice = spec.k / spec.split;
  shape.partialRowStride = spec.bn + kPartialRowPad;
  shape.colGroups = spec.bn / 8;
  shape.epilogueItems = launch.bm8 * spec.bn / 8;

  OpBuilder::InsertionGuard guard(b);
  Emitter emitter(b, loc, shape);
  emitter.emitMainKernel(module);
  return success();
}

} // namespace moss
