//===- KernelModule.cpp - the gpu.module that holds moss kernels ----------===//
#include "KernelModule.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"

#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Whitelist.h"
#include "moss/Kernels/GemmKernelBuilder.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

gpu::GPUModuleOp moss::getOrCreateKernelModule(RewriterBase &rw, ModuleOp top) {
  if (auto existing = dyn_cast_or_null<gpu::GPUModuleOp>(
          SymbolTable::lookupSymbolIn(top, kKernelModuleName)))
    return existing;
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointToStart(top.getBody());
  top->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), rw.getUnitAttr());
  return gpu::GPUModuleOp::create(rw, top.getLoc(), kKernelModuleName);
}

LogicalResult moss::checkGemmLowerable(Operation *op, TileAttr tile,
                                       bool vendorFallback, RankedTensorType w,
                                       int mode) {
  if (!tile) {
    if (vendorFallback)
      return success();
    return op->emitOpError("has neither a 'tile' nor 'vendor_fallback': run "
                           "moss-select-tiles first");
  }
  int64_t n = w.getDimSize(0), k = w.getDimSize(1);
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(k))
    return op->emitOpError("a generated kernel needs static N and K, found ")
           << w;
  config::GemmLaunch launch;
  std::string err;
  if (!config::deriveGemmLaunch(
          n, k, mode,
          {tile.getBm(), tile.getBn(), tile.getBk(), tile.getSplit()}, launch,
          err))
    return op->emitOpError() << "tile " << tile << " cannot serve N = " << n
                             << ", K = " << k << ": " << err;
  return success();
}

LogicalResult moss::buildGemmKernelOf(RewriterBase &rw, Operation *op,
                                      TileAttr tile, bool vendorFallback,
                                      RankedTensorType w, int mode) {
  if (!tile)
    return success(vendorFallback); // checkGemmLowerable reported it.
  const int64_t n = w.getDimSize(0), k = w.getDimSize(1);
  config::GemmTile gemmTile{tile.getBm(), tile.getBn(), tile.getBk(),
                            tile.getSplit()};
  gpu::GPUModuleOp kernels =
      getOrCreateKernelModule(rw, op->getParentOfType<ModuleOp>());
  std::string name = config::gemmKernelName(n, k, mode, gemmTile);
  if (SymbolTable::lookupSymbolIn(kernels, name))
    return success();
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointToEnd(kernels.getBody());
  GemmKernelSpec spec{
      n,   k, mode, tile.getBm(), tile.getBn(), tile.getBk(), tile.getSplit(),
      name};
  if (failed(buildGemmKernels(rw, op->getLoc(), kernels, spec)) ||
      !kernels.lookupSymbol<gpu::GPUFuncOp>(name))
    return op->emitOpError("could not build GEMM kernel ") << name;
  return success();
}
