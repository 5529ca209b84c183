//===- RuntimeTestSupport.cpp - Shared helpers of the runtime tests -------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"
#include "moss/Version.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

namespace moss::runtime::test {

ScratchDir::ScratchDir() {
  std::string pattern = ::testing::TempDir() + "moss-runtime-XXXXXX";
  if (char *made = ::mkdtemp(pattern.data()))
    path = made;
  else
    ADD_FAILURE() << "mkdtemp failed for " << pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path.empty())
    std::filesystem::remove_all(path, ignored);
}

void writeText(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file)
    ADD_FAILURE() << "cannot write " << path;
}

config::GemmKernelRecord makeGemmRecord(const std::vector<std::string> &keys,
                                        int64_t n, int64_t k, int mode,
                                        const config::GemmTile &tile,
                                        const std::string &cubinName,
                                        const std::string &cubinSha) {
  config::GemmLaunch launch;
  std::string err;
  EXPECT_TRUE(config::deriveGemmLaunch(n, k, mode, tile, launch, err)) << err;
  config::GemmKernelRecord rec;
  rec.name = cubinName.substr(0, cubinName.rfind('.'));
  rec.keys = keys;
  rec.n = n;
  rec.k = k;
  rec.mode = mode;
  rec.args = config::gemmKernelArgNames(mode);
  rec.tile = tile;
  rec.chip = "sm_90a";
  rec.cubin = cubinName;
  rec.ptx = rec.name + ".ptx";
  rec.cubinSha256 = cubinSha;
  config::KernelFunctionRecord main;
  main.symbol = rec.name;
  main.role = "main";
  main.grid = {launch.gridX, launch.gridYPerM, launch.gridZ};
  main.block = {launch.threads, 1, 1};
  main.dynamicSharedBytes = launch.sharedBytes;
  rec.functions.push_back(main);
  return rec;
}

bool FakeKernelsDir::build(const std::string &whitelistJson,
                           const std::string &cubinBytes) {
  whitelistPath = dir.file("whitelist.json");
  writeText(whitelistPath, whitelistJson);
  config::Whitelist whitelist;
  std::string err;
  if (!config::Whitelist::parse(whitelistJson, whitelistPath, whitelist, err)) {
    ADD_FAILURE() << err;
    return false;
  }
  manifest = config::Manifest();
  manifest.mossVersion = MOSS_VERSION;
  manifest.chip = "sm_90a";
  manifest.pipeline = "test-pipeline";
  manifest.whitelistSha256 = config::sha256Hex(whitelistJson);
  manifest.cacheKey = config::computeCacheKey(whitelistJson, MOSS_VERSION,
                                              manifest.chip, manifest.pipeline);
  using Group =
      std::tuple<int64_t, int64_t, int, int64_t, int64_t, int64_t, int64_t>;
  std::map<Group, std::vector<std::string>> groups;
  for (const config::WhitelistEntry &e : whitelist.entries())
    groups[{e.key.n, e.key.k, e.key.mode, e.tile.bm, e.tile.bn, e.tile.bk,
            e.tile.split}]
        .push_back(e.keyText);
  for (const auto &[group, keys] : groups) {
    auto [n, k, mode, bm, bn, bk, split] = group;
    std::string name = "linear_n" + std::to_string(n) + "_k" +
                       std::to_string(k) + "_m" + std::to_string(mode) + "_bm" +
                       std::to_string(bm) + "_bn" + std::to_string(bn) + "_bk" +
                       std::to_string(bk) + "_s" + std::to_string(split);
    writeText(dir.file(name + ".cubin"), cubinBytes);
    writeText(dir.file(name + ".ptx"), "// fake\n");
    manifest.gemmKernels.push_back(
        makeGemmRecord(keys, n, k, mode, {bm, bn, bk, split}, name + ".cubin",
                       config::sha256Hex(cubinBytes)));
  }
  return rewriteManifest();
}

bool FakeKernelsDir::rewriteManifest() {
  std::string err;
  if (!config::writeManifestAtomic(dir.path, manifest, err)) {
    ADD_FAILURE() << err;
    return false;
  }
  return true;
}

