//===- Report.h - The tuner's whitelist, tables and plot --------*- C++ -*-===//
#ifndef MOSS_TUNE_REPORT_H
#define MOSS_TUNE_REPORT_H

#include "Plot.h"
#include "Selection.h"

#include <string>
#include <vector>

namespace moss::tune {

/// Measured floors of the H200 (issue "Beat every anchor"): an empty kernel
/// in a CUDA graph, and HBM bandwidth for reading the weight once.
constexpr double kLaunchFloorUs = 0.68;
constexpr double kHbmBytesPerUs = 4.3e6; // 4.3 TB/s

/// Weight bytes N*K*2 at kHbmBytesPerUs.
double weightReadFloorUs(int64_t n, int64_t k);

/// The whitelist: every key with a kept candidate -> its tile, one a line.
/// `chosen[i]` is selectCandidate(keys[i]).
std::string whitelistJson(const std::vector<KeyResult> &keys,
                          const std::vector<int> &chosen);

/// Markdown: `header`, then one row per key (chosen tile or fallback, hot /
/// cold us of both for both runs, relative L2, why not kept).
std::string markdownReport(const std::vector<KeyResult> &keys,
                           const std::vector<int> &chosen,
                           const std::string &header);

/// Every measurement, as JSON.
std::string resultsJson(const std::vector<KeyResult> &keys,
                        const std::vector<int> &chosen,
                        const std::string &header);

/// One panel per (N, K, mode): fallback and chosen kernel (confirmation run,
/// hot and cold) and the two floors, against M.
std::vector<PlotPanel> tunePlotPanels(const std::vector<KeyResult> &keys,
                                      const std::vector<int> &chosen);

} // namespace moss::tune

#endif // MOSS_TUNE_REPORT_H
