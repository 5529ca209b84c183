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

} // namespace

int64_t residentCtasPerSm(int64_t registersPerThread, int64_t threads,
                          int64_t sharedBytesPerCta, const SmLimits &limits) {
  // Out-of-range sizes first: what follows multiplies them.
  if (registersPerThread <= 0 || threads <= 0 || sharedBytesPerCta < 0 ||
      registersPerThread > limits.registersPerThread ||
      threads > limits.threads || sharedBytesPerCta > limits.sharedBytes)
    return 0;
  const int64_t warps = (threads + 31) / 32;
  const int64_t warpRegisters =
      roundUp(registersPerThread * 32, limits.registerUnit);
  // The hardware's own per-CTA check counts warps as if every sub-partition
  // got the same number.
  if (warpRegisters * roundUp(warps, limits.subPartitions) >
      limits.registersPerCta)
    return 0;
  const int64_t warpsBySubPartitions = limits.registers / limits.subPartitions /
                                       warpRegisters * limits.subPartitions;
  const int64_t byRegisters = warpsBySubPartitions / warps;
  const int64_t ctaShared = roundUp(
      sharedBytesPerCta + limits.reservedSharedBytesPerCta, limits.sharedUnit);
  const int64_t byShared = limits.sharedBytes / ctaShared;
  const int64_t byWarps = limits.threads / 32 / warps;
  return std::max<int64_t>(
      0, std::min({byRegisters, byShared, byWarps, limits.ctas}));
}

int64_t launchWaves(int64_t ctas, int64_t ctasPerSm, int64_t sms) {
  if (ctas <= 0 || ctasPerSm <= 0 || sms <= 0)
    return 0;
  if (ctasPerSm > INT64_MAX / sms) // more slots than any grid has CTAs
    return 1;
  const int64_t perWave = ctasPerSm * sms;
  return ctas / perWave + (ctas % perWave != 0);
}

namespace {

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
      !deriveGemmLaunch(kernel.n, kernel.k, kernel.tile, launch, err))
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
