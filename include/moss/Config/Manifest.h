//===- Manifest.h - Kernel manifest and cache key --------------*- C++ -*-===//
//
// Structs mirroring the manifest of docs/kernel-abi.md, a strict reader, an
// atomic writer and the cache key. The API never throws: failures return false
// with a message naming the file, the kernel and the field.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_MANIFEST_H
#define MOSS_CONFIG_MANIFEST_H

#include "moss/Config/GemmLaunch.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moss::config {

/// 6: GEMM kernels take row_live after residual (layerscale_residual zeroes
/// the rows it marks as padding); 5 had no such argument, so a kernel of a
/// format-5 manifest would read every later argument one slot off.
/// 4: GEMM kernels take prefetch_w and wait on griddepcontrol before
/// reading x, so the runtime may launch them as programmatic dependents (3
/// had no wait: a programmatic launch could read x before the previous
/// kernel wrote it).
constexpr int64_t kManifestFormatVersion = 6;
constexpr const char *kManifestFileName = "manifest.json";
/// The one chip kernels are built for and the runtime loads: the kernels use
/// sm_90a's warpgroup MMAs, TMA and thread-block clusters.
constexpr const char *kSupportedChip = "sm_90a";

/// Parameter names of the generated GEMM functions of `mode`, in ABI order:
/// x, w, scale, residual, row_live, out, m, prefetch_w, and for the LayerNorm
/// modes gamma, beta, eps after them, and for layernorm_rope_cache then
/// positions, live, k_cache, v_cache, slot_positions, length, capacity
/// (docs/kernel-abi.md).
const std::vector<std::string> &gemmKernelArgNames(int mode);

/// gridDim = (x, ceil(m / yPerM), z).
struct KernelGrid {
  int64_t x = 1, yPerM = 1, z = 1;
};

/// What ptxas reports for one function.
struct KernelResources {
  int64_t registers = 0;
  int64_t sharedBytes = 0;
  int64_t stackBytes = 0;
  int64_t spillStoreBytes = 0;
  int64_t spillLoadBytes = 0;
};

struct KernelFunctionRecord {
  std::string symbol; ///< Kernel entry in the cubin (a C identifier).
  std::string role;   ///< GEMM: "main"; attention: free-form.
  KernelGrid grid;
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t dynamicSharedBytes = 0;
  KernelResources resources;
};

struct GemmKernelRecord {
  std::string name;              ///< Plain file-name stem.
  std::vector<std::string> keys; ///< Whitelist keys "M,N,K,mode" served.
  int64_t n = 0, k = 0;
  int mode = 0; ///< The keys' mode (GemmMode.h).
  GemmTile tile;
  std::string chip;
  std::string cubin; ///< Plain file name inside the manifest's directory.
  std::string ptx;   ///< Plain file name inside the manifest's directory.
  std::string cubinSha256;
  std::vector<std::string> args = gemmKernelArgNames(0); ///< Of `mode`.
  std::vector<KernelFunctionRecord> functions;           ///< One: "main".
};

/// Attention kernels share the record shape; their shape parameters are
/// free-form integers (e.g. heads, head_dim).
struct AttentionKernelRecord {
  std::string name;
  std::string chip;
  std::string cubin;
  std::string ptx;
  std::string cubinSha256;
  std::vector<std::string> args;
  std::map<std::string, int64_t> params;
  std::vector<KernelFunctionRecord> functions;
};

struct Manifest {
  int64_t formatVersion = kManifestFormatVersion;
  std::string mossVersion;
  std::string chip;
  std::string pipeline;
  std::string whitelistSha256;
  std::string cacheKey;
  std::vector<GemmKernelRecord> gemmKernels;
  std::vector<AttentionKernelRecord> attentionKernels;
};

/// Parses and strictly validates manifest JSON: every required field present
/// with the right type and range, file names plain (no '/', no ".."), digests
/// 64 lower-case hex, format_version == kManifestFormatVersion, GEMM keys
/// consistent with n/k/epilogue, tiles legal, exactly one GEMM function, role
/// "main". Unknown fields are ignored. Errors read
/// "<file>: gemm_kernels[0] \"<name>\": field \"functions[0].grid.x\": ...".
bool parseManifest(std::string_view bytes,
                   const std::string &fileNameForMessages, Manifest &out,
                   std::string &err);

/// "<dir>/manifest.json" (just the name for an empty dir).
std::string manifestPath(const std::string &dir);

/// Reads and validates "<dir>/manifest.json".
bool readManifest(const std::string &dir, Manifest &out, std::string &err);

/// The kernel files (every record's "cubin" and "ptx") that
/// "<dir>/manifest.json" names when it is a manifest of an earlier format
/// (format_version 1 .. kManifestFormatVersion - 1, a moss_version string,
/// plain file names): what an older moss-aot wrote, which a newer one may
/// replace. False with `err` for anything else.
/// (lib/Config/EarlierManifest.cpp)
bool readEarlierManifestFiles(const std::string &dir,
                              std::vector<std::string> &files,
                              std::string &err);

/// Pretty-printed JSON (fields in the order of docs/kernel-abi.md).
std::string serializeManifest(const Manifest &manifest);

/// Validates `manifest` as readManifest would, then writes
/// "<dir>/manifest.json" atomically (manifest.json.tmp.<pid>, fsync, rename).
bool writeManifestAtomic(const std::string &dir, const Manifest &manifest,
                         std::string &err);

/// sha256(whitelist || 0x00 || mossVersion || 0x00 || chip || 0x00 ||
/// pipeline) as lower-case hex.
std::string computeCacheKey(std::string_view whitelistBytes,
                            std::string_view mossVersion, std::string_view chip,
                            std::string_view pipeline);

/// True for a non-empty name without '/', '\\', NUL or "..", other than ".".
bool isPlainFileName(std::string_view name);

/// The GEMM kernel of `manifest` whose keys include `key` ("M,N,K,mode"),
/// or null.
const GemmKernelRecord *gemmKernelServing(const Manifest &manifest,
                                          std::string_view key);

} // namespace moss::config

#endif // MOSS_CONFIG_MANIFEST_H
