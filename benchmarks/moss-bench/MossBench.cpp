//===- MossBench.cpp - moss-bench: generated GEMMs vs fallback vs cuBLASLt ===//
//
// For every whitelist key and a list of fallback shapes, times through the C
// API the generated kernel (when selected; launched plainly and, from a
// second runtime, as a programmatic dependent: MOSS_CODEC_GEMM_PDL=1), the
// cuBLASLt + exact-epilogue fallback, and plain cuBLASLt as an anchor, with
// hot weights (one copy) and cold weights (>= 24 rotated copies, more than
// twice the L2). Protocol: 3
// warm-ups, 8 calls per CUDA graph, 20 replays per sample, median of 5
// samples, microseconds per call. Each variant's output is checked against
// the FP64 reference (relative L2). Prints a table; --json writes the
// results atomically. --attention times moss_streaming_attention instead
// (AttentionBench.cpp).
//
//===----------------------------------------------------------------------===//

#include "AttentionBench.h"
#include "BenchSupport.h"
#include "CublasAnchor.h"
#include "GemmMeasure.h"
#include "TextCells.h"

#include "moss/Config/FileUtil.h"
#include "moss/Config/GemmMode.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Whitelist.h"
#include "moss/Runtime/moss_runtime.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace moss::bench;

namespace {

constexpr double kTolerance = 0.004;

struct Options {
  std::string kernelsDir, whitelist, jsonPath, commit;
  std::vector<int64_t> mList = {1, 2, 4, 8, 15, 16, 30, 32, 64};
  TimingProtocol protocol;
  bool cold = true;
  bool attention = false;
  std::vector<std::array<int64_t, 4>> attentionCases;
};

using Case = GemmCase;

struct Result {
  Case c;
  bool selected = false;
  /// generatedPdl: the same kernel launched as a programmatic dependent
  /// (MOSS_CODEC_GEMM_PDL=1): each call of the graph overlaps the previous.
  Measurement generated, generatedPdl, fallback, anchor;
  /// The generated kernel's launch: CTAs, CTAs an SM holds, waves.
  moss::config::LaunchOccupancy occupancy;
};

/// moss_runtime_create with MOSS_CODEC_GEMM_PDL set to `pdl` (restored).
moss_status_t createRuntime(const Options &o, const char *pdl,
                            moss_runtime_t *out) {
  return createRuntimeWithEnv(o.kernelsDir, o.whitelist, "MOSS_CODEC_GEMM_PDL",
                              pdl, out);
}

void usage() {
  std::printf(
      "usage: moss-bench [--kernels-dir DIR] [--whitelist PATH] [--json PATH]\n"
      "                  [--commit SHA] [--m-list 1,2,4] [--samples N]\n"
      "                  [--replays N] [--no-cold] [--attention]\n"
      "                  [--attention-cases H:S:T:B,...]\n"
      "  --kernels-dir  kernels_generated/ with manifest.json (default\n"
      "                 $MOSS_KERNELS_DIR, else ./kernels_generated)\n"
      "  --whitelist    whitelist the kernels were built from (default\n"
      "                 $MOSS_CODEC_GEMM_CONFIG, else "
      "configs/h200-example.json)\n"
      "  --commit       recorded in the JSON (default $MOSS_COMMIT)\n"
      "  --m-list       M values of the fallback shapes (decoder "
      "(N,K,mode))\n"
      "  --attention    time moss_streaming_attention instead (decoder "
      "cases,\n"
      "                 BTHD vs BHTD + copy to [B,T,H,D])\n"
      "  --attention-cases  only these (H, S, T, B) cases (implies "
      "--attention)\n");
}

bool parseList(const std::string &text, std::vector<int64_t> &out) {
  return parseSizeList(text, 1 << 20, out);
}

/// "H:S:T:B,H:S:T:B" -> cases; each size in [1, 2^20].
bool parseCases(const std::string &text,
                std::vector<std::array<int64_t, 4>> &out) {
  out.clear();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::replace(item.begin(), item.end(), ':', ',');
    std::vector<int64_t> sizes;
    if (!parseList(item, sizes) || sizes.size() != 4)
      return false;
    out.push_back({sizes[0], sizes[1], sizes[2], sizes[3]});
  }
  return !out.empty();
}