bool gpuAvailable(std::string &why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

bool deviceIsSm90(std::string &why) {
  if (!gpuAvailable(why))
    return false;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  if (prop.major == 9 && prop.minor == 0)
    return true;
  why = std::string(prop.name) + " is compute capability " +
        std::to_string(prop.major) + "." + std::to_string(prop.minor) +
        ", the generated kernels need 9.0 (sm_90a)";
  return false;
}

std::string testKernelsDir() {
  if (const char *env = std::getenv("MOSS_TEST_KERNELS_DIR"))
    return env;
  std::string built = std::string(MOSS_TEST_BINARY_DIR) + "/kernels_generated";
  if (std::filesystem::exists(built + "/manifest.json"))
    return built;
  return std::string(MOSS_TEST_SOURCE_DIR) + "/kernels_generated";
}

std::string testWhitelist() {
  if (const char *env = std::getenv("MOSS_TEST_WHITELIST"))
    return env;
  return std::string(MOSS_TEST_SOURCE_DIR) + "/configs/h200-example.json";
}

std::string whyNoManifest(const std::string &dir) {
  if (std::filesystem::exists(dir + "/manifest.json"))
    return "";
  return "no manifest.json in " + dir +
         " (build the kernels with moss-aot or set MOSS_TEST_KERNELS_DIR)";
}

std::string whyNoGeneratedKernels(const std::string &dir) {
  std::string why;
  if (!gpuAvailable(why))
    return "needs a CUDA GPU: " + why;
  if (!deviceIsSm90(why))
    return "needs an sm_90 GPU: " + why;
  return whyNoManifest(dir);
}

std::string whyNoAttentionKernel(const std::string &dir) {
  std::string why = whyNoGeneratedKernels(dir);
  if (!why.empty())
    return why;
  config::Manifest manifest;
  std::string err;
  if (!config::readManifest(dir, manifest, err))
    return "unreadable manifest: " + err;
  if (manifest.attentionKernels.empty())
    return "no attention kernel in " + dir +
           "/manifest.json (rebuild the kernels with moss-aot)";
  return "";
}

DeviceBuffer::DeviceBuffer(size_t size) : bytes(size) {
  cudaError_t err = cudaMalloc(&pointer, std::max<size_t>(bytes, 16));
  if (err != cudaSuccess) {
    pointer = nullptr;
    ADD_FAILURE() << "cudaMalloc(" << bytes << "): " << cudaGetErrorName(err);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer)
    cudaFree(pointer);
}

CapturedGraph::~CapturedGraph() {
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
}

void CapturedGraph::capture(cudaStream_t stream,
                            const std::function<void()> &enqueue,
                            cudaStreamCaptureMode mode) {
  ASSERT_EQ(cudaStreamBeginCapture(stream, mode), cudaSuccess);
  enqueue();
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
}

void upload(void *device, const std::vector<uint16_t> &host) {
  cudaError_t err =
      cudaMemcpy(device, host.data(), host.size() * 2, cudaMemcpyHostToDevice);
  if (err != cudaSuccess)
    ADD_FAILURE() << "upload: " << cudaGetErrorName(err);
}

std::vector<uint16_t> download(const void *device, size_t elements) {
  std::vector<uint16_t> host(elements);
  cudaError_t err =
      cudaMemcpy(host.data(), device, elements * 2, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    ADD_FAILURE() << "download: " << cudaGetErrorName(err);
  return host;
}

void poison(void *device, size_t elements) {
  upload(device, std::vector<uint16_t>(elements, 0x7FC0));
}

std::vector<double> referenceAccumulators(const std::vector<uint16_t> &x,
                                          const std::vector<uint16_t> &w,
                                          int64_t m, int64_t n, int64_t k) {
  std::vector<double> xd(x.size()), wd(w.size()), acc(m * n);
  for (size_t i = 0; i < x.size(); ++i)
    xd[i] = fromBf16(x[i]);
  for (size_t i = 0; i < w.size(); ++i)
    wd[i] = fromBf16(w[i]);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t col = t; col < n; col += threads) {
        const double *wr = &wd[col * k];
        for (int64_t row = 0; row < m; ++row) {
          const double *xr = &xd[row * k];
          double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
          int64_t i = 0;
          for (; i + 4 <= k; i += 4) {
            s0 += xr[i] * wr[i];
            s1 += xr[i + 1] * wr[i + 1];
            s2 += xr[i + 2] * wr[i + 2];
            s3 += xr[i + 3] * wr[i + 3];
          }
          for (; i < k; ++i)
            s0 += xr[i] * wr[i];
          acc[row * n + col] = (s0 + s1) + (s2 + s3);
        }
      }
    });
  }
  for (std::thread &t : pool)
    t.join();
  return acc;
}

