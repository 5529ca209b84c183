//===- AotBuild.cpp - build every whitelist kernel into a folder ----------===//
//
// Kernels are compiled into a staging folder beside the output, moved into
// place under content-addressed names, and only then is manifest.json
// replaced (atomically). An interrupted build leaves the previous manifest
// and every file it names untouched. --check compares a folder with the
// build it would make, file by file, and writes nothing.
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
#include <vector>

using namespace moss;
using namespace moss::aot;

namespace {
/// The inputs of `old`'s cache key that differ from `want`'s, as a phrase.
std::string changedInputs(const config::Manifest &old,
                          const config::Manifest &want) {
  std::vector<std::string> changed;
  if (old.whitelistSha256 != want.whitelistSha256)
    changed.push_back("whitelist sha256 " + old.whitelistSha256.substr(0, 16) +
                      " -> " + want.whitelistSha256.substr(0, 16));
  if (old.mossVersion != want.mossVersion)
    changed.push_back("moss version " + old.mossVersion + " -> " +
                      want.mossVersion);
  if (old.chip != want.chip)
    changed.push_back("chip " + old.chip + " -> " + want.chip);
  // The pipeline ends in moss-aot's own digest: a rebuilt compiler lands here.
  if (old.pipeline != want.pipeline) {
    const std::string marker = kExecutableDigestMarker;
    size_t oldAt = old.pipeline.rfind(marker),
           wantAt = want.pipeline.rfind(marker);
    bool sameSteps =
        oldAt != std::string::npos && wantAt != std::string::npos &&
        old.pipeline.compare(0, oldAt, want.pipeline, 0, wantAt) == 0;
    if (sameSteps)
      changed.push_back("moss-aot executable (sha256 " +
                        old.pipeline.substr(oldAt + marker.size()) + " -> " +
                        want.pipeline.substr(wantAt + marker.size()) + ")");
    else
      changed.push_back("pipeline (passes or ptxas options)");
  }
  if (changed.empty())
    return "manifest.json's cache_key does not match its own fields";
  return "manifest.json was built from other inputs: " +
         llvm::join(changed, ", ");
}

/// Whether the kernel file `name` of `dir` exists and, when `sha256` is not
/// empty, holds those bytes; else why not, in `why`.
bool kernelFileMatches(const std::string &dir, const std::string &kernel,
                       const std::string &name, const std::string &sha256,
                       std::string &why) {
  std::string path = joinPath(dir, name);
  if (!llvm::sys::fs::exists(path)) {
    why = "kernel " + kernel + ": " + name + " is missing";
    return false;
  }
  if (sha256.empty())
    return true;
  std::string actual, err;
  if (!config::sha256File(path, actual, err)) {
    why = "kernel " + kernel + ": " + err;
    return false;
  }
  if (actual != sha256) {
    why = "kernel " + kernel + ": " + name + " has sha256 " +
          actual.substr(0, 16) + ", the manifest records " +
          sha256.substr(0, 16);
    return false;
  }
  return true;
}

/// Why `dir` is not an up-to-date build of `want`, or "" when it is: a
/// missing or unreadable manifest, another cache key, or a kernel file that
/// is missing or not the bytes the manifest records.
std::string staleReason(const std::string &dir, const config::Manifest &want) {
  if (!llvm::sys::fs::is_directory(dir))
    return "no such folder";
  if (!llvm::sys::fs::exists(joinPath(dir, "manifest.json")))
    return "no manifest.json";
  config::Manifest old;
  std::string err;
  if (!config::readManifest(dir, old, err))
    return err;
  if (old.cacheKey != want.cacheKey)
    return changedInputs(old, want);
  // Every build has the attention kernel; a manifest from before it had not.
  if (old.attentionKernels.size() != 1 ||
      old.attentionKernels[0].name != config::kAttentionKernelName)
    return std::string("the manifest lacks the ") +
           config::kAttentionKernelName + " kernel";
  std::string why;
  auto filesMatch = [&](const auto &kernel) {
    return kernelFileMatches(dir, kernel.name, kernel.cubin, kernel.cubinSha256,
                             why) &&
           kernelFileMatches(dir, kernel.name, kernel.ptx, "", why);
  };
  for (const config::GemmKernelRecord &k : old.gemmKernels)
    if (!filesMatch(k))
      return why;
  for (const config::AttentionKernelRecord &k : old.attentionKernels)
    if (!filesMatch(k))
      return why;
  return "";
}

/// The whitelist, the toolchain and the (still kernel-less) manifest whose
/// cache key a build of `options` has: what --check compares and a build
/// writes.
bool prepareTarget(const AotOptions &options, config::Whitelist &whitelist,
                   BuildEnv &env, config::Manifest &manifest,
                   std::string &err) {
  if (!config::Whitelist::load(options.whitelistPath, whitelist, err) ||
      !prepareBuildEnv(options.chip, options.cudaPath, env, err))
    return false;
  manifest = newManifest(env, whitelist.bytes());
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
  BuildEnv env;
  config::Manifest manifest;
  if (!prepareTarget(options, whitelist, env, manifest, err))
    return false;

  std::vector<KernelGroup> groups = groupEntries(whitelist);
  std::string why = staleReason(options.outDir, manifest);
  if (!options.force && why.empty()) {
    log << "moss-aot: " << options.outDir << " is up to date (" << groups.size()
        << " GEMM kernels, 1 attention kernel, cache key "
        << manifest.cacheKey.substr(0, 16) << ")\n";
    return true;
  }
  // Say why an earlier build is replaced (a fresh folder needs no reason).
  if (llvm::sys::fs::exists(joinPath(options.outDir, "manifest.json")) &&
      !why.empty())
    log << "moss-aot: rebuilding " << options.outDir << ": " << why << "\n";

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
        "(1-4 key groups, one pass or split, g4_tma, g2_tma, "
        "g1_tma and g4_tma_kv), up to {3} threads, {4} regs, up to {5} "
        "B dynamic smem, 0 B spill -> {6}\n",
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

aot::CheckResult aot::runAotCheck(const AotOptions &options,
                                  llvm::raw_ostream &log, std::string &err) {
  config::Whitelist whitelist;
  BuildEnv env;
  config::Manifest manifest;
  if (!prepareTarget(options, whitelist, env, manifest, err))
    return CheckResult::Error;
  std::string why = staleReason(options.outDir, manifest);
  if (!why.empty()) {
    err = options.outDir + " is stale for " + options.whitelistPath + ": " +
          why + " (run moss-aot --whitelist " + options.whitelistPath +
          " --out " + options.outDir + ")";
    return CheckResult::Stale;
  }
  log << "moss-aot: " << options.outDir << " is up to date for "
      << options.whitelistPath << " (" << groupEntries(whitelist).size()
      << " GEMM kernels, 1 attention kernel, cache key "
      << manifest.cacheKey.substr(0, 16) << ")\n";
  return CheckResult::UpToDate;
}
