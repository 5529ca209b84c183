//===- GemmMeasure.h - One GEMM case on the device, checked and timed -*- C++
//-*-===//
//
// Shared by moss-bench and moss-tune so both time the same way: the case's
// data (hot weights: one copy; cold: >= 24 rotated copies, more than twice the
// L2), the FP64 reference, and the protocol of BenchSupport.h applied to a
// call enqueued by the caller.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_BENCH_GEMMMEASURE_H
#define MOSS_BENCH_GEMMMEASURE_H

#include "BenchSupport.h"

#include "moss/Support/GemmCall.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace moss::bench {

constexpr int kMinColdCopies = 24;

struct GemmCase {
  int64_t m, n, k;
  int mode;
};

/// Weight copies for cold timing: >= kMinColdCopies and more than twice the
/// L2 in total.
int coldWeightCopies(const GemmCase &c, int l2Bytes);

/// Device copies of one case's data: `copies` identical weight copies.
struct GemmCaseData {
  GemmCase c;
  int copies;
  size_t weightStride; ///< Bytes between copies (256-byte aligned).
  std::vector<uint16_t> x, w, scale, res, gamma, beta;
  DeviceBuffer dx, dw, dscale, dres, dgamma, dbeta, dout;
  /// FP64: the mode's (prologue and epilogue), and x . w^T alone (what the
  /// cuBLASLt anchor computes).
  std::vector<double> ref, refPlain;

  GemmCaseData(const GemmCase &c, int copies, std::mt19937_64 &rng);
  /// Uploads everything and computes the references; false when out of
  /// device memory.
  bool upload();
  void *weight(int copy) const;
  /// The operands of a call with weight copy `copy`.
  host::GemmOperands operands(int copy) const;
  std::vector<uint16_t> output() const;
  void poisonOutput();
};

/// One variant's timing and check; us < 0 when it did not run.
struct Measurement {
  double hotUs = -1, coldUs = -1, relL2 = -1;
  std::string error;
};

/// Enqueues the variant with weight copy `copy`; false with `err` set.
using GemmCallFn =
    std::function<bool(int copy, cudaStream_t stream, std::string &err)>;

/// Checks (one eager call on a poisoned output, relative L2 against the
/// reference, or the plain one) then times hot and, with `cold`, cold.
/// One stream for the whole run: the runtime binds a workspace slot to each
/// stream it sees, so a stream per measurement would use them all up.
Measurement measureGemm(GemmCaseData &data, const TimingProtocol &protocol,
                        bool cold, bool plainReference, cudaStream_t stream,
                        const GemmCallFn &call);

/// Runs the call eagerly and as a captured CUDA graph (replayed twice), each
/// on a poisoned output, and sets `equal` when both outputs match bit for
/// bit. False with `err` when a call or the capture fails.
bool graphReplayEqualsEager(GemmCaseData &data, cudaStream_t stream,
                            const GemmCallFn &call, bool &equal,
                            std::string &err);

} // namespace moss::bench

#endif // MOSS_BENCH_GEMMMEASURE_H
