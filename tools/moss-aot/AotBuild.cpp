//===- AotBuild.cpp - build every whitelist kernel into a folder ----------===//
//
// Kernels are compiled into a staging folder beside the output, moved into
// place under content-addressed names, and only then is manifest.json
// replaced (atomically). An interrupted build leaves the previous manifest
// and every file it names untouched.
//
//===----------------------------------------------------------------------===//
#include "AotBuild.h"
#include "AotSteps.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace moss;
using namespace moss::aot;

namespace {
/// True when `dir` holds a manifest with `cacheKey` whose files all exist
/// with the recorded sha256.
bool isUpToDate(const std::string &dir, const std::string &cacheKey) {
  config::Manifest old;
  std::string err;
  if (!config::readManifest(dir, old, err) || old.cacheKey != cacheKey)
    return false;
  for (const config::GemmKernelRecord &k : old.gemmKernels) {
    std::string sha;
    if (!config::sha256File(joinPath(dir, k.cubin), sha, err) ||
        sha != k.cubinSha256 || !llvm::sys::fs::exists(joinPath(dir, k.ptx)))
      return false;
  }
  // Every build has the attention kernel; a manifest from before it had not.
  if (old.attentionKernels.size() != 1 ||
      old.attentionKernels[0].name != config::kAttentionKernelName)
    return false;
  for (const config::AttentionKernelRecord &k : old.attentionKernels) {
    std::string sha;
    if (!config::sha256File(joinPath(dir, k.cubin), sha, err) ||
        sha != k.cubinSha256 || !llvm::sys::fs::exists(joinPath(dir, k.ptx)))
      return false;
  }
  return true;
}

/// Deletes kernel files of earlier builds that `manifest` no longer names.
void removeStaleKernels(const std::string &dir,
                        const config::Manifest &manifest) {
  std::set<std::string> keep;
  for (const config::GemmKernelRecord &k : manifest.gemmKernels)
    keep.insert({k.cubin, k.ptx});
  for (const config::AttentionKernelRecord &k : manifest.attentionKernels)
    keep.insert({k.cubin, k.ptx});
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if ((name.ends_with(".cubin") || name.ends_with(".ptx")) &&
        !keep.count(name.str()))
      llvm::sys::fs::remove(it->path());
  }
}
} // namespace

bool aot::runAotBuild(const AotOptions &options, llvm::raw_ostream &log,
                      std::string &err) {
  config::Whitelist whitelist;
  if (!config::Whitelist::load(options.whitelistPath, whitelist, err))
    return false;
  BuildEnv env;
  if (!prepareBuildEnv(options.chip, options.cudaPath, env, err))
    return false;
  config::Manifest manifest = newManifest(env, whitelist.bytes());

  std::vector<KernelGroup> groups = groupEntries(whitelist);
  if (!options.force && isUpToDate(options.outDir, manifest.cacheKey)) {
    log << "moss-aot: " << options.outDir << " is up to date (" << groups.size()
        << " GEMM kernels, 1 attention kernel, cache key "
        << manifest.cacheKey.substr(0, 16) << ")\n";
    return true;
  }

  StagingDir staging(err);
  if (!staging.make(options.outDir))
    return false;
  auto ctx = makeBuildContext();

  std::vector<std::pair<std::string, std::string>> moves; // staged -> final
  for (auto [i, group] : llvm::enumerate(groups)) {
    StagedKernel kernel;
    if (buildGemmKernel(*ctx, env, staging.path(), group, kernel, err) !=
        KernelBuildResult::Built)
      return staging.fail(
          options.whitelistPath + ": kernel " +
          config::gemmKernelName(group.n, group.k, group.mode, group.tile) +
          ": " + err);
    const config::GemmKernelRecord &record = kernel.record;
    const config::KernelFunctionRecord &main = record.functions.front();
    log << llvm::formatv("[{0}/{1}] {2}: {3} -> {4}\n", i + 1,
                         groups.size() + 1, record.name,
                         describeGemmKernel(group, main), record.cubin)
        << waveNotes(record);
    moves.push_back(
        {kernel.stagedCubin, joinPath(options.outDir, record.cubin)});
    moves.push_back({kernel.stagedPtx, joinPath(options.outDir, record.ptx)});
    manifest.gemmKernels.push_back(std::move(kernel.record));
  }

  // Attention is not whitelist-gated: every build has it.
  {
    config::AttentionKernelRecord record;
    std::string ptxPath, cubinPath;
    if (!buildAttentionKernel(*ctx, env, staging.path(), record, ptxPath,
                              cubinPath, err))
      return staging.fail(
          "kernel " + std::string(config::kAttentionKernelName) + ": " + err);
    int64_t registers = 0;
    for (const config::KernelFunctionRecord &fn : record.functions)
      registers = std::max(registers, fn.resources.registers);
    log << llvm::formatv(
        "[{0}/{0}] {1}: D=64, any B/H/T/S; {2} functions "
        "(1-4 key groups, one pass or split, and g4_tma), up to {3} "
        "threads, {4} regs, up "
        "to {5} B dynamic smem, 0 B spill -> {6}\n",
        groups.size() + 1, record.name, record.functions.size(),
        record.functions[0].block[0], registers,
        record.functions[0].dynamicSharedBytes, record.cubin);
    moves.push_back({cubinPath, joinPath(options.outDir, record.cubin)});
    moves.push_back({ptxPath, joinPath(options.outDir, record.ptx)});
    manifest.attentionKernels.push_back(std::move(record));
  }

  for (const auto &[from, to] : moves)
    if (!moveInto(from, to, err))
      return staging.fail(err);
  if (!config::writeManifestAtomic(options.outDir, manifest, err))
    return staging.fail(err);
  staging.remove();
  removeStaleKernels(options.outDir, manifest);
  log << "moss-aot: wrote " << joinPath(options.outDir, "manifest.json") << " ("
      << manifest.gemmKernels.size() << " GEMM kernels for "
      << whitelist.entries().size() << " whitelist keys, "
      << manifest.attentionKernels.size() << " attention kernel, cache key "
      << manifest.cacheKey.substr(0, 16) << ")\n";
  return true;
}
