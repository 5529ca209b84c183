//===- WhitelistTest.cpp - Whitelist parsing and validation ---------------===//
//
// One test per bad input of docs/kernel-abi.md "Whitelist": each checks that
// parsing fails and that the message names the file, the key and the reason.
//
//===----------------------------------------------------------------------===//

#include "moss/Config/Whitelist.h"

#include "moss/Config/FileUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace moss::config;

namespace {

const char *kFile = "tiles.json";

/// Parses `json` expecting failure; returns the message.
std::string parseError(const std::string &json) {
  Whitelist whitelist;
  std::string err;
  EXPECT_FALSE(Whitelist::parse(json, kFile, whitelist, err))
      << "parsed without error: " << json;
  EXPECT_TRUE(whitelist.entries().empty());
  return err;
}

/// Parses {"<key>": <value>} expecting failure.
std::string entryError(const std::string &key, const std::string &value) {
  return parseError("{\"" + key + "\": " + value + "}");
}

std::string keyPrefix(const std::string &key) {
  return std::string(kFile) + ": key \"" + key + "\": ";
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

TEST(WhitelistTest, TopLevelNotAnObject) {
  std::string err = parseError("[[16, 64, 64, 1]]");
  EXPECT_CONTAINS(err, "tiles.json: expected a JSON object");
  EXPECT_CONTAINS(err, "found array");
  EXPECT_CONTAINS(parseError("42"), "found number 42");
}

TEST(WhitelistTest, KeyWithThreeFields) {
  std::string err = entryError("16,3072,768", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, keyPrefix("16,3072,768"));
  EXPECT_CONTAINS(err, "expected four comma-separated integers");
  EXPECT_CONTAINS(err, "found 3 fields");
}

TEST(WhitelistTest, KeyWithFiveFields) {
  EXPECT_CONTAINS(entryError("16,3072,768,1,0", "[16, 64, 64, 1]"),
                  "found 5 fields");
}

TEST(WhitelistTest, KeyNotIntegers) {
  std::string err = entryError("m,3072,768,1", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, keyPrefix("m,3072,768,1"));
  EXPECT_CONTAINS(err, "field M \"m\" is not a plain decimal integer");
}

TEST(WhitelistTest, KeyEmptyField) {
  EXPECT_CONTAINS(entryError("16,,768,1", "[16, 64, 64, 1]"),
                  "field N is empty");
}

TEST(WhitelistTest, KeyLeadingZero) {
  std::string err = entryError("016,3072,768,1", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, keyPrefix("016,3072,768,1"));
  EXPECT_CONTAINS(err, "field M \"016\" has a leading zero");
}

TEST(WhitelistTest, KeyWithPlusSign) {
  EXPECT_CONTAINS(entryError("+16,3072,768,1", "[16, 64, 64, 1]"),
                  "field M \"+16\" is not a plain decimal integer");
}

TEST(WhitelistTest, KeyWithMinusSign) {
  EXPECT_CONTAINS(entryError("16,3072,-768,1", "[16, 64, 64, 1]"),
                  "field K \"-768\" is not a plain decimal integer");
}

TEST(WhitelistTest, KeyWithSpace) {
  std::string err = entryError("16, 3072,768,1", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, keyPrefix("16, 3072,768,1"));
  EXPECT_CONTAINS(err, "field N \" 3072\" is not a plain decimal integer");
}

TEST(WhitelistTest, KeyZeroDimension) {
  EXPECT_CONTAINS(entryError("0,3072,768,1", "[16, 64, 64, 1]"),
                  "M = 0 must be >= 1");
}

TEST(WhitelistTest, KeyOutOfRange) {
  EXPECT_CONTAINS(entryError("99999999999,3072,768,1", "[16, 64, 64, 1]"),
                  "is out of range (max 2147483647)");
  EXPECT_CONTAINS(entryError("2147483648,3072,768,1", "[16, 64, 64, 1]"),
                  "M = 2147483648 is out of range");
}

TEST(WhitelistTest, UnknownMode) {
  std::string err = entryError("16,3072,768,6", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, keyPrefix("16,3072,768,6"));
  EXPECT_CONTAINS(err, "mode 6 is unknown (expected 0 none, 1 gelu, 2 "
                       "layerscale_residual, 3 layernorm, 4 layernorm_gelu, "
                       "5 layernorm_rope_cache)");
  // Mode 5's N is three groups of whole heads (3 * 64 h).
  EXPECT_CONTAINS(entryError("16,3000,768,5", "[16, 8, 64, 1]"),
                  "N = 3000 is not 3 * d with d a multiple of 64");
  EXPECT_CONTAINS(entryError("16,2208,768,5", "[16, 32, 64, 1]"),
                  "N = 2208 is not 3 * d with d a multiple of 64");
}

TEST(WhitelistTest, LayerNormModesAreKeysOfTheirOwn) {
  Whitelist wl;
  std::string err;
  ASSERT_TRUE(Whitelist::parse(R"({"16,3072,768,1": [16, 64, 64, 1],
                                   "16,3072,768,4": [16, 64, 64, 2],
                                   "4,2304,768,3": [8, 64, 64, 1]})",
                               "wl.json", wl, err))
      << err;
  ASSERT_NE(wl.find(16, 3072, 768, kGemmModeLayerNormGelu), nullptr);
  EXPECT_EQ(wl.find(16, 3072, 768, kGemmModeLayerNormGelu)->tile.split, 2);
  EXPECT_EQ(wl.find(16, 3072, 768, kGemmModeGelu)->tile.split, 1);
  EXPECT_NE(wl.find(4, 2304, 768, kGemmModeLayerNorm), nullptr);
  EXPECT_EQ(wl.find(4, 2304, 768, kGemmModeNone), nullptr);
}