bool parseArgs(int argc, char **argv, Options &o) {
  const char *env = std::getenv("MOSS_KERNELS_DIR");
  o.kernelsDir = env ? env : "kernels_generated";
  env = std::getenv("MOSS_CODEC_GEMM_CONFIG");
  o.whitelist = env ? env : MOSS_BENCH_DEFAULT_WHITELIST;
  env = std::getenv("MOSS_COMMIT");
  o.commit = env ? env : "unknown";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    auto intValue = [&](int &out) {
      std::string text;
      if (!value(text))
        return false;
      return parseCount(text, 1 << 20, out);
    };
    std::string text;
    bool ok = true;
    if (arg == "--kernels-dir")
      ok = value(o.kernelsDir);
    else if (arg == "--whitelist")
      ok = value(o.whitelist);
    else if (arg == "--json")
      ok = value(o.jsonPath);
    else if (arg == "--commit")
      ok = value(o.commit);
    else if (arg == "--m-list")
      ok = value(text) && parseList(text, o.mList);
    else if (arg == "--samples")
      ok = intValue(o.protocol.samples);
    else if (arg == "--replays")
      ok = intValue(o.protocol.replays);
    else if (arg == "--no-cold")
      o.cold = false;
    else if (arg == "--attention")
      o.attention = true;
    else if (arg == "--attention-cases")
      ok = o.attention = value(text) && parseCases(text, o.attentionCases);
    else if (arg == "-h" || arg == "--help") {
      usage();
      std::exit(0);
    } else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "moss-bench: bad argument %s\n", arg.c_str());
      usage();
      return false;
    }
  }
  return true;
}

std::string jsonMeasurement(const Measurement &m) {
  return "{\"hot_us\": " + jsonNumber(m.hotUs) +
         ", \"cold_us\": " + jsonNumber(m.coldUs) +
         ", \"rel_l2\": " + jsonNumber(m.relL2) +
         ", \"error\": " + (m.error.empty() ? "null" : jsonString(m.error)) +
         "}";
}

