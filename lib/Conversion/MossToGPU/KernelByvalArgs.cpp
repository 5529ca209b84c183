//===- KernelByvalArgs.cpp - the moss-kernel-byval-args pass --------------===//
//
// Generated kernels that take a CUtensorMap (the attention kernel's k_map and
// v_map) declare it as a pointer argument and list it in moss.byval_args;
// after convert-gpu-to-nvvm this pass makes it a 128-byte byval grid
// constant, the .param the TMA engine reads in place.
//
//===----------------------------------------------------------------------===//
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"

namespace moss {
#define GEN_PASS_DEF_MOSSKERNELBYVALARGS
#include "moss/Conversion/Passes.h.inc"
} // namespace moss

using namespace mlir;

namespace {
struct KernelByvalArgsPass
    : moss::impl::MossKernelByvalArgsBase<KernelByvalArgsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp fn) {
      auto indices =
          fn->getAttrOfType<DenseI32ArrayAttr>(moss::kByvalArgsAttrName);
      if (!indices)
        return WalkResult::advance();
      unsigned count = fn.getNumArguments();
      for (int32_t i : indices.asArrayRef()) {
        if (i < 0 || static_cast<unsigned>(i) >= count) {
          fn.emitError() << moss::kByvalArgsAttrName << " names argument " << i
                         << " of a function with " << count << " arguments";
          return WalkResult::interrupt();
        }
        if (!isa<LLVM::LLVMPointerType>(fn.getArgumentTypes()[i])) {
          fn.emitError() << moss::kByvalArgsAttrName << " names argument " << i
                         << " of type " << fn.getArgumentTypes()[i]
                         << ", not a pointer";
          return WalkResult::interrupt();
        }
        fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(LLVM::LLVMArrayType::get(
                          b.getI8Type(), moss::kByvalArgBytes)));
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(moss::kByvalArgAlign));
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
      }
      fn->removeAttr(moss::kByvalArgsAttrName);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
