//===- CreateTests.cpp - moss_runtime_create's checks, no GPU needed ------===//
//
// create() checks the manifest, the whitelist, the cache key and the cubin
// digests before it touches CUDA, so these run on any machine. Where the
// host checks pass, the outcome depends on the machine: without a GPU the
// call fails with "no CUDA device", with one the fake cubin is rejected by
// cuModuleLoadData; both are asserted.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/Sha256.h"
#include "moss/Version.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <unistd.h>

using namespace moss::runtime::test;

namespace {

const char *kOneKey = R"({"2,3072,768,1": [16, 64, 64, 1]})";
const char *kTwoShapes =
    R"({"2,3072,768,1": [16, 64, 64, 1], "4,3072,768,1": [16, 64, 64, 1],)"
    R"( "8,768,3072,2": [8, 64, 128, 2]})";

struct CreateResult {
  moss_status_t status;
  std::string message;
};

CreateResult create(const std::string &dir, const char *whitelist) {
  moss_runtime_t rt = nullptr;
  moss_status_t status = moss_runtime_create(dir.c_str(), whitelist, &rt);
  CreateResult result{status, moss_runtime_last_error(nullptr)};
  ::testing::Test::RecordProperty("message", result.message);
  if (status == MOSS_OK)
    EXPECT_NE(rt, nullptr);
  else
    EXPECT_EQ(rt, nullptr) << "create must leave *out NULL on failure";
  moss_runtime_destroy(rt);
  return result;
}

/// The host checks passed: what follows depends on whether there is a GPU.
void expectHostChecksPassed(const CreateResult &r, const std::string &dir) {
  std::string why;
  if (!gpuAvailable(why)) {
    EXPECT_EQ(r.status, MOSS_ERROR_CUDA) << r.message;
    EXPECT_CONTAINS(r.message, "no CUDA device");
  } else {
    // The fake cubin is not an image cuModuleLoadData accepts.
    EXPECT_NE(r.status, MOSS_OK);
    EXPECT_NE(r.status, MOSS_ERROR_CACHE_KEY_MISMATCH) << r.message;
    EXPECT_CONTAINS(r.message, dir);
  }
}

TEST(RuntimeVersion, LibraryReportsTheVersionsItWasBuiltWith) {
  // Exported through moss_runtime.map; needs no runtime and no GPU.
  EXPECT_EQ(moss_runtime_api_version(), MOSS_RUNTIME_API_VERSION);
  ASSERT_NE(moss_runtime_version(), nullptr);
  EXPECT_EQ(std::string(moss_runtime_version()), MOSS_VERSION);
}

TEST(RuntimeCreate, NullOutIsInvalidArgument) {
  EXPECT_EQ(moss_runtime_create(nullptr, nullptr, nullptr),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(moss_runtime_last_error(nullptr), "out is NULL");
}

TEST(RuntimeCreate, NullRuntimeCallsFailCleanly) {
  moss_runtime_destroy(nullptr);
  EXPECT_EQ(moss_gemm_is_selected(nullptr, 2, 3072, 768, MOSS_EPILOGUE_GELU),
            0);
  EXPECT_EQ(moss_ffn_gemm(nullptr, 2, 3072, 768, MOSS_EPILOGUE_GELU, nullptr,
                          nullptr, nullptr, nullptr, nullptr, nullptr),
            MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(moss_runtime_last_error(nullptr), "rt is NULL");
  moss_attention_args args{};
  EXPECT_EQ(moss_streaming_attention(nullptr, &args, nullptr),
            MOSS_ERROR_INVALID_ARGUMENT);
}

TEST(RuntimeCreate, NoGpuIsReportedAsCudaError) {
  std::string why;
  if (gpuAvailable(why))
    GTEST_SKIP() << "a GPU is present; this checks the no-GPU path";
  CreateResult r = create("", nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_CUDA);
  EXPECT_CONTAINS(r.message, "no CUDA device");
}

TEST(RuntimeCreate, MissingKernelsDir) {
  ScratchDir scratch;
  std::string dir = scratch.file("does-not-exist");
  CreateResult r = create(dir, nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, dir);
}

TEST(RuntimeCreate, DirWithoutManifest) {
  ScratchDir scratch;
  CreateResult r = create(scratch.path, nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "manifest.json");
}

TEST(RuntimeCreate, CorruptManifest) {
  ScratchDir scratch;
  writeText(scratch.file("manifest.json"), "{\"format_version\": 1, oops");
  CreateResult r = create(scratch.path, nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, scratch.file("manifest.json"));
}

TEST(RuntimeCreate, ManifestWithWrongFieldType) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  writeText(fake.dir.file("manifest.json"),
            R"({"format_version": "1", "gemm_kernels": []})");
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "format_version");
}

TEST(RuntimeCreate, ValidManifestPassesHostChecks) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kTwoShapes));
  expectHostChecksPassed(create(fake.dir.path, fake.whitelistPath.c_str()),
                         fake.dir.path);
}

