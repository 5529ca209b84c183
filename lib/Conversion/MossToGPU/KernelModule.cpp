//===- KernelModule.cpp - the gpu.module that holds moss kernels ----------===//
#include "KernelModule.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"

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

LogicalResult moss::buildGemmKernelOf(RewriterBase &rw, Operation *op,
                                      TileAttr tile, int64_t n, int64_t k,
                                      int mode) {
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
