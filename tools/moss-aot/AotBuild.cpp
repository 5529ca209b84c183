//===- AotBuild.cpp - build every whitelist kernel into a folder ----------===//
//
// Kernels are compiled into a staging folder beside the output, moved into
// place under content-addressed names, and only then is manifest.json
// replaced (atomically). An interrupted build leaves the previous manifest
// and every file it names untouched.
//
//===----------------------------------------------------------------------===//
#include "AotBuild.h"
#include "KernelModules.h"

#include "moss/AOT/PtxasReport.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"
#include "moss/InitMoss.h"
#include "moss/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <map>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace moss;
using namespace moss::aot;

namespace {
constexpr const char *kPtxasFlags = "-O3 -v";

/// Entries that share N, K, mode and tile share one kernel.
struct KernelGroup {
  int64_t n, k;
  int mode;
  config::GemmTile tile;
  std::vector<std::string> keys;
};

std::vector<KernelGroup> groupEntries(const config::Whitelist &whitelist) {
  std::vector<KernelGroup> groups;
  std::map<
      std::tuple<int64_t, int64_t, int, int64_t, int64_t, int64_t, int64_t>,
      size_t>
      index;
  for (const config::WhitelistEntry &e : whitelist.entries()) {
    auto id = std::make_tuple(e.key.n, e.key.k, e.key.mode, e.tile.bm,
                              e.tile.bn, e.tile.bk, e.tile.split);
    auto [it, inserted] = index.emplace(id, groups.size());
    if (inserted)
      groups.push_back({e.key.n, e.key.k, e.key.mode, e.tile, {}});
    groups[it->second].keys.push_back(e.keyText);
  }
  return groups;
}

std::string joinPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Runs ptxas on `ptxPath`, writing `cubinPath`; returns its -v report.
bool runPtxas(const std::string &ptxas, const std::string &chip,
              const std::string &ptxPath, const std::string &cubinPath,
              const std::string &reportPath, std::string &report,
              std::string &err) {
  // Keep in step with kPtxasFlags, which enters the cache key.
  std::string arch = "-arch=" + chip;
  llvm::SmallVector<llvm::StringRef> args = {ptxas,   arch, "-O3",    "-v",
                                             ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, reportPath,
                                                reportPath};
  std::string execErr;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/600, 0, &execErr);
  config::readFile(reportPath, report, err);
  if (rc != 0) {
    err = "ptxas failed on " + ptxPath + " (exit " + std::to_string(rc) +
          (execErr.empty() ? "" : ", " + execErr) + "):\n" + report;
    return false;
  }
  return true;
}

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

