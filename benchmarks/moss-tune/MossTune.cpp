//===- MossTune.cpp - moss-tune: time tile candidates, write the whitelist ===//
//
//   moss-tune --candidates DIR --out DIR [--samples N] [--replays N]
//             [--commit SHA]
//
// For every key of DIR/candidates.json (built by moss-aot --candidates),
// times the fallback (cuBLASLt + exact epilogue) and every candidate tile in
// the protocol of moss-bench (GemmMeasure.h: 3 warm-ups, 8 calls per CUDA
// graph, 20 replays per sample, median of 5 samples; hot weights and >= 24
// rotated cold copies), checks relative L2 against the FP64 reference and
// that a graph replay equals the eager call bit for bit. The confirmation
// run times the fallback again and every candidate that passed the initial
// run. Selection.h decides what is kept. Writes OUT/whitelist.json,
// OUT/report.md, OUT/plot.png and OUT/results.json (each atomically).
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "GemmMeasure.h"
#include "Plot.h"
#include "Report.h"
#include "Selection.h"
#include "TextCells.h"

#include "moss/Config/CandidateSet.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/GemmMode.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Whitelist.h"
#include "moss/Runtime/moss_runtime.h"
#include "moss/Support/GemmCall.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <sys/stat.h>
#include <tuple>

using namespace moss;
using namespace moss::bench;
using namespace moss::tune;

namespace {

/// How the runtime launches the candidates: MOSS_CODEC_GEMM_PDL, read by
/// moss_runtime_create, decides it (the report says which was timed).
std::string launchMode() {
  const char *pdl = std::getenv("MOSS_CODEC_GEMM_PDL");
  return pdl && std::string(pdl) == "1"
             ? "as programmatic dependents (MOSS_CODEC_GEMM_PDL=1)"
             : "plainly (MOSS_CODEC_GEMM_PDL unset or 0)";
}

struct Options {
  std::string candidatesDir, outDir, commit = "unknown";
  TimingProtocol protocol;
};

void usage() {
  std::printf("usage: moss-tune --candidates DIR --out DIR [--samples N]\n"
              "                 [--replays N] [--commit SHA]\n"
              "  --candidates  folder written by moss-aot --candidates\n"
              "  --out         gets whitelist.json, report.md, plot.png and\n"
              "                results.json\n");
}

bool parseArgs(int argc, char **argv, Options &o) {
  if (const char *env = std::getenv("MOSS_COMMIT"))
    o.commit = env;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--candidates" && hasValue)
      o.candidatesDir = argv[++i];
    else if (arg == "--out" && hasValue)
      o.outDir = argv[++i];
    else if (arg == "--commit" && hasValue)
      o.commit = argv[++i];
    else if ((arg == "--samples" || arg == "--replays") && hasValue) {
      int v = 0;
      if (!bench::parseCount(argv[++i], 1 << 20, v)) {
        std::fprintf(stderr,
                     "moss-tune: %s needs a whole number from 1 to %d, found "
                     "\"%s\"\n",
                     arg.c_str(), 1 << 20, argv[i]);
        return false;
      }
      (arg == "--samples" ? o.protocol.samples : o.protocol.replays) = v;
    } else if (arg == "-h" || arg == "--help") {
      usage();
      std::exit(0);
    } else {
      std::fprintf(stderr, "moss-tune: bad argument %s\n", arg.c_str());
      usage();
      return false;
    }
  }
  if (o.candidatesDir.empty() || o.outDir.empty()) {
    usage();
    return false;
  }
  return true;
}

struct RuntimeDeleter {
  void operator()(moss_runtime_s *rt) const { moss_runtime_destroy(rt); }
};
using RuntimePtr = std::unique_ptr<moss_runtime_s, RuntimeDeleter>;

/// The runtime of one round folder: its kernels with its own whitelist, as
/// any user would load them. The last one is kept for the next candidate.
class RoundRuntimes {
public:
  explicit RoundRuntimes(std::string dir) : dir(std::move(dir)) {}
  moss_runtime_t get(const std::string &round, std::string &err) {
    if (round == currentRound)
      return current.get();
    current.reset();
    currentRound.clear();
    std::string kernels = dir + "/" + round;
    std::string whitelist = kernels + "/" + config::kRoundWhitelistFileName;
    moss_runtime_t rt = nullptr;
    if (moss_runtime_create(kernels.c_str(), whitelist.c_str(), &rt) !=
        MOSS_OK) {
      err = "round " + round + ": " + moss_runtime_last_error(nullptr);
      return nullptr;
    }
    current.reset(rt);
    currentRound = round;
    return rt;
  }

private:
  std::string dir, currentRound;
  RuntimePtr current;
};