TEST(RuntimeCreate, CacheKeyMismatchNamesBothKeysAndWhitelist) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  // Same entries, different bytes: the key covers the bytes.
  std::string other = fake.dir.file("other-whitelist.json");
  writeText(other, std::string(kOneKey) + "\n");
  CreateResult r = create(fake.dir.path, other.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_CACHE_KEY_MISMATCH) << r.message;
  EXPECT_CONTAINS(r.message, fake.manifest.cacheKey);
  std::string expected = moss::config::computeCacheKey(
      std::string(kOneKey) + "\n", MOSS_VERSION, "sm_90a", "test-pipeline");
  EXPECT_CONTAINS(r.message, expected);
  EXPECT_CONTAINS(r.message, other);
}

TEST(RuntimeCreate, CacheKeyMismatchThroughEnvironment) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  std::string other = fake.dir.file("env-whitelist.json");
  writeText(other, R"({"4,3072,768,1": [16, 64, 64, 1]})");
  ScopedEnv env("MOSS_CODEC_GEMM_CONFIG", other.c_str());
  CreateResult r = create(fake.dir.path, nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_CACHE_KEY_MISMATCH) << r.message;
  EXPECT_CONTAINS(r.message, other);
}

TEST(RuntimeCreate, ManifestFromOtherMossVersion) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  fake.manifest.mossVersion = "0.0.1";
  fake.manifest.cacheKey = moss::config::computeCacheKey(
      kOneKey, "0.0.1", fake.manifest.chip, fake.manifest.pipeline);
  ASSERT_TRUE(fake.rewriteManifest());
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_CACHE_KEY_MISMATCH);
  EXPECT_CONTAINS(r.message, "0.0.1");
}

TEST(RuntimeCreate, NoWhitelistMeansNoGeneratedGemms) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  // Even a corrupted cubin is not read: GEMM kernels are not used.
  writeText(fake.dir.file(fake.manifest.gemmKernels[0].cubin), "changed");
  ScopedEnv env("MOSS_CODEC_GEMM_CONFIG", nullptr);
  CreateResult r = create(fake.dir.path, nullptr);
  std::string why;
  if (gpuAvailable(why)) {
    EXPECT_EQ(r.status, MOSS_OK) << r.message;
  } else {
    EXPECT_EQ(r.status, MOSS_ERROR_CUDA);
    EXPECT_CONTAINS(r.message, "no CUDA device");
  }
}

TEST(RuntimeCreate, CubinShaMismatchNamesFile) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  std::string cubin = fake.dir.file(fake.manifest.gemmKernels[0].cubin);
  writeText(cubin, "not a real cubin, tampered");
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, cubin);
  EXPECT_CONTAINS(r.message, "sha256");
  EXPECT_CONTAINS(r.message,
                  moss::config::sha256Hex("not a real cubin, tampered"));
}

TEST(RuntimeCreate, MissingCubinNamesFile) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  std::string cubin = fake.dir.file(fake.manifest.gemmKernels[0].cubin);
  ASSERT_EQ(std::remove(cubin.c_str()), 0);
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, cubin);
}

TEST(RuntimeCreate, SymlinkedCubinIsRefused) {
  // The right bytes behind a link are still refused: a link may point outside
  // the kernels folder, which is all the manifest vouches for.
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  std::string cubin = fake.dir.file(fake.manifest.gemmKernels[0].cubin);
  std::string real = fake.dir.file("outside.bin");
  ASSERT_EQ(std::rename(cubin.c_str(), real.c_str()), 0);
  ASSERT_EQ(::symlink(real.c_str(), cubin.c_str()), 0);
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, cubin);
  EXPECT_CONTAINS(r.message, "symbolic link");
}

