//===- MossToCubin.h - the moss-to-cubin pipeline ---------------*- C++ -*-===//
//
// One pipeline, shared by moss-opt and moss-aot: moss ops -> generated GPU
// kernels -> NVVM -> PTX (and, with format=bin, cubins through ptxas).
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_PIPELINE_MOSSTOCUBIN_H
#define MOSS_PIPELINE_MOSSTOCUBIN_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace moss {
struct MossToCubinOptions : mlir::PassPipelineOptions<MossToCubinOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target SM"), llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{*this, "features",
                                            llvm::cl::desc("PTX features"),
                                            llvm::cl::init("+ptx81")};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("LLVM optimization level"),
                                    llvm::cl::init(3)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin (cubin) "
                     "or fatbin"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path", llvm::cl::desc("CUDA toolkit (ptxas, libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
};

/// Appends the pipeline to `pm` (anchored on builtin.module).
void buildMossToCubinPipeline(mlir::OpPassManager &pm,
                              const MossToCubinOptions &options);

/// The pipeline's textual form for `options`; part of the AOT cache key.
std::string describeMossToCubinPipeline(const MossToCubinOptions &options);

/// Registers `moss-to-cubin` with the global pipeline registry.
void registerMossToCubinPipeline();

/// Libdevice inside a CUDA toolkit (erf for the GELU epilogue comes from it).
std::string libdevicePath(llvm::StringRef cudaPath);
} // namespace moss

#endif // MOSS_PIPELINE_MOSSTOCUBIN_H