GemmCallFn viaRuntime(moss_runtime_t rt, GemmCaseData &data) {
  return [rt, &data](int copy, cudaStream_t s, std::string &e) {
    const GemmCase &c = data.c;
    if (host::callGemm(rt, c.m, c.n, c.k, c.mode, data.operands(copy), s) ==
        MOSS_OK)
      return true;
    e = moss_runtime_last_error(rt);
    return false;
  };
}

/// Times one candidate in run `run`; the first run also checks it.
void measureCandidate(CandidateResult &c, const config::GemmKey &key, int run,
                      RoundRuntimes &rounds, GemmCaseData &data,
                      const Options &o, cudaStream_t stream) {
  moss_runtime_t rt = rounds.get(c.round, c.error);
  if (!rt)
    return;
  if (!host::gemmSelected(rt, key.m, key.n, key.k, key.mode)) {
    c.error = "round " + c.round + " does not run a generated kernel for it";
    return;
  }
  GemmCallFn call = viaRuntime(rt, data);
  if (run == 0 &&
      !graphReplayEqualsEager(data, stream, call, c.graphEqualsEager, c.error))
    return;
  Measurement m = measureGemm(data, o.protocol, true, false, stream, call);
  c.error = m.error;
  c.run[run] = {m.hotUs, m.coldUs};
  if (run == 0)
    c.relL2 = m.relL2;
}

std::string tileText(const config::GemmTile &t) {
  char text[48];
  std::snprintf(text, sizeof(text), "[%lld,%lld,%lld,%lld]", (long long)t.bm,
                (long long)t.bn, (long long)t.bk, (long long)t.split);
  return text;
}

