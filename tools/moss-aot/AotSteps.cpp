//===- AotSteps.cpp - Steps shared by the whitelist and candidate builds --===//
#include "AotSteps.h"
#include "KernelModules.h"

#include "moss/AOT/PtxasReport.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Occupancy.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"
#include "moss/InitMoss.h"
#include "moss/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <map>
#include <tuple>
#include <unistd.h>

using namespace moss;
using namespace moss::aot;

namespace {
constexpr const char *kPtxasFlags = "-O3 -v";

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

/// The manifest entry of `symbol` from a ptxas report. Returns Spills when
/// the function spills (it needs more registers than it may use).
KernelBuildResult
functionRecord(const std::map<std::string, config::KernelResources> &report,
               const std::string &symbol, const std::string &role,
               config::KernelGrid grid, int64_t threads,
               config::KernelFunctionRecord &out, std::string &err) {
  auto it = report.find(symbol);
  if (it == report.end()) {
    err = "ptxas reported nothing for " + symbol;
    return KernelBuildResult::Failed;
  }
  if (it->second.spillStoreBytes || it->second.spillLoadBytes) {
    err = symbol + " spills (" + std::to_string(it->second.spillStoreBytes) +
          " bytes stores, " + std::to_string(it->second.spillLoadBytes) +
          " bytes loads): it needs more registers than it may use";
    return KernelBuildResult::Spills;
  }
  out.symbol = symbol;
  out.role = role;
  out.grid = grid;
  out.block = {threads, 1, 1};
  out.resources = it->second;
  return KernelBuildResult::Built;
}

/// Compiles `module` to PTX and a cubin named `name` in `staging` and parses
/// ptxas's report.
bool compileModule(mlir::ModuleOp module, const config::Whitelist &whitelist,
                   const BuildEnv &env, const std::string &staging,
                   const std::string &name, std::string &ptxPath,
                   std::string &cubinPath,
                   std::map<std::string, config::KernelResources> &resources,
                   std::string &err) {
  std::string ptx, report;
  ptxPath = joinPath(staging, name + ".ptx");
  cubinPath = joinPath(staging, name + ".cubin");
  return compileToPtx(module, whitelist, env.pipelineOptions, ptx, err) &&
         config::writeFileAtomic(ptxPath, ptx, err) &&
         runPtxas(env.ptxas, env.chip, ptxPath, cubinPath,
                  joinPath(staging, name + ".ptxas.txt"), report, err) &&
         parsePtxasReport(report, resources, err);
}
} // namespace

std::string aot::joinPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

std::string aot::waveNotes(const config::GemmKernelRecord &record) {
  constexpr int64_t kSms = 132; // H100 SXM and H200
  std::string notes;
  for (const std::string &key : record.keys) {
    config::GemmKey parsed;
    std::string err;
    if (!config::parseGemmKey(key, parsed, err))
      continue;
    const config::LaunchOccupancy o =
        config::gemmLaunchOccupancy(record, parsed.m, kSms);
    if (o.waves > 1)
      notes += llvm::formatv("  note: key {0}: {1} CTAs, {2} an SM: {3} waves "
                             "on {4} SMs (H100 SXM, H200)\n",
                             key, o.ctas, o.ctasPerSm, o.waves, kSms)
                   .str();
  }
  return notes;
}

std::string aot::describeGemmKernel(const KernelGroup &group,
                                    const config::KernelFunctionRecord &main) {
  const int64_t threads = main.block[0], registers = main.resources.registers;
  const int64_t shared = main.resources.sharedBytes + main.dynamicSharedBytes;
  const int64_t ctas = config::residentCtasPerSm(registers, threads, shared);
  return llvm::formatv("keys {0}; {1} threads, {2} regs, {3} B dynamic smem, "
                       "0 B spill, {4} CTA{5} an SM ({6})",
                       llvm::join(group.keys, " "), threads, registers,
                       main.dynamicSharedBytes, ctas, ctas == 1 ? "" : "s",
                       config::occupancyLimit(registers, threads, shared))
      .str();
}