std::vector<double> referenceOutput(const std::vector<double> &acc, int mode,
                                    const std::vector<uint16_t> &scale,
                                    const std::vector<uint16_t> &residual,
                                    int64_t m, int64_t n) {
  std::vector<double> out(m * n);
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t col = 0; col < n; ++col) {
      size_t i = row * n + col;
      double v = roundBf16(acc[i]);
      if (mode == 1)
        v = roundBf16(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
      else if (mode == 2)
        v = roundBf16(roundBf16(v * fromBf16(scale[col])) +
                      fromBf16(residual[i]));
      out[i] = v;
    }
  }
  return out;
}

std::vector<double> referenceOfKey(const config::GemmKey &key,
                                   const std::vector<uint16_t> &x,
                                   const std::vector<uint16_t> &w,
                                   const std::vector<uint16_t> &scale,
                                   const std::vector<uint16_t> &residual,
                                   const std::vector<uint16_t> &gamma,
                                   const std::vector<uint16_t> &beta) {
  const config::GemmModeInfo &mode = *config::gemmModeInfo(key.mode);
  std::vector<uint16_t> normalised;
  if (mode.layerNorm)
    normalised =
        layerNormReference(x, gamma, beta, kLayerNormEps, key.m, key.k);
  return referenceOutput(referenceAccumulators(mode.layerNorm ? normalised : x,
                                               w, key.m, key.n, key.k),
                         mode.epilogue, scale, residual, key.m, key.n);
}

double relativeL2(const std::vector<uint16_t> &got,
                  const std::vector<uint16_t> &ref) {
  std::vector<double> refd(ref.size());
  for (size_t i = 0; i < ref.size(); ++i)
    refd[i] = fromBf16(ref[i]);
  return relativeL2(got, refd);
}

size_t countNaN(const std::vector<uint16_t> &values) {
  return static_cast<size_t>(
      std::count_if(values.begin(), values.end(), [](uint16_t v) {
        return (v & 0x7F80) == 0x7F80 && (v & 0x007F) != 0;
      }));
}

void GeneratedAndFallback::SetUp() {
  dir = testKernelsDir();
  MOSS_REQUIRE_GENERATED_KERNELS(dir);
  std::string err;
  ASSERT_TRUE(config::Whitelist::load(testWhitelist(), whitelist, err)) << err;
  ASSERT_EQ(
      moss_runtime_create(dir.c_str(), testWhitelist().c_str(), &generated.rt),
      MOSS_OK)
      << moss_runtime_last_error(nullptr);
  ASSERT_EQ(moss_runtime_create(nullptr, nullptr, &fallback.rt), MOSS_OK)
      << moss_runtime_last_error(nullptr);
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
}

void GeneratedAndFallback::TearDown() {
  if (stream)
    cudaStreamDestroy(stream);
}

ScopedEnv::ScopedEnv(const char *name, const char *value) : name(name) {
  if (const char *old = std::getenv(name))
    previous = old, hadPrevious = true;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (hadPrevious)
    setenv(name, previous.c_str(), 1);
  else
    unsetenv(name);
}

moss_status_t createWithEnv(const std::string &dir, const char *name,
                            const std::string &value, RuntimeHandle &out) {
  ScopedEnv env(name, value.c_str());
  return moss_runtime_create(dir.c_str(), testWhitelist().c_str(), &out.rt);
}

} // namespace moss::runtime::test
