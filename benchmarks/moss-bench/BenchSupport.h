//===- BenchSupport.h - Data, reference and timing for moss-bench -*- C++
//-*-===//

#ifndef MOSS_BENCH_BENCHSUPPORT_H
#define MOSS_BENCH_BENCHSUPPORT_H

#include "TextCells.h"
#include "moss/Config/Occupancy.h"
#include "moss/Support/CudaSmLimits.h"

#include "moss/Runtime/moss_runtime.h"
#include "moss/Support/HostBf16.h"
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace moss::bench {

//===--- bf16 data and the FP64 reference --------------------------------===//

using host::fromBf16;
using host::randomBf16;
using host::toBf16;
/// FP64 x . w^T, then the rounding contract of `mode`.
std::vector<double> referenceOutput(const std::vector<uint16_t> &x,
                                    const std::vector<uint16_t> &w,
                                    const std::vector<uint16_t> &scale,
                                    const std::vector<uint16_t> &residual,
                                    int64_t m, int64_t n, int64_t k, int mode);
using host::relativeL2;

/// moss_runtime_create(kernelsDir, whitelist) while environment variable
/// `name` = `value` (restored afterwards): the runtime reads its launch
/// switches (MOSS_CODEC_GEMM_PDL, MOSS_ATTENTION_PDL) at create.
moss_status_t createRuntimeWithEnv(const std::string &kernelsDir,
                                   const std::string &whitelist,
                                   const char *name, const char *value,
                                   moss_runtime_t *out);

/// "a,b,c" of decimal sizes in [1, maxValue] into `out`; false (out
/// unspecified) on an empty list, an empty item or anything else.
bool parseSizeList(const std::string &text, int64_t maxValue,
                   std::vector<int64_t> &out);

/// One whole number in [1, maxValue], all of `text` ("5x", "", "1,2" and
/// "0" are refused), for the count options of moss-bench and moss-tune.
bool parseCount(const std::string &text, int64_t maxValue, int &out);

/// `text` as a JSON string literal (quotes, backslashes and control
/// characters escaped).
std::string jsonString(const std::string &text);

/// cudaMalloc'd bytes, freed on destruction.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *get() const { return pointer; }
  bool ok() const { return pointer != nullptr; }

private:
  void *pointer = nullptr;
};

//===--- Timing ---------------------------------------------------------===//

struct TimingProtocol {
  int warmups = 3;       ///< Eager calls before capturing.
  int callsPerGraph = 8; ///< Calls captured into one CUDA graph.
  int replays = 20;      ///< Graph launches per sample.
  int samples = 5;       ///< The median of these is reported.
};

/// Enqueues call `call` of graph `graph` on `stream`; false on failure (the
/// callback keeps the message).
using EnqueueFn = std::function<bool(int graph, int call, cudaStream_t stream)>;

/// Captures `graphs` graphs of protocol.callsPerGraph calls each, replays
/// them round-robin and returns the median over samples of microseconds per
/// call; negative with `err` set on failure.
double timePerCallUs(cudaStream_t stream, const TimingProtocol &protocol,
                     int graphs, const EnqueueFn &enqueue, std::string &err);

} // namespace moss::bench

#endif // MOSS_BENCH_BENCHSUPPORT_H