TEST(RuntimeCreate, WhitelistKeyWithoutKernel) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kTwoShapes));
  // Drop the kernel of "8,768,3072,2"; keys still hash to the whitelist.
  fake.manifest.gemmKernels.erase(
      std::remove_if(
          fake.manifest.gemmKernels.begin(), fake.manifest.gemmKernels.end(),
          [](const moss::config::GemmKernelRecord &r) { return r.mode == 2; }),
      fake.manifest.gemmKernels.end());
  ASSERT_TRUE(fake.rewriteManifest());
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "8,768,3072,2");
}

TEST(RuntimeCreate, KernelTileDiffersFromWhitelist) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  auto &rec = fake.manifest.gemmKernels[0];
  rec = makeGemmRecord(rec.keys, rec.n, rec.k, rec.mode, {16, 128, 64, 1},
                       rec.cubin, rec.cubinSha256);
  ASSERT_TRUE(fake.rewriteManifest());
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "[16,128,64,1]");
}

TEST(RuntimeCreate, LaunchShapeDiffersFromLaunchRule) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  fake.manifest.gemmKernels[0].functions[0].grid.x += 1;
  ASSERT_TRUE(fake.rewriteManifest());
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "grid.x");
}

TEST(RuntimeCreate, UnsupportedChip) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  fake.manifest.chip = "sm_80";
  for (auto &rec : fake.manifest.gemmKernels)
    rec.chip = "sm_80";
  ASSERT_TRUE(fake.rewriteManifest());
  CreateResult r = create(fake.dir.path, fake.whitelistPath.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, "sm_80");
}

TEST(RuntimeCreate, InvalidWhitelist) {
  FakeKernelsDir fake;
  ASSERT_TRUE(fake.build(kOneKey));
  std::string bad = fake.dir.file("bad.json");
  writeText(bad, R"({"2,3072,768,1": [16, 48, 64, 1]})");
  CreateResult r = create(fake.dir.path, bad.c_str());
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST);
  EXPECT_CONTAINS(r.message, bad);
}

TEST(RuntimeCreate, BadWorkspaceSlotsVariable) {
  ScopedEnv env("MOSS_RUNTIME_WORKSPACE_SLOTS", "0");
  CreateResult r = create("", nullptr);
  EXPECT_EQ(r.status, MOSS_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(r.message, "MOSS_RUNTIME_WORKSPACE_SLOTS");
}

/// create() refuses each of `texts` for integer variable `name`, naming
/// the variable, the text and `range`.
void expectIntegerVariableRefused(const char *name,
                                  std::initializer_list<const char *> texts,
                                  const std::string &range) {
  for (const char *text : texts) {
    ScopedEnv env(name, text);
    CreateResult r = create("", nullptr);
    EXPECT_EQ(r.status, MOSS_ERROR_INVALID_ARGUMENT) << text;
    EXPECT_CONTAINS(r.message, std::string(name) + "=\"" + text +
                                   "\": expected an integer in " + range);
  }
}

TEST(RuntimeCreate, BadAttentionSplitsVariable) {
  expectIntegerVariableRefused("MOSS_ATTENTION_SPLITS", {"0", "9", "4x", ""},
                               "1..8");
}

TEST(RuntimeCreate, BadAttentionKvGroupsVariable) {
  expectIntegerVariableRefused("MOSS_ATTENTION_KV_GROUPS",
                               {"0", "5", "two", ""}, "1..4");
}

TEST(RuntimeCreate, BadAttentionCopyWarpsVariable) {
  expectIntegerVariableRefused("MOSS_ATTENTION_COPY_WARPS",
                               {"-1", "4", "all", ""}, "0..3");
}

TEST(RuntimeCreate, BadAttentionTmaAndTriggerVariables) {
  expectIntegerVariableRefused("MOSS_ATTENTION_TMA", {"3", "-1", "on", ""},
                               "0..2");
  expectIntegerVariableRefused("MOSS_ATTENTION_EARLY_TRIGGER",
                               {"3", "-1", "early", ""}, "0..2");
  expectIntegerVariableRefused("MOSS_ATTENTION_SPLIT_KV",
                               {"3", "-1", "rule", ""}, "0..2");
}

TEST(RuntimeCreate, BadGemmPdlVariable) {
  expectIntegerVariableRefused("MOSS_CODEC_GEMM_PDL", {"2", "-1", "yes", ""},
                               "0..1");
}

TEST(RuntimeCreate, BadAttentionPdlVariable) {
  expectIntegerVariableRefused("MOSS_ATTENTION_PDL", {"2", "-1", "on", ""},
                               "0..1");
}

} // namespace
