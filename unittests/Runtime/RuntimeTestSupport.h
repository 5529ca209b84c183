//===- RuntimeTestSupport.h - Shared helpers of the runtime tests -*- C++
//-*-===//
//
// Scratch kernels dirs with hand-made manifests (CPU tests), GPU detection
// (GPU tests GTEST_SKIP without one), bf16 host data and the FP64 reference
// of moss.linear with the rounding contract.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_UNITTESTS_RUNTIME_RUNTIMETESTSUPPORT_H
#define MOSS_UNITTESTS_RUNTIME_RUNTIMETESTSUPPORT_H

#include "moss/Config/Manifest.h"
#include "moss/Config/Whitelist.h"
#include "moss/Runtime/moss_runtime.h"
#include "moss/Support/GemmCall.h"
#include "moss/Support/HostBf16.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace moss::runtime::test {

//===--- Files ------------------------------------------------------------===//

class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  std::string file(const std::string &name) const { return path + "/" + name; }
  std::string path;
};

void writeText(const std::string &path, const std::string &bytes);

/// A GEMM manifest record as moss-aot would write it for `keys` (all with
/// the same n, k, mode), launch shape from deriveGemmLaunch, pointing at
/// `cubinName` with digest `cubinSha`.
config::GemmKernelRecord makeGemmRecord(const std::vector<std::string> &keys,
                                        int64_t n, int64_t k, int mode,
                                        const config::GemmTile &tile,
                                        const std::string &cubinName,
                                        const std::string &cubinSha);

/// A kernels dir whose manifest was built from `whitelistJson` (cache key
/// and whitelist digest match it), one record per (n, k, mode, tile), with
/// fake cubins of the given bytes. Files: manifest.json, <name>.cubin,
/// whitelist.json.
struct FakeKernelsDir {
  ScratchDir dir;
  std::string whitelistPath;
  config::Manifest manifest;

  /// Builds and writes everything; returns false with a gtest failure.
  bool build(const std::string &whitelistJson,
             const std::string &cubinBytes = "not a real cubin");
  bool rewriteManifest();
};

//===--- GPU --------------------------------------------------------------===//

/// True when a CUDA device is usable; else `why` says why not.
bool gpuAvailable(std::string &why);
/// True when device 0 is compute capability 9.0 (can run sm_90a cubins).
bool deviceIsSm90(std::string &why);

/// gtest without gmock: `haystack` must contain `needle`.
#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "expected \"" << (haystack) << "\"\nto contain \"" << (needle)        \
      << "\""

#define MOSS_REQUIRE_GPU()                                                     \
  do {                                                                         \
    std::string why_;                                                          \
    if (!::moss::runtime::test::gpuAvailable(why_))                            \
      GTEST_SKIP() << "needs a CUDA GPU: " << why_;                            \
  } while (0)

/// Kernels dir of the tests: $MOSS_TEST_KERNELS_DIR, else
/// <build>/kernels_generated, else <source>/kernels_generated.
std::string testKernelsDir();
/// $MOSS_TEST_WHITELIST, else <source>/configs/h200-example.json.
std::string testWhitelist();
/// Empty when dir has a manifest.json, else the reason it can't be used.
std::string whyNoManifest(const std::string &dir);
/// Empty when the generated kernels of `dir` can run here: a GPU of compute
/// capability 9.0 and a manifest; else why not.
std::string whyNoGeneratedKernels(const std::string &dir);

/// Empty when whyNoGeneratedKernels is and the manifest lists an attention
/// kernel; else why not (an unreadable manifest included).
std::string whyNoAttentionKernel(const std::string &dir);

/// GTEST_SKIP with `why` (a reason, empty when the test can run).
#define MOSS_SKIP_FOR(why)                                                     \
  do {                                                                         \
    std::string why_ = (why);                                                  \
    if (!why_.empty())                                                         \
      GTEST_SKIP() << why_;                                                    \
  } while (0)
/// Skips unless the kernels of `dir` can run here.
#define MOSS_REQUIRE_GENERATED_KERNELS(dir)                                    \
  MOSS_SKIP_FOR(::moss::runtime::test::whyNoGeneratedKernels(dir))
/// Skips unless `dir`'s attention kernel can run here.
#define MOSS_REQUIRE_ATTENTION_KERNEL(dir)                                     \
  MOSS_SKIP_FOR(::moss::runtime::test::whyNoAttentionKernel(dir))

