//===- AttentionBench.cpp - moss-bench --attention ------------------------===//
//
// The decoder's attention cases through the C API: (H, S) in {(20, 125),
// (12, 250), (12, 400)}, T in {1, 32, 240, 480}, B in {1, 4, 16}; q a view of
// a fused [B,T,3,H,D] QKV buffer, a full window (every query sees S keys)
// with ring-rolled slots. Variants: BTHD (the kernel writes [B,T,H,D]), BHTD,
// BHTD plus the copy to [B,T,H,D] the output projection would need, and
// BTHD with the mask from slot and query positions (same bits required).
// Protocol: 3 warm-ups, CUDA graph of 8 calls, 20 replays per sample, median
// of 5 samples, microseconds per call. Each variant's output is checked
// against an FP64 reference of masked softmax attention (relative L2).
//
//===----------------------------------------------------------------------===//

#include "AttentionBench.h"
#include "BhtdToBthd.h"
#include "TextCells.h"
#include "moss/Support/HostAttentionReference.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"
#include "moss/Runtime/moss_runtime.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

namespace moss::bench {
namespace {

constexpr int64_t D = 64;
constexpr double kTolerance = 3e-3;

/// Upstream Triton kernel writing [B,T,H,D] plus the reshape (issue 5),
/// microseconds per call on an H200: (H, S, B, T) -> us.
const std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, double>
    kUpstream = {{{12, 400, 1, 1}, 8.5},     {{12, 400, 1, 32}, 8.7},
                 {{12, 400, 4, 32}, 9.0},    {{12, 400, 16, 32}, 12.8},
                 {{12, 400, 16, 480}, 58.8}, {{12, 250, 1, 1}, 5.7},
                 {{12, 250, 16, 480}, 72.3}, {{20, 125, 1, 1}, 3.7},
                 {{20, 125, 16, 240}, 33.9}};

struct Case {
  int64_t H, S, T, B;
};

struct Row {
  Case c;
  /// The launch the runtime makes; unset where the rule refuses the case.
  std::optional<config::AttentionLaunch> launch;
  int64_t splits() const { return launch ? launch->splits : 0; }
  int64_t kvGroups() const { return launch ? launch->kvGroups : 0; }
  /// CTAs, CTAs an SM holds and waves of that launch (Occupancy.h).
  config::LaunchOccupancy occupancy;
  /// bthdPdl: bthd with MOSS_ATTENTION_PDL=1 (each call of the graph may
  /// be scheduled while the previous one finishes). bthdCp: bthd with
  /// MOSS_ATTENTION_TMA=0 (K and V by cp.async instead of the TMA engine).
  /// bthdPos: bthd with the mask from slot and query positions.
  double bthd = -1, bthdPdl = -1, bthdCp = -1, bthdPos = -1, bhtd = -1,
         bhtdCopy = -1, upstream = -1;
  double errBthd = -1, errBhtdCopy = -1;
  std::string error;
};

/// Host data of one case: fused QKV, K/V caches, a full-window ring mask.
struct HostCase {
  Case c;
  std::vector<uint16_t> qkv, k, v;
  std::vector<uint8_t> mask;
  /// The same mask as positions: slot s holds `slots[b, s]`, query t sits
  /// at S + t.
  std::vector<int64_t> slots, queries;

  HostCase(const Case &c, std::mt19937_64 &rng) : c(c) {
    qkv = randomBf16(size_t(c.B * c.T * 3 * c.H * D), -2, 2, rng);
    k = randomBf16(size_t(c.B * c.H * c.S * D), -2, 2, rng);
    v = randomBf16(size_t(c.B * c.H * c.S * D), -2, 2, rng);
    mask.assign(size_t(c.B * c.T * c.S), 0);
    slots.assign(size_t(c.B * c.S), 0);
    queries.assign(size_t(c.B * c.T), 0);
    for (int64_t b = 0; b < c.B; ++b) {
      for (int64_t t = 0; t < c.T; ++t)
        queries[size_t(b * c.T + t)] = c.S + t;
      // Position p lives in slot (p + roll) % S; query t is at S + t and
      // sees positions (S + t - S, S + t]: its whole window.
      int64_t roll = int64_t(rng() % uint64_t(c.S)), newest = c.S + c.T - 1;
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t slot = 0; slot < c.S; ++slot) {
          int64_t base = ((slot - roll) % c.S + c.S) % c.S;
          int64_t pos = newest - (((newest - base) % c.S) + c.S) % c.S;
          mask[size_t((b * c.T + t) * c.S + slot)] = pos <= c.S + t && pos > t;
          slots[size_t(b * c.S + slot)] = pos;
        }
    }
  }

