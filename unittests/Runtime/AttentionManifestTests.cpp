//===- AttentionManifestTests.cpp - The attention record's checks, no GPU -===//
//
// create() refuses an attention record that does not describe the kernel this
// runtime launches (args, params with abi_version first, functions) or whose
// cubin changed, naming the field, before it touches CUDA.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/Sha256.h"
#include "moss/Version.h"

#include <cstdlib>
#include <functional>
#include <string>

using namespace moss::runtime::test;
namespace config = moss::config;

namespace {

const char *kCubin = "not a real cubin";

config::KernelFunctionRecord
function(const std::string &symbol, const std::string &role, int64_t threads) {
  config::KernelFunctionRecord fn;
  fn.symbol = symbol;
  fn.role = role;
  fn.grid = {1, 1, 1};
  fn.block = {threads, 1, 1};
  fn.dynamicSharedBytes = 0;
  return fn;
}

/// A manifest with no GEMMs and the attention record moss-aot writes.
config::Manifest attentionManifest() {
  config::Manifest m;
  m.mossVersion = MOSS_VERSION;
  m.chip = "sm_90a";
  m.pipeline = "test-pipeline";
  m.whitelistSha256 = std::string(64, '0');
  m.cacheKey = std::string(64, '0');
  config::AttentionKernelRecord rec;
  rec.name = config::kAttentionKernelName;
  rec.chip = "sm_90a";
  rec.cubin = rec.name + ".cubin";
  rec.ptx = rec.name + ".ptx";
  rec.cubinSha256 = config::sha256Hex(kCubin);
  rec.args = config::attentionKernelArgNames();
  rec.params = {{"abi_version", config::kAttentionAbiVersion},
                {"head_dim", 64},
                {"keys_per_tile", 64},
                {"rows_per_warp", 16},
                {"max_warps", 4},
                {"min_ctas_per_sm", 3},
                {"grouped_min_ctas_per_sm", 2},
                {"sms", 132},
                {"max_splits", 8},
                {"max_kv_groups", 4},
                {"max_shared_bytes", config::kAttentionMaxSharedBytes}};
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    config::AttentionFunction f = config::attentionFunctionAt(i);
    rec.functions.push_back(function(config::attentionKernelSymbol(f),
                                     config::attentionKernelRole(f), 128));
    rec.functions.back().dynamicSharedBytes = config::kAttentionMaxSharedBytes;
  }
  m.attentionKernels.push_back(rec);
  return m;
}

struct Outcome {
  moss_status_t status;
  std::string message;
};

/// Writes the manifest (after `edit`) and a fake cubin, then creates a
/// runtime without a whitelist.
Outcome createWith(const std::function<void(config::Manifest &)> &edit,
                   ScratchDir &dir) {
  config::Manifest m = attentionManifest();
  edit(m);
  writeText(dir.file(config::kAttentionKernelName + std::string(".cubin")),
            kCubin);
  writeText(dir.file(config::kAttentionKernelName + std::string(".ptx")),
            "// fake\n");
  std::string err;
  EXPECT_TRUE(config::writeManifestAtomic(dir.path, m, err)) << err;
  const char *env = std::getenv("MOSS_CODEC_GEMM_CONFIG");
  std::string saved = env ? env : "";
  unsetenv("MOSS_CODEC_GEMM_CONFIG");
  moss_runtime_t rt = nullptr;
  moss_status_t status = moss_runtime_create(dir.path.c_str(), "", &rt);
  Outcome out{status, moss_runtime_last_error(nullptr)};
  if (env)
    setenv("MOSS_CODEC_GEMM_CONFIG", saved.c_str(), 1);
  moss_runtime_destroy(rt);
  return out;
}

void expectManifestError(const std::function<void(config::Manifest &)> &edit,
                         const std::string &field) {
  ScratchDir dir;
  Outcome r = createWith(edit, dir);
  EXPECT_EQ(r.status, MOSS_ERROR_MANIFEST) << r.message;
  EXPECT_CONTAINS(r.message, field);
  EXPECT_CONTAINS(r.message, dir.path);
}

config::AttentionKernelRecord &rec(config::Manifest &m) {
  return m.attentionKernels.front();
}

TEST(AttentionManifest, ValidRecordPassesHostChecks) {
  ScratchDir dir;
  Outcome r = createWith([](config::Manifest &) {}, dir);
  std::string why;
  if (!gpuAvailable(why)) {
    EXPECT_EQ(r.status, MOSS_ERROR_CUDA) << r.message;
    EXPECT_CONTAINS(r.message, "no CUDA device");
  } else {
    // The fake cubin is no image cuModuleLoadData accepts.
    EXPECT_NE(r.status, MOSS_OK);
    EXPECT_NE(r.status, MOSS_ERROR_MANIFEST) << r.message;
    EXPECT_CONTAINS(r.message, dir.path);
  }
}

TEST(AttentionManifest, AbiVersionIsCheckedFirst) {
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).params["abi_version"] = 1; // main + combine kernel
        rec(m).params["head_dim"] = 128;  // reported after the version
      },
      "\"params.abi_version\" = 1, expected " +
          std::to_string(config::kAttentionAbiVersion));
  // The version before (ABI 8: no copy warps, scalar group hand-overs) is
  // refused as well: its kernels would misread a launch of this rule.
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).params["abi_version"] = config::kAttentionAbiVersion - 1;
      },
      "\"params.abi_version\" = " +
          std::to_string(config::kAttentionAbiVersion - 1) + ", expected " +
          std::to_string(config::kAttentionAbiVersion));
  expectManifestError(
      [](config::Manifest &m) { rec(m).params.erase("abi_version"); },
      "\"params.abi_version\" is missing");
}

