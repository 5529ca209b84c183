//===- Occupancy.h - Resident CTAs per SM and launch waves -----*- C++ -*-===//
//
// The CUDA occupancy calculator's model (cuda_occupancy.h) for one kernel
// launch on Volta and later with the default shared-memory carveout: how
// many CTAs of it an SM holds at once, limited by registers (allocated per
// warp in units of 256, each of the 4 sub-partitions holding its own
// warps), shared memory (static + dynamic + the 1 KiB the system reserves
// per CTA, in units of 128 bytes), warps and CTA slots; and how many waves
// a grid then takes (clusters aside: a cluster's CTAs must also share a
// GPC, which the model does not count). moss-bench and moss-tune print both
// beside every timing: a grid one CTA past a wave runs a second one (e.g. a
// split attention launch of 384 CTAs at 2 an SM: 264 at once). Tests:
// OccupancyModelCpu (against the toolkit's cuda_occupancy.h, no GPU) and
// OccupancyModel (against the driver, for every generated kernel).
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_OCCUPANCY_H
#define MOSS_CONFIG_OCCUPANCY_H

#include <cstdint>
#include <string>

namespace moss::config {

struct AttentionKernelRecord;
struct AttentionLaunch;
struct GemmKernelRecord;

/// Per-SM resources. Defaults: sm_90 (H100/H200), as cudaDeviceProp reports
/// them (regsPerMultiprocessor, sharedMemPerMultiprocessor,
/// reservedSharedMemPerBlock, maxThreadsPerMultiProcessor,
/// maxBlocksPerMultiProcessor).
struct SmLimits {
  int64_t registers = 65536;
  int64_t registersPerCta = 65536;
  int64_t registersPerThread = 255;
  int64_t registerUnit = 256; ///< a warp's registers come in these units
  int64_t subPartitions = 4;  ///< each holds registers / 4 of them
  int64_t sharedBytes = 233472;
  int64_t reservedSharedBytesPerCta = 1024;
  int64_t sharedUnit = 128;
  int64_t threads = 2048;
  int64_t ctas = 32;
};

/// CTAs of `threads` threads using `registersPerThread` registers and
/// `sharedBytesPerCta` (static + dynamic) that one SM holds at once; 0 when
/// one does not fit (or registers or threads are not positive).
int64_t residentCtasPerSm(int64_t registersPerThread, int64_t threads,
                          int64_t sharedBytesPerCta,
                          const SmLimits &limits = SmLimits());

/// The limit that residentCtasPerSm's count comes from: "registers",
/// "shared memory", "warps", "CTA slots" (the first of those tied), or
/// "does not fit".
const char *occupancyLimit(int64_t registersPerThread, int64_t threads,
                           int64_t sharedBytesPerCta,
                           const SmLimits &limits = SmLimits());

/// ceil(ctas / (ctasPerSm * sms)): 0 when nothing fits.
int64_t launchWaves(int64_t ctas, int64_t ctasPerSm, int64_t sms);

/// One launch of a generated kernel: its grid's CTAs, how many an SM holds
/// (registers and static shared memory from the manifest's ptxas report)
/// and the waves that makes. All 0 when the manifest lacks the function.
struct LaunchOccupancy {
  int64_t ctas = 0, ctasPerSm = 0, waves = 0;
};

/// The attention launch `launch` runs the function of its key groups, split
/// and copy engine in `kernel`.
LaunchOccupancy attentionLaunchOccupancy(const AttentionKernelRecord &kernel,
                                         const AttentionLaunch &launch,
                                         int64_t sms,
                                         const SmLimits &limits = SmLimits());

/// `kernel` (one tile of (N, K)) launched for M = m rows.
LaunchOccupancy gemmLaunchOccupancy(const GemmKernelRecord &kernel, int64_t m,
                                    int64_t sms,
                                    const SmLimits &limits = SmLimits());

/// "CTAs/perSM/waves", e.g. "192/2/1"; "-" when unknown.
std::string occupancyText(const LaunchOccupancy &occupancy);

/// `"ctas": 192, "ctas_per_sm": 2, "waves": 1` (nulls when unknown), the
/// fields of a JSON object.
std::string occupancyJsonFields(const LaunchOccupancy &occupancy);

} // namespace moss::config

#endif // MOSS_CONFIG_OCCUPANCY_H
