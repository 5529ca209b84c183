//===- ManifestTest.cpp - Manifest round trip, corruption, cache key ------===//

#include "moss/Config/Manifest.h"

#include "ScratchDir.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Sha256.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

using namespace moss::config;
using nlohmann::json;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

KernelFunctionRecord makeFunction(const std::string &symbol,
                                  const std::string &role) {
  KernelFunctionRecord function;
  function.symbol = symbol;
  function.role = role;
  function.grid = {48, 16, 1};
  function.block = {256, 1, 1};
  function.dynamicSharedBytes = 0;
  function.resources = {64, 8192, 0, 0, 0};
  return function;
}

Manifest makeManifest() {
  Manifest manifest;
  manifest.mossVersion = "0.1.0";
  manifest.chip = "sm_90a";
  manifest.pipeline = "moss-to-nvvm{chip=sm_90a opt-level=3}";
  manifest.whitelistSha256 = sha256Hex("{}");
  manifest.cacheKey = computeCacheKey("{}", "0.1.0", "sm_90a", "p");

  GemmKernelRecord up;
  up.name = "linear_n3072_k768_gelu_bm16_bn64_bk64_s1";
  up.keys = {"2,3072,768,1", "4,3072,768,1"};
  up.n = 3072;
  up.k = 768;
  up.mode = 1;
  up.tile = {16, 64, 64, 1};
  up.chip = "sm_90a";
  up.cubin = up.name + ".cubin";
  up.ptx = up.name + ".ptx";
  up.cubinSha256 = sha256Hex("cubin bytes");
  up.functions = {makeFunction(up.name, "main")};
  manifest.gemmKernels.push_back(up);

  GemmKernelRecord down;
  down.name = "linear_n768_k3072_layerscale_residual_bm8_bn128_bk128_s2";
  down.keys = {"8,768,3072,2"};
  down.n = 768;
  down.k = 3072;
  down.mode = 2;
  down.tile = {8, 64, 128, 4};
  down.chip = "sm_90a";
  down.cubin = down.name + ".cubin";
  down.ptx = down.name + ".ptx";
  down.cubinSha256 = sha256Hex("other cubin");
  down.functions = {makeFunction(down.name, "main")};
  down.functions[0].grid = {12, 8, 4};
  down.functions[0].resources.spillStoreBytes = 4;
  down.functions[0].dynamicSharedBytes = 72 * 800 * 2;
  manifest.gemmKernels.push_back(down);

  AttentionKernelRecord attention;
  attention.name = "streaming_attention_h12_d64";
  attention.chip = "sm_90a";
  attention.cubin = attention.name + ".cubin";
  attention.ptx = attention.name + ".ptx";
  attention.cubinSha256 = sha256Hex("attention");
  attention.args = {"q", "k_cache", "v_cache", "out", "t"};
  attention.params = {{"heads", 12}, {"head_dim", 64}, {"offset", -1}};
  attention.functions = {makeFunction("streaming_attention_h12_d64", "main")};
  manifest.attentionKernels.push_back(attention);
  return manifest;
}

void expectSameFunction(const KernelFunctionRecord &a,
                        const KernelFunctionRecord &b) {
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.grid.x, b.grid.x);
  EXPECT_EQ(a.grid.yPerM, b.grid.yPerM);
  EXPECT_EQ(a.grid.z, b.grid.z);
  EXPECT_EQ(a.block, b.block);
  EXPECT_EQ(a.dynamicSharedBytes, b.dynamicSharedBytes);
  EXPECT_EQ(a.resources.registers, b.resources.registers);
  EXPECT_EQ(a.resources.sharedBytes, b.resources.sharedBytes);
  EXPECT_EQ(a.resources.stackBytes, b.resources.stackBytes);
  EXPECT_EQ(a.resources.spillStoreBytes, b.resources.spillStoreBytes);
  EXPECT_EQ(a.resources.spillLoadBytes, b.resources.spillLoadBytes);
}

TEST(ManifestTest, GemmKernelServingFindsTheKeysKernel) {
  Manifest manifest = makeManifest();
  EXPECT_EQ(gemmKernelServing(manifest, "4,3072,768,1"),
            &manifest.gemmKernels[0]);
  EXPECT_EQ(gemmKernelServing(manifest, "8,768,3072,2"),
            &manifest.gemmKernels[1]);
  EXPECT_EQ(gemmKernelServing(manifest, "8,3072,768,1"), nullptr);
  EXPECT_EQ(gemmKernelServing(manifest, "4,3072,768"), nullptr);
}