TEST(WhitelistTest, ValueNotAnArray) {
  std::string err = entryError("16,3072,768,1", "\"16,64,64,1\"");
  EXPECT_CONTAINS(err, keyPrefix("16,3072,768,1"));
  EXPECT_CONTAINS(err, "value must be an array [bm, bn, bk, split], found "
                       "string \"16,64,64,1\"");
  EXPECT_CONTAINS(entryError("16,3072,768,1", "{\"bm\": 16}"), "found object");
}

TEST(WhitelistTest, ValueWithThreeNumbers) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 64]"),
                  "value must have 4 elements [bm, bn, bk, split], found 3");
}

TEST(WhitelistTest, TileZero) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[0, 64, 64, 1]"),
                  "tile bm=0 must be >= 1");
}

TEST(WhitelistTest, TileNegative) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, -64, 64, 1]"),
                  "tile bn=-64 must be >= 1");
}

TEST(WhitelistTest, TileNotAnInteger) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 16.5, 1]"),
                  "tile bk must be an integer, found number 16.5");
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, \"64\", 1]"),
                  "tile bk must be an integer, found string \"64\"");
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 64, true]"),
                  "tile split must be an integer, found boolean true");
}

TEST(WhitelistTest, TileOutOfRange) {
  EXPECT_CONTAINS(
      entryError("16,3072,768,1", "[16, 64, 64, 18446744073709551615]"),
      "tile split=18446744073709551615 is out of range");
}

TEST(WhitelistTest, TileNotPowerOfTwo) {
  std::string err = entryError("16,3072,768,1", "[16, 48, 64, 1]");
  EXPECT_EQ(err,
            keyPrefix("16,3072,768,1") + "tile bn=48 is not a power of two");
}

TEST(WhitelistTest, SplitBelowOne) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 64, 0]"),
                  "tile split=0 must be >= 1");
}

TEST(WhitelistTest, SplitNotPowerOfTwo) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 64, 3]"),
                  "tile split=3 is not a power of two");
}

TEST(WhitelistTest, BkTimesSplitExceedsK) {
  std::string err = entryError("16,3072,768,1", "[16, 64, 256, 4]");
  EXPECT_EQ(err,
            keyPrefix("16,3072,768,1") + "bk*split = 1024 exceeds K = 768");
}

TEST(WhitelistTest, KNotMultipleOfBkTimesSplit) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 256, 2]"),
                  "K = 768 is not a multiple of bk*split = 512");
}