  /// FP64 masked softmax attention in [B,T,H,D] order.
  std::vector<double> reference() const {
    return host::referenceAttention({c.B, c.H, c.T, c.S, D, qkv.data(),
                                     k.data(), v.data(), mask.data(),
                                     1.0 / std::sqrt(double(D))});
  }
};

std::vector<uint16_t> downloadBf16(const void *device, size_t n) {
  std::vector<uint16_t> out(n);
  cudaMemcpy(out.data(), device, n * 2, cudaMemcpyDeviceToHost);
  return out;
}

Row runCase(moss_runtime_t rt, moss_runtime_t rtPdl, moss_runtime_t rtCp,
            const Case &c, const TimingProtocol &protocol, cudaStream_t stream,
            std::mt19937_64 &rng) {
  Row row;
  row.c = c;
  auto up = kUpstream.find({c.H, c.S, c.B, c.T});
  if (up != kUpstream.end())
    row.upstream = up->second;
  config::AttentionLaunch launch;
  std::string err;
  // The launch the runtime makes, tuning overrides included (the runtime
  // has validated them).
  auto forced = [](const char *name, long long unset) {
    const char *text = std::getenv(name);
    return text ? std::atoll(text) : unset;
  };
  if (config::deriveAttentionLaunch(
          c.B, c.H, c.T, c.S, forced("MOSS_ATTENTION_SPLITS", 0),
          forced("MOSS_ATTENTION_KV_GROUPS", 0), launch, err,
          forced("MOSS_ATTENTION_COPY_WARPS", -1)))
    row.launch = launch;

  HostCase host(c, rng);
  size_t outElems = size_t(c.B * c.T * c.H * D);
  DeviceBuffer qkv(host.qkv.size() * 2), k(host.k.size() * 2),
      v(host.v.size() * 2), mask(host.mask.size()), out(outElems * 2),
      bhtd(outElems * 2), slots(host.slots.size() * 8),
      queries(host.queries.size() * 8);
  if (!qkv.ok() || !k.ok() || !v.ok() || !mask.ok() || !out.ok() ||
      !bhtd.ok() || !slots.ok() || !queries.ok()) {
    row.error = "out of device memory";
    return row;
  }
  cudaMemcpy(qkv.get(), host.qkv.data(), host.qkv.size() * 2,
             cudaMemcpyHostToDevice);
  cudaMemcpy(k.get(), host.k.data(), host.k.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(v.get(), host.v.data(), host.v.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(mask.get(), host.mask.data(), host.mask.size(),
             cudaMemcpyHostToDevice);
  cudaMemcpy(slots.get(), host.slots.data(), host.slots.size() * 8,
             cudaMemcpyHostToDevice);
  cudaMemcpy(queries.get(), host.queries.data(), host.queries.size() * 8,
             cudaMemcpyHostToDevice);

  moss_attention_args a{};
  a.B = c.B, a.H = c.H, a.T = c.T, a.S = c.S, a.D = D;
  a.q = qkv.get();
  int64_t qs[4] = {c.T * 3 * c.H * D, D, 3 * c.H * D, 1};
  int64_t kvs[4] = {c.H * c.S * D, c.S * D, D, 1};
  std::copy(qs, qs + 4, a.q_stride);
  a.k = k.get();
  std::copy(kvs, kvs + 4, a.k_stride);
  a.v = v.get();
  std::copy(kvs, kvs + 4, a.v_stride);
  a.mask = mask.get();
  a.mask_stride[0] = c.T * c.S, a.mask_stride[1] = c.S, a.mask_stride[2] = 1;
  a.layout = MOSS_LAYOUT_BTHD;
  a.scale = 0.f;

  moss_attention_args byPositions = a;
  byPositions.mask = nullptr;
  byPositions.slot_positions = static_cast<const int64_t *>(slots.get());
  byPositions.slot_positions_stride_b = c.S;
  byPositions.query_positions = static_cast<const int64_t *>(queries.get());
  byPositions.query_positions_stride_b = c.T;
  auto attention = [&](moss_layout_t layout, void *target, cudaStream_t s,
                       moss_runtime_t on, bool positions = false) {
    moss_attention_args call = positions ? byPositions : a;
    call.layout = layout;
    call.out = target;
    if (moss_streaming_attention(on, &call, s) == MOSS_OK)
      return true;
    if (row.error.empty())
      row.error = moss_runtime_last_error(on);
    return false;
  };
  auto bthdCall = [&](int, int, cudaStream_t s) {
    return attention(MOSS_LAYOUT_BTHD, out.get(), s, rt);
  };
  auto bthdPdlCall = [&](int, int, cudaStream_t s) {
    return attention(MOSS_LAYOUT_BTHD, out.get(), s, rtPdl);
  };
  auto bthdCpCall = [&](int, int, cudaStream_t s) {
    return attention(MOSS_LAYOUT_BTHD, out.get(), s, rtCp);
  };
  auto bthdPosCall = [&](int, int, cudaStream_t s) {
    return attention(MOSS_LAYOUT_BTHD, out.get(), s, rt, /*positions=*/true);
  };
  auto bhtdCall = [&](int, int, cudaStream_t s) {
    return attention(MOSS_LAYOUT_BHTD, bhtd.get(), s, rt);
  };
  auto bhtdCopyCall = [&](int, int, cudaStream_t s) {
    if (!attention(MOSS_LAYOUT_BHTD, bhtd.get(), s, rt))
      return false;
    cudaError_t e = launchBhtdToBthd(bhtd.get(), out.get(), c.B, c.H, c.T, s);
    if (e != cudaSuccess && row.error.empty())
      row.error = std::string("copy kernel: ") + cudaGetErrorName(e);
    return e == cudaSuccess;
  };

  std::vector<double> ref = host.reference();
  auto poisonOut = [&] { cudaMemset(out.get(), 0xFF, outElems * 2); };
  poisonOut();
  std::vector<uint16_t> plainBits;
  if (bthdCall(0, 0, stream) && cudaStreamSynchronize(stream) == cudaSuccess) {
    plainBits = downloadBf16(out.get(), outElems);
    row.errBthd = relativeL2(plainBits, ref);
  }
  row.bthd = timePerCallUs(stream, protocol, 1, bthdCall, err);
  // A variant of the bthd call that must give its bits (checked once here,
  // the timing loop repeats it), timed.
  auto timeSameBits = [&](auto call, const char *mismatch) {
    poisonOut();
    if (call(0, 0, stream) && cudaStreamSynchronize(stream) == cudaSuccess &&
        downloadBf16(out.get(), outElems) != plainBits && row.error.empty())
      row.error = mismatch;
    return timePerCallUs(stream, protocol, 1, call, err);
  };
  // The programmatic launch runs the same kernel; the cp.async copies differ
  // only in how K and V reach shared memory.
  row.bthdPdl =
      timeSameBits(bthdPdlCall, "the programmatic launch gave different bits");
  row.bthdCp = timeSameBits(
      bthdCpCall, "K/V by cp.async gave different bits than by the TMA engine");
  row.bthdPos = timeSameBits(
      bthdPosCall, "the mask from positions gave different bits than the mask");
  row.bhtd = timePerCallUs(stream, protocol, 1, bhtdCall, err);
  poisonOut();
  if (bhtdCopyCall(0, 0, stream) &&
      cudaStreamSynchronize(stream) == cudaSuccess)
    row.errBhtdCopy = relativeL2(downloadBf16(out.get(), outElems), ref);
  row.bhtdCopy = timePerCallUs(stream, protocol, 1, bhtdCopyCall, err);
  if (row.error.empty() && !err.empty())
    row.error = err;
  return row;
}

} // namespace

int runAttentionBench(const AttentionBenchOptions &o) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "moss-bench: no CUDA device\n");
    return 1;
  }
  moss_runtime_t rt = nullptr, rtPdl = nullptr, rtCp = nullptr;
  if (!std::filesystem::exists(o.kernelsDir + "/manifest.json")) {
    std::fprintf(stderr, "moss-bench: no manifest.json in %s\n",
                 o.kernelsDir.c_str());
    return 1;
  }
  if (createRuntimeWithEnv(o.kernelsDir, o.whitelist, "MOSS_ATTENTION_PDL", "0",
                           &rt) != MOSS_OK ||
      createRuntimeWithEnv(o.kernelsDir, o.whitelist, "MOSS_ATTENTION_PDL", "1",
                           &rtPdl) != MOSS_OK ||
      createRuntimeWithEnv(o.kernelsDir, o.whitelist, "MOSS_ATTENTION_TMA", "0",
                           &rtCp) != MOSS_OK) {
    std::fprintf(stderr, "moss-bench: %s\n", moss_runtime_last_error(nullptr));
    moss_runtime_destroy(rtPdl);
    moss_runtime_destroy(rt);
    return 1;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::mt19937_64 rng(2025);
  // The runtime has checked the manifest; it only adds the ptxas report.
  config::Manifest manifest;
  std::string manifestErr;
  const config::AttentionKernelRecord *kernel = nullptr;
  if (config::readManifest(o.kernelsDir, manifest, manifestErr) &&
      !manifest.attentionKernels.empty())
    kernel = &manifest.attentionKernels.front();
  const config::SmLimits limits = moss::smLimitsOf(prop);
  std::vector<Row> rows;
  std::printf(
      "%4s %4s %4s %3s | %6s %11s | %8s %8s %8s %8s %8s %10s | %8s | %-8s "
      "%-8s\n",
      "H", "S", "T", "B", "sp x g", "CTAs/SM/w", "bthd", "bthd+PDL", "cp.async",
      "position", "bhtd", "bhtd+copy", "upstream", "err", "err cp");
  std::vector<std::array<int64_t, 4>> cases = o.cases;
  const int64_t heads[3][2] = {{20, 125}, {12, 250}, {12, 400}};
  if (cases.empty())
    for (const auto &hs : heads)
      for (int64_t t : {1, 32, 240, 480})
        for (int64_t b : {1, 4, 16})
          cases.push_back({hs[0], hs[1], t, b});
  for (const auto &hstb : cases) {
    Row r = runCase(rt, rtPdl, rtCp, {hstb[0], hstb[1], hstb[2], hstb[3]},
                    o.protocol, stream, rng);
    if (kernel && r.launch)
      r.occupancy = config::attentionLaunchOccupancy(
          *kernel, *r.launch, prop.multiProcessorCount, limits);
    std::printf(
        "%4lld %4lld %4lld %3lld | %6s %11s | %8s %8s %8s %8s %8s %10s | %8s | "
        "%-8s %-8s%s\n",
        (long long)r.c.H, (long long)r.c.S, (long long)r.c.T, (long long)r.c.B,
        (std::to_string(r.splits()) + "x" + std::to_string(r.kvGroups()))
            .c_str(),
        config::occupancyText(r.occupancy).c_str(),
        formatMeasured(r.bthd).c_str(), formatMeasured(r.bthdPdl).c_str(),
        formatMeasured(r.bthdCp).c_str(), formatMeasured(r.bthdPos).c_str(),
        formatMeasured(r.bhtd).c_str(), formatMeasured(r.bhtdCopy).c_str(),
        formatMeasured(r.upstream, "%.1f").c_str(),
        formatMeasured(r.errBthd, "%.1e").c_str(),
        formatMeasured(r.errBhtdCopy, "%.1e").c_str(),
        r.upstream > 0 && r.bthd > r.upstream ? "  (slower than upstream)"
                                              : "");
    if (!r.error.empty())
      std::printf("  error: %s\n", r.error.c_str());
    std::fflush(stdout);
    rows.push_back(r);
  }
  bool ok = true;
  for (const Row &r : rows)
    ok &= r.error.empty() && r.errBthd >= 0 && r.errBthd <= kTolerance &&
          r.errBhtdCopy >= 0 && r.errBhtdCopy <= kTolerance;
  std::printf("times: microseconds per call (median of %d samples of %d graph "
              "replays x %d calls); err: relative L2 vs FP64 reference "
              "(tolerance %.0e); upstream: Triton [B,T,H,D] + reshape, "
              "H200 (issue 5); CTAs/SM/w: the bthd launch's CTAs, how many "
              "an SM holds (registers, shared memory) and the waves over %d "
              "SMs\n",
              o.protocol.samples, o.protocol.replays, o.protocol.callsPerGraph,
              kTolerance, prop.multiProcessorCount);

  int code = ok ? 0 : 3;
  if (!o.jsonPath.empty()) {
    char date[32];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string json =
        "{\n  \"benchmark\": \"attention\",\n  \"gpu\": " +
        jsonString(prop.name) + ",\n  \"date\": " + jsonString(date) +
        ",\n  \"commit\": " + jsonString(o.commit) +
        ",\n  \"kernels_dir\": " + jsonString(o.kernelsDir) +
        ",\n  \"protocol\": {\"warmups\": " +
        std::to_string(o.protocol.warmups) +
        ", \"calls_per_graph\": " + std::to_string(o.protocol.callsPerGraph) +
        ", \"replays_per_sample\": " + std::to_string(o.protocol.replays) +
        ", \"samples\": " + std::to_string(o.protocol.samples) +
        ", \"statistic\": \"median\", \"unit\": \"us per call\"}" +
        ",\n  \"workload\": \"q a view of fused [B,T,3,H,D] QKV; full "
        "window ring mask (rolled slots); D = 64; scale D^-0.5\"" +
        ",\n  \"upstream\": \"Triton kernel writing [B,T,H,D] plus the "
        "reshape, H200, issue 5\"" +
        ",\n  \"tolerance_rel_l2\": " + jsonNumber(kTolerance) +
        ",\n  \"results\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row &r = rows[i];
      json +=
          std::string(i ? "," : "") + "\n    {\"H\": " + std::to_string(r.c.H) +
          ", \"S\": " + std::to_string(r.c.S) +
          ", \"T\": " + std::to_string(r.c.T) +
          ", \"B\": " + std::to_string(r.c.B) +
          ", \"splits\": " + std::to_string(r.splits()) +
          ", \"kv_groups\": " + std::to_string(r.kvGroups()) + ", " +
          moss::config::occupancyJsonFields(r.occupancy) +
          ", \"bthd_us\": " + jsonNumber(r.bthd) +
          ", \"bthd_pdl_us\": " + jsonNumber(r.bthdPdl) +
          ", \"bthd_cp_async_us\": " + jsonNumber(r.bthdCp) +
          ", \"bthd_positions_us\": " + jsonNumber(r.bthdPos) +
          ", \"bhtd_us\": " + jsonNumber(r.bhtd) +
          ", \"bhtd_copy_us\": " + jsonNumber(r.bhtdCopy) +
          ", \"upstream_us\": " + jsonNumber(r.upstream) +
          ", \"rel_l2_bthd\": " + jsonNumber(r.errBthd) +
          ", \"rel_l2_bhtd_copy\": " + jsonNumber(r.errBhtdCopy) +
          ", \"error\": " + (r.error.empty() ? "null" : jsonString(r.error)) +
          "}";
    }
    json += "\n  ]\n}\n";
    std::string err;
    if (!config::writeFileAtomic(o.jsonPath, json, err)) {
      std::fprintf(stderr, "moss-bench: %s\n", err.c_str());
      code = 1;
    } else {
      std::printf("wrote %s\n", o.jsonPath.c_str());
    }
  }
  cudaStreamDestroy(stream);
  moss_runtime_destroy(rtCp);
  moss_runtime_destroy(rtPdl);
  moss_runtime_destroy(rt);
  return code;
}

} // namespace moss::bench
