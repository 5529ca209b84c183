//===- MossToCubin.cpp - the moss-to-cubin pipeline -----------------------===//
#include "moss/Pipeline/MossToCubin.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Path.h"

using namespace mlir;

std::string moss::libdevicePath(llvm::StringRef cudaPath) {
  llvm::SmallString<256> path(cudaPath);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return std::string(path);
}

void moss::buildMossToCubinPipeline(OpPassManager &pm,
                                    const MossToCubinOptions &options) {
  pm.addPass(createMossConvertToGPU());

  GpuNVVMAttachTargetOptions target;
  target.moduleMatcher = kKernelModuleName.str();
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  // erf (the exact GELU) is a libdevice function: link it so no external
  // call is left in the PTX.
  target.linkLibs.push_back(libdevicePath(options.cudaPath));
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  // Before NVVM-to-LLVM: the tensor-map arguments become byval grid
  // constants (the conversion above dropped gpu.func argument attributes).
  kernels.addPass(createMossKernelByvalArgs());
  // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.cudaPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

std::string
moss::describeMossToCubinPipeline(const MossToCubinOptions &options) {
  OpPassManager pm(ModuleOp::getOperationName());
  buildMossToCubinPipeline(pm, options);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

void moss::registerMossToCubinPipeline() {
  PassPipelineRegistration<MossToCubinOptions>(
      "moss-to-cubin",
      "Lower moss ops to generated NVVM kernels and serialize them to PTX "
      "(format=isa) or cubins (format=bin) for sm_90a",
      buildMossToCubinPipeline);
}
