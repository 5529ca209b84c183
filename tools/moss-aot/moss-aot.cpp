//===- moss-aot.cpp - ahead-of-time build of the moss kernels -------------===//
//
//   moss-aot --whitelist PATH [--chip sm_90a] [--out kernels_generated]
//   moss-aot --whitelist PATH --out DIR --check
//   moss-aot --candidates SHAPES --out DIR [--tile-bm 8,16 ...]
//
// Builds a cubin (and keeps its PTX) for every whitelist entry and writes
// manifest.json with a cache key over the whitelist's bytes. With
// --candidates, builds every legal tile of the given keys for moss-tune
// (moss/Config/CandidateSet.h).
//
//===----------------------------------------------------------------------===//
#include "AotBuild.h"
#include "CandidatesBuild.h"

#include "moss/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

// --help lists these alone: the LLVM libraries linked in register hundreds
// of back-end options that have nothing to do with a kernel build.
static cl::OptionCategory aotCategory("moss-aot options");

static cl::opt<std::string>
    whitelistPath("whitelist",
                  cl::desc("Whitelist JSON (default: $MOSS_CODEC_GEMM_CONFIG)"),
                  cl::value_desc("path"), cl::cat(aotCategory));
static cl::opt<std::string>
    chip("chip", cl::desc("Target SM (sm_90a, the one the runtime loads)"),
         cl::init("sm_90a"), cl::cat(aotCategory));
static cl::opt<std::string> outDir("out", cl::desc("Output folder"),
                                   cl::init("kernels_generated"),
                                   cl::cat(aotCategory));
static cl::opt<std::string>
    cudaPath("cuda-path", cl::desc("CUDA toolkit (ptxas, libdevice)"),
             cl::init(MOSS_DEFAULT_CUDA_PATH), cl::cat(aotCategory));
static cl::opt<bool> force("force", cl::desc("Rebuild even when up to date"),
                           cl::cat(aotCategory));
static cl::opt<bool>
    check("check",
          cl::desc("Only check that --out is an up-to-date build of the "
                   "whitelist; write nothing (exit 0 yes, 1 stale, 2 error)"),
          cl::cat(aotCategory));
static cl::opt<std::string> candidates(
    "candidates",
    cl::desc("Build the tile candidates of these \"M,N,K,mode\" keys (a file "
             "of keys, or the keys separated by spaces or ';') for moss-tune"),
    cl::value_desc("shapes"), cl::cat(aotCategory));
static cl::list<int64_t> tileBm("tile-bm", cl::CommaSeparated,
                                cl::desc("Candidate bm values"),
                                cl::cat(aotCategory));
static cl::list<int64_t> tileBn("tile-bn", cl::CommaSeparated,
                                cl::desc("Candidate bn values"),
                                cl::cat(aotCategory));
static cl::list<int64_t> tileBk("tile-bk", cl::CommaSeparated,
                                cl::desc("Candidate bk values"),
                                cl::cat(aotCategory));
static cl::list<int64_t> tileSplit("tile-split", cl::CommaSeparated,
                                   cl::desc("Candidate split values"),
                                   cl::cat(aotCategory));

/// --candidates: the tile space is the default one unless narrowed.
static int runCandidates() {
  moss::aot::CandidatesOptions options;
  options.shapes = candidates;
  options.outDir = outDir;
  options.chip = chip;
  options.cudaPath = cudaPath;
  auto narrow = [](const cl::list<int64_t> &given, std::vector<int64_t> &to) {
    if (!given.empty())
      to.assign(given.begin(), given.end());
  };
  narrow(tileBm, options.space.bm);
  narrow(tileBn, options.space.bn);
  narrow(tileBk, options.space.bk);
  narrow(tileSplit, options.space.split);
  std::string err;
  if (!moss::aot::runCandidatesBuild(options, llvm::outs(), err)) {
    llvm::errs() << "moss-aot: error: " << err << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(aotCategory);
  // The moss version is part of every manifest's cache key.
  cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "moss " << MOSS_VERSION << "\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "moss ahead-of-time kernel build\n\n"
      "  moss-aot --whitelist PATH [--out kernels_generated]\n"
      "      builds a cubin for every whitelist key and the attention kernel,\n"
      "      and writes manifest.json (skipped when up to date)\n"
      "  moss-aot --whitelist PATH --out DIR --check\n"
      "      says whether DIR is that build, or why not; writes nothing\n"
      "  moss-aot --candidates SHAPES --out DIR [--tile-bm 8,16 ...]\n"
      "      builds every legal tile of the keys for moss-tune\n");
  // gpu-module-to-binary emits PTX through LLVM's NVPTX back end.
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();

  if (check && (force || candidates.getNumOccurrences())) {
    llvm::errs() << "moss-aot: --check excludes --force and --candidates\n";
    return 2;
  }
  if (candidates.getNumOccurrences()) {
    if (whitelistPath.getNumOccurrences()) {
      llvm::errs() << "moss-aot: --candidates and --whitelist exclude each "
                      "other\n";
      return 2;
    }
    if (!outDir.getNumOccurrences()) {
      llvm::errs() << "moss-aot: --candidates needs --out DIR (a candidates "
                      "folder, not kernels_generated)\n";
      return 2;
    }
    return runCandidates();
  }
  if (tileBm.getNumOccurrences() || tileBn.getNumOccurrences() ||
      tileBk.getNumOccurrences() || tileSplit.getNumOccurrences()) {
    llvm::errs() << "moss-aot: --tile-* options narrow --candidates only\n";
    return 2;
  }

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
  if (check) {
    switch (moss::aot::runAotCheck(options, llvm::outs(), err)) {
    case moss::aot::CheckResult::UpToDate:
      return 0;
    case moss::aot::CheckResult::Stale:
      llvm::errs() << "moss-aot: " << err << "\n";
      return 1;
    case moss::aot::CheckResult::Error:
      llvm::errs() << "moss-aot: error: " << err << "\n";
      return 2;
    }
  }
  if (!moss::aot::runAotBuild(options, llvm::outs(), err)) {
    llvm::errs() << "moss-aot: error: " << err << "\n";
    return 1;
  }
  return 0;
}