/// Moves `from` to `to`: a rename inside one file system.
bool moveInto(const std::string &from, const std::string &to,
              std::string &err) {
  if (std::error_code ec = llvm::sys::fs::rename(from, to)) {
    err = "cannot move " + from + " to " + to + ": " + ec.message();
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

/// The manifest entry of `symbol` from a ptxas report; a function that
/// spills is refused.
bool functionRecord(
    const std::map<std::string, config::KernelResources> &report,
    const std::string &symbol, const std::string &role, int64_t threads,
    config::KernelFunctionRecord &out, std::string &err) {
  auto it = report.find(symbol);
  if (it == report.end()) {
    err = "ptxas reported nothing for " + symbol;
    return false;
  }
  if (it->second.spillStoreBytes || it->second.spillLoadBytes) {
    err = symbol + " spills (" + std::to_string(it->second.spillStoreBytes) +
          " bytes stores, " + std::to_string(it->second.spillLoadBytes) +
          " bytes loads): it needs more registers than it may use";
    return false;
  }
  out.symbol = symbol;
  out.role = role;
  out.grid = {1, 1, 1}; // From the launch rule (docs/kernel-abi.md).
  out.block = {threads, 1, 1};
  out.resources = it->second;
  return true;
}

/// Builds the attention kernel (one function, one cubin) into `staging`
/// and describes them in `record`; `cubinPath` and `ptxPath` are the staged
/// files.
bool buildAttentionKernel(mlir::MLIRContext &ctx,
                          const MossToCubinOptions &pipelineOptions,
                          const std::string &ptxas, const std::string &chip,
                          const std::string &staging,
                          config::AttentionKernelRecord &record,
                          std::string &ptxPath, std::string &cubinPath,
                          std::string &err) {
  const std::string name = config::kAttentionKernelName;
  auto module = buildAttentionEntryModule(ctx);
  std::string ptx, report;
  ptxPath = joinPath(staging, name + ".ptx");
  cubinPath = joinPath(staging, name + ".cubin");
  if (!compileToPtx(*module, pipelineOptions, ptx, err) ||
      !config::writeFileAtomic(ptxPath, ptx, err) ||
      !runPtxas(ptxas, chip, ptxPath, cubinPath,
                joinPath(staging, name + ".ptxas.txt"), report, err))
    return false;
  std::map<std::string, config::KernelResources> resources;
  if (!parsePtxasReport(report, resources, err))
    return false;

  record.name = name;
  record.chip = chip;
  if (!config::sha256File(cubinPath, record.cubinSha256, err))
    return false;
  std::string stem = name + "." + record.cubinSha256.substr(0, 12);
  record.cubin = stem + ".cubin";
  record.ptx = stem + ".ptx";
  record.args = config::attentionKernelArgNames();
  record.params = config::attentionKernelParams();
  record.functions.resize(1);
  return functionRecord(resources, name, "main",
                        32 * config::kAttentionMaxWarps, record.functions[0],
                        err);
}
} // namespace

bool aot::runAotBuild(const AotOptions &options, llvm::raw_ostream &log,
                      std::string &err) {
  config::Whitelist whitelist;
  if (!config::Whitelist::load(options.whitelistPath, whitelist, err))
    return false;

  MossToCubinOptions pipelineOptions;
  pipelineOptions.chip = options.chip;
  pipelineOptions.format = "isa";
  pipelineOptions.cudaPath = options.cudaPath;
  std::string ptxas = joinPath(options.cudaPath, "bin/ptxas");
  if (!llvm::sys::fs::can_execute(ptxas)) {
    err = "ptxas not found at " + ptxas + " (pass --cuda-path)";
    return false;
  }
  if (!llvm::sys::fs::exists(libdevicePath(options.cudaPath))) {
    err = "libdevice not found at " + libdevicePath(options.cudaPath) +
          " (pass --cuda-path)";
    return false;
  }
  // The compiler's own digest is part of the pipeline (and so of the cache
  // key): a rebuilt moss-aot with the same version string and a changed
  // kernel generator must not call the old kernels up to date.
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  std::string selfSha;
  if (self.empty() || !config::sha256File(self, selfSha, err)) {
    err = "cannot hash the moss-aot executable " + self + ": " + err;
    return false;
  }
  std::string pipeline = describeMossToCubinPipeline(pipelineOptions) +
                         " | ptxas -arch=" + options.chip + " " + kPtxasFlags +
                         " | moss-aot sha256 " + selfSha.substr(0, 16);
  config::Manifest manifest;
  manifest.mossVersion = MOSS_VERSION;
  manifest.chip = options.chip;
  manifest.pipeline = pipeline;
  manifest.whitelistSha256 = config::sha256Hex(whitelist.bytes());
  manifest.cacheKey = config::computeCacheKey(whitelist.bytes(), MOSS_VERSION,
                                              options.chip, pipeline);

  if (std::error_code ec = llvm::sys::fs::create_directories(options.outDir)) {
    err = "cannot create " + options.outDir + ": " + ec.message();
    return false;
  }
  std::vector<KernelGroup> groups = groupEntries(whitelist);
  if (!options.force && isUpToDate(options.outDir, manifest.cacheKey)) {
    log << "moss-aot: " << options.outDir << " is up to date (" << groups.size()
        << " GEMM kernels, 1 attention kernel, cache key "
        << manifest.cacheKey.substr(0, 16) << ")\n";
    return true;
  }

  std::string staging =
      joinPath(options.outDir, ".staging-" + std::to_string(::getpid()));
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code ec = llvm::sys::fs::create_directories(staging)) {
    err = "cannot create " + staging + ": " + ec.message();
    return false;
  }
  auto fail = [&](std::string message) {
    llvm::sys::fs::remove_directories(staging);
    err = std::move(message);
    return false;
  };

  mlir::DialectRegistry registry;
  registerMossDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.disableMultithreading(); // ptxas runs beside it; keep the 2 cores free.

  std::vector<std::pair<std::string, std::string>> moves; // staged -> final
  for (auto [i, group] : llvm::enumerate(groups)) {
    std::string name =
        config::gemmKernelName(group.n, group.k, group.mode, group.tile);
    config::GemmLaunch launch;
    if (!config::deriveGemmLaunch(group.n, group.k, group.tile, launch, err))
      return fail(options.whitelistPath + ": kernel " + name + ": " + err);

    auto module =
        buildLinearEntryModule(ctx, group.n, group.k, group.mode, group.tile);
    std::string ptx, report;
    if (!compileToPtx(*module, pipelineOptions, ptx, err))
      return fail("kernel " + name + ": " + err);
    std::string ptxPath = joinPath(staging, name + ".ptx");
    std::string cubinPath = joinPath(staging, name + ".cubin");
    if (!config::writeFileAtomic(ptxPath, ptx, err) ||
        !runPtxas(ptxas, options.chip, ptxPath, cubinPath,
                  joinPath(staging, name + ".ptxas.txt"), report, err))
      return fail("kernel " + name + ": " + err);

    std::map<std::string, config::KernelResources> resources;
    if (!parsePtxasReport(report, resources, err))
      return fail("kernel " + name + ": " + err);

    config::GemmKernelRecord record;
    record.name = name;
    record.keys = group.keys;
    record.n = group.n;
    record.k = group.k;
    record.epilogue = group.mode;
    record.tile = group.tile;
    record.chip = options.chip;
    if (!config::sha256File(cubinPath, record.cubinSha256, err))
      return fail(err);
    // Content-addressed names: a new build never overwrites a file that the
    // current manifest names with different bytes.
    std::string stem = name + "." + record.cubinSha256.substr(0, 12);
    record.cubin = stem + ".cubin";
    record.ptx = stem + ".ptx";
    record.workspaceBytesPerRow = launch.workspaceBytesPerRow;
    record.workspaceFixedBytes = launch.workspaceFixedBytes;

    auto addFunction = [&](const std::string &symbol, const std::string &role,
                           config::KernelGrid grid, int64_t threads) {
      auto it = resources.find(symbol);
      if (it == resources.end()) {
        err = "ptxas reported nothing for " + symbol;
        return false;
      }
      if (it->second.spillStoreBytes || it->second.spillLoadBytes) {
        err = symbol + " spills (" +
              std::to_string(it->second.spillStoreBytes) + " bytes stores, " +
              std::to_string(it->second.spillLoadBytes) +
              " bytes loads): the tile is too big for the register file";
        return false;
      }
      config::KernelFunctionRecord fn;
      fn.symbol = symbol;
      fn.role = role;
      fn.grid = grid;
      fn.block = {threads, 1, 1};
      fn.resources = it->second;
      record.functions.push_back(fn);
      return true;
    };
    if (!addFunction(name, "main",
                     {launch.gridX, launch.gridYPerM, launch.gridZ},
                     launch.threads))
      return fail("kernel " + name + ": " + err);

    const config::KernelResources &main = record.functions.front().resources;
    log << llvm::formatv("[{0}/{1}] {2}: keys {3}; {4} threads, {5} regs, {6} "
                         "B smem, 0 B spill -> {7}\n",
                         i + 1, groups.size() + 1, name,
                         llvm::join(group.keys, " "), launch.threads,
                         main.registers, main.sharedBytes, record.cubin);
    moves.push_back({cubinPath, joinPath(options.outDir, record.cubin)});
    moves.push_back({ptxPath, joinPath(options.outDir, record.ptx)});
    manifest.gemmKernels.push_back(std::move(record));
  }

  // Attention is not whitelist-gated: every build has it.
  {
    config::AttentionKernelRecord record;
    std::string ptxPath, cubinPath;
    if (!buildAttentionKernel(ctx, pipelineOptions, ptxas, options.chip,
                              staging, record, ptxPath, cubinPath, err))
      return fail("kernel " + std::string(config::kAttentionKernelName) + ": " +
                  err);
    const config::KernelResources &main = record.functions[0].resources;
    log << llvm::formatv("[{0}/{0}] {1}: D=64, any B/H/T/S; up to {2} "
                         "threads, {3} regs, {4} B smem, 0 B spill -> {5}\n",
                         groups.size() + 1, record.name,
                         record.functions[0].block[0], main.registers,
                         main.sharedBytes, record.cubin);
    moves.push_back({cubinPath, joinPath(options.outDir, record.cubin)});
    moves.push_back({ptxPath, joinPath(options.outDir, record.ptx)});
    manifest.attentionKernels.push_back(std::move(record));
  }

  for (const auto &[from, to] : moves)
    if (!moveInto(from, to, err))
      return fail(err);
  if (!config::writeManifestAtomic(options.outDir, manifest, err))
    return fail(err);
  llvm::sys::fs::remove_directories(staging);
  removeStaleKernels(options.outDir, manifest);
  log << "moss-aot: wrote " << joinPath(options.outDir, "manifest.json") << " ("
      << manifest.gemmKernels.size() << " GEMM kernels for "
      << whitelist.entries().size() << " whitelist keys, "
      << manifest.attentionKernels.size() << " attention kernel, cache key "
      << manifest.cacheKey.substr(0, 16) << ")\n";
  return true;
}