/// Relative L2 of a table cell, "!" when over the tolerance.
std::string errCell(double rel) {
  return formatMeasured(rel, "%.1e") + (rel < kTolerance ? "" : "!");
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o))
    return 2;
  if (o.attention)
    return runAttentionBench({o.kernelsDir, o.whitelist, o.jsonPath, o.commit,
                              o.protocol, o.attentionCases});
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "moss-bench: no CUDA device\n");
    return 1;
  }

  // The generated runtime needs kernels and the whitelist they came from.
  moss_runtime_t generated = nullptr, generatedPdl = nullptr,
                 fallback = nullptr;
  std::string generatedNote;
  moss::config::Whitelist whitelist;
  std::string err;
  bool haveWhitelist =
      moss::config::Whitelist::load(o.whitelist, whitelist, err);
  if (!std::filesystem::exists(o.kernelsDir + "/manifest.json"))
    generatedNote = "no manifest.json in " + o.kernelsDir;
  else if (!haveWhitelist)
    generatedNote = err;
  else if (createRuntime(o, "0", &generated) != MOSS_OK ||
           createRuntime(o, "1", &generatedPdl) != MOSS_OK)
    generatedNote = moss_runtime_last_error(nullptr);
  if (moss_runtime_create(nullptr, nullptr, &fallback) != MOSS_OK) {
    std::fprintf(stderr, "moss-bench: %s\n", moss_runtime_last_error(nullptr));
    return 1;
  }
  if (!generatedNote.empty())
    std::printf("generated kernels not timed: %s\n", generatedNote.c_str());

  std::vector<Case> cases;
  std::set<std::tuple<int64_t, int64_t, int64_t, int>> seen;
  int ringCacheKeys = 0;
  if (haveWhitelist)
    for (const auto &e : whitelist.entries()) {
      // Mode 5 writes a ring cache beside its output: timed in the layer.
      if (!moss::host::isPlainGemmMode(e.key.mode)) {
        ++ringCacheKeys;
        continue;
      }
      if (seen.insert({e.key.m, e.key.n, e.key.k, e.key.mode}).second)
        cases.push_back({e.key.m, e.key.n, e.key.k, e.key.mode});
    }
  if (ringCacheKeys)
    std::printf("%d mode-5 (layernorm_rope_cache) keys not timed here: "
                "python/benchmarks/layer_step.py times them in the layer\n",
                ringCacheKeys);
  const Case decoder[] = {{0, 3072, 768, 1},
                          {0, 5120, 1280, 1},
                          {0, 768, 3072, 2},
                          {0, 1280, 5120, 2}};
  for (const Case &d : decoder)
    for (int64_t m : o.mList)
      if (seen.insert({m, d.n, d.k, d.mode}).second)
        cases.push_back({m, d.n, d.k, d.mode});

  // The runtime has checked the manifest; it only adds the ptxas report.
  moss::config::Manifest manifest;
  std::string manifestErr;
  if (generated)
    moss::config::readManifest(o.kernelsDir, manifest, manifestErr);
  const moss::config::SmLimits limits = moss::smLimitsOf(prop);

  CublasAnchor anchor;
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::mt19937_64 rng(2024);
  std::vector<Result> results;
  std::printf(
      "%-20s %-4s %-11s | %-17s | %-17s | %-17s | %-17s | %-9s %-9s %-9s "
      "%-9s\n",
      "M,N,K,mode", "gen", "CTAs/SM/w", "generated hot/cold",
      "gen+PDL hot/cold", "fallback hot/cold", "cuBLASLt hot/cold", "err gen",
      "err pdl", "err fb", "err cublas");
  for (const Case &c : cases) {
    int copies = o.cold ? coldWeightCopies(c, prop.l2CacheSize) : 1;
    GemmCaseData data(c, copies, rng);
    Result r;
    r.c = c;
    if (!data.upload()) {
      r.fallback.error = "out of device memory";
      results.push_back(r);
      continue;
    }
    auto viaRuntime = [&](moss_runtime_t rt) {
      return [&, rt](int copy, cudaStream_t s, std::string &e) {
        if (moss::host::callGemm(rt, c.m, c.n, c.k, c.mode, data.operands(copy),
                                 s) == MOSS_OK)
          return true;
        e = moss_runtime_last_error(rt);
        return false;
      };
    };
    r.selected =
        generated && moss::host::gemmSelected(generated, c.m, c.n, c.k, c.mode);
    if (r.selected) {
      r.generated = measureGemm(data, o.protocol, o.cold, false, stream,
                                viaRuntime(generated));
      r.generatedPdl = measureGemm(data, o.protocol, o.cold, false, stream,
                                   viaRuntime(generatedPdl));
    }
    r.fallback = measureGemm(data, o.protocol, o.cold, false, stream,
                             viaRuntime(fallback));
    if (anchor.plan(c.m, c.n, c.k, r.anchor.error))
      r.anchor =
          measureGemm(data, o.protocol, o.cold, true, stream,
                      [&](int copy, cudaStream_t s, std::string &e) {
                        return anchor.run(data.dx.get(), data.weight(copy),
                                          data.dout.get(), s, e);
                      });
    char key[64];
    std::snprintf(key, sizeof(key), "%lld,%lld,%lld,%d", (long long)c.m,
                  (long long)c.n, (long long)c.k, c.mode);
    if (const auto *kernel =
            r.selected ? moss::config::gemmKernelServing(manifest, key)
                       : nullptr)
      r.occupancy = moss::config::gemmLaunchOccupancy(
          *kernel, c.m, prop.multiProcessorCount, limits);
    std::printf(
        "%-20s %-4s %-11s | %8s %8s | %8s %8s | %8s %8s | %8s %8s | %-9s %-9s "
        "%-9s %-9s\n",
        key, r.selected ? "yes" : "no",
        moss::config::occupancyText(r.occupancy).c_str(),
        formatMeasured(r.generated.hotUs).c_str(),
        formatMeasured(r.generated.coldUs).c_str(),
        formatMeasured(r.generatedPdl.hotUs).c_str(),
        formatMeasured(r.generatedPdl.coldUs).c_str(),
        formatMeasured(r.fallback.hotUs).c_str(),
        formatMeasured(r.fallback.coldUs).c_str(),
        formatMeasured(r.anchor.hotUs).c_str(),
        formatMeasured(r.anchor.coldUs).c_str(),
        errCell(r.generated.relL2).c_str(),
        errCell(r.generatedPdl.relL2).c_str(),
        errCell(r.fallback.relL2).c_str(), errCell(r.anchor.relL2).c_str());
    for (const Measurement *m :
         {&r.generated, &r.generatedPdl, &r.fallback, &r.anchor})
      if (!m->error.empty())
        std::printf("  error: %s\n", m->error.c_str());
    std::fflush(stdout);
    results.push_back(r);
  }

  bool allAccurate = true;
  for (const Result &r : results)
    for (const Measurement *m :
         {&r.generated, &r.generatedPdl, &r.fallback, &r.anchor})
      if (m->relL2 >= kTolerance || !m->error.empty())
        allAccurate = false;
  std::printf("times: microseconds per call (median of %d samples of %d graph "
              "replays x %d calls); err: relative L2 vs FP64 reference, '!' "
              ">= %.3g; CTAs/SM/w: the generated kernel's CTAs, how many an "
              "SM holds (registers, shared memory) and the waves over %d "
              "SMs\n",
              o.protocol.samples, o.protocol.replays, o.protocol.callsPerGraph,
              kTolerance, prop.multiProcessorCount);

  if (!o.jsonPath.empty()) {
    char date[32];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string json =
        "{\n  \"gpu\": " + jsonString(prop.name) +
        ",\n  \"date\": " + jsonString(date) +
        ",\n  \"commit\": " + jsonString(o.commit) +
        ",\n  \"kernels_dir\": " + jsonString(o.kernelsDir) +
        ",\n  \"whitelist\": " + jsonString(o.whitelist) +
        ",\n  \"generated_note\": " +
        (generatedNote.empty() ? "null" : jsonString(generatedNote)) +
        ",\n  \"protocol\": {\"warmups\": " +
        std::to_string(o.protocol.warmups) +
        ", \"calls_per_graph\": " + std::to_string(o.protocol.callsPerGraph) +
        ", \"replays_per_sample\": " + std::to_string(o.protocol.replays) +
        ", \"samples\": " + std::to_string(o.protocol.samples) +
        ", \"statistic\": \"median\", \"unit\": \"us per call\", "
        "\"cold_min_copies\": " +
        std::to_string(kMinColdCopies) +
        ", \"l2_bytes\": " + std::to_string(prop.l2CacheSize) +
        "},\n  \"tolerance_rel_l2\": " + jsonNumber(kTolerance) +
        ",\n  \"results\": [";
    for (size_t i = 0; i < results.size(); ++i) {
      const Result &r = results[i];
      json += std::string(i ? "," : "") +
              "\n    {\"m\": " + std::to_string(r.c.m) +
              ", \"n\": " + std::to_string(r.c.n) +
              ", \"k\": " + std::to_string(r.c.k) +
              ", \"mode\": " + std::to_string(r.c.mode) +
              ", \"selected\": " + (r.selected ? "true" : "false") + ", " +
              moss::config::occupancyJsonFields(r.occupancy) +
              ",\n     \"generated\": " + jsonMeasurement(r.generated) +
              ",\n     \"generated_pdl\": " + jsonMeasurement(r.generatedPdl) +
              ",\n     \"fallback\": " + jsonMeasurement(r.fallback) +
              ",\n     \"cublaslt_plain\": " + jsonMeasurement(r.anchor) + "}";
    }
    json += "\n  ]\n}\n";
    if (!moss::config::writeFileAtomic(o.jsonPath, json, err)) {
      std::fprintf(stderr, "moss-bench: %s\n", err.c_str());
      return 1;
    }
    std::printf("wrote %s\n", o.jsonPath.c_str());
  }
  cudaStreamDestroy(stream);
  moss_runtime_destroy(generated);
  moss_runtime_destroy(generatedPdl);
  moss_runtime_destroy(fallback);
  return allAccurate ? 0 : 3;
}
