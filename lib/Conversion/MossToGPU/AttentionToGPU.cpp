//===- AttentionToGPU.cpp - moss.streaming_attention to generated kernels -===//
//
// The op becomes the generated attention kernels in the `moss_kernels`
// gpu.module plus host code: operand buffers with their strides, the output
// storage ([B,T,H,D] for bthd, returned as the transposed [B,H,T,D] view),
// and the launch rule of docs/kernel-abi.md evaluated on the runtime sizes;
// the splits of a split-KV launch are one cluster (1, 1, splits) and merge
// in the kernel.
//
//===----------------------------------------------------------------------===//
#include "KernelModule.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Conversion/MossToGPU/AttentionKernelBuilder.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace moss;

namespace {
/// A tensor operand as the kernel sees it: a device pointer to its first
/// element and its strides in elements.
struct StridedOperand {
  Value buffer;
  Value pointer;
  SmallVector<Value> strides; ///< i64, one per dimension.
};

StridedOperand stridedOperand(OpBuilder &b, Location loc, Value tensor,
                              Type ptrType) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
  StridedOperand out;
  out.buffer = bufferization::ToBufferOp::create(b, loc, bufferType, tensor,
                                                 /*read_only=*/true);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, out.buffer);
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i64, index).getResult();
  };
  Value base =
      toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, out.buffer));
  // i1 memrefs are stored one byte per element.
  int64_t elementBytes =
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, toI64(meta.getOffset()),
      arith::ConstantIntOp::create(b, loc, i64, elementBytes));
  Value address = arith::AddIOp::create(b, loc, base, offsetBytes);
  out.pointer = LLVM::IntToPtrOp::create(b, loc, ptrType, address);
  for (Value stride : meta.getStrides())
    out.strides.push_back(toI64(stride));
  return out;
}

