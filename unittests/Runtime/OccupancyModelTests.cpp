//===- OccupancyModelTests.cpp - The occupancy model against the driver ---===//
//
// moss-bench reports each launch's CTAs an SM holds from the manifest's
// ptxas report and moss/Config/Occupancy.h. Without a GPU, the model must
// agree with the CUDA toolkit's own calculator (cuda_occupancy.h) for an
// H200's limits over the space of launches. With one, the driver answers
// for every generated kernel: its registers and static shared memory must be
// the manifest's, and cudaOccupancyMaxActiveBlocksPerMultiprocessor must give
// the model's count for the launches the runtime makes.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Occupancy.h"
#include "moss/Support/CudaSmLimits.h"

#include <cuda_occupancy.h>

#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <tuple>

using namespace moss::runtime::test;
namespace config = moss::config;

namespace {

TEST(OccupancyModelCpu, MatchesTheToolkitsCalculatorForAnH200) {
  // An H200 as cudaGetDeviceProperties reports it (sm_90, 132 SMs).
  cudaOccDeviceProp h200;
  h200.computeMajor = 9;
  h200.computeMinor = 0;
  h200.maxThreadsPerBlock = 1024;
  h200.maxThreadsPerMultiprocessor = 2048;
  h200.regsPerBlock = 65536;
  h200.regsPerMultiprocessor = 65536;
  h200.warpSize = 32;
  h200.sharedMemPerBlock = 49152;
  h200.sharedMemPerMultiprocessor = 233472;
  h200.numSms = 132;
  h200.sharedMemPerBlockOptin = 232448;
  h200.reservedSharedMemPerBlock = 1024;
  cudaOccDeviceState state; // default carveout, as the runtime leaves it
  int compared = 0;
  std::set<int> seen;
  for (int registers = 16; registers <= 255; registers += 7)
    for (int threads = 32; threads <= 1024; threads += 96)
      for (int shared :
           {0, 1, 16384, 40960, 77841, 115712, 115713, 188432, 232448}) {
        // A function with `registers` and the opt-in to `shared` dynamic
        // bytes (the runtime sets the attribute to the launch's size).
        cudaOccFuncAttributes function;
        function.maxThreadsPerBlock = 1024;
        function.numRegs = registers;
        function.sharedSizeBytes = 0;
        function.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        function.maxDynamicSharedSizeBytes = size_t(shared);
        cudaOccResult result;
        ASSERT_EQ(
            cudaOccMaxActiveBlocksPerMultiprocessor(
                &result, &h200, &function, &state, threads, size_t(shared)),
            CUDA_OCC_SUCCESS);
        EXPECT_EQ(result.activeBlocksPerMultiprocessor,
                  config::residentCtasPerSm(registers, threads, shared))
            << registers << " registers, " << threads << " threads, " << shared
            << " bytes";
        seen.insert(result.activeBlocksPerMultiprocessor);
        ++compared;
      }
  EXPECT_GT(compared, 3000);
  // The space reaches every limit: nothing fits, one, a few, the 32 slots.
  EXPECT_TRUE(seen.count(0) && seen.count(1) && seen.count(3) &&
              seen.count(32));
}

/// A cubin loaded as a CUDA library; its kernels are cudaKernel_t handles
/// that the runtime API's function queries accept.
class LoadedCubin {
public:
  explicit LoadedCubin(const std::string &path) {
    std::string bytes, err;
    if (!config::readFile(path, bytes, err)) {
      ADD_FAILURE() << err;
      return;
    }
    cudaError_t loaded = cudaLibraryLoadData(&library, bytes.data(), nullptr,
                                             nullptr, 0, nullptr, nullptr, 0);
    if (loaded != cudaSuccess)
      ADD_FAILURE() << path << ": " << cudaGetErrorString(loaded);
  }
  ~LoadedCubin() {
    if (library)
      cudaLibraryUnload(library);
  }
  LoadedCubin(const LoadedCubin &) = delete;
  LoadedCubin &operator=(const LoadedCubin &) = delete;
  const void *kernel(const std::string &symbol) const {
    cudaKernel_t k = nullptr;
    if (!library ||
        cudaLibraryGetKernel(&k, library, symbol.c_str()) != cudaSuccess) {
      ADD_FAILURE() << "no kernel " << symbol;
      return nullptr;
    }
    return reinterpret_cast<const void *>(k);
  }

private:
  cudaLibrary_t library = nullptr;
};

/// The function's registers and static shared memory are the manifest's,
/// and the driver holds as many CTAs of (threads, dynamic bytes) an SM as
/// the model says. Returns the driver's count; nullopt when the driver does
/// not answer the per-SM query for a kernel with a compiled-in cluster
/// shape (split-K GEMMs), whose per-SM count the model still gives.
std::optional<int> checkLaunch(const void *kernel,
                               const config::KernelFunctionRecord &record,
                               int64_t threads, int64_t dynamicBytes,
                               const config::SmLimits &limits) {
  cudaFuncAttributes attributes{};
  EXPECT_EQ(cudaFuncGetAttributes(&attributes, kernel), cudaSuccess);
  EXPECT_EQ(attributes.numRegs, record.resources.registers) << record.symbol;
  EXPECT_EQ(int64_t(attributes.sharedSizeBytes), record.resources.sharedBytes)
      << record.symbol;
  EXPECT_EQ(cudaFuncSetAttribute(kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(dynamicBytes)),
            cudaSuccess);
  int driver = -1;
  cudaError_t query = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &driver, kernel, int(threads), size_t(dynamicBytes));
  const bool clustered = attributes.requiredClusterWidth > 1 ||
                         attributes.requiredClusterHeight > 1 ||
                         attributes.requiredClusterDepth > 1;
  if (query != cudaSuccess && clustered) {
    cudaGetLastError();
    return std::nullopt;
  }
  EXPECT_EQ(query, cudaSuccess)
      << record.symbol << ": " << cudaGetErrorString(query);
  EXPECT_EQ(driver, config::residentCtasPerSm(
                        record.resources.registers, threads,
                        record.resources.sharedBytes + dynamicBytes, limits))
      << record.symbol << " with " << threads << " threads and " << dynamicBytes
      << " bytes of dynamic shared memory";
  return driver;
}

