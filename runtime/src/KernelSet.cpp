//===- KernelSet.cpp - Host-side checks of kernels_generated/ -------------===//

#include "KernelSet.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"
#include "moss/Version.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

namespace moss::runtime {
namespace {

std::string quoted(const std::string &text) { return "\"" + text + "\""; }

std::string tileText(const config::GemmTile &tile) {
  return "[" + std::to_string(tile.bm) + "," + std::to_string(tile.bn) + "," +
         std::to_string(tile.bk) + "," + std::to_string(tile.split) + "]";
}

std::string keyText(int64_t m, int64_t n, int64_t k, int mode) {
  return std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) +
         "," + std::to_string(mode);
}

/// Reads a cubin named by the manifest and checks its sha256.
Status readCubin(const KernelSet &set, const std::string &label,
                 const std::string &chip, const std::string &fileName,
                 const std::string &expectedSha, std::string &path,
                 std::string &bytes) {
  std::string where = set.manifestPath + ": " + label + ": ";
  if (chip != set.chip)
    return failure(MOSS_ERROR_MANIFEST, where + "chip " + quoted(chip) +
                                            " differs from the manifest's " +
                                            quoted(set.chip));
  path = set.kernelsDir + "/" + fileName;
  std::string err;
  if (!config::readRegularFile(path, bytes, err))
    return failure(MOSS_ERROR_MANIFEST,
                   where + "cubin missing or unreadable: " + err);
  std::string actualSha = config::sha256Hex(bytes);
  if (actualSha != expectedSha)
    return failure(MOSS_ERROR_MANIFEST,
                   where + "cubin " + path + " has sha256 " + actualSha +
                       " but the manifest lists " + expectedSha +
                       " (changed or corrupted after moss-aot wrote it)");
  return success();
}

/// The manifest's launch record of `fn` must be what the launch rule gives.
Status checkFunction(const std::string &where,
                     const config::KernelFunctionRecord &fn,
                     const config::KernelGrid &grid,
                     const std::array<int64_t, 3> &block) {
  auto mismatch = [&](const char *field, int64_t found, int64_t expected) {
    return failure(MOSS_ERROR_MANIFEST,
                   where + "function " + quoted(fn.symbol) + " (" + fn.role +
                       ") " + field + " = " + std::to_string(found) +
                       ", but the launch rule (deriveGemmLaunch) gives " +
                       std::to_string(expected));
  };
  if (fn.grid.x != grid.x)
    return mismatch("grid.x", fn.grid.x, grid.x);
  if (fn.grid.yPerM != grid.yPerM)
    return mismatch("grid.y_per_m", fn.grid.yPerM, grid.yPerM);
  if (fn.grid.z != grid.z)
    return mismatch("grid.z", fn.grid.z, grid.z);
  for (int i = 0; i < 3; ++i)
    if (fn.block[i] != block[i])
      return mismatch(i == 0   ? "block[0]"
                      : i == 1 ? "block[1]"
                               : "block[2]",
                      fn.block[i], block[i]);
  // Hopper allows 227 KiB of shared memory per block.
  if (fn.dynamicSharedBytes < 0 || fn.dynamicSharedBytes > 227 * 1024)
    return failure(
        MOSS_ERROR_MANIFEST,
        where + "function " + quoted(fn.symbol) + " dynamic_shared_bytes = " +
            std::to_string(fn.dynamicSharedBytes) + " is outside [0, 232448]");
  return success();
}

Status checkGemmLaunch(const KernelSet &set, GemmKernel &kernel) {
  const config::GemmKernelRecord &rec = kernel.record;
  std::string where =
      set.manifestPath + ": gemm kernel " + quoted(rec.name) + ": ";
  config::GemmLaunch launch;
  std::string err;
  if (!config::deriveGemmLaunch(rec.n, rec.k, rec.mode, rec.tile, launch, err))
    return failure(MOSS_ERROR_MANIFEST, where + err);
  if (rec.functions.size() != 1 || rec.functions[0].role != "main")
    return failure(MOSS_ERROR_MANIFEST,
                   where +
                       "expected exactly one function, role \"main\" "
                       "(split-K reduces inside it), found " +
                       std::to_string(rec.functions.size()));
  kernel.launch = launch;
  Status status = checkFunction(where, rec.functions[0],
                                {launch.gridX, launch.gridYPerM, launch.gridZ},
                                {launch.threads, 1, 1});
  if (!status.ok())
    return status;
  // The kernel's slab and partial tiles live in dynamic shared memory.
  const config::KernelFunctionRecord &fn = rec.functions[0];
  if (fn.dynamicSharedBytes != launch.sharedBytes)
    return failure(
        MOSS_ERROR_MANIFEST,
        where + "function " + quoted(fn.symbol) +
            " dynamic_shared_bytes = " + std::to_string(fn.dynamicSharedBytes) +
            ", but the launch rule (deriveGemmLaunch) gives " +
            std::to_string(launch.sharedBytes));
  return success();
}

/// The manifest's attention record must describe the kernel this runtime
/// launches: the same 26 arguments, the same constants (abi_version first),
/// one function (role "main") with the expected symbol and block.
Status checkAttentionRecord(const KernelSet &set, AttentionKernel &kernel) {
  const config::AttentionKernelRecord &rec = kernel.record;
  std::string where =
      set.manifestPath + ": attention kernel " + quoted(rec.name) + ": ";
  auto bad = [&](const std::string &why) {
    return failure(MOSS_ERROR_MANIFEST,
                   where + why + "; this runtime launches " +
                       config::kAttentionKernelName + " of ABI version " +
                       std::to_string(config::kAttentionAbiVersion) +
                       " (rebuild the kernels with a matching moss-aot)");
  };
  // abi_version first: a newer ABI may differ in anything else.
  auto version = rec.params.find("abi_version");
  if (version == rec.params.end())
    return bad("field \"params.abi_version\" is missing");
  if (version->second != config::kAttentionAbiVersion)
    return bad(
        "field \"params.abi_version\" = " + std::to_string(version->second) +
        ", expected " + std::to_string(config::kAttentionAbiVersion));
  if (rec.name != config::kAttentionKernelName)
    return bad("field \"name\" is not " + quoted(config::kAttentionKernelName));
  const std::vector<std::string> &names = config::attentionKernelArgNames();
  for (size_t i = 0; i < std::max(names.size(), rec.args.size()); ++i) {
    if (i >= rec.args.size())
      return bad("field \"args\" has " + std::to_string(rec.args.size()) +
                 " entries, expected " + std::to_string(names.size()));
    if (i >= names.size() || rec.args[i] != names[i])
      return bad("field \"args[" + std::to_string(i) + "]\" is " +
                 quoted(rec.args[i]) + ", expected " +
                 (i < names.size() ? quoted(names[i])
                                   : std::string("no more entries")));
  }
  for (const auto &[name, value] : config::attentionKernelParams()) {
    auto it = rec.params.find(name);
    std::string field = std::string("field \"params.") + name + "\"";
    if (it == rec.params.end())
      return bad(field + " is missing");
    if (it->second != value)
      return bad(field + " = " + std::to_string(it->second) + ", expected " +
                 std::to_string(value));
  }
  for (const auto &[name, value] : rec.params) {
    if (!config::attentionKernelParams().count(name))
      return bad("field \"params." + name +
                 "\" is not a parameter of this "
                 "ABI");
  }
  const size_t count = config::kAttentionFunctions;
  if (rec.functions.size() != count)
    return bad("field \"functions\" has " +
               std::to_string(rec.functions.size()) + " entries, expected " +
               std::to_string(count) + " (roles \"g1\" .. \"g" +
               std::to_string(config::kAttentionMaxKvGroups) +
               "\", then \"g1_split\" .. \"g" +
               std::to_string(config::kAttentionMaxKvGroups) +
               "_split\", then \"g4_tma\", \"g2_tma\", \"g1_tma\" and "
               "\"g4_tma_kv\", then each with \"_pos\")");
  for (size_t i = 0; i < count; ++i) {
    const config::KernelFunctionRecord &fn = rec.functions[i];
    std::string field = "field \"functions[" + std::to_string(i) + "].";
    const config::AttentionFunction f = config::attentionFunctionAt(i);
    std::string role = config::attentionKernelRole(f);
    std::string symbol = config::attentionKernelSymbol(f);
    if (fn.role != role)
      return bad(field + "role\" is " + quoted(fn.role) + ", expected " +
                 quoted(role));
    if (fn.symbol != symbol)
      return bad(field + "symbol\" is " + quoted(fn.symbol) + ", expected " +
                 quoted(symbol));
    const int64_t threads = 32 * config::kAttentionMaxWarps;
    if (fn.block[0] != threads || fn.block[1] != 1 || fn.block[2] != 1)
      return bad(field + "block\" is [" + std::to_string(fn.block[0]) + ", " +
                 std::to_string(fn.block[1]) + ", " +
                 std::to_string(fn.block[2]) + "], expected [" +
                 std::to_string(threads) + ", 1, 1]");
    if (fn.dynamicSharedBytes != config::kAttentionMaxSharedBytes)
      return bad(field + "dynamic_shared_bytes\" = " +
                 std::to_string(fn.dynamicSharedBytes) + ", expected " +
                 std::to_string(config::kAttentionMaxSharedBytes));
  }
  return success();
}

Status checkCacheKey(const KernelSet &set, const config::Manifest &manifest,
                     const config::Whitelist &whitelist) {
  std::string expected = config::computeCacheKey(
      whitelist.bytes(), MOSS_VERSION, manifest.chip, manifest.pipeline);
  if (expected == manifest.cacheKey)
    return success();
  std::string whitelistSha = config::sha256Hex(whitelist.bytes());
  std::string why;
  if (whitelistSha != manifest.whitelistSha256)
    why = "the kernels were built from another whitelist (manifest "
          "whitelist_sha256 " +
          manifest.whitelistSha256 + ", this whitelist's sha256 " +
          whitelistSha + ")";
  else if (manifest.mossVersion != MOSS_VERSION)
    why = "the kernels were built by moss " + manifest.mossVersion +
          ", this runtime is moss " MOSS_VERSION;
  else
    why = "the manifest's cache_key does not cover its own fields";
  return failure(MOSS_ERROR_CACHE_KEY_MISMATCH,
                 set.manifestPath + ": cache_key " + manifest.cacheKey +
                     " does not match " + expected +
                     " computed from whitelist " + set.whitelistPath +
                     " (moss " MOSS_VERSION ", chip " + manifest.chip +
                     "): " + why + "; rebuild the kernels with moss-aot");
}

/// Maps every whitelist key to the manifest kernel serving it.
Status selectGemmKernels(KernelSet &set, const config::Manifest &manifest,
                         const config::Whitelist &whitelist) {
  std::string where = set.manifestPath + ": ";
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < manifest.gemmKernels.size(); ++i) {
    for (const std::string &key : manifest.gemmKernels[i].keys) {
      auto [it, inserted] = owner.emplace(key, i);
      if (!inserted)
        return failure(MOSS_ERROR_MANIFEST,
                       where + "key " + quoted(key) +
                           " is served by two kernels, " +
                           quoted(manifest.gemmKernels[it->second].name) +
                           " and " + quoted(manifest.gemmKernels[i].name));
    }
  }
  std::set<std::string> whitelistKeys;
  std::map<size_t, size_t> kernelSlot; // manifest index -> set.gemm index
  for (const config::WhitelistEntry &entry : whitelist.entries()) {
    const config::GemmKey &key = entry.key;
    std::string text = keyText(key.m, key.n, key.k, key.mode);
    whitelistKeys.insert(text);
    auto found = owner.find(text);
    if (found == owner.end())
      return failure(MOSS_ERROR_MANIFEST, where + "no kernel serves key " +
                                              quoted(text) + " of whitelist " +
                                              set.whitelistPath);
    const config::GemmKernelRecord &rec = manifest.gemmKernels[found->second];
    std::string label = "gemm kernel " + quoted(rec.name);
    if (rec.n != key.n || rec.k != key.k || rec.mode != key.mode)
      return failure(MOSS_ERROR_MANIFEST,
                     where + label + " (n " + std::to_string(rec.n) + ", k " +
                         std::to_string(rec.k) + ", epilogue " +
                         std::to_string(rec.mode) + ") cannot serve key " +
                         quoted(text));
    const config::GemmTile &want = entry.tile;
    if (rec.tile.bm != want.bm || rec.tile.bn != want.bn ||
        rec.tile.bk != want.bk || rec.tile.split != want.split)
      return failure(MOSS_ERROR_MANIFEST,
                     where + label + " has tile " + tileText(rec.tile) +
                         " but whitelist " + set.whitelistPath + " names " +
                         tileText(want) + " for key " + quoted(text));
    auto [slot, isNew] = kernelSlot.emplace(found->second, set.gemm.size());
    if (isNew) {
      GemmKernel kernel;
      kernel.record = rec;
      Status status =
          readCubin(set, label, rec.chip, rec.cubin, rec.cubinSha256,
                    kernel.cubinPath, kernel.cubinBytes);
      if (status.ok())
        status = checkGemmLaunch(set, kernel);
      if (!status.ok())
        return status;
      set.gemm.push_back(std::move(kernel));
    }
    set.selected[{key.m, key.n, key.k, key.mode}] = slot->second;
  }
  for (const auto &[key, index] : owner)
    if (!whitelistKeys.count(key))
      return failure(MOSS_ERROR_MANIFEST,
                     where + "gemm kernel " +
                         quoted(manifest.gemmKernels[index].name) +
                         " serves key " + quoted(key) + " that whitelist " +
                         set.whitelistPath + " does not name");
  return success();
}

} // namespace