bool writeOutputs(const Options &o, const std::vector<KeyResult> &keys,
                  const std::string &header, std::string &err) {
  std::vector<int> chosen;
  for (const KeyResult &key : keys)
    chosen.push_back(selectCandidate(key));
  std::string whitelist = whitelistJson(keys, chosen);
  std::string whitelistPath = o.outDir + "/whitelist.json";
  config::Whitelist parsed; // The runtime's validator must accept it.
  return config::Whitelist::parse(whitelist, whitelistPath, parsed, err) &&
         config::writeFileAtomic(whitelistPath, whitelist, err) &&
         config::writeFileAtomic(o.outDir + "/report.md",
                                 markdownReport(keys, chosen, header), err) &&
         config::writeFileAtomic(o.outDir + "/results.json",
                                 resultsJson(keys, chosen, header), err) &&
         config::writeFileAtomic(o.outDir + "/plot.png",
                                 renderPlotPng(tunePlotPanels(keys, chosen)),
                                 err);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o))
    return 2;
  config::CandidateList list;
  std::string err;
  if (!config::readCandidateList(o.candidatesDir, list, err)) {
    std::fprintf(stderr, "moss-tune: %s\n", err.c_str());
    return 1;
  }
  mkdir(o.outDir.c_str(), 0755);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "moss-tune: no CUDA device\n");
    return 1;
  }
  moss_runtime_t fallbackRt = nullptr;
  if (moss_runtime_create(nullptr, nullptr, &fallbackRt) != MOSS_OK) {
    std::fprintf(stderr, "moss-tune: %s\n", moss_runtime_last_error(nullptr));
    return 1;
  }
  RuntimePtr fallback(fallbackRt);
  RoundRuntimes rounds(o.candidatesDir);
  std::printf("candidates launched %s\n", launchMode().c_str());

  std::vector<KeyResult> keys;
  int ringCacheKeys = 0;
  for (const config::CandidateKey &entry : list.keys) {
    // Mode 5 writes a ring cache beside its output: not timed one by one.
    if (!host::isPlainGemmMode(entry.key.mode)) {
      ++ringCacheKeys;
      continue;
    }
    KeyResult key;
    key.keyText = entry.keyText;
    key.key = entry.key;
    for (const config::Candidate &c : entry.candidates) {
      CandidateResult result;
      result.tile = c.tile;
      result.round = c.round;
      key.candidates.push_back(result);
    }
    keys.push_back(std::move(key));
  }
  if (ringCacheKeys)
    std::printf("%d mode-5 (layernorm_rope_cache) keys not tuned: their calls "
                "write a ring cache; their tiles stay the whitelist's\n",
                ringCacheKeys);
  std::sort(keys.begin(), keys.end(),
            [](const KeyResult &a, const KeyResult &b) {
              return std::make_tuple(a.key.mode, a.key.n, a.key.k, a.key.m) <
                     std::make_tuple(b.key.mode, b.key.n, b.key.k, b.key.m);
            });

  // Each candidate's launch from its round's manifest (the ptxas report).
  const config::SmLimits limits = moss::smLimitsOf(prop);
  std::map<std::string, config::Manifest> manifests;
  for (KeyResult &key : keys)
    for (CandidateResult &cand : key.candidates) {
      auto round = manifests.find(cand.round);
      if (round == manifests.end()) {
        config::Manifest manifest;
        std::string ignored; // the runtime reports a bad round when timing
        config::readManifest(o.candidatesDir + "/" + cand.round, manifest,
                             ignored);
        round = manifests.emplace(cand.round, std::move(manifest)).first;
      }
      if (const config::GemmKernelRecord *kernel =
              config::gemmKernelServing(round->second, key.keyText))
        cand.occupancy = config::gemmLaunchOccupancy(
            *kernel, key.key.m, prop.multiProcessorCount, limits);
    }

  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::mt19937_64 rng(2024);
  for (KeyResult &key : keys) {
    GemmCase c{key.key.m, key.key.n, key.key.k, key.key.mode};
    GemmCaseData data(c, coldWeightCopies(c, prop.l2CacheSize), rng);
    if (!data.upload()) {
      key.fallbackError = "out of device memory";
      continue;
    }
    for (int run = 0; run < kRuns; ++run) {
      Measurement fb = measureGemm(data, o.protocol, true, false, stream,
                                   viaRuntime(fallback.get(), data));
      key.fallback[run] = {fb.hotUs, fb.coldUs};
      if (run == 0)
        key.fallbackRelL2 = fb.relL2;
      if (!fb.error.empty())
        key.fallbackError = fb.error;
      for (CandidateResult &cand : key.candidates)
        if (run == 0 || passesRun(cand, key, 0))
          measureCandidate(cand, key.key, run, rounds, data, o, stream);
    }
    int kept = selectCandidate(key);
    std::printf(
        "%-16s fallback %s/%s %s/%s us; %zu candidates; %s\n",
        key.keyText.c_str(), formatMeasured(key.fallback[0].hotUs).c_str(),
        formatMeasured(key.fallback[0].coldUs).c_str(),
        formatMeasured(key.fallback[1].hotUs).c_str(),
        formatMeasured(key.fallback[1].coldUs).c_str(), key.candidates.size(),
        kept < 0 ? "fallback"
                 : ("kept " + tileText(key.candidates[kept].tile) + " " +
                    formatMeasured(key.candidates[kept].run[1].hotUs) + "/" +
                    formatMeasured(key.candidates[kept].run[1].coldUs))
                       .c_str());
    std::fflush(stdout);
  }
  cudaStreamDestroy(stream);

  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string header =
      "# moss-tune: " + std::string(prop.name) + ", " + date + ", commit " +
      o.commit + "\n\nCandidates: `" + o.candidatesDir +
      "`. Protocol: " + std::to_string(o.protocol.warmups) + " warm-ups, " +
      std::to_string(o.protocol.callsPerGraph) + " calls per CUDA graph, " +
      std::to_string(o.protocol.replays) + " replays per sample, median of " +
      std::to_string(o.protocol.samples) +
      " samples, us per call; cold: >= 24 rotated weight copies. Run 2 "
      "(confirmation) times the fallback and the candidates that passed run "
      "1. Kept: rel. L2 < 0.004, graph replay == eager bit for bit, > 5 % "
      "faster than the fallback hot and cold in both runs; the lowest sum of "
      "the four times wins. Candidates launched " +
      launchMode() + "; the fallback is never.\n";
  if (!writeOutputs(o, keys, header, err)) {
    std::fprintf(stderr, "moss-tune: %s\n", err.c_str());
    return 1;
  }
  std::printf("wrote %s/{whitelist.json,report.md,results.json,plot.png}\n",
              o.outDir.c_str());
  return 0;
}