class OccupancyModel : public ::testing::Test {
protected:
  void SetUp() override {
    dir = testKernelsDir();
    MOSS_REQUIRE_GENERATED_KERNELS(dir);
    std::string err;
    ASSERT_TRUE(config::readManifest(dir, manifest, err)) << err;
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    limits = moss::smLimitsOf(prop);
  }
  std::string dir;
  config::Manifest manifest;
  config::SmLimits limits;
};

TEST_F(OccupancyModel, MatchesTheDriverForEveryGemmKernel) {
  ASSERT_FALSE(manifest.gemmKernels.empty());
  int answered = 0, unclustered = 0;
  for (const config::GemmKernelRecord &record : manifest.gemmKernels) {
    ASSERT_EQ(record.functions.size(), 1u);
    config::GemmLaunch launch;
    std::string err;
    ASSERT_TRUE(deriveGemmLaunch(record.n, record.k, record.mode, record.tile,
                                 launch, err))
        << err;
    LoadedCubin cubin(dir + "/" + record.cubin);
    const config::KernelFunctionRecord &function = record.functions.front();
    const void *kernel = cubin.kernel(function.symbol);
    ASSERT_NE(kernel, nullptr);
    std::optional<int> count = checkLaunch(kernel, function, launch.threads,
                                           launch.sharedBytes, limits);
    unclustered += record.tile.split == 1;
    if (count) {
      ++answered;
      EXPECT_GT(*count, 0) << function.symbol;
    }
  }
  // Split 1 kernels have no cluster shape: the driver answers for them.
  EXPECT_GE(answered, unclustered);
  std::printf("occupancy of %d of %zu GEMM kernels checked against the "
              "driver\n",
              answered, manifest.gemmKernels.size());
}

TEST_F(OccupancyModel, MatchesTheDriverForTheAttentionLaunches) {
  ASSERT_EQ(manifest.attentionKernels.size(), 1u);
  const config::AttentionKernelRecord &record =
      manifest.attentionKernels.front();
  LoadedCubin cubin(dir + "/" + record.cubin);
  // Every distinct (function, threads, shared bytes) of the decoder's cases.
  std::set<std::tuple<std::string, int64_t, int64_t>> launches;
  const int64_t heads[3][2] = {{20, 125}, {12, 250}, {12, 400}};
  for (const auto &hs : heads)
    for (int64_t t : {1, 2, 8, 15, 32, 60, 240, 480})
      for (int64_t b : {1, 4, 16, 64}) {
        config::AttentionLaunch launch;
        std::string err;
        ASSERT_TRUE(
            deriveAttentionLaunch(b, hs[0], t, hs[1], 0, 0, launch, err))
            << err;
        launches.insert(
            {config::attentionKernelSymbol(
                 {launch.kvGroups, launch.splits > 1, launch.tmaCopies}),
             launch.threads, launch.sharedBytes});
      }
  std::set<int> counts;
  for (const auto &[symbol, threads, bytes] : launches) {
    const config::KernelFunctionRecord *function = nullptr;
    for (const auto &f : record.functions)
      if (f.symbol == symbol)
        function = &f;
    ASSERT_NE(function, nullptr) << symbol;
    const void *kernel = cubin.kernel(symbol);
    ASSERT_NE(kernel, nullptr);
    // Attention functions take their cluster shape at launch (splits), so
    // the driver answers for every one.
    std::optional<int> count =
        checkLaunch(kernel, *function, threads, bytes, limits);
    ASSERT_TRUE(count.has_value()) << symbol;
    counts.insert(*count);
  }
  EXPECT_GE(launches.size(), 5u);
  // The launches differ in what bounds them: more than one count.
  EXPECT_GE(counts.size(), 2u);
  EXPECT_EQ(counts.count(0), 0u);
}

} // namespace