TEST(ManifestTest, RoundTripThroughDirectory) {
  unittest::ScratchDir dir;
  Manifest written = makeManifest();
  std::string err;
  ASSERT_TRUE(writeManifestAtomic(dir.path, written, err)) << err;
  // Temp file manifest.json.tmp.<pid> was renamed away.
  EXPECT_EQ(dir.list(), std::vector<std::string>{"manifest.json"});

  Manifest read;
  ASSERT_TRUE(readManifest(dir.path, read, err)) << err;
  EXPECT_EQ(read.formatVersion, 6);
  EXPECT_EQ(read.mossVersion, written.mossVersion);
  EXPECT_EQ(read.chip, written.chip);
  EXPECT_EQ(read.pipeline, written.pipeline);
  EXPECT_EQ(read.whitelistSha256, written.whitelistSha256);
  EXPECT_EQ(read.cacheKey, written.cacheKey);
  ASSERT_EQ(read.gemmKernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const GemmKernelRecord &a = read.gemmKernels[i];
    const GemmKernelRecord &b = written.gemmKernels[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.keys, b.keys);
    EXPECT_EQ(a.n, b.n);
    EXPECT_EQ(a.k, b.k);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.tile.bm, b.tile.bm);
    EXPECT_EQ(a.tile.bn, b.tile.bn);
    EXPECT_EQ(a.tile.bk, b.tile.bk);
    EXPECT_EQ(a.tile.split, b.tile.split);
    EXPECT_EQ(a.chip, b.chip);
    EXPECT_EQ(a.cubin, b.cubin);
    EXPECT_EQ(a.ptx, b.ptx);
    EXPECT_EQ(a.cubinSha256, b.cubinSha256);
    EXPECT_EQ(a.args, gemmKernelArgNames(a.mode));
    ASSERT_EQ(a.functions.size(), b.functions.size());
    for (size_t j = 0; j < a.functions.size(); ++j)
      expectSameFunction(a.functions[j], b.functions[j]);
  }
  ASSERT_EQ(read.attentionKernels.size(), 1u);
  const AttentionKernelRecord &attention = read.attentionKernels[0];
  EXPECT_EQ(attention.name, "streaming_attention_h12_d64");
  EXPECT_EQ(attention.args, written.attentionKernels[0].args);
  EXPECT_EQ(attention.params, written.attentionKernels[0].params);
  ASSERT_EQ(attention.functions.size(), 1u);
  expectSameFunction(attention.functions[0],
                     written.attentionKernels[0].functions[0]);

  // Writing what was read gives the same bytes.
  EXPECT_EQ(serializeManifest(read), serializeManifest(written));
}

TEST(ManifestTest, SerializedFieldsFollowDocumentOrder) {
  std::string text = serializeManifest(makeManifest());
  size_t version = text.find("\"format_version\": 6");
  size_t mossVersion = text.find("\"moss_version\"");
  size_t gemm = text.find("\"gemm_kernels\"");
  size_t attention = text.find("\"attention_kernels\"");
  ASSERT_NE(version, std::string::npos) << text;
  EXPECT_LT(version, mossVersion);
  EXPECT_LT(mossVersion, gemm);
  EXPECT_LT(gemm, attention);
  EXPECT_EQ(text.back(), '\n');
}

/// Serializes the sample manifest, lets `corrupt` edit its JSON, writes it to
/// a fresh directory and returns readManifest's error (expecting failure).
class ManifestCorruptionTest : public ::testing::Test {
protected:
  std::string readError(const std::function<void(json &)> &corrupt) {
    json document = json::parse(serializeManifest(makeManifest()));
    corrupt(document);
    return readErrorOfBytes(document.dump(2));
  }

  std::string readErrorOfBytes(const std::string &bytes) {
    std::string err;
    EXPECT_TRUE(writeFileAtomic(dir.file("manifest.json"), bytes, err)) << err;
    Manifest manifest;
    EXPECT_FALSE(readManifest(dir.path, manifest, err))
        << "accepted: " << bytes;
    EXPECT_CONTAINS(err, dir.file("manifest.json") + ": ");
    return err;
  }

  json &gemm0(json &document) { return document["gemm_kernels"][0]; }

