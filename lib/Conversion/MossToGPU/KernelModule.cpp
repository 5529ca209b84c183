//===- KernelModule.cpp - the gpu.module that holds moss kernels ----------===//
#include "KernelModule.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"

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