TEST(AttentionManifest, ParamsMustMatchCompiledConstants) {
  expectManifestError(
      [](config::Manifest &m) { rec(m).params["head_dim"] = 128; },
      "\"params.head_dim\" = 128, expected 64");
  expectManifestError(
      [](config::Manifest &m) { rec(m).params["max_splits"] = 16; },
      "\"params.max_splits\" = 16, expected 8");
  // An ABI 4 record's workspace constants are not parameters any more.
  expectManifestError(
      [](config::Manifest &m) { rec(m).params["counters"] = 1024; },
      "\"params.counters\" is not a parameter");
  expectManifestError(
      [](config::Manifest &m) { rec(m).params.erase("keys_per_tile"); },
      "\"params.keys_per_tile\" is missing");
  expectManifestError(
      [](config::Manifest &m) { rec(m).params["new_knob"] = 1; },
      "\"params.new_knob\" is not a parameter");
}

TEST(AttentionManifest, ArgsMustMatchTheAbi) {
  expectManifestError(
      [](config::Manifest &m) { std::swap(rec(m).args[22], rec(m).args[23]); },
      "\"args[22]\" is \"flags\", expected \"layout\"");
  expectManifestError([](config::Manifest &m) { rec(m).args.pop_back(); },
                      "\"args\" has 30 entries, expected 31");
  // An ABI 4 record still naming the workspace.
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).args.insert(rec(m).args.begin() + 5, "workspace");
      },
      "\"args[5]\" is \"workspace\", expected \"q_stride_b\"");
}

TEST(AttentionManifest, OnePassAndSplitFunctionPerKeyGroupCount) {
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[0].role = "main"; },
      "\"functions[0].role\" is \"main\", expected \"g1\"");
  // An ABI 2 record (one function) under the current version number.
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).functions = {function(rec(m).name, "main", 128)};
      },
      "\"functions\" has 1 entries, expected 24 (roles \"g1\" .. \"g4\", "
      "then \"g1_split\" .. \"g4_split\", then \"g4_tma\", \"g2_tma\", "
      "\"g1_tma\" and \"g4_tma_kv\", then each with \"_pos\")");
  // An ABI 5 record: the four functions that served both.
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(4); },
                      "\"functions\" has 4 entries, expected 24");
  // An ABI 9 record: no TMA function.
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(8); },
                      "\"functions\" has 8 entries, expected 24");
  // An ABI 11 record: no g2_tma (nor g1_tma).
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(9); },
                      "\"functions\" has 9 entries, expected 24");
  // An ABI 12 record: no g1_tma (nor g4_tma_kv).
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(10); },
                      "\"functions\" has 10 entries, expected 24");
  // An ABI 13 record: no g4_tma_kv.
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(11); },
                      "\"functions\" has 11 entries, expected 24");
  // An ABI 14 record: no positions functions.
  expectManifestError([](config::Manifest &m) { rec(m).functions.resize(12); },
                      "\"functions\" has 12 entries, expected 24");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[12].role = "g1"; },
      "\"functions[12].role\" is \"g1\", expected \"g1_pos\"");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[9].role = "g4_tma"; },
      "\"functions[9].role\" is \"g4_tma\", expected \"g2_tma\"");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[10].role = "g2_tma"; },
      "\"functions[10].role\" is \"g2_tma\", expected \"g1_tma\"");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[11].role = "g4_tma"; },
      "\"functions[11].role\" is \"g4_tma\", expected \"g4_tma_kv\"");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[8].role = "g4"; },
      "\"functions[8].role\" is \"g4\", expected \"g4_tma\"");
  expectManifestError(
      [](config::Manifest &m) {
        std::swap(rec(m).functions[0], rec(m).functions[4]);
      },
      "\"functions[0].role\" is \"g1_split\", expected \"g1\"");
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).functions[6].symbol = "streaming_attention_d64_g3";
      },
      "\"functions[6].symbol\" is \"streaming_attention_d64_g3\", expected "
      "\"streaming_attention_d64_g3_split\"");
  expectManifestError(
      [](config::Manifest &m) {
        std::swap(rec(m).functions[1].symbol, rec(m).functions[2].symbol);
      },
      "\"functions[1].symbol\" is \"streaming_attention_d64_g3\", expected "
      "\"streaming_attention_d64_g2\"");
  expectManifestError(
      [](config::Manifest &m) { rec(m).functions[3].block[0] = 256; },
      "\"functions[3].block\" is [256, 1, 1], expected [128, 1, 1]");
  // A kernel built for another shared-memory budget.
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).functions[2].dynamicSharedBytes = 32768;
      },
      "\"functions[2].dynamic_shared_bytes\" = 32768, expected 188432");
}

TEST(AttentionManifest, NameChipAndDigest) {
  expectManifestError(
      [](config::Manifest &m) { rec(m).name = "streaming_attention_d128"; },
      "field \"name\"");
  expectManifestError([](config::Manifest &m) { rec(m).chip = "sm_100a"; },
                      "chip \"sm_100a\" differs");
  expectManifestError(
      [](config::Manifest &m) {
        rec(m).cubinSha256 = config::sha256Hex("another cubin");
      },
      "has sha256");
  expectManifestError(
      [](config::Manifest &m) { m.attentionKernels.push_back(rec(m)); },
      "lists 2 kernels");
}

} // namespace
