//===- AotBuild.cpp - build every whitelist kernel into a folder ----------===//
//
// Kernels are compiled into a staging folder beside the output, moved into
// place under content-addressed names, and only then is manifest.json
// replaced (atomically). An interrupted build leaves the previous manifest
// and every file it names untouched. The folder's lock keeps a second build
// out until then (OutputFolder.h). --check rebuilds into a temporary folder
// and compares the bytes, so a folder passes only when it is exactly this
// moss-aot's build; it writes nothing under --out.
//
//===----------------------------------------------------------------------===//
#include "AotBuild.h"
#include "AotSteps.h"
#include "OutputFolder.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <map>
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
  if (std::string link = notRegularFileReason(dir, name); !link.empty()) {
    why = "kernel " + kernel + ": " + name + " " + link;
    return false;
  }
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
  if (std::string link = notRegularFileReason(dir, "manifest.json");
      !link.empty())
    return "manifest.json " + link;
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
  if (!checkOutPath(options.outDir, err) ||
      !config::Whitelist::load(options.whitelistPath, whitelist, err) ||
      !prepareBuildEnv(options.chip, options.cudaPath, env, err))
    return false;
  manifest = newManifest(env, whitelist.bytes());
  return true;
}

/// A staged file and the name it takes in the kernels folder.
struct StagedFile {
  std::string staged, name;
};

/// Compiles every kernel of `whitelist` (its GEMM groups, then attention)
/// into `staging`, adding their records to `manifest` and their files to
/// `files`; one line a kernel goes to `log`.
bool compileKernels(const AotOptions &options,
                    const config::Whitelist &whitelist, const BuildEnv &env,
                    const std::string &staging, config::Manifest &manifest,
                    std::vector<StagedFile> &files, llvm::raw_ostream &log,
                    std::string &err) {
  std::vector<KernelGroup> groups = groupEntries(whitelist);
  auto ctx = makeBuildContext();
  for (auto [i, group] : llvm::enumerate(groups)) {
    StagedKernel kernel;
    if (buildGemmKernel(*ctx, env, whitelist, staging, group, kernel, err) !=
        KernelBuildResult::Built) {
      err = options.whitelistPath + ": kernel " +
            config::gemmKernelName(group.n, group.k, group.mode, group.tile) +
            ": " + err;
      return false;
    }
    const config::GemmKernelRecord &record = kernel.record;
    const config::KernelFunctionRecord &main = record.functions.front();
    log << llvm::formatv("[{0}/{1}] {2}: {3} -> {4}\n", i + 1,
                         groups.size() + 1, record.name,
                         describeGemmKernel(group, main), record.cubin)
        << waveNotes(record);
    files.push_back({kernel.stagedCubin, record.cubin});
    files.push_back({kernel.stagedPtx, record.ptx});
    manifest.gemmKernels.push_back(std::move(kernel.record));
  }

  // Attention is not whitelist-gated: every build has it.
  config::AttentionKernelRecord record;
  std::string ptxPath, cubinPath;
  if (!buildAttentionKernel(*ctx, env, whitelist, staging, record, ptxPath,
                            cubinPath, err)) {
    err = "kernel " + std::string(config::kAttentionKernelName) + ": " + err;
    return false;
  }
  int64_t registers = 0;
  for (const config::KernelFunctionRecord &fn : record.functions)
    registers = std::max(registers, fn.resources.registers);
  log << llvm::formatv("[{0}/{0}] {1}: D=64, any B/H/T/S; {2} functions, up "
                       "to {3} threads, {4} regs, up to {5} B dynamic smem, "
                       "0 B spill -> {6}\n",
                       groups.size() + 1, record.name, record.functions.size(),
                       record.functions[0].block[0], registers,
                       record.functions[0].dynamicSharedBytes, record.cubin);
  files.push_back({cubinPath, record.cubin});
  files.push_back({ptxPath, record.ptx});
  manifest.attentionKernels.push_back(std::move(record));
  return true;
}

/// The first line where `a` and `b` differ (1-based).
size_t firstDifferingLine(llvm::StringRef a, llvm::StringRef b) {
  size_t line = 1;
  for (size_t i = 0; i < std::min(a.size(), b.size()) && a[i] == b[i]; ++i)
    line += a[i] == '\n';
  return line;
}

