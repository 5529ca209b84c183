//===- AttentionBench.h - moss-bench --attention ----------------*- C++ -*-===//

#ifndef MOSS_BENCH_ATTENTIONBENCH_H
#define MOSS_BENCH_ATTENTIONBENCH_H

#include "BenchSupport.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace moss::bench {

struct AttentionBenchOptions {
  std::string kernelsDir, whitelist, jsonPath, commit;
  TimingProtocol protocol;
  /// (H, S, T, B) to run; empty = the decoder's grid.
  std::vector<std::array<int64_t, 4>> cases;
};

/// Times moss_streaming_attention for the decoder's cases (BTHD, BHTD, and
/// BHTD plus the copy to [B,T,H,D]), checks each against an FP64 reference,
/// prints a table beside the upstream landmarks and writes JSON. Returns the
/// process exit code (0 when every case ran and was accurate).
int runAttentionBench(const AttentionBenchOptions &options);

} // namespace moss::bench

#endif // MOSS_BENCH_ATTENTIONBENCH_H