const GemmKernel *KernelSet::find(int64_t m, int64_t n, int64_t k,
                                  int ep) const {
  auto it = selected.find({m, n, k, ep});
  return it == selected.end() ? nullptr : &gemm[it->second];
}

Status loadKernelSet(const char *kernelsDir, const char *whitelistPath,
                     KernelSet &out) {
  KernelSet set;
  if (!kernelsDir || !*kernelsDir) {
    out = std::move(set);
    return success(); // Fallback only: the whitelist has nothing to select.
  }
  set.kernelsDir = kernelsDir;
  struct stat info;
  if (stat(kernelsDir, &info) != 0) {
    int error = errno;
    return failure(MOSS_ERROR_MANIFEST, "kernels dir " +
                                            quoted(set.kernelsDir) + ": " +
                                            std::strerror(error));
  }
  if (!S_ISDIR(info.st_mode))
    return failure(MOSS_ERROR_MANIFEST, "kernels dir " +
                                            quoted(set.kernelsDir) +
                                            " is not a directory");
  set.manifestPath = set.kernelsDir + "/" + config::kManifestFileName;
  config::Manifest manifest;
  std::string err;
  if (!config::readManifest(set.kernelsDir, manifest, err))
    return failure(MOSS_ERROR_MANIFEST, err);
  if (manifest.chip != kSupportedChip)
    return failure(MOSS_ERROR_MANIFEST,
                   set.manifestPath + ": chip " + quoted(manifest.chip) +
                       " is not supported: this runtime runs " +
                       kSupportedChip + " kernels (compute capability 9.0)");
  set.chip = manifest.chip;

  if (manifest.attentionKernels.size() > 1)
    return failure(MOSS_ERROR_MANIFEST,
                   set.manifestPath + ": \"attention_kernels\" lists " +
                       std::to_string(manifest.attentionKernels.size()) +
                       " kernels; this runtime knows one (" +
                       config::kAttentionKernelName + ")");
  for (size_t i = 0; i < manifest.attentionKernels.size(); ++i) {
    AttentionKernel kernel;
    kernel.record = manifest.attentionKernels[i];
    Status status = checkAttentionRecord(set, kernel);
    if (status.ok())
      status = readCubin(set, "attention kernel " + quoted(kernel.record.name),
                         kernel.record.chip, kernel.record.cubin,
                         kernel.record.cubinSha256, kernel.cubinPath,
                         kernel.cubinBytes);
    if (!status.ok())
      return status;
    set.attention.push_back(std::move(kernel));
  }

  if (whitelistPath && *whitelistPath) {
    set.whitelistPath = whitelistPath;
  } else if (const char *env = std::getenv("MOSS_CODEC_GEMM_CONFIG")) {
    set.whitelistPath = env;
  }
  if (!set.whitelistPath.empty()) {
    config::Whitelist whitelist;
    if (!config::Whitelist::load(set.whitelistPath, whitelist, err))
      return failure(MOSS_ERROR_MANIFEST, "whitelist: " + err);
    Status status = checkCacheKey(set, manifest, whitelist);
    if (status.ok())
      status = selectGemmKernels(set, manifest, whitelist);
    if (!status.ok())
      return status;
  }
  out = std::move(set);
  return success();
}

} // namespace moss::runtime