/// Why the folder `dir` (whose manifest is `old`) is not byte for byte the
/// rebuild `want` staged in `staging`, or "" when it is.
std::string rebuildDifference(const std::string &dir,
                              const config::Manifest &old,
                              const config::Manifest &want,
                              const std::vector<StagedFile> &files) {
  // Per kernel first, so a swapped cubin is named as such.
  std::map<std::string, std::string> oldCubin; // kernel name -> cubin
  for (const config::GemmKernelRecord &k : old.gemmKernels)
    oldCubin[k.name] = k.cubin;
  for (const config::AttentionKernelRecord &k : old.attentionKernels)
    oldCubin[k.name] = k.cubin;
  auto checkKernel = [&](const std::string &name, const std::string &cubin) {
    auto it = oldCubin.find(name);
    if (it == oldCubin.end())
      return "the manifest lacks kernel " + name;
    if (it->second != cubin)
      return "kernel " + name + ": the manifest names " + it->second +
             ", this moss-aot builds " + cubin;
    return std::string();
  };
  for (const config::GemmKernelRecord &k : want.gemmKernels)
    if (std::string why = checkKernel(k.name, k.cubin); !why.empty())
      return why;
  for (const config::AttentionKernelRecord &k : want.attentionKernels)
    if (std::string why = checkKernel(k.name, k.cubin); !why.empty())
      return why;
  for (const StagedFile &file : files) {
    std::string have, rebuilt, err;
    if (!config::readFile(joinPath(dir, file.name), have, err))
      return err;
    if (!config::readFile(file.staged, rebuilt, err))
      return "cannot read the rebuild: " + err;
    if (have != rebuilt)
      return file.name + " is not the bytes this moss-aot builds";
  }
  std::string have, err;
  if (!config::readFile(joinPath(dir, config::kManifestFileName), have, err))
    return err;
  std::string rebuilt = config::serializeManifest(want);
  if (have != rebuilt)
    return "manifest.json differs from the one this moss-aot writes, from "
           "line " +
           std::to_string(firstDifferingLine(have, rebuilt));
  return "";
}
} // namespace

bool aot::runAotBuild(const AotOptions &options, llvm::raw_ostream &log,
                      std::string &err) {
  config::Whitelist whitelist;
  BuildEnv env;
  config::Manifest manifest;
  if (!prepareTarget(options, whitelist, env, manifest, err))
    return false;
  // From here to the last rename this build alone writes the folder.
  FolderLock lock;
  OwnedEntries before;
  if (!lock.acquire(options.outDir, log, err) ||
      !claimKernelsFolder(options.outDir, before, err))
    return false;

  size_t kernels = groupEntries(whitelist).size();
  std::string why = staleReason(options.outDir, manifest);
  if (!options.force && why.empty()) {
    log << "moss-aot: " << options.outDir << " is up to date (" << kernels
        << " GEMM kernels, 1 attention kernel, cache key "
        << manifest.cacheKey.substr(0, 16) << ")\n";
    return true;
  }
  // Say why an earlier build is replaced (a fresh folder needs no reason).
  if (llvm::sys::fs::exists(joinPath(options.outDir, "manifest.json")) &&
      !why.empty())
    log << "moss-aot: rebuilding " << options.outDir << ": " << why << "\n";

  StagingDir staging(err);
  std::vector<StagedFile> files;
  if (!staging.make(options.outDir))
    return false;
  if (!compileKernels(options, whitelist, env, staging.path(), manifest, files,
                      log, err))
    return staging.fail(err);
  std::vector<std::string> names;
  for (const StagedFile &file : files)
    names.push_back(file.name);
  if (!writeMoveJournal(staging.path(), names, err))
    return staging.fail(err);
  for (const StagedFile &file : files)
    if (!moveInto(file.staged, joinPath(options.outDir, file.name), err))
      return staging.fail(err);
  if (!config::writeManifestAtomic(options.outDir, manifest, err))
    return staging.fail(err);
  staging.remove();
  removeReleasedFiles(options.outDir, before, manifestEntries(manifest));
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
  FolderLock lock;
  if (llvm::sys::fs::is_directory(options.outDir) &&
      !lock.acquireShared(options.outDir, err))
    return CheckResult::Error;
  auto stale = [&](const std::string &why) {
    err = options.outDir + " is stale for " + options.whitelistPath + ": " +
          why + " (run moss-aot --whitelist " + options.whitelistPath +
          " --out " + options.outDir + ")";
    return CheckResult::Stale;
  };
  // The cheap reasons first (cache key, recorded digests), then what a build
  // would refuse, then the rebuild itself.
  if (std::string why = staleReason(options.outDir, manifest); !why.empty())
    return stale(why);
  OwnedEntries owned;
  if (!inspectKernelsFolder(options.outDir, owned, err))
    return stale("a build would refuse the folder: " + err);
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("moss-aot-check", scratch)) {
    err = "cannot create a temporary folder for the rebuild: " + ec.message();
    return CheckResult::Error;
  }
  std::vector<StagedFile> files;
  config::Manifest old;
  bool built = compileKernels(options, whitelist, env, scratch.str().str(),
                              manifest, files, llvm::nulls(), err) &&
               config::readManifest(options.outDir, old, err);
  std::string why =
      built ? rebuildDifference(options.outDir, old, manifest, files) : "";
  llvm::sys::fs::remove_directories(scratch);
  if (!built)
    return CheckResult::Error;
  if (!why.empty())
    return stale(why);
  log << "moss-aot: " << options.outDir << " is up to date for "
      << options.whitelistPath << " (" << groupEntries(whitelist).size()
      << " GEMM kernels, 1 attention kernel, cache key "
      << manifest.cacheKey.substr(0, 16) << "; rebuilt and compared "
      << files.size() + 1 << " files byte for byte)\n";
  return CheckResult::UpToDate;
}
