//===- ConfigFuzzTargets.cpp - Fuzz targets of MossConfig -----------------===//

#include "ConfigFuzzTargets.h"
#include "FuzzInput.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/CandidateSet.h"
#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Manifest.h"
#include "moss/Config/Occupancy.h"
#include "moss/Config/Whitelist.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

using namespace moss::config;

namespace moss::fuzz {
namespace {

std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

bool sameKey(const GemmKey &a, const GemmKey &b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.mode == b.mode;
}

/// Parses `bytes` with `parse`; on success checks that the serialized value
/// parses back and serializes to the same text, and returns it.
template <typename T, typename Parse, typename Serialize>
std::optional<T> parseRoundTrip(const uint8_t *data, size_t size,
                                const std::string &source, Parse parse,
                                Serialize serialize) {
  T parsed;
  std::string err;
  if (!parse(asText(data, size), source, parsed, err)) {
    checkError(err, source);
    return std::nullopt;
  }
  std::string once = serialize(parsed);
  T again;
  MOSS_FUZZ_CHECK(parse(once, source, again, err),
                  err + "\nserialized:\n" + once);
  MOSS_FUZZ_CHECK(serialize(again) == once, once);
  return parsed;
}

} // namespace

void fuzzWhitelist(const uint8_t *data, size_t size) {
  const std::string source = "fuzz.json";
  Whitelist previous;
  std::string err;
  MOSS_FUZZ_CHECK(Whitelist::parse("{\"1,64,64,0\": [8, 16, 32, 1]}", "seed",
                                   previous, err),
                  err);
  Whitelist out = previous;
  if (!Whitelist::parse(asText(data, size), source, out, err)) {
    checkError(err, source);
    // A failed parse leaves the output as it was.
    MOSS_FUZZ_CHECK(
        out.entries().size() == 1 && out.bytes() == previous.bytes(), err);
    return;
  }
  MOSS_FUZZ_CHECK(out.bytes() == asText(data, size), "bytes kept");
  for (const WhitelistEntry &entry : out.entries()) {
    const GemmKey &key = entry.key;
    MOSS_FUZZ_CHECK(out.find(key.m, key.n, key.k, key.mode) == &entry,
                    entry.keyText);
    GemmKey again;
    std::string reason;
    MOSS_FUZZ_CHECK(parseGemmKey(entry.keyText, again, reason), reason);
    MOSS_FUZZ_CHECK(sameKey(again, key), entry.keyText);
    GemmLaunch launch;
    MOSS_FUZZ_CHECK(
        deriveGemmLaunch(key.n, key.k, key.mode, entry.tile, launch, reason),
        entry.keyText + ": " + reason);
  }
}

void fuzzManifest(const uint8_t *data, size_t size) {
  std::optional<Manifest> parsed = parseRoundTrip<Manifest>(
      data, size, "manifest.json", parseManifest, serializeManifest);
  if (!parsed)
    return;
  for (const GemmKernelRecord &kernel : parsed->gemmKernels) {
    MOSS_FUZZ_CHECK(isPlainFileName(kernel.cubin), kernel.cubin);
    MOSS_FUZZ_CHECK(isPlainFileName(kernel.ptx), kernel.ptx);
  }
  for (const AttentionKernelRecord &kernel : parsed->attentionKernels)
    MOSS_FUZZ_CHECK(isPlainFileName(kernel.cubin), kernel.cubin);
}

void fuzzCandidateList(const uint8_t *data, size_t size) {
  parseRoundTrip<CandidateList>(data, size, "candidates.json",
                                parseCandidateList, serializeCandidateList);
}

void fuzzKeyList(const uint8_t *data, size_t size) {
  const std::string source = "--candidates";
  std::vector<GemmKey> keys;
  std::vector<std::string> texts;
  std::string err;
  if (!parseKeyList(asText(data, size), source, keys, texts, err)) {
    checkError(err, source);
    MOSS_FUZZ_CHECK(keys.empty() && texts.empty(), err);
    return;
  }
  MOSS_FUZZ_CHECK(!keys.empty() && keys.size() == texts.size(), "sizes");
  for (size_t i = 0; i < keys.size(); ++i) {
    GemmKey again;
    std::string reason;
    MOSS_FUZZ_CHECK(parseGemmKey(texts[i], again, reason), reason);
    MOSS_FUZZ_CHECK(sameKey(again, keys[i]), texts[i]);
    for (const GemmTile &tile : enumerateCandidateTiles(keys[i], TileSpace{}))
      MOSS_FUZZ_CHECK(
          checkTileLegal(keys[i].n, keys[i].k, keys[i].mode, tile, reason),
          texts[i] + ": " + reason);
  }
}

/// The occupancy model on arbitrary sizes: within the SM's slots, never
/// more with more registers or shared memory, and what it admits fits.
void checkOccupancy(int64_t registers, int64_t threads, int64_t shared,
                    int64_t ctas) {
  const SmLimits sm;
  const int64_t count = residentCtasPerSm(registers, threads, shared);
  MOSS_FUZZ_CHECK(count >= 0 && count <= sm.ctas, std::to_string(count));
  MOSS_FUZZ_CHECK((count > 0) ==
                      (std::string_view(occupancyLimit(
                           registers, threads, shared)) != "does not fit"),
                  "the limit's name and the count disagree");
  // (Sizes below 1 register or 0 bytes are invalid: nothing fits.)
  if (registers >= 1 && registers < INT64_MAX)
    MOSS_FUZZ_CHECK(residentCtasPerSm(registers + 1, threads, shared) <= count,
                    "more registers, more CTAs");
  if (registers >= 1 && shared >= 0 && shared < INT64_MAX)
    MOSS_FUZZ_CHECK(residentCtasPerSm(registers, threads, shared + 1) <= count,
                    "more shared memory, more CTAs");
  if (count > 0) {
    const int64_t warps = (threads + 31) / 32;
    MOSS_FUZZ_CHECK(count * warps * 32 <= sm.threads, "threads");
    MOSS_FUZZ_CHECK(count * (shared + sm.reservedSharedBytesPerCta) <=
                        sm.sharedBytes,
                    "shared memory");
    MOSS_FUZZ_CHECK(count * warps * registers * 32 <= sm.registers,
                    "registers");
  }
  const int64_t waves = launchWaves(ctas, count, 132);
  if (count > 0 && ctas > 0) {
    const int64_t perWave = count * 132;
    MOSS_FUZZ_CHECK(waves >= 1 && (waves - 1) <= (ctas - 1) / perWave &&
                        ctas / perWave <= waves,
                    "waves");
  } else {
    MOSS_FUZZ_CHECK(waves == 0, "waves of nothing");
  }
}

/// What every accepted attention launch of (b, h, t) must satisfy.
void checkAttentionLaunch(const AttentionLaunch &a, int64_t b, int64_t h,
                          int64_t t) {
  MOSS_FUZZ_CHECK(a.warps >= 1 && a.warps <= kAttentionMaxWarps, "warps");
  MOSS_FUZZ_CHECK(a.kvGroups >= 1 && a.kvGroups <= kAttentionMaxKvGroups,
                  "groups");
  MOSS_FUZZ_CHECK(a.splits >= 1 && a.splits <= kAttentionMaxSplits, "splits");
  // No split is empty and none is left out.
  MOSS_FUZZ_CHECK((a.splits - 1) * a.tilesPerSplit < a.keyTiles &&
                      a.splits * a.tilesPerSplit >= a.keyTiles,
                  "split coverage");
  MOSS_FUZZ_CHECK(a.gridX == b * h && a.gridY * a.rowsPerCta >= t &&
                      a.gridY <= 65535,
                  "grid");
  MOSS_FUZZ_CHECK(a.sharedBytes > 0 &&
                      a.sharedBytes <= kAttentionMaxSharedBytes,
                  std::to_string(a.sharedBytes));
}

void fuzzLaunchRules(const uint8_t *data, size_t size) {
  int64_t n = takeSize(data, size), k = takeSize(data, size);
  GemmTile tile{takeSize(data, size), takeSize(data, size),
                takeSize(data, size), takeSize(data, size)};
  // One value past the modes, to see an unknown mode refused.
  const int mode =
      static_cast<int>(takeSize(data, size) % (kGemmModeCount + 1));
  GemmLaunch gemm;
  std::string err;
  if (deriveGemmLaunch(n, k, mode, tile, gemm, err)) {
    MOSS_FUZZ_CHECK(mode < kGemmModeCount, "unknown mode accepted");
    MOSS_FUZZ_CHECK(gemm.layerNorm == gemmModeInfo(mode)->layerNorm,
                    "layerNorm");
    // The row statistics lie after the receive mbarrier, inside the launch.
    MOSS_FUZZ_CHECK(
        !gemm.layerNorm ||
            (gemm.statsOffset >= std::max(gemm.slabBytes, gemm.partialBytes) &&
             (tile.split == 1 ||
              gemm.statsOffset >= gemm.recvBarrierOffset + 8) &&
             gemm.statsOffset % 16 == 0 &&
             gemm.statsOffset + tile.split * gemm.bm8 * 8 == gemm.sharedBytes),
        "statsOffset");
    MOSS_FUZZ_CHECK(gemm.threads >= 32 && gemm.threads <= 1024, "threads");
    MOSS_FUZZ_CHECK(gemm.warps <= kGemmMaxWarps &&
                        gemm.threads == 32 * gemm.warps,
                    "warps");
    // Every warp owns 16 W rows of the tile (64 a warpgroup with W as A).
    MOSS_FUZZ_CHECK(gemm.warpsN * 16 == tile.bn ||
                        (gemm.wgmma && tile.bm == 64),
                    "warps_n");
    MOSS_FUZZ_CHECK(gemm.gridX >= 1 && gemm.gridX * tile.bn == n, "gridX");
    MOSS_FUZZ_CHECK(gemm.gridZ == tile.split && gemm.kPerCta * tile.split == k,
                    "split");
    MOSS_FUZZ_CHECK(gemm.sharedBytes > 0 &&
                        gemm.sharedBytes <= kGemmMaxSharedBytes,
                    std::to_string(gemm.sharedBytes));
  } else {
    MOSS_FUZZ_CHECK(!err.empty(), "GEMM error");
  }

  int64_t b = takeSize(data, size), h = takeSize(data, size),
          t = takeSize(data, size), s = takeSize(data, size);
  int64_t splits = takeSize(data, size), groups = takeSize(data, size);
  int64_t copyWarps = takeSize(data, size);
  auto tma = static_cast<AttentionTmaMode>(
      static_cast<uint64_t>(takeInt(data, size)) % 3);
  AttentionLaunch attention;
  if (!deriveAttentionLaunch(b, h, t, s, splits, groups, attention, err,
                             copyWarps, tma)) {
    MOSS_FUZZ_CHECK(!err.empty(), "attention error");
  } else {
    checkAttentionLaunch(attention, b, h, t);
  }
  // The bytes after the launches' (so the corpus keeps reaching the rules
  // it was grown for).
  checkOccupancy(takeSize(data, size), takeSize(data, size),
                 takeSize(data, size), takeSize(data, size));
}

FuzzTarget fuzzTargetNamed(std::string_view name) {
  if (name == "whitelist")
    return fuzzWhitelist;
  if (name == "manifest")
    return fuzzManifest;
  if (name == "candidates")
    return fuzzCandidateList;
  if (name == "keys")
    return fuzzKeyList;
  if (name == "launch")
    return fuzzLaunchRules;
  if (name == "args")
    return fuzzArgChecks;
  return nullptr;
}

} // namespace moss::fuzz
