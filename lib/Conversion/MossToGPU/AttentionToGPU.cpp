//===- AttentionToGPU.cpp - moss.streaming_attention to generated kernels -===//
//
// The op becomes the generated attention kernels in the `moss_kernels`
// gpu.module and, on the host, the output storage ([B,T,H,D] for bthd,
// returned as the transposed [B,H,T,D] view) and one call of the runtime's
// moss_streaming_attention (moss_streaming_attention_positions for the
// positions form), which applies the launch rule of
// moss::config::deriveAttentionLaunch (docs/kernel-abi.md) to the run-time
// sizes and launches one of the kernels' functions.
//
//===----------------------------------------------------------------------===//
#include "HostCall.h"
#include "KernelModule.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"
#include "moss/Dialect/Moss/IR/MossOps.h"
#include "moss/Kernels/AttentionKernelBuilder.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace moss;

namespace {
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
    for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
      std::string name =
          config::attentionKernelSymbol(config::attentionFunctionAt(i));
      if (!kernels.lookupSymbol<gpu::GPUFuncOp>(name))
        return op.emitOpError("attention kernel ") << name << " is missing";
    }

    Value q = dynamicBufferOf(rw, loc, adaptor.getQ());
    auto dim = [&](Value buffer, int64_t i) {
      return memref::DimOp::create(rw, loc, buffer, i).getResult();
    };
    Value bDim = dim(q, 0), hDim = dim(q, 1), tDim = dim(q, 2);

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

    // The mask operand, or the slot and query positions: the runtime entry
    // of that form.
    Type i32 = rw.getI32Type();
    SmallVector<Value> args = {q, dynamicBufferOf(rw, loc, adaptor.getK()),
                               dynamicBufferOf(rw, loc, adaptor.getV())};
    const bool byPositions = bool(adaptor.getSlotPositions());
    if (byPositions)
      args.append({dynamicBufferOf(rw, loc, adaptor.getSlotPositions()),
                   dynamicBufferOf(rw, loc, adaptor.getQueryPositions())});
    else
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getMask()));
    args.append({castToDynamicShape(rw, loc, storage),
                 arith::ConstantOp::create(
                     rw, loc, rw.getF32FloatAttr(op.getSoftmaxScale())),
                 arith::ConstantIntOp::create(rw, loc, i32, bthd ? 0 : 1),
                 arith::ConstantIntOp::create(rw, loc, i32,
                                              op.getSkipEmptyTiles() ? 1 : 0)});
    emitRuntimeCall(
        rw, loc, top,
        byPositions ? kRuntimeAttentionPositionsFn : kRuntimeAttentionFn, args);
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
