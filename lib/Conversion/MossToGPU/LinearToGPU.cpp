//===- LinearToGPU.cpp - moss.linear to generated GEMM kernels ------------===//
//
// A tiled moss.linear becomes its generated kernel(s) in the `moss_kernels`
// gpu.module plus host code that materializes buffers and launches them with
// the runtime row count M. A vendor_fallback op becomes a call into the
// runtime's vendor path.
//
//===----------------------------------------------------------------------===//
#include "KernelModule.h"
#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Whitelist.h"
#include "moss/Conversion/MossToGPU/GemmKernelBuilder.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace moss;

namespace {
MemRefType bufferTypeOf(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(tensor), tensor,
                                           /*read_only=*/true);
}

/// The aligned base address of `buffer` as a pointer of `ptrType`.
Value basePointer(OpBuilder &b, Location loc, Value buffer, Type ptrType) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, loc, ptrType, i64);
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

struct LinearToGPU : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    TileAttr tile = op.getTileAttr();
    if (!tile)
      return failure(); // vendor_fallback ops have their own pattern.
    Location loc = op.getLoc();
    auto wType = cast<RankedTensorType>(op.getW().getType());
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
    config::GemmTile gemmTile{tile.getBm(), tile.getBn(), tile.getBk(),
                              tile.getSplit()};
    config::GemmLaunch launch;
    std::string err;
    if (!config::deriveGemmLaunch(n, k, gemmTile, launch, err))
      return failure(); // checkLinearLowerable reported it.

    auto top = op->getParentOfType<ModuleOp>();
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(rw, top);
    std::string name = config::gemmKernelName(
        n, k, static_cast<int>(op.getEpilogue()), gemmTile);
    if (!SymbolTable::lookupSymbolIn(kernels, name)) {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToEnd(kernels.getBody());
      GemmKernelSpec spec{n,
                          k,
                          static_cast<int>(op.getEpilogue()),
                          tile.getBm(),
                          tile.getBn(),
                          tile.getBk(),
                          tile.getSplit(),
                          name};
      if (failed(buildGemmKernels(rw, loc, kernels, spec)))
        return op.emitOpError("could not build GEMM kernel ") << name;
    }
    auto mainFn = kernels.lookupSymbol<gpu::GPUFuncOp>(name);
    if (!mainFn)
      return op.emitOpError("GEMM kernel ") << name << " is missing";

    // Operands as buffers and raw pointers, in the kernel ABI's order.
    Type ptrType = mainFn.getArgumentTypes().front();
    Value xBuf = toBuffer(rw, loc, adaptor.getX());
    Value wBuf = toBuffer(rw, loc, adaptor.getW());
    Value mIndex = memref::DimOp::create(rw, loc, xBuf, 0);
    auto outType = MemRefType::get(
        {cast<MemRefType>(xBuf.getType()).getDimSize(0), n}, rw.getBF16Type());
    SmallVector<Value> dynM;
    if (outType.isDynamicDim(0))
      dynM.push_back(mIndex);
    Value outBuf = memref::AllocOp::create(rw, loc, outType, dynM);
    Value null = LLVM::ZeroOp::create(rw, loc, ptrType);
    auto ptrOf = [&](Value tensor) {
      return tensor ? basePointer(rw, loc, toBuffer(rw, loc, tensor), ptrType)
                    : null;
    };
    Value m32 = arith::IndexCastOp::create(rw, loc, rw.getI32Type(), mIndex);
    SmallVector<Value> args = {
        basePointer(rw, loc, xBuf, ptrType),
        basePointer(rw, loc, wBuf, ptrType), ptrOf(adaptor.getScale()),
        ptrOf(adaptor.getResidual()), basePointer(rw, loc, outBuf, ptrType),
        m32,
        // prefetch_w: a plain (stream-ordered) launch.
        arith::ConstantIntOp::create(rw, loc, rw.getI32Type(), 0)};

    // Launch rule of docs/kernel-abi.md: grid (N/bn, ceil(M/bm), split),
    // the kernel's dynamic shared memory; the split-K cluster shape is the
    // kernel's own (.reqnctapercluster), not a launch operand.
    Value one = indexConst(rw, loc, 1);
    Value gridY = arith::CeilDivUIOp::create(
        rw, loc, mIndex, indexConst(rw, loc, launch.gridYPerM));
    gpu::KernelDim3 grid{indexConst(rw, loc, launch.gridX), gridY,
                         indexConst(rw, loc, launch.gridZ)};
    gpu::KernelDim3 block{indexConst(rw, loc, launch.threads), one, one};
    Value sharedBytes = arith::ConstantOp::create(
        rw, loc, rw.getI32IntegerAttr(launch.sharedBytes));
    gpu::LaunchFuncOp::create(rw, loc, mainFn, grid, block, sharedBytes, args);
    Value result = bufferization::ToTensorOp::create(
        rw, loc, op.getResult().getType(), outBuf, /*restrict=*/true,
        /*writable=*/true);
    rw.replaceOp(op, result);
    return success();
  }
};

