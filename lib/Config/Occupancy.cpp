//===- Occupancy.cpp - Resident CTAs per SM and launch waves --------------===//

#include "moss/Config/Occupancy.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Manifest.h"

#include <algorithm>
#include <cstdint>

namespace moss::config {

namespace {

int64_t roundUp(int64_t value, int64_t unit) {
  return (value + unit - 1) / unit * unit;
}

/// CTAs an SM holds by each limit; all 0 when one does not fit at all.
struct Bounds {
  int64_t registers = 0, shared = 0, warps = 0, slots = 0;
  int64_t least() const { return std::min({registers, shared, warps, slots}); }
};

Bounds boundsOf(int64_t registersPerThread, int64_t threads,
                int64_t sharedBytesPerCta, const SmLimits &limits) {
  // Out-of-range sizes first: what follows multiplies them.
  if (registersPerThread <= 0 || threads <= 0 || sharedBytesPerCta < 0 ||
      registersPerThread > limits.registersPerThread ||
      threads > limits.threads || sharedBytesPerCta > limits.sharedBytes)
    return {};
  const int64_t warps = (threads + 31) / 32;
  const int64_t warpRegisters =
      roundUp(registersPerThread * 32, limits.registerUnit);
  // The hardware's own per-CTA check counts warps as if every sub-partition
  // got the same number.
  if (warpRegisters * roundUp(warps, limits.subPartitions) >
      limits.registersPerCta)
    return {};
  Bounds bounds;
  bounds.registers = limits.registers / limits.subPartitions / warpRegisters *
                     limits.subPartitions / warps;
  bounds.shared = limits.sharedBytes /
                  roundUp(sharedBytesPerCta + limits.reservedSharedBytesPerCta,
                          limits.sharedUnit);
  bounds.warps = limits.threads / 32 / warps;
  bounds.slots = limits.ctas;
  return bounds;
}

LaunchOccupancy occupancyOf(const KernelFunctionRecord &function,
                            int64_t threads, int64_t dynamicSharedBytes,
                            int64_t ctas, int64_t sms, const SmLimits &limits) {
  LaunchOccupancy out;
  out.ctas = ctas;
  out.ctasPerSm = residentCtasPerSm(
      function.resources.registers, threads,
      function.resources.sharedBytes + dynamicSharedBytes, limits);
  out.waves = launchWaves(ctas, out.ctasPerSm, sms);
  return out;
}

} // namespace

int64_t residentCtasPerSm(int64_t registersPerThread, int64_t threads,
                          int64_t sharedBytesPerCta, const SmLimits &limits) {
  return std::max<int64_t>(
      0,
      boundsOf(registersPerThread, threads, sharedBytesPerCta, limits).least());
}

const char *occupancyLimit(int64_t registersPerThread, int64_t threads,
                           int64_t sharedBytesPerCta, const SmLimits &limits) {
  const Bounds b =
      boundsOf(registersPerThread, threads, sharedBytesPerCta, limits);
  const int64_t least = b.least();
  if (least <= 0)
    return "does not fit";
  if (b.registers == least)
    return "registers";
  if (b.shared == least)
    return "shared memory";
  if (b.warps == least)
    return "warps";
  return "CTA slots";
}

int64_t launchWaves(int64_t ctas, int64_t ctasPerSm, int64_t sms) {
  if (ctas <= 0 || ctasPerSm <= 0 || sms <= 0)
    return 0;
  if (ctasPerSm > INT64_MAX / sms) // more slots than any grid has CTAs
    return 1;
  const int64_t perWave = ctasPerSm * sms;
  return ctas / perWave + (ctas % perWave != 0);
}

LaunchOccupancy attentionLaunchOccupancy(const AttentionKernelRecord &kernel,
                                         const AttentionLaunch &launch,
                                         int64_t sms, const SmLimits &limits) {
  const std::string symbol = attentionKernelSymbol(
      {launch.kvGroups, launch.splits > 1, launch.tmaCopies});
  for (const KernelFunctionRecord &function : kernel.functions)
    if (function.symbol == symbol)
      return occupancyOf(function, launch.threads, launch.sharedBytes,
                         launch.gridX * launch.gridY * launch.splits, sms,
                         limits);
  return {};
}

LaunchOccupancy gemmLaunchOccupancy(const GemmKernelRecord &kernel, int64_t m,
                                    int64_t sms, const SmLimits &limits) {
  GemmLaunch launch;
  std::string err;
  if (kernel.functions.empty() || m < 1 ||
      !deriveGemmLaunch(kernel.n, kernel.k, kernel.mode, kernel.tile, launch,
                        err))
    return {};
  const int64_t rowBlocks = (m + launch.gridYPerM - 1) / launch.gridYPerM;
  return occupancyOf(kernel.functions.front(), launch.threads,
                     launch.sharedBytes,
                     launch.gridX * rowBlocks * launch.gridZ, sms, limits);
}

std::string occupancyText(const LaunchOccupancy &occupancy) {
  if (occupancy.ctas <= 0)
    return "-";
  return std::to_string(occupancy.ctas) + "/" +
         std::to_string(occupancy.ctasPerSm) + "/" +
         std::to_string(occupancy.waves);
}

std::string occupancyJsonFields(const LaunchOccupancy &occupancy) {
  auto number = [&](int64_t v) {
    return occupancy.ctas > 0 ? std::to_string(v) : std::string("null");
  };
  return "\"ctas\": " + number(occupancy.ctas) +
         ", \"ctas_per_sm\": " + number(occupancy.ctasPerSm) +
         ", \"waves\": " + number(occupancy.waves);
}

} // namespace moss::config