class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  char *data() const { return static_cast<char *>(pointer); }
  size_t size() const { return bytes; }

private:
  void *pointer = nullptr;
  size_t bytes = 0;
};

/// The work `enqueue` puts on `stream`, captured into a CUDA graph and
/// instantiated; both are destroyed with the object. capture() fails the
/// test fatally when a step fails (call it under ASSERT_NO_FATAL_FAILURE).
class CapturedGraph {
public:
  CapturedGraph() = default;
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph &) = delete;
  CapturedGraph &operator=(const CapturedGraph &) = delete;
  void capture(cudaStream_t stream, const std::function<void()> &enqueue,
               cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal);
  cudaError_t launch(cudaStream_t stream) const {
    return cudaGraphLaunch(exec, stream);
  }

private:
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

void upload(void *device, const std::vector<uint16_t> &host);
std::vector<uint16_t> download(const void *device, size_t elements);
/// Fills `elements` bf16 values at `device` with NaN (0x7FC0).
void poison(void *device, size_t elements);

//===--- bf16 and the reference ------------------------------------------===//

using moss::host::fromBf16;
using moss::host::toBf16;
inline double roundBf16(double v) { return fromBf16(toBf16(v)); }

/// Uniform bf16 values in [lo, hi).
using moss::host::randomBf16;

/// acc[m][n] = sum_k x[m,k] w[n,k] in FP64 (multi-threaded).
std::vector<double> referenceAccumulators(const std::vector<uint16_t> &x,
                                          const std::vector<uint16_t> &w,
                                          int64_t m, int64_t n, int64_t k);

using moss::host::callGemm;
using moss::host::GemmOperands;
using moss::host::gemmSelected;
using moss::host::isPlainGemmMode;
using moss::host::kLayerNormEps;
using moss::host::layerNormReference;

/// The FP64 reference of `key`'s mode: the prologue, the product, the
/// epilogue with the contract's rounding.
std::vector<double> referenceOfKey(const config::GemmKey &key,
                                   const std::vector<uint16_t> &x,
                                   const std::vector<uint16_t> &w,
                                   const std::vector<uint16_t> &scale,
                                   const std::vector<uint16_t> &residual,
                                   const std::vector<uint16_t> &gamma,
                                   const std::vector<uint16_t> &beta);

/// The rounding contract applied to FP64 accumulators (`mode` an epilogue:
/// 0, 1 or 2).
std::vector<double> referenceOutput(const std::vector<double> &acc, int mode,
                                    const std::vector<uint16_t> &scale,
                                    const std::vector<uint16_t> &residual,
                                    int64_t m, int64_t n);

/// ||got - ref|| / ||ref|| over all elements; +inf when got has a NaN/Inf.
using moss::host::relativeL2;
double relativeL2(const std::vector<uint16_t> &got,
                  const std::vector<uint16_t> &ref);
/// Number of NaN elements (unwritten outputs keep the NaN poison).
size_t countNaN(const std::vector<uint16_t> &values);

constexpr double kRelativeL2Tolerance = 0.004;

/// RAII runtime handle; fails the test when create fails.
struct RuntimeHandle {
  moss_runtime_t rt = nullptr;
  ~RuntimeHandle() { moss_runtime_destroy(rt); }
};

/// The fixture of the tests of generated kernels: the test kernels dir with
/// the whitelist it was built from (testKernelsDir, testWhitelist), a
/// runtime on them, a fallback-only runtime beside it and a stream; skips
/// where there are no kernels or no sm_90 GPU.
class GeneratedAndFallback : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  std::string dir;
  config::Whitelist whitelist;
  RuntimeHandle generated, fallback;
  cudaStream_t stream = nullptr;
};

/// Environment variable `name` set to `value` (unset for nullptr) for the
/// object's lifetime, then restored.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  std::string previous;
  bool hadPrevious = false;
};

/// A runtime for `dir` and testWhitelist() created while environment
/// variable `name` = `value` (restored afterwards).
moss_status_t createWithEnv(const std::string &dir, const char *name,
                            const std::string &value, RuntimeHandle &out);

} // namespace moss::runtime::test

#endif // MOSS_UNITTESTS_RUNTIME_RUNTIMETESTSUPPORT_H