/// A GEMM the whitelist does not name: the runtime's vendor path serves it.
struct LinearToVendorCall : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (op.getTileAttr())
      return failure();
    if (!op.getVendorFallback())
      return failure(); // checkLinearLowerable reported it.
    Location loc = op.getLoc();
    auto dynamic2d = [&](Type elem) {
      return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                             elem);
    };
    Type bf16 = rw.getBF16Type();
    auto asDynamic = [&](Value tensor, MemRefType type) -> Value {
      return memref::CastOp::create(rw, loc, type, toBuffer(rw, loc, tensor));
    };
    Value xBuf = toBuffer(rw, loc, adaptor.getX());
    Value mIndex = memref::DimOp::create(rw, loc, xBuf, 0);
    auto outType = MemRefType::get(
        cast<RankedTensorType>(op.getResult().getType()).getShape(), bf16);
    SmallVector<Value> dynM;
    if (outType.isDynamicDim(0))
      dynM.push_back(mIndex);
    Value outBuf = memref::AllocOp::create(rw, loc, outType, dynM);

    SmallVector<Value> args = {
        memref::CastOp::create(rw, loc, dynamic2d(bf16), xBuf),
        asDynamic(adaptor.getW(), dynamic2d(bf16))};
    if (adaptor.getScale()) {
      args.push_back(asDynamic(adaptor.getScale(),
                               MemRefType::get({ShapedType::kDynamic}, bf16)));
      args.push_back(asDynamic(adaptor.getResidual(), dynamic2d(bf16)));
    }
    args.push_back(memref::CastOp::create(rw, loc, dynamic2d(bf16), outBuf));
    args.push_back(arith::ConstantIntOp::create(
        rw, loc, rw.getI32Type(), static_cast<int64_t>(op.getEpilogue())));

    std::string callee = kVendorLinearFn.str();
    if (adaptor.getScale())
      callee += "_layerscale_residual";
    auto top = op->getParentOfType<ModuleOp>();
    auto fnType = rw.getFunctionType(ValueRange(args).getTypes(), {});
    if (!top.lookupSymbol<func::FuncOp>(callee)) {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToEnd(top.getBody());
      func::FuncOp::create(rw, loc, callee, fnType).setPrivate();
    }
    func::CallOp::create(rw, loc, callee, TypeRange{}, args);
    rw.replaceOp(op, bufferization::ToTensorOp::create(
                         rw, loc, op.getResult().getType(), outBuf,
                         /*restrict=*/true, /*writable=*/true));
    return success();
  }
};
} // namespace

LogicalResult moss::checkLinearLowerable(LinearOp op) {
  TileAttr tile = op.getTileAttr();
  if (!tile) {
    if (op.getVendorFallback())
      return success();
    return op.emitOpError("has neither a 'tile' nor 'vendor_fallback': run "
                          "moss-select-tiles first");
  }
  auto wType = cast<RankedTensorType>(op.getW().getType());
  int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(k))
    return op.emitOpError("a generated kernel needs static N and K, found ")
           << wType;
  config::GemmLaunch launch;
  std::string err;
  if (!config::deriveGemmLaunch(
          n, k, {tile.getBm(), tile.getBn(), tile.getBk(), tile.getSplit()},
          launch, err))
    return op.emitOpError() << "tile " << tile << " cannot serve N = " << n
                            << ", K = " << k << ": " << err;
  return success();
}

void moss::populateLinearToGPUPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearToGPU, LinearToVendorCall>(patterns.getContext());
}