  unittest::ScratchDir dir;
  const std::string kernel0 =
      "gemm_kernels[0] \"linear_n3072_k768_gelu_bm16_bn64_bk64_s1\": ";
};

TEST_F(ManifestCorruptionTest, MissingTopLevelField) {
  for (const char *field :
       {"moss_version", "chip", "pipeline", "whitelist_sha256", "cache_key",
        "gemm_kernels", "attention_kernels", "format_version"}) {
    std::string err = readError([&](json &d) { d.erase(field); });
    EXPECT_CONTAINS(err, "field \"" + std::string(field) + "\": missing");
  }
}

TEST_F(ManifestCorruptionTest, MissingKernelField) {
  for (const char *field :
       {"name", "keys", "n", "k", "mode", "tile", "chip", "cubin", "ptx",
        "cubin_sha256", "args", "functions"}) {
    std::string err = readError([&](json &d) { gemm0(d).erase(field); });
    EXPECT_CONTAINS(err, "gemm_kernels[0]");
    EXPECT_CONTAINS(err, "field \"" + std::string(field) + "\": missing");
  }
}

TEST_F(ManifestCorruptionTest, MissingNestedFunctionField) {
  std::string err = readError(
      [&](json &d) { gemm0(d)["functions"][0]["grid"].erase("y_per_m"); });
  EXPECT_CONTAINS(err, kernel0 + "field \"functions[0].grid.y_per_m\": "
                                 "missing (expected integer)");

  err = readError([&](json &d) {
    d["gemm_kernels"][1]["functions"][0]["resources"].erase("spill_load_bytes");
  });
  EXPECT_CONTAINS(err, "gemm_kernels[1] ");
  EXPECT_CONTAINS(err, "field \"functions[0].resources.spill_load_bytes\": "
                       "missing");
}

TEST_F(ManifestCorruptionTest, MissingAttentionField) {
  std::string err =
      readError([&](json &d) { d["attention_kernels"][0].erase("params"); });
  EXPECT_CONTAINS(err, "attention_kernels[0] \"streaming_attention_h12_d64\": "
                       "field \"params\": missing");
}

TEST_F(ManifestCorruptionTest, WrongTypes) {
  std::string err = readError([&](json &d) { gemm0(d)["n"] = "3072"; });
  EXPECT_CONTAINS(err, kernel0 + "field \"n\": expected integer >= 1, found "
                                 "string \"3072\"");

  err = readError([&](json &d) { gemm0(d)["k"] = 768.0; });
  EXPECT_CONTAINS(err, "field \"k\": expected integer >= 1, found number");

  err = readError([&](json &d) { gemm0(d)["keys"] = "2,3072,768,1"; });
  EXPECT_CONTAINS(err, "field \"keys\": expected array, found string");

  err = readError([&](json &d) { gemm0(d)["keys"][1] = 4; });
  EXPECT_CONTAINS(err, "field \"keys[1]\": expected string, found number 4");

  err =
      readError([&](json &d) { gemm0(d)["functions"][0]["block"][0] = "256"; });
  EXPECT_CONTAINS(err, "field \"functions[0].block[0]\": expected integer");

  err = readError([&](json &d) { gemm0(d)["functions"][0]["grid"] = 48; });
  EXPECT_CONTAINS(err, "field \"functions[0].grid\": expected object, found "
                       "number 48");

  err = readError([&](json &d) { d["chip"] = json::array(); });
  EXPECT_CONTAINS(err, "field \"chip\": expected string, found array");

  err = readError([&](json &d) { d["gemm_kernels"] = json::object(); });
  EXPECT_CONTAINS(err, "field \"gemm_kernels\": expected array, found object");

  err = readError(
      [&](json &d) { d["attention_kernels"][0]["params"]["heads"] = "12"; });
  EXPECT_CONTAINS(err, "field \"params.heads\": expected integer");

  err = readError([&](json &d) { gemm0(d) = "kernel"; });
  EXPECT_CONTAINS(err, "field \"gemm_kernels[0]\": expected object, found "
                       "string");
}

