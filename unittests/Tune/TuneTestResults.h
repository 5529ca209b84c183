//===- TuneTestResults.h - Keys and candidates for tuner tests -*- C++ -*-===//
#ifndef MOSS_UNITTESTS_TUNE_TUNETESTRESULTS_H
#define MOSS_UNITTESTS_TUNE_TUNETESTRESULTS_H

#include "Selection.h"

namespace moss::tune::test {

/// A key whose fallback takes 10 us hot and 20 us cold in both runs.
inline KeyResult keyWithFallback() {
  KeyResult key;
  key.keyText = "8,3072,768,1";
  key.key = {8, 3072, 768, 1};
  for (RunTimes &run : key.fallback)
    run = {10.0, 20.0};
  return key;
}

/// A checked candidate with the same times in both runs.
inline CandidateResult candidate(double hot, double cold, int64_t bn = 16) {
  CandidateResult c;
  c.tile = {8, bn, 64, 1};
  c.relL2 = 1e-4;
  c.graphEqualsEager = true;
  for (RunTimes &run : c.run)
    run = {hot, cold};
  return c;
}

} // namespace moss::tune::test

#endif // MOSS_UNITTESTS_TUNE_TUNETESTRESULTS_H
