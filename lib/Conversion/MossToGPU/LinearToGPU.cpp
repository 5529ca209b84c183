//===- LinearToGPU.cpp - moss.linear to generated GEMM kernels ------------===//
//
// A tiled moss.linear puts its generated kernel into the `moss_kernels`
// gpu.module; on the host, every moss.linear, tiled or vendor_fallback,
// becomes an output buffer and one call of the runtime's moss_ffn_gemm,
// which serves the shape by the whitelist's kernel (launched by
// moss::config::deriveGemmLaunch) or by the vendor fallback.
//
//===----------------------------------------------------------------------===//
#include "HostCall.h"
#include "KernelModule.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

using namespace mlir;
using namespace moss;

namespace {
struct LinearToGPU : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (failed(buildGemmKernelOf(
            rw, op, op.getTileAttr(), op.getVendorFallback(),
            cast<RankedTensorType>(op.getW().getType()), op.getMode())))
      return failure();
    Location loc = op.getLoc();
    Value x = dynamicBufferOf(rw, loc, adaptor.getX());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    SmallVector<Value> dynM;
    if (outType.isDynamicDim(0))
      dynM.push_back(memref::DimOp::create(rw, loc, x, 0));
    Value out = memref::AllocOp::create(rw, loc, outType, dynM);

    SmallVector<Value> args = {x, dynamicBufferOf(rw, loc, adaptor.getW())};
    StringRef callee = kRuntimeLinearFn;
    if (adaptor.getScale()) {
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getScale()));
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getResidual()));
      callee = kRuntimeLinearScaleResidualFn;
    }
    if (adaptor.getRowLive()) {
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getRowLive()));
      callee = kRuntimeLinearScaleResidualLiveFn;
    }
    if (adaptor.getGamma()) {
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getGamma()));
      args.push_back(dynamicBufferOf(rw, loc, adaptor.getBeta()));
      callee = kRuntimeLinearLayerNormFn;
    }
    args.push_back(castToDynamicShape(rw, loc, out));
    // The epilogue, as moss_epilogue_t numbers it; the LayerNorm entry point
    // takes the prologue's eps after it.
    args.push_back(arith::ConstantIntOp::create(
        rw, loc, rw.getI32Type(), static_cast<int64_t>(op.getEpilogue())));
    if (adaptor.getGamma())
      args.push_back(arith::ConstantOp::create(rw, loc, op.getEpsAttr()));
    emitRuntimeCall(rw, loc, op->getParentOfType<ModuleOp>(), callee, args);
    rw.replaceOp(op, bufferization::ToTensorOp::create(rw, loc, resultType, out,
                                                       /*restrict=*/true,
                                                       /*writable=*/true));
    return success();
  }
};
} // namespace

LogicalResult moss::checkLinearLowerable(LinearOp op) {
  return checkGemmLowerable(op, op.getTileAttr(), op.getVendorFallback(),
                            cast<RankedTensorType>(op.getW().getType()),
                            op.getMode());
}

void moss::populateLinearToGPUPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearToGPU>(patterns.getContext());
}