TEST_F(ManifestCorruptionTest, OutOfRangeValues) {
  std::string err = readError([&](json &d) { gemm0(d)["mode"] = 6; });
  EXPECT_CONTAINS(err, "field \"mode\": expected integer >= 0 and <= 5, "
                       "found 6");

  err = readError(
      [&](json &d) { gemm0(d)["functions"][0]["dynamic_shared_bytes"] = -1; });
  EXPECT_CONTAINS(err, "field \"functions[0].dynamic_shared_bytes\": expected "
                       "integer >= 0, found -1");

  err = readError([&](json &d) {
    gemm0(d)["functions"][0]["block"] = json::array({512, 4, 1});
  });
  EXPECT_CONTAINS(err, "field \"functions[0].block\": expected at most 1024 "
                       "threads per block, found 2048");

  err = readError([&](json &d) { gemm0(d)["functions"][0]["grid"]["z"] = 0; });
  EXPECT_CONTAINS(err, "field \"functions[0].grid.z\": expected integer >= 1");

  err = readError([&](json &d) {
    gemm0(d)["n"] = json(uint64_t(18446744073709551615ull));
  });
  EXPECT_CONTAINS(err, "field \"n\": expected integer >= 1, found "
                       "18446744073709551615");
}

TEST_F(ManifestCorruptionTest, BadFileNames) {
  std::string err =
      readError([&](json &d) { gemm0(d)["cubin"] = "../evil.cubin"; });
  EXPECT_CONTAINS(err, kernel0 + "field \"cubin\": expected a plain file name");
  EXPECT_CONTAINS(err, "found \"../evil.cubin\"");

  err = readError([&](json &d) { gemm0(d)["ptx"] = "sub/k.ptx"; });
  EXPECT_CONTAINS(err, "field \"ptx\": expected a plain file name");

  err = readError([&](json &d) { gemm0(d)["cubin"] = "/abs.cubin"; });
  EXPECT_CONTAINS(err, "field \"cubin\": expected a plain file name");

  err = readError([&](json &d) { gemm0(d)["name"] = ".."; });
  EXPECT_CONTAINS(err, "gemm_kernels[0]: field \"name\": expected a plain "
                       "file name");

  err = readError([&](json &d) { gemm0(d)["cubin"] = ""; });
  EXPECT_CONTAINS(err, "field \"cubin\": expected a non-empty string");

  err = readError(
      [&](json &d) { gemm0(d)["functions"][0]["symbol"] = "bad symbol"; });
  EXPECT_CONTAINS(err, "field \"functions[0].symbol\": expected a C "
                       "identifier");
}

TEST_F(ManifestCorruptionTest, BadDigests) {
  std::string err = readError([&](json &d) { d["cache_key"] = "abc"; });
  EXPECT_CONTAINS(err, "field \"cache_key\": expected 64 lower-case hex");

  err = readError(
      [&](json &d) { gemm0(d)["cubin_sha256"] = std::string(64, 'A'); });
  EXPECT_CONTAINS(err, kernel0 + "field \"cubin_sha256\": expected 64 "
                                 "lower-case hex");
}

TEST_F(ManifestCorruptionTest, TruncatedJson) {
  std::string bytes = serializeManifest(makeManifest());
  // Cut after a comma near the middle: the input ends between two values.
  size_t cut = bytes.rfind(',', bytes.size() / 2) + 1;
  std::string err = readErrorOfBytes(bytes.substr(0, cut));
  EXPECT_CONTAINS(err, "malformed JSON at line ");
  EXPECT_CONTAINS(err, "unexpected end of input");
}

TEST_F(ManifestCorruptionTest, EmptyFile) {
  EXPECT_CONTAINS(readErrorOfBytes(""), "malformed JSON at line 1, column 1");
}

TEST_F(ManifestCorruptionTest, NotAnObject) {
  EXPECT_CONTAINS(readErrorOfBytes("[]"),
                  "expected a JSON object, found array");
}

TEST_F(ManifestCorruptionTest, WrongFormatVersion) {
  // 1 had a separate split-K "reduce" kernel, 2 a split-K workspace, 3
  // GEMM kernels without griddepcontrol.wait (unsafe to launch as
  // programmatic dependents), 4 an "epilogue" field and no LayerNorm modes,
  // 5 GEMM kernels without row_live.
  std::string err = readError([&](json &d) { d["format_version"] = 1; });
  EXPECT_CONTAINS(err, "field \"format_version\": expected 6, found number 1");
  err = readError([&](json &d) { d["format_version"] = 5; });
  EXPECT_CONTAINS(err, "field \"format_version\": expected 6, found number 5");

  err = readError([&](json &d) { d["format_version"] = "6"; });
  EXPECT_CONTAINS(err, "field \"format_version\": expected 6, found string");
}

