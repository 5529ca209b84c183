//===- GemmKernelBuilder.cpp - FFN GEMM kernels as gpu.func ops -----------===//
//
// Weight-streaming GEMM for small M (decoder FFN, M = 1..64). The kernel is
// bound by the latency and bandwidth of reading W once, so every CTA puts its
// whole K slice of W and x in flight at once: cp.async 16-byte copies into
// shared memory, one commit group per stage (a few bk blocks), and the MMAs of
// stage s start as soon as its group has landed (cp.async.wait_group +
// bar.sync).
//
// A and B are swapped (GemmMma.cpp): the MMA computes out^T = W * x^T, so
// W's rows walk the MMA's 16-row (or, with warpgroup MMAs, 64-row) side and
// x's rows its 8-column side; bm = 64 tiles keep x as A (GemmWgmma.cpp).
//
// Split-K: the `split` CTAs of an output tile form one thread-block cluster
// (cluster dims (1, 1, split), rank = blockIdx.z), and rank r finishes a
// 1/split share of the tile. Each rank sums its warps' FP32 partial tiles
// and pushes each item's sum into the receive slot of the rank that
// finishes it (st.async into distributed shared memory, completing bytes on
// that rank's mbarrier; or, for many ranks with large shares, through a
// send area and one cp.async.bulk per rank); a rank waits for the bytes,
// adds the slots in the fixed order z = 0..split-1 and applies the
// epilogue. No workspace, no atomics, no cluster barrier after the MMAs
// (only the wait of one whose arrive, at the start, publishes the
// mbarriers' initialization).
//
//===----------------------------------------------------------------------===//

#include "moss/Kernels/GemmKernelBuilder.h"
#include "Gemm/GemmEmitter.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;

namespace moss {
namespace gemm {

gpu::GPUFuncOp GemmEmitter::createKernel(gpu::GPUModuleOp module,
                                         StringRef name) {
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
  return fn;
}

void GemmEmitter::createSharedBuffer(gpu::GPUModuleOp module, StringRef name) {
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

void GemmEmitter::emitMainKernel(gpu::GPUModuleOp module) {
  const config::GemmLaunch &launch = shape.launch;
  std::string bufferName = "__" + spec.name + "_smem";
  createSharedBuffer(module, bufferName);
  gpu::GPUFuncOp fn = createKernel(module, spec.name);
  auto arg = [&](KernelArg which) { return fn.getArgument(which); };

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
  Value kBase = mul(slice, launch.kPerCta);
  issueCopies(smem, arg(kX), arg(kW), tid, nCta, mCta, kBase, m,
              arg(kPrefetchW));
  if (launch.layerNorm)
    applyLayerNorm(smem, arg(kX), arg(kGamma), arg(kBeta), arg(kEps), tid, mCta,
                   kBase, m, slice);
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
      Value store = ownsTileRow(mLocal, row, m);
      if (first + launch.threads > share)
        store = both(store, lessU(local, share));
      if (share * spec.split > items)
        store = both(store, lessU(item, items));
      emitIf(store, [&] { body(mLocal, nLocal, row, add(nCta, nLocal)); });
    }
  };
  const bool ropeCache = shape.epilogue == config::kGemmEpilogueRopeCache;
  RopeCacheOperands ropeOperands;
  if (ropeCache)
    ropeOperands = {arg(kOut),    arg(kPositions), arg(kLive),
                    arg(kKCache), arg(kVCache),    arg(kSlotPositions),
                    arg(kLength), arg(kCapacity)};
  auto writeOut = [&](Value lo, Value hi, Value row, Value n) {
    Value rowOffset = mul(toI64(row), spec.n);
    if (ropeCache) {
      storeRopeCacheItem(applyEpilogue(lo, hi, rowOffset, n, arg(kScale),
                                       arg(kResidual), Value()),
                         row, n, ropeOperands);
      return;
    }
    Value outPtr = elementPtr(arg(kOut), bf16, add(rowOffset, toI64(n)));
    Value liveFactor = shape.epilogue == config::kGemmEpilogueLayerScaleResidual
                           ? rowLiveFactor(arg(kRowLive), row)
                           : Value();
    store16(applyEpilogue(lo, hi, rowOffset, n, arg(kScale), arg(kResidual),
                          liveFactor),
            outPtr);
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

  handOverSplitK(smem, tid, slice, recv, recvBarrier);
  forEachItem(true, [&](Value mLocal, Value nLocal, Value row, Value n) {
    auto [lo, hi] = sumReceived(recv, slice, mLocal, nLocal);
    writeOut(lo, hi, row, n);
  });
  // A rank whose bulk copies read its send area stays until every rank has
  // received (handOverSplitK's relaxed arrive).
  if (launch.bulkHandover)
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  gpu::ReturnOp::create(b, loc);
}

bool deriveGemmShape(const GemmKernelSpec &spec, GemmShape &shape,
                     std::string &reason) {
  shape.spec = spec;
  config::GemmTile tile{spec.bm, spec.bn, spec.bk, spec.split};
  if (!config::deriveGemmLaunch(spec.n, spec.k, spec.mode, tile, shape.launch,
                                reason))
    return false;
  shape.mTiles = shape.launch.bm8 / 8;
  shape.chunksPerStage = shape.launch.stageK / 32;
  shape.colGroups = spec.bn / 8;
  shape.epilogueItems = shape.launch.bm8 * spec.bn / 8;
  shape.epilogue = config::gemmModeInfo(spec.mode)->epilogue;
  return true;
}

} // namespace gemm

namespace {

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
  gemm::GemmShape shape;
  std::string reason;
  if (!gemm::deriveGemmShape(spec, shape, reason))
    return fail() << reason;
  if (!isPlainIdentifier(spec.name))
    return fail() << "kernel name must match [A-Za-z_][A-Za-z0-9_]*";
  for (std::string symbol : {spec.name, "__" + spec.name + "_smem"}) {
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return fail() << "symbol '" << symbol << "' already exists in "
                    << module.getName();
  }

  OpBuilder::InsertionGuard guard(b);
  gemm::GemmEmitter emitter(b, loc, shape);
  emitter.emitMainKernel(module);
  return success();
}

} // namespace moss