struct AttentionToGPU : OpConversionPattern<StreamingAttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(StreamingAttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (failed(checkAttentionLowerable(op)))
      return failure();
    Location loc = op.getLoc();
    auto top = op->getParentOfType<ModuleOp>();
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(rw, top);
    if (!SymbolTable::lookupSymbolIn(
            kernels, config::attentionKernelSymbol({1, false})) &&
        failed(buildAttentionKernels(rw, loc, kernels)))
      return op.emitOpError("could not build the attention kernels");
    // functions[attentionFunctionIndex(g, split)].
    SmallVector<gpu::GPUFuncOp> functions;
    for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
      config::AttentionFunction f = config::attentionFunctionAt(i);
      std::string name = config::attentionKernelSymbol(f);
      functions.push_back(kernels.lookupSymbol<gpu::GPUFuncOp>(name));
      if (!functions.back())
        return op.emitOpError("attention kernel ") << name << " is missing";
    }
    gpu::GPUFuncOp mainFn = functions.front();

    Type ptrType = mainFn.getArgumentTypes().front();
    Type i32 = rw.getI32Type();
    StridedOperand q = stridedOperand(rw, loc, adaptor.getQ(), ptrType);
    StridedOperand k = stridedOperand(rw, loc, adaptor.getK(), ptrType);
    StridedOperand v = stridedOperand(rw, loc, adaptor.getV(), ptrType);
    StridedOperand mask = stridedOperand(rw, loc, adaptor.getMask(), ptrType);

    auto dim = [&](Value buffer, int64_t i) {
      return memref::DimOp::create(rw, loc, buffer, i).getResult();
    };
    Value bDim = dim(q.buffer, 0), hDim = dim(q.buffer, 1),
          tDim = dim(q.buffer, 2), sDim = dim(k.buffer, 2);

    // Output storage: [B,T,H,D] (bthd) or [B,H,T,D] (bhtd).
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    ArrayRef<int64_t> shape = resultType.getShape(); // [B,H,T,D]
    bool bthd = op.getLayout() == AttentionLayout::bthd;
    SmallVector<int64_t> storageShape =
        bthd ? SmallVector<int64_t>{shape[0], shape[2], shape[1], shape[3]}
             : SmallVector<int64_t>(shape);
    Value storageSizes[] = {bDim, bthd ? tDim : hDim, bthd ? hDim : tDim};
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < 3; ++i)
      if (ShapedType::isDynamic(storageShape[i]))
        dynamicSizes.push_back(storageSizes[i]);
    auto storageType = MemRefType::get(storageShape, rw.getBF16Type());
    Value storage = memref::AllocOp::create(rw, loc, storageType, dynamicSizes);
    Value view = storage;
    if (bthd) {
      // The logical [B,H,T,D] result: strides (T*H*D, D, H*D, 1).
      AffineMap swapHT = AffineMap::getPermutationMap(
          ArrayRef<unsigned>{0, 2, 1, 3}, rw.getContext());
      view = memref::TransposeOp::create(rw, loc, storage,
                                         AffineMapAttr::get(swapHT));
    }

    // Launch rule (moss::config::deriveAttentionLaunch) on index values,
    // without TMA copies (AttentionTmaMode::off): no tensor maps here.
    auto c = [&](int64_t value) {
      return arith::ConstantIndexOp::create(rw, loc, value).getResult();
    };
    auto mul = [&](Value l, Value r) {
      return arith::MulIOp::create(rw, loc, l, r).getResult();
    };
    auto ceilDiv = [&](Value l, Value r) {
      return arith::CeilDivUIOp::create(rw, loc, l, r).getResult();
    };
    auto minU = [&](Value l, Value r) {
      return arith::MinUIOp::create(rw, loc, l, r).getResult();
    };
    auto eq = [&](Value l, int64_t r) {
      return arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq, l, c(r))
          .getResult();
    };
    auto ule = [&](Value l, Value r) {
      return arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ule, l, r)
          .getResult();
    };
    auto select = [&](Value cond, Value t, Value f) {
      return arith::SelectOp::create(rw, loc, cond, t, f).getResult();
    };
    auto divU = [&](Value l, Value r) {
      return arith::DivUIOp::create(rw, loc, l, r).getResult();
    };
    /// table[i] for a value i in [1, 4].
    auto lookup = [&](Value i, const int64_t *table) {
      return select(eq(i, 1), c(table[1]),
                    select(eq(i, 2), c(table[2]),
                           select(eq(i, 3), c(table[3]), c(table[4]))));
    };
    Value rowWarps = minU(ceilDiv(tDim, c(config::kAttentionRowsPerWarp)),
                          c(config::kAttentionMaxWarps));
    Value gridX = mul(bDim, hDim);
    Value gridY =
        ceilDiv(tDim, mul(rowWarps, c(config::kAttentionRowsPerWarp)));
    Value tiles = ceilDiv(sDim, c(config::kAttentionKeysPerTile));
    Value ctas = mul(gridX, gridY);
    Value fitting = minU(divU(c(config::kAttentionMaxWarps), rowWarps), tiles);
    // One group for a full grid (two for one row warp while its 2-warp CTAs
    // fit three an SM), and for two or more row warps in a tiny grid when
    // groups would leave more than one trip.
    Value tinyGrid = ule(ctas, c(config::kAttentionFewCtas));
    Value fullGrid =
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt, ctas,
                              c(config::kAttentionGroupsMaxCtas));
    Value pairedFullGrid = arith::AndIOp::create(
        rw, loc, arith::AndIOp::create(rw, loc, fullGrid, eq(rowWarps, 1)),
        ule(ctas, c(config::kAttentionPairedGroupsMaxCtas)));
    Value manyRowWarps = arith::CmpIOp::create(
        rw, loc, arith::CmpIPredicate::uge, rowWarps, c(2));
    Value manyTrips = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt,
                                            ceilDiv(tiles, fitting), c(1));
    Value longWalk = arith::AndIOp::create(
        rw, loc, arith::AndIOp::create(rw, loc, manyRowWarps, manyTrips),
        tinyGrid);
    Value oneGroup = arith::OrIOp::create(rw, loc, fullGrid, longWalk);
    // Two groups instead of four when more than four tiles' splits of one
    // trip each fit one CTA an SM.
    Value pairedTiles = ceilDiv(tiles, c(2));
    Value pairCtas = mul(ctas, pairedTiles);
    Value pairFits = ule(pairCtas, c(config::kAttentionSms));
    Value manyTiles =
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt, tiles, c(4));
    Value fourGroups = eq(fitting, 4);
    Value pairable = arith::AndIOp::create(rw, loc, fourGroups, manyTiles);
    Value pairGrid = arith::AndIOp::create(rw, loc, pairable, pairFits);
    Value paired = select(pairGrid, c(2), fitting);
    // And two for a decode step of at most four rows in a grid past one CTA
    // an SM.
    Value decodePair = arith::AndIOp::create(
        rw, loc,
        arith::AndIOp::create(
            rw, loc, ule(tDim, c(config::kAttentionDecodePairMaxRows)),
            arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt, ctas,
                                  c(config::kAttentionSms))),
        ule(ctas, c(config::kAttentionGroupsMaxCtas)));
    Value twoAtMost = arith::OrIOp::create(rw, loc, pairedFullGrid, decodePair);
    Value groups0 =
        select(twoAtMost, minU(fitting, c(2)), select(oneGroup, c(1), paired));
    auto stagesOf = [&](Value groups) {
      return select(ule(groups, c(2)), c(2), c(1));
    };
    Value ctasPerSm =
        minU(lookup(mul(rowWarps, groups0), config::kAttentionCtasPerSmByWarps),
             lookup(mul(stagesOf(groups0), groups0),
                    config::kAttentionCtasPerSmBySlots));
    Value slots = mul(ctasPerSm, c(config::kAttentionSms));
    Value trips = ceilDiv(tiles, groups0);
    // Half the slots, a quarter with key groups, and one CTA an SM.
    Value spread = select(ule(groups0, c(1)), c(2), c(4));
    Value half = divU(slots, mul(ctas, spread));
    Value perSm = divU(c(config::kAttentionSms), ctas);
    Value bound = minU(half, perSm);
    // One or two row warps split down to one trip per split (two into at
    // most four splits), more keep two.
    Value minTrips = select(ule(rowWarps, c(2)), c(1), c(2));
    Value mostSplits =
        select(eq(rowWarps, 2), c(config::kAttentionTwoRowWarpsMaxSplits),
               c(config::kAttentionMaxSplits));
    Value wanted = arith::MaxUIOp::create(
        rw, loc, c(1), minU(minU(ceilDiv(trips, minTrips), bound), mostSplits));
    wanted = select(ule(trips, c(1)), c(1), wanted);
    Value tilesPerSplit = ceilDiv(tiles, minU(wanted, tiles));
    Value splits = ceilDiv(tiles, tilesPerSplit);
    Value groups = minU(groups0, tilesPerSplit);
    Value computeWarps = mul(rowWarps, groups);
    // Copy warps fill the CTAs of 2 or 3 groups to four warps in a grid of
    // at most one CTA an SM.
    Value twoGroups = eq(groups, 2);
    Value threeGroups = eq(groups, 3);
    Value copyCapable = arith::OrIOp::create(rw, loc, twoGroups, threeGroups);
    Value allCtas = mul(ctas, splits);
    Value oneWave = ule(allCtas, c(config::kAttentionSms));
    Value copying = arith::AndIOp::create(rw, loc, copyCapable, oneWave);
    Value fill = arith::SubIOp::create(rw, loc, c(config::kAttentionMaxWarps),
                                       computeWarps);
    Value copyWarps = select(copying, fill, c(0));
    Value threads =
        mul(arith::AddIOp::create(rw, loc, computeWarps, copyWarps), c(32));
    Value slotBytes =
        mul(mul(stagesOf(groups), groups), c(config::kAttentionSlotBytes));
    Value qBytes = mul(computeWarps, c(config::kAttentionQBytesPerWarp));
    // Merge area: an entry a row warp for each group but the first and, when
    // split, a receive slot a split and the mbarrier.
    Value onePass = ule(splits, c(1));
    Value entries = arith::SubIOp::create(
        rw, loc,
        arith::AddIOp::create(rw, loc, groups, select(onePass, c(0), splits)),
        c(1));
    Value mergeBytes = arith::AddIOp::create(
        rw, loc,
        mul(mul(entries, rowWarps), c(config::kAttentionMergeBytesPerWarp)),
        select(onePass, c(0), c(config::kAttentionMergeBarrierBytes)));
    // No trip mbarrier: this is the rule without TMA copies (the tensor maps
    // need the host's driver, which the runtime has and this launch has
    // not).
    Value sharedBytes = arith::AddIOp::create(
        rw, loc, arith::AddIOp::create(rw, loc, slotBytes, qBytes), mergeBytes);

    auto toI32 = [&](Value index) {
      return arith::IndexCastOp::create(rw, loc, i32, index).getResult();
    };
    auto pointerOf = [&](Value buffer) {
      Value index =
          memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, buffer);
      Value i64 = arith::IndexCastOp::create(rw, loc, rw.getI64Type(), index);
      return LLVM::IntToPtrOp::create(rw, loc, ptrType, i64).getResult();
    };
    SmallVector<Value> args = {q.pointer, k.pointer, v.pointer, mask.pointer,
                               pointerOf(storage)};
    args.append({q.strides[0], q.strides[1], q.strides[2]});
    args.append({k.strides[0], k.strides[1], k.strides[2]});
    args.append({v.strides[0], v.strides[1], v.strides[2]});
    args.append({mask.strides[0], mask.strides[2], mask.strides[3]});
    args.append({toI32(bDim), toI32(hDim), toI32(tDim), toI32(sDim)});
    args.push_back(arith::ConstantOp::create(
        rw, loc, rw.getF32FloatAttr(op.getSoftmaxScale())));
    args.push_back(arith::ConstantIntOp::create(rw, loc, i32, bthd ? 0 : 1));
    args.push_back(arith::ConstantIntOp::create(
        rw, loc, i32, op.getSkipEmptyTiles() ? 1 : 0));
    args.push_back(toI32(splits));
    // The cp.async functions: the tensor maps need the host's driver
    // (cuTensorMapEncodeTiled), which the runtime has and this launch has
    // not, and only the TMA functions (g4_tma, g2_tma, g1_tma) read them.
    for (int i = 0; i < 2; ++i)
      args.push_back(LLVM::ZeroOp::create(
          rw, loc, LLVM::LLVMPointerType::get(rw.getContext())));

    // The function of the rule's key-group count (cases 1..3, default 4):
    // with splits > 1 the split one, launched as clusters (1, 1, splits).
    gpu::KernelDim3 grid{gridX, gridY, splits};
    gpu::KernelDim3 block{threads, c(1), c(1)};
    gpu::KernelDim3 cluster{c(1), c(1), splits};
    Value smem32 = toI32(sharedBytes);
    SmallVector<int64_t> cases;
    for (int64_t g = 1; g < config::kAttentionMaxKvGroups; ++g)
      cases.push_back(g);
    auto launchAll = [&](bool split) {
      auto launchFor = scf::IndexSwitchOp::create(rw, loc, TypeRange{}, groups,
                                                  cases, cases.size());
      for (int64_t i = 0; i <= int64_t(cases.size()); ++i) {
        bool isDefault = i == int64_t(cases.size());
        Region &region = isDefault ? launchFor.getDefaultRegion()
                                   : launchFor.getCaseRegions()[i];
        OpBuilder::InsertionGuard guard(rw);
        rw.setInsertionPointToStart(rw.createBlock(&region));
        gpu::GPUFuncOp fn =
            functions[config::attentionFunctionIndex(i + 1, split)];
        if (split)
          gpu::LaunchFuncOp::create(rw, loc, fn, grid, block, smem32, args,
                                    /*asyncTokenType=*/nullptr,
                                    /*asyncDependencies=*/{}, cluster);
        else
          gpu::LaunchFuncOp::create(rw, loc, fn, grid, block, smem32, args);
        scf::YieldOp::create(rw, loc);
      }
    };
    Value split =
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt, splits, c(1));
    auto ifSplit = scf::IfOp::create(rw, loc, split, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPoint(ifSplit.thenBlock()->getTerminator());
      launchAll(true);
      rw.setInsertionPoint(ifSplit.elseBlock()->getTerminator());
      launchAll(false);
    }
    rw.replaceOp(op, bufferization::ToTensorOp::create(rw, loc, resultType,
                                                       view, /*restrict=*/true,
                                                       /*writable=*/true));
    return success();
  }
};
} // namespace

LogicalResult moss::checkAttentionLowerable(StreamingAttentionOp op) {
  auto qType = cast<RankedTensorType>(op.getQ().getType());
  int64_t d = qType.getDimSize(3);
  if (d != config::kAttentionHeadDim)
    return op.emitOpError("the generated attention kernel needs head dim D = ")
           << config::kAttentionHeadDim << ", found " << d;
  return success();
}

void moss::populateAttentionToGPUPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionToGPU>(patterns.getContext());
}