TEST_F(ManifestCorruptionTest, NewerVersionReportedBeforeOtherFields) {
  std::string err = readError([&](json &d) {
    d["format_version"] = 7;
    d.erase("moss_version");
  });
  EXPECT_CONTAINS(err, "format_version");
}

TEST_F(ManifestCorruptionTest, GemmSemanticChecks) {
  std::string err =
      readError([&](json &d) { gemm0(d)["functions"][0]["role"] = "helper"; });
  EXPECT_CONTAINS(err, "field \"functions[0].role\": expected \"main\", "
                       "found \"helper\"");

  err = readError([&](json &d) { gemm0(d)["keys"][0] = "2,5120,768,1"; });
  EXPECT_CONTAINS(err, "field \"keys[0]\": key \"2,5120,768,1\" does not match "
                       "the kernel's n = 3072");

  err = readError([&](json &d) { gemm0(d)["keys"][0] = "02,3072,768,1"; });
  EXPECT_CONTAINS(err, "field \"keys[0]\": key \"02,3072,768,1\": field M");

  // Format 1's second split-K kernel is gone.
  err = readError([&](json &d) {
    json reduce = d["gemm_kernels"][1]["functions"][0];
    reduce["symbol"] = "second";
    d["gemm_kernels"][1]["functions"].push_back(reduce);
  });
  EXPECT_CONTAINS(err, "field \"functions\": expected 1 \"main\" function "
                       "(split-K reduces inside it), found 2 functions");

  err = readError([&](json &d) { gemm0(d)["tile"] = {16, 48, 64, 1}; });
  EXPECT_CONTAINS(err, kernel0 + "field \"tile\": tile bn=48 is not a power "
                                 "of two");

  err = readError([&](json &d) { gemm0(d)["args"][5] = "rows"; });
  EXPECT_CONTAINS(err, "field \"args\": expected [x, w, scale, residual, "
                       "row_live, out, m, prefetch_w]");
  // Format 5's seven arguments (no row_live).
  err = readError([&](json &d) {
    gemm0(d)["args"] = {"x",   "w", "scale",     "residual",
                        "out", "m", "prefetch_w"};
  });
  EXPECT_CONTAINS(err, "field \"args\": expected [x, w, scale, residual, "
                       "row_live, out, m, prefetch_w], found [\"x\", \"w\", "
                       "\"scale\", \"residual\", \"out\", \"m\", "
                       "\"prefetch_w\"]");
  // A kernel of a LayerNorm mode takes gamma, beta and eps after them.
  err = readError([&](json &d) {
    gemm0(d)["mode"] = 4;
    for (json &key : gemm0(d)["keys"]) {
      std::string text = key.get<std::string>();
      key = text.substr(0, text.rfind(',')) + ",4";
    }
  });
  EXPECT_CONTAINS(err, "field \"args\": expected [x, w, scale, residual, "
                       "row_live, out, m, prefetch_w, gamma, beta, eps]");
}

TEST_F(ManifestCorruptionTest, KeyServedByTwoKernels) {
  std::string err = readError([&](json &d) {
    json copy = gemm0(d);
    copy["name"] = "second";
    copy["keys"] = {"4,3072,768,1"};
    d["gemm_kernels"].push_back(copy);
  });
  EXPECT_CONTAINS(err, "gemm_kernels[2] \"second\": field \"keys[0]\": key "
                       "\"4,3072,768,1\" is already served by "
                       "gemm_kernels[0]");
}

TEST(ManifestTest, UnknownFieldsAreIgnored) {
  json document = json::parse(serializeManifest(makeManifest()));
  document["future_field"] = {1, 2};
  document["gemm_kernels"][0]["notes"] = "hand-tuned";
  Manifest manifest;
  std::string err;
  EXPECT_TRUE(parseManifest(document.dump(), "m.json", manifest, err)) << err;
}

TEST(ManifestTest, EmptyKernelListsAreValid) {
  Manifest manifest = makeManifest();
  manifest.gemmKernels.clear();
  manifest.attentionKernels.clear();
  Manifest read;
  std::string err;
  EXPECT_TRUE(parseManifest(serializeManifest(manifest), "m.json", read, err))
      << err;
  EXPECT_TRUE(read.gemmKernels.empty());
}

