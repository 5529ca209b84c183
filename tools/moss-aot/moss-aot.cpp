//===- moss-aot.cpp - ahead-of-time build of the moss kernels -------------===//
//
//   moss-aot --whitelist PATH [--chip sm_90a] [--out kernels_generated]
//
// Builds a cubin (and keeps its PTX) for every whitelist entry and writes
// manifest.json with a cache key over the whitelist's bytes.
//
//===----------------------------------------------------------------------===//
#include "AotBuild.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

static cl::opt<std::string>
    whitelistPath("whitelist",
                  cl::desc("Whitelist JSON (default: $MOSS_CODEC_GEMM_CONFIG)"),
                  cl::value_desc("path"));
static cl::opt<std::string> chip("chip", cl::desc("Target SM"),
                                 cl::init("sm_90a"));
static cl::opt<std::string> outDir("out", cl::desc("Output folder"),
                                   cl::init("kernels_generated"));
static cl::opt<std::string>
    cudaPath("cuda-path", cl::desc("CUDA toolkit (ptxas, libdevice)"),
             cl::init(MOSS_DEFAULT_CUDA_PATH));
static cl::opt<bool> force("force", cl::desc("Rebuild even when up to date"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "moss ahead-of-time kernel build\n");
  // gpu-module-to-binary emits PTX through LLVM's NVPTX back end.
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();

  moss::aot::AotOptions options;
  options.whitelistPath = whitelistPath;
  if (options.whitelistPath.empty())
    if (const char *env = std::getenv("MOSS_CODEC_GEMM_CONFIG"))
      options.whitelistPath = env;
  if (options.whitelistPath.empty()) {
    llvm::errs() << "moss-aot: no whitelist: pass --whitelist PATH or set "
                    "MOSS_CODEC_GEMM_CONFIG\n";
    return 2;
  }
  options.outDir = outDir;
  options.chip = chip;
  options.cudaPath = cudaPath;
  options.force = force;

  std::string err;
  if (!moss::aot::runAotBuild(options, llvm::outs(), err)) {
    llvm::errs() << "moss-aot: error: " << err << "\n";
    return 1;
  }
  return 0;
}