TEST(WhitelistTest, SplitBeyondOneCluster) {
  std::string err = entryError("8,768,3072,2", "[8, 16, 32, 16]");
  EXPECT_EQ(err, keyPrefix("8,768,3072,2") +
                     "tile split=16 exceeds 8 (the split-K CTAs of a tile "
                     "form one thread-block cluster)");
}

TEST(WhitelistTest, NNotMultipleOfBn) {
  EXPECT_CONTAINS(entryError("16,3000,768,1", "[16, 64, 64, 1]"),
                  "N = 3000 is not a multiple of bn = 64");
}

TEST(WhitelistTest, UnsupportedTileSize) {
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[128, 64, 64, 1]"),
                  "tile bm=128 is not supported (expected one of "
                  "{1,2,4,8,16,32,64})");
  EXPECT_CONTAINS(entryError("16,3072,768,1", "[16, 64, 16, 1]"),
                  "tile bk=16 is not supported");
}

TEST(WhitelistTest, SharedMemoryTooBig) {
  // The whole K = 3072 of 64 W rows and 64 x rows: 786 KB of slab (wgmma
  // rows are not padded).
  std::string err = entryError("64,768,3072,2", "[64, 64, 256, 1]");
  EXPECT_CONTAINS(err, keyPrefix("64,768,3072,2"));
  EXPECT_CONTAINS(err, "shared memory max((bn+bm8)*(K/split+pad)*2, "
                       "warps_k*bm8*(bn+4)*4) = max(786432, 34816) = 786432 "
                       "bytes exceeds 227 KiB (232448)");
  // Split 4 quarters the slab: legal.
  Whitelist whitelist;
  EXPECT_TRUE(Whitelist::parse(R"({"64,768,3072,2": [64, 64, 256, 4]})", kFile,
                               whitelist, err))
      << err;
}

TEST(WhitelistTest, DuplicateKey) {
  std::string err = parseError("{\n"
                               "  \"16,3072,768,1\": [16, 64, 64, 1],\n"
                               "  \"32,3072,768,1\": [32, 64, 64, 1],\n"
                               "  \"16,3072,768,1\": [16, 128, 64, 1]\n"
                               "}\n");
  EXPECT_EQ(err, keyPrefix("16,3072,768,1") +
                     "duplicate key (each \"M,N,K,mode\" may appear once)");
}

TEST(WhitelistTest, DuplicateKeyInsideValueIsNotATopLevelDuplicate) {
  // Keys of nested objects are not whitelist keys; the value is still wrong.
  std::string err = parseError("{\"16,3072,768,1\": {\"a\": 1, \"a\": 2}}");
  EXPECT_CONTAINS(err, "value must be an array");
}

TEST(WhitelistTest, MalformedJsonReportsPosition) {
  // Missing comma at the end of line 2: the parser stops at the end of the
  // unexpected string on line 3 (nlohmann reports the last byte it read).
  std::string err = parseError("{\n"
                               "  \"16,3072,768,1\": [16, 64, 64, 1]\n"
                               "  \"32,3072,768,1\": [32, 64, 64, 1]\n"
                               "}\n");
  EXPECT_CONTAINS(err, "tiles.json: malformed JSON at line 3, column 17 (byte "
                       "offset 53)");
  EXPECT_CONTAINS(err, "expected '}'");
}

TEST(WhitelistTest, TruncatedJsonReportsEnd) {
  std::string err = parseError("{\"16,3072,768,1\": [16, 64");
  EXPECT_CONTAINS(err, "malformed JSON at line 1, column 26 (byte offset 25)");
  EXPECT_CONTAINS(err, "unexpected end of input");
}

TEST(WhitelistTest, EmptyInputIsMalformed) {
  EXPECT_CONTAINS(parseError(""), "tiles.json: malformed JSON at line 1");
}

