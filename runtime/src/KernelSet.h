//===- KernelSet.h - Host-side checked view of kernels_generated/ -*- C++
//-*-===//
//
// Everything create() can check without a GPU: the manifest, the whitelist and
// its cache key, every cubin's sha256 and the launch shape of each generated
// GEMM against moss::config::deriveGemmLaunch. Built once, then read-only.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_KERNELSET_H
#define MOSS_RUNTIME_KERNELSET_H

#include "Status.h"

#include "moss/Config/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace moss::runtime {

/// The only chip this runtime launches kernels for, and its compute
/// capability.
using config::kSupportedChip;
constexpr int kSupportedCcMajor = 9, kSupportedCcMinor = 0;

struct GemmKernel {
  config::GemmKernelRecord record;
  std::string cubinPath;
  std::string cubinBytes;
  config::GemmLaunch launch; ///< deriveGemmLaunch of the record's tile.
};

struct AttentionKernel {
  config::AttentionKernelRecord record;
  std::string cubinPath;
  std::string cubinBytes;
  /// record.functions[g - 1] is the function for g key groups (checked).
};

struct KernelSet {
  std::string kernelsDir;    ///< "" when the runtime is fallback only.
  std::string manifestPath;  ///< "" without kernelsDir.
  std::string whitelistPath; ///< "" when generated GEMMs are not used.
  std::string chip;
  std::vector<GemmKernel> gemm; ///< Only kernels serving whitelist keys.
  /// At most one: the D = 64 kernel whose ABI matches this runtime.
  std::vector<AttentionKernel> attention;
  /// (m, n, k, epilogue) -> index into gemm.
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, size_t> selected;

  const GemmKernel *find(int64_t m, int64_t n, int64_t k, int ep) const;
  bool hasKernels() const { return !gemm.empty() || !attention.empty(); }
};

/// Reads and checks kernelsDir/manifest.json, the whitelist (whitelistPath,
/// else $MOSS_CODEC_GEMM_CONFIG) and the cubins, without touching CUDA.
Status loadKernelSet(const char *kernelsDir, const char *whitelistPath,
                     KernelSet &out);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_KERNELSET_H
