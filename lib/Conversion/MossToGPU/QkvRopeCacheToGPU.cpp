//===- QkvRopeCacheToGPU.cpp - moss.qkv_rope_cache to its GEMM kernel -----===//
//
// A tiled moss.qkv_rope_cache puts its generated kernel (whitelist mode 5)
// into the `moss_kernels` gpu.module; on the host every one, tiled or
// vendor_fallback, becomes a q buffer and one call of the runtime's
// moss_qkv_rope_cache, which updates the ring cache's buffers in place. The
// op's cache results are those buffers: a cache tensor that is used again
// after the op is copied first, so its old value stays readable.
//
//===----------------------------------------------------------------------===//
#include "HostCall.h"
#include "KernelModule.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace moss;

namespace {
/// A writable buffer holding `tensor`'s value for the call to update: the
/// tensor's own when this op is its only user, else a copy.
Value updatableBuffer(RewriterBase &rw, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
  const bool onlyUser = tensor.hasOneUse(); // before to_buffer adds a use
  Value buffer = bufferization::ToBufferOp::create(rw, loc, bufferType, tensor);
  if (onlyUser)
    return buffer;
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(memref::DimOp::create(rw, loc, buffer, i));
  Value copy = memref::AllocOp::create(rw, loc, bufferType, dynamic);
  memref::CopyOp::create(rw, loc, buffer, copy);
  return copy;
}

Value asTensor(RewriterBase &rw, Location loc, Type type, Value buffer) {
  return bufferization::ToTensorOp::create(rw, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

struct QkvRopeCacheToGPU : OpConversionPattern<QkvRopeCacheOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(QkvRopeCacheOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (failed(buildGemmKernelOf(
            rw, op, op.getTileAttr(), op.getVendorFallback(),
            cast<RankedTensorType>(op.getW().getType()), op.getMode())))
      return failure();
    Location loc = op.getLoc();
    Value x = dynamicBufferOf(rw, loc, adaptor.getX());
    // q [B, T, H, 64], B and T from x.
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    auto qBufferType =
        MemRefType::get(qType.getShape(), qType.getElementType());
    SmallVector<Value> dynamic;
    for (int64_t i = 0; i < 2; ++i)
      if (qBufferType.isDynamicDim(i))
        dynamic.push_back(memref::DimOp::create(rw, loc, x, i));
    Value q = memref::AllocOp::create(rw, loc, qBufferType, dynamic);
    Value caches[3];
    Value cacheOperands[3] = {op.getKCache(), op.getVCache(),
                              op.getSlotPositions()};
    for (int i = 0; i < 3; ++i)
      caches[i] = updatableBuffer(rw, loc, cacheOperands[i]);

    SmallVector<Value> args = {x,
                               dynamicBufferOf(rw, loc, adaptor.getW()),
                               dynamicBufferOf(rw, loc, adaptor.getGamma()),
                               dynamicBufferOf(rw, loc, adaptor.getBeta()),
                               dynamicBufferOf(rw, loc, adaptor.getPositions()),
                               dynamicBufferOf(rw, loc, adaptor.getLive()),
                               castToDynamicShape(rw, loc, q)};
    for (Value cache : caches)
      args.push_back(castToDynamicShape(rw, loc, cache));
    args.push_back(arith::ConstantOp::create(rw, loc, op.getEpsAttr()));
    emitRuntimeCall(rw, loc, op->getParentOfType<ModuleOp>(),
                    kRuntimeQkvRopeCacheFn, args);
    rw.replaceOp(
        op, {asTensor(rw, loc, qType, q),
             asTensor(rw, loc, op.getKCache().getType(), caches[0]),
             asTensor(rw, loc, op.getVCache().getType(), caches[1]),
             asTensor(rw, loc, op.getSlotPositions().getType(), caches[2])});
    return success();
  }
};
} // namespace

LogicalResult moss::checkQkvRopeCacheLowerable(QkvRopeCacheOp op) {
  return checkGemmLowerable(op, op.getTileAttr(), op.getVendorFallback(),
                            cast<RankedTensorType>(op.getW().getType()),
                            op.getMode());
}

void moss::populateQkvRopeCacheToGPUPatterns(RewritePatternSet &patterns) {
  patterns.add<QkvRopeCacheToGPU>(patterns.getContext());
}
