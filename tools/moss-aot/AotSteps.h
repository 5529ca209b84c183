//===- AotSteps.h - Steps shared by the whitelist and candidate builds -*- C++
//-*-===//
//
// The pieces of an AOT build that do not depend on where the kernel list comes
// from: checking the toolkit and naming the pipeline (which enters the cache
// key), compiling one GEMM kernel group to PTX and a cubin with its manifest
// record, and moving staged files into place.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TOOLS_MOSSAOT_AOTSTEPS_H
#define MOSS_TOOLS_MOSSAOT_AOTSTEPS_H

#include "moss/Config/Manifest.h"
#include "moss/Config/Whitelist.h"
#include "moss/Pipeline/MossToCubin.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace moss::aot {

/// Toolkit, pipeline options and the pipeline string of one build.
struct BuildEnv {
  MossToCubinOptions pipelineOptions;
  std::string ptxas;
  std::string chip;
  /// Pipeline description + ptxas flags + moss-aot's own digest: the
  /// manifest's "pipeline" and an input of the cache key.
  std::string pipeline;
};

/// What precedes moss-aot's digest (16 hex digits) at the end of a pipeline
/// string, so that --check can tell a rebuilt executable from other steps.
constexpr const char *kExecutableDigestMarker = " | moss-aot sha256 ";

/// Checks ptxas and libdevice under `cudaPath`, hashes this executable and
/// fills `env`. Errors name the missing file.
bool prepareBuildEnv(const std::string &chip, const std::string &cudaPath,
                     BuildEnv &env, std::string &err);

/// A fresh context with the moss dialects, single-threaded (ptxas runs beside
/// it; keep the cores free).
std::unique_ptr<mlir::MLIRContext> makeBuildContext();

/// Whitelist entries that share N, K, mode and tile share one kernel.
struct KernelGroup {
  int64_t n = 0, k = 0;
  int mode = 0;
  config::GemmTile tile;
  std::vector<std::string> keys;
};

/// Collects keys into one group per distinct (N, K, mode, tile), in the
/// order each group's first key came.
class KernelGrouper {
public:
  void add(const config::GemmKey &key, const config::GemmTile &tile,
           const std::string &keyText);
  std::vector<KernelGroup> take() { return std::move(groups); }

private:
  std::vector<KernelGroup> groups;
  std::map<
      std::tuple<int64_t, int64_t, int, int64_t, int64_t, int64_t, int64_t>,
      size_t>
      index;
};

/// Groups entries in file order of their first key.
std::vector<KernelGroup> groupEntries(const config::Whitelist &whitelist);

/// Whitelist JSON of `entries` ("key" -> tile), one key a line, in order.
std::string whitelistText(
    const std::vector<std::pair<std::string, config::GemmTile>> &entries);

/// The whitelist of one key and tile: what a candidate kernel is compiled
/// with (moss-select-tiles needs a whitelist to read the tile from).
bool singleKeyWhitelist(const std::string &key, const config::GemmTile &tile,
                        config::Whitelist &out, std::string &err);

/// A compiled kernel waiting in the staging folder.
struct StagedKernel {
  config::GemmKernelRecord record; ///< cubin/ptx: final (content) names.
  std::string stagedCubin, stagedPtx;
};

enum class KernelBuildResult {
  Built,
  Spills, ///< ptxas spilled registers: the tile cannot be used (err says why).
  Failed,
};

/// Compiles `group` into `staging` and describes it in `out`: its first key's
/// moss.linear through moss-select-tiles on `whitelist` (which must give it
/// the group's tile), moss-to-cubin and ptxas -v. A kernel that spills is
/// reported as Spills, never built.
KernelBuildResult buildGemmKernel(mlir::MLIRContext &ctx, const BuildEnv &env,
                                  const config::Whitelist &whitelist,
                                  const std::string &staging,
                                  const KernelGroup &group, StagedKernel &out,
                                  std::string &err);

/// Builds the attention kernel into `staging` (every whitelist build has it),
/// through the same passes.
bool buildAttentionKernel(mlir::MLIRContext &ctx, const BuildEnv &env,
                          const config::Whitelist &whitelist,
                          const std::string &staging,
                          config::AttentionKernelRecord &record,
                          std::string &ptxPath, std::string &cubinPath,
                          std::string &err);

/// A manifest header for kernels built from `whitelistBytes` in `env`.
config::Manifest newManifest(const BuildEnv &env,
                             std::string_view whitelistBytes);

std::string joinPath(llvm::StringRef dir, llvm::StringRef name);

/// "keys K...; T threads, R regs, S B dynamic smem, 0 B spill, C CTAs an SM
/// (limit)": a built GEMM kernel's line in the build log (occupancy by
/// Config/Occupancy.h for an sm_90 SM).
std::string describeGemmKernel(const KernelGroup &group,
                               const config::KernelFunctionRecord &main);

/// One "note: ..." line for each key of `record` whose grid takes more than
/// one wave on an H100 SXM / H200 (132 SMs): a tile one CTA past a wave
/// runs a second one.
std::string waveNotes(const config::GemmKernelRecord &record);

/// Renames `from` to `to` (one file system).
bool moveInto(const std::string &from, const std::string &to, std::string &err);

/// The staging folder of one build, "<outDir>/.staging-<pid>": kernels are
/// built there and moved into place only once the build is complete.
class StagingDir {
public:
  /// Failures are reported in `err`.
  explicit StagingDir(std::string &err) : err(err) {}
  /// Creates `outDir` (with its parents) and a fresh, empty staging folder
  /// in it. Errors name the folder that could not be made.
  bool make(const std::string &outDir);
  const std::string &path() const { return dir; }
  /// Gives up the build: removes the staging folder with what is in it, sets
  /// the error to `message` and returns false.
  bool fail(std::string message);
  /// The build is complete: removes the staging folder.
  void remove() const;

private:
  std::string &err;
  std::string dir;
};

} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_AOTSTEPS_H