TEST(WhitelistTest, ControlCharactersInKeyAreEscapedInMessage) {
  std::string err = entryError("16,\\n3072,768,1", "[16, 64, 64, 1]");
  EXPECT_CONTAINS(err, "key \"16,\\x0a3072,768,1\"");
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

TEST(WhitelistTest, EmptyObjectIsValid) {
  Whitelist whitelist;
  std::string err;
  ASSERT_TRUE(Whitelist::parse("{ }\n", kFile, whitelist, err)) << err;
  EXPECT_TRUE(whitelist.entries().empty());
  EXPECT_EQ(whitelist.bytes(), "{ }\n");
  EXPECT_EQ(whitelist.find(16, 3072, 768, 1), nullptr);
}

TEST(WhitelistTest, ParsesExampleFileInFileOrder) {
  std::string path = std::string(MOSS_CONFIGS_DIR) + "/h200-example.json";
  Whitelist whitelist;
  std::string err;
  ASSERT_TRUE(Whitelist::load(path, whitelist, err)) << err;

  const int64_t expectedM[] = {2, 4, 8, 15, 16, 30, 32};
  ASSERT_EQ(whitelist.entries().size(), std::size(expectedM));
  for (size_t i = 0; i < std::size(expectedM); ++i) {
    const WhitelistEntry &entry = whitelist.entries()[i];
    EXPECT_EQ(entry.keyText, std::to_string(expectedM[i]) + ",3072,768,1");
    EXPECT_EQ(entry.key.m, expectedM[i]);
    EXPECT_EQ(entry.key.n, 3072);
    EXPECT_EQ(entry.key.k, 768);
    EXPECT_EQ(entry.key.mode, kGemmModeGelu);
    EXPECT_EQ(entry.tile.bm, 16);
    EXPECT_EQ(entry.tile.bn, 64);
    EXPECT_EQ(entry.tile.bk, 64);
    EXPECT_EQ(entry.tile.split, 1);
  }

  std::string fileBytes;
  ASSERT_TRUE(readFile(path, fileBytes, err)) << err;
  EXPECT_EQ(whitelist.bytes(), fileBytes);
  EXPECT_EQ(whitelist.fileName(), path);
}

TEST(WhitelistTest, FindHitAndMiss) {
  Whitelist whitelist;
  std::string err;
  ASSERT_TRUE(Whitelist::parse("{\"16,3072,768,1\": [16, 64, 64, 1],"
                               " \"8,768,3072,2\": [8, 128, 128, 4]}",
                               kFile, whitelist, err))
      << err;
  const WhitelistEntry *hit = whitelist.find(8, 768, 3072, 2);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->keyText, "8,768,3072,2");
  EXPECT_EQ(hit->tile.bn, 128);
  EXPECT_EQ(hit->tile.split, 4);
  ASSERT_NE(whitelist.find(16, 3072, 768, 1), nullptr);
  EXPECT_EQ(whitelist.find(16, 3072, 768, 1)->tile.bm, 16);

  EXPECT_EQ(whitelist.find(16, 3072, 768, 0), nullptr);  // other mode
  EXPECT_EQ(whitelist.find(17, 3072, 768, 1), nullptr);  // other M
  EXPECT_EQ(whitelist.find(16, 5120, 768, 1), nullptr);  // other N
  EXPECT_EQ(whitelist.find(16, 3072, 1280, 1), nullptr); // other K
}

TEST(WhitelistTest, FailedParseLeavesOutputUnchanged) {
  Whitelist whitelist;
  std::string err;
  ASSERT_TRUE(Whitelist::parse("{\"16,3072,768,1\": [16, 64, 64, 1]}", kFile,
                               whitelist, err));
  EXPECT_FALSE(Whitelist::parse("{\"16,3072,768,1\": [16, 48, 64, 1]}", kFile,
                                whitelist, err));
  ASSERT_EQ(whitelist.entries().size(), 1u);
  EXPECT_NE(whitelist.find(16, 3072, 768, 1), nullptr);
}

TEST(WhitelistTest, CopiedWhitelistFindsInItsOwnEntries) {
  Whitelist original;
  std::string err;
  ASSERT_TRUE(Whitelist::parse("{\"16,3072,768,1\": [16, 64, 64, 1]}", kFile,
                               original, err));
  Whitelist copy = original;
  const WhitelistEntry *entry = copy.find(16, 3072, 768, 1);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry, &copy.entries()[0]);
}

TEST(WhitelistTest, LoadMissingFileNamesPath) {
  Whitelist whitelist;
  std::string err;
  EXPECT_FALSE(Whitelist::load("/nonexistent/tiles.json", whitelist, err));
  EXPECT_CONTAINS(err, "/nonexistent/tiles.json: cannot open for reading");
}