bool aot::moveInto(const std::string &from, const std::string &to,
                   std::string &err) {
  // Test hook: a pause before every rename widens the window in which a
  // second build could interleave (a slow or network file system), so the
  // lit tests can show that the folder lock keeps it out.
  static const int delayMs = [] {
    const char *text = std::getenv("MOSS_AOT_TEST_RENAME_DELAY_MS");
    return text ? std::atoi(text) : 0;
  }();
  if (delayMs > 0)
    ::usleep(useconds_t(delayMs) * 1000);
  if (std::error_code ec = llvm::sys::fs::rename(from, to)) {
    err = "cannot move " + from + " to " + to + ": " + ec.message();
    return false;
  }
  return true;
}

bool aot::StagingDir::make(const std::string &outDir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    err = "cannot create " + outDir + ": " + ec.message();
    return false;
  }
  dir = joinPath(outDir, ".staging-" + std::to_string(::getpid()));
  llvm::sys::fs::remove_directories(dir);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    err = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  return true;
}

bool aot::StagingDir::fail(std::string message) {
  remove();
  err = std::move(message);
  return false;
}

void aot::StagingDir::remove() const { llvm::sys::fs::remove_directories(dir); }

bool aot::prepareBuildEnv(const std::string &chip, const std::string &cudaPath,
                          BuildEnv &env, std::string &err) {
  if (chip != config::kSupportedChip) {
    err = "--chip " + chip + " is not supported: the kernels are built for " +
          config::kSupportedChip +
          " (warpgroup MMAs, TMA, thread-block clusters), the one chip the "
          "runtime loads";
    return false;
  }
  env.chip = chip;
  env.pipelineOptions.chip = chip;
  env.pipelineOptions.format = "isa";
  env.pipelineOptions.cudaPath = cudaPath;
  env.ptxas = joinPath(cudaPath, "bin/ptxas");
  if (!llvm::sys::fs::can_execute(env.ptxas)) {
    err = "ptxas not found at " + env.ptxas + " (pass --cuda-path)";
    return false;
  }
  if (!llvm::sys::fs::exists(libdevicePath(cudaPath))) {
    err = "libdevice not found at " + libdevicePath(cudaPath) +
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
  env.pipeline = describeMossToCubinPipeline(env.pipelineOptions) +
                 " | ptxas -arch=" + chip + " " + kPtxasFlags +
                 kExecutableDigestMarker + selfSha.substr(0, 16);
  return true;
}

std::unique_ptr<mlir::MLIRContext> aot::makeBuildContext() {
  mlir::DialectRegistry registry;
  registerMossDialects(registry);
  auto ctx = std::make_unique<mlir::MLIRContext>(registry);
  ctx->disableMultithreading(); // ptxas runs beside it; keep the cores free.
  return ctx;
}

void aot::KernelGrouper::add(const config::GemmKey &key,
                             const config::GemmTile &tile,
                             const std::string &keyText) {
  auto id = std::make_tuple(key.n, key.k, key.mode, tile.bm, tile.bn, tile.bk,
                            tile.split);
  auto [it, inserted] = index.emplace(id, groups.size());
  if (inserted)
    groups.push_back({key.n, key.k, key.mode, tile, {}});
  groups[it->second].keys.push_back(keyText);
}

std::vector<KernelGroup> aot::groupEntries(const config::Whitelist &whitelist) {
  KernelGrouper grouper;
  for (const config::WhitelistEntry &e : whitelist.entries())
    grouper.add(e.key, e.tile, e.keyText);
  return grouper.take();
}

std::string aot::whitelistText(
    const std::vector<std::pair<std::string, config::GemmTile>> &entries) {
  std::string text = "{";
  for (const auto &[key, t] : entries)
    text +=
        std::string(text.size() > 1 ? ",\n" : "\n") + "  \"" + key + "\": " +
        llvm::formatv("[{0}, {1}, {2}, {3}]", t.bm, t.bn, t.bk, t.split).str();
  return text + "\n}\n";
}

bool aot::singleKeyWhitelist(const std::string &key,
                             const config::GemmTile &tile,
                             config::Whitelist &out, std::string &err) {
  return config::Whitelist::parse(whitelistText({{key, tile}}),
                                  "candidate " + key, out, err);
}

config::Manifest aot::newManifest(const BuildEnv &env,
                                  std::string_view whitelistBytes) {
  config::Manifest manifest;
  manifest.mossVersion = MOSS_VERSION;
  manifest.chip = env.chip;
  manifest.pipeline = env.pipeline;
  manifest.whitelistSha256 = config::sha256Hex(whitelistBytes);
  manifest.cacheKey = config::computeCacheKey(whitelistBytes, MOSS_VERSION,
                                              env.chip, env.pipeline);
  return manifest;
}

KernelBuildResult aot::buildGemmKernel(mlir::MLIRContext &ctx,
                                       const BuildEnv &env,
                                       const config::Whitelist &whitelist,
                                       const std::string &staging,
                                       const KernelGroup &group,
                                       StagedKernel &out, std::string &err) {
  std::string name =
      config::gemmKernelName(group.n, group.k, group.mode, group.tile);
  config::GemmLaunch launch;
  if (!config::deriveGemmLaunch(group.n, group.k, group.mode, group.tile,
                                launch, err))
    return KernelBuildResult::Failed;

  // The group's first key through moss-select-tiles, as moss-opt compiles
  // any module: the whitelist must give it the group's tile.
  config::GemmKey key;
  if (!config::parseGemmKey(group.keys.front(), key, err))
    return KernelBuildResult::Failed;
  const config::WhitelistEntry *entry =
      whitelist.find(key.m, key.n, key.k, key.mode);
  if (!entry || !(entry->tile == group.tile)) {
    err = "the whitelist does not give key " + group.keys.front() +
          " the tile of kernel " + name;
    return KernelBuildResult::Failed;
  }
  auto module = buildLinearEntryModule(ctx, key);
  std::map<std::string, config::KernelResources> resources;
  if (!compileModule(*module, whitelist, env, staging, name, out.stagedPtx,
                     out.stagedCubin, resources, err))
    return KernelBuildResult::Failed;

  config::GemmKernelRecord &record = out.record;
  record.name = name;
  record.keys = group.keys;
  record.n = group.n;
  record.k = group.k;
  record.mode = group.mode;
  record.args = config::gemmKernelArgNames(group.mode);
  record.tile = group.tile;
  record.chip = env.chip;
  if (!config::sha256File(out.stagedCubin, record.cubinSha256, err))
    return KernelBuildResult::Failed;
  // Content-addressed names: a new build never overwrites a file that the
  // current manifest names with different bytes.
  std::string stem = name + "." + record.cubinSha256.substr(0, 12);
  record.cubin = stem + ".cubin";
  record.ptx = stem + ".ptx";
  record.functions.resize(1);
  KernelBuildResult result = functionRecord(
      resources, name, "main", {launch.gridX, launch.gridYPerM, launch.gridZ},
      launch.threads, record.functions[0], err);
  record.functions[0].dynamicSharedBytes = launch.sharedBytes;
  return result;
}

bool aot::buildAttentionKernel(mlir::MLIRContext &ctx, const BuildEnv &env,
                               const config::Whitelist &whitelist,
                               const std::string &staging,
                               config::AttentionKernelRecord &record,
                               std::string &ptxPath, std::string &cubinPath,
                               std::string &err) {
  const std::string name = config::kAttentionKernelName;
  auto module = buildAttentionEntryModule(ctx);
  std::map<std::string, config::KernelResources> resources;
  if (!compileModule(*module, whitelist, env, staging, name, ptxPath, cubinPath,
                     resources, err))
    return false;
  record.name = name;
  record.chip = env.chip;
  if (!config::sha256File(cubinPath, record.cubinSha256, err))
    return false;
  std::string stem = name + "." + record.cubinSha256.substr(0, 12);
  record.cubin = stem + ".cubin";
  record.ptx = stem + ".ptx";
  record.args = config::attentionKernelArgNames();
  record.params = config::attentionKernelParams();
  // A one-pass and a split function per key-group count, each with the
  // largest block and the most shared memory a launch may ask for (the
  // launch rule decides both).
  record.functions.resize(config::kAttentionFunctions);
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    const config::AttentionFunction f = config::attentionFunctionAt(i);
    config::KernelFunctionRecord &fn = record.functions[i];
    if (functionRecord(resources, config::attentionKernelSymbol(f),
                       config::attentionKernelRole(f), {1, 1, 1},
                       32 * config::kAttentionMaxWarps, fn,
                       err) != KernelBuildResult::Built)
      return false;
    fn.dynamicSharedBytes = config::kAttentionMaxSharedBytes;
  }
  return true;
}
