//===- Selection.h - Which tuned candidates the whitelist keeps -*- C++ -*-===//
//
// The tuner's rule as a pure function of the measurements, so it is tested
// without a GPU: a candidate is kept for a key only if it ran without error,
// has relative L2 < 0.004 against the FP64 reference, replays in a CUDA graph
// bit for bit like its eager call, and is more than 5 % faster than the
// fallback hot and cold in both runs (initial and confirmation). Among the
// kept ones the lowest sum of its four times wins.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TUNE_SELECTION_H
#define MOSS_TUNE_SELECTION_H

#include "moss/Config/Occupancy.h"
#include "moss/Config/Whitelist.h"

#include <string>
#include <vector>

namespace moss::tune {

constexpr int kRuns = 2;                ///< Initial and confirmation.
constexpr double kSpeedupMargin = 0.95; ///< Kept: time < 0.95 * fallback.
constexpr double kMaxRelL2 = 0.004;

/// Microseconds per call; negative = not measured.
struct RunTimes {
  double hotUs = -1, coldUs = -1;
};

struct CandidateResult {
  config::GemmTile tile;
  std::string round;
  RunTimes run[kRuns];
  double relL2 = -1; ///< Negative = not checked.
  bool graphEqualsEager = false;
  std::string error;
  /// The candidate's launch for the key's M: CTAs, CTAs an SM holds, waves.
  config::LaunchOccupancy occupancy;
};

struct KeyResult {
  std::string keyText;
  config::GemmKey key;
  RunTimes fallback[kRuns];
  double fallbackRelL2 = -1;
  std::string fallbackError;
  std::vector<CandidateResult> candidates;
};

/// Whether `c` passes the accuracy and graph checks and beats the fallback
/// in run `run` (0-based) hot and cold; `why` (optional) gets the first
/// reason it does not.
bool passesRun(const CandidateResult &c, const KeyResult &key, int run,
               std::string *why = nullptr);

/// Index of the kept candidate of `key`, or -1 (the key stays on the
/// fallback).
int selectCandidate(const KeyResult &key);

} // namespace moss::tune

#endif // MOSS_TUNE_SELECTION_H