TEST(WhitelistTest, ParseGemmKeyAcceptsCanonicalKeys) {
  GemmKey key;
  std::string reason;
  ASSERT_TRUE(parseGemmKey("64,1280,5120,2", key, reason)) << reason;
  EXPECT_EQ(key.m, 64);
  EXPECT_EQ(key.n, 1280);
  EXPECT_EQ(key.k, 5120);
  EXPECT_EQ(key.mode, 2);
  ASSERT_TRUE(parseGemmKey("1,16,32,0", key, reason)) << reason;
  EXPECT_EQ(key.mode, 0);
}

TEST(WhitelistTest, GemmModeNames) {
  EXPECT_STREQ(gemmModeName(0), "none");
  EXPECT_STREQ(gemmModeName(1), "gelu");
  EXPECT_STREQ(gemmModeName(2), "layerscale_residual");
  EXPECT_STREQ(gemmModeName(3), "layernorm");
  EXPECT_STREQ(gemmModeName(4), "layernorm_gelu");
  EXPECT_STREQ(gemmModeName(5), "layernorm_rope_cache");
  EXPECT_EQ(gemmModeName(6), nullptr);
  EXPECT_EQ(gemmModeName(-1), nullptr);
}

TEST(WhitelistTest, RopeFrequenciesAreTheCodecs) {
  // exp of the FP32 exponent float(i) * float(-ln(1e4) / 32): near
  // 10000^(-2i/64) but not it. Pair 8 is one ulp under 0.1f, pair 29 seven
  // ulps under the pow (values of the codec's formula in FP32).
  auto bits = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  EXPECT_EQ(ropeInverseFrequency(0), 1.0f);
  EXPECT_EQ(bits(ropeInverseFrequency(8)), bits(0.1f) - 1);
  const float pow29 = static_cast<float>(std::pow(10000.0, -58.0 / 64));
  EXPECT_EQ(bits(ropeInverseFrequency(29)), bits(pow29) - 7);
  for (int i = 1; i < kRopeHeadDim / 2; ++i) {
    EXPECT_LT(ropeInverseFrequency(i), ropeInverseFrequency(i - 1)) << i;
    const double exact = std::pow(10000.0, -2.0 * i / kRopeHeadDim);
    EXPECT_NEAR(ropeInverseFrequency(i) / exact, 1.0, 1e-6) << i;
  }
}

TEST(WhitelistTest, ModesAreTheirPrologueAndEpilogue) {
  for (int mode = 0; mode < kGemmModeCount; ++mode) {
    const GemmModeInfo *info = gemmModeInfo(mode);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(gemmModeOf(info->layerNorm, info->epilogue), mode);
  }
  EXPECT_TRUE(gemmModeInfo(kGemmModeLayerNormGelu)->layerNorm);
  EXPECT_EQ(gemmModeInfo(kGemmModeLayerNormGelu)->epilogue, kGemmEpilogueGelu);
  EXPECT_FALSE(gemmModeInfo(kGemmModeGelu)->layerNorm);
  EXPECT_EQ(gemmModeOf(true, kGemmEpilogueLayerScaleResidual), -1);
  EXPECT_EQ(gemmModeOf(false, 7), -1);
  EXPECT_EQ(gemmModeOf(false, kGemmEpilogueRopeCache), -1);
  EXPECT_EQ(gemmModeInfo(kGemmModeCount), nullptr);
}

} // namespace

TEST(WhitelistTest, KernelNameNamesShapeModeAndTile) {
  EXPECT_EQ(gemmKernelName(3072, 768, kGemmModeGelu, GemmTile{16, 64, 64, 1}),
            "linear_n3072_k768_gelu_bm16_bn64_bk64_s1");
  EXPECT_EQ(gemmKernelName(768, 3072, kGemmModeLayerScaleResidual,
                           GemmTile{8, 32, 128, 2}),
            "linear_n768_k3072_layerscale_residual_bm8_bn32_bk128_s2");
  EXPECT_NE(gemmKernelName(768, 3072, kGemmModeNone, GemmTile{8, 32, 128, 2}),
            gemmKernelName(768, 3072, kGemmModeNone, GemmTile{8, 32, 128, 4}));
}