TEST(ManifestTest, WriteRefusesInvalidManifest) {
  unittest::ScratchDir dir;
  Manifest manifest = makeManifest();
  manifest.gemmKernels[0].cubin = "../escape.cubin";
  std::string err;
  EXPECT_FALSE(writeManifestAtomic(dir.path, manifest, err));
  EXPECT_CONTAINS(err, "refusing to write an invalid manifest");
  EXPECT_CONTAINS(err, "field \"cubin\"");
  EXPECT_TRUE(dir.list().empty());
}

TEST(ManifestTest, ReadMissingManifestNamesPath) {
  unittest::ScratchDir dir;
  Manifest manifest;
  std::string err;
  EXPECT_FALSE(readManifest(dir.path, manifest, err));
  EXPECT_CONTAINS(err, dir.file("manifest.json") + ": cannot open");
}

TEST(ManifestTest, PlainFileNames) {
  EXPECT_TRUE(isPlainFileName("linear_n3072.cubin"));
  EXPECT_FALSE(isPlainFileName(""));
  EXPECT_FALSE(isPlainFileName("."));
  EXPECT_FALSE(isPlainFileName(".."));
  EXPECT_FALSE(isPlainFileName("a..b"));
  EXPECT_FALSE(isPlainFileName("a/b"));
  EXPECT_FALSE(isPlainFileName("a\\b"));
  EXPECT_FALSE(isPlainFileName(std::string("a\0b", 3)));
}

TEST(CacheKeyTest, MatchesDocumentedFormula) {
  std::string expected = sha256Hex(std::string("{}\n\0"
                                               "0.1.0\0sm_90a\0pipe",
                                               21));
  EXPECT_EQ(computeCacheKey("{}\n", "0.1.0", "sm_90a", "pipe"), expected);
  EXPECT_TRUE(isSha256Hex(expected));
}

TEST(CacheKeyTest, StableForSameInputs) {
  EXPECT_EQ(computeCacheKey("{\"a\":1}", "0.1.0", "sm_90a", "p"),
            computeCacheKey("{\"a\":1}", "0.1.0", "sm_90a", "p"));
}

TEST(CacheKeyTest, ChangesWithEveryInput) {
  std::string base = computeCacheKey("{\"16,3072,768,1\": [16,64,64,1]}",
                                     "0.1.0", "sm_90a", "p");
  // One byte of the whitelist (even whitespace) changes the key.
  EXPECT_NE(base, computeCacheKey("{\"16,3072,768,1\": [16,64,64,1]} ", "0.1.0",
                                  "sm_90a", "p"));
  EXPECT_NE(base, computeCacheKey("{\"16,3072,768,1\": [16,64,64,2]}", "0.1.0",
                                  "sm_90a", "p"));
  EXPECT_NE(base, computeCacheKey("{\"16,3072,768,1\": [16,64,64,1]}", "0.1.1",
                                  "sm_90a", "p"));
  EXPECT_NE(base, computeCacheKey("{\"16,3072,768,1\": [16,64,64,1]}", "0.1.0",
                                  "sm_90", "p"));
  EXPECT_NE(base, computeCacheKey("{\"16,3072,768,1\": [16,64,64,1]}", "0.1.0",
                                  "sm_90a", "p2"));
}

TEST(CacheKeyTest, SeparatorsKeepFieldsApart) {
  EXPECT_NE(computeCacheKey("ab", "c", "d", "e"),
            computeCacheKey("a", "bc", "d", "e"));
  EXPECT_NE(computeCacheKey("a", "b", "cd", ""),
            computeCacheKey("a", "b", "c", "d"));
}

TEST(ManifestTest, KernelArgumentsFollowTheMode) {
  EXPECT_EQ(gemmKernelArgNames(kGemmModeGelu).size(), 8u);
  // row_live right after residual, in every mode: the kernels share the
  // first eight arguments.
  for (int mode = 0; mode < kGemmModeCount; ++mode)
    EXPECT_EQ(gemmKernelArgNames(mode)[4], "row_live") << "mode " << mode;
  EXPECT_EQ(gemmKernelArgNames(kGemmModeLayerNorm).back(), "eps");
  const std::vector<std::string> &qkv =
      gemmKernelArgNames(kGemmModeLayerNormRopeCache);
  ASSERT_EQ(qkv.size(), 18u);
  EXPECT_EQ(qkv[10], "eps");
  EXPECT_EQ(qkv[11], "positions");
  EXPECT_EQ(qkv[15], "slot_positions");
  EXPECT_EQ(qkv.back(), "capacity");
}

} // namespace
