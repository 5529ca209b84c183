//===- SelectionTest.cpp - moss-tune's keep-or-fallback rule --------------===//

#include "Selection.h"
#include "TuneTestResults.h"

#include <gtest/gtest.h>

using namespace moss::tune;
using namespace moss::tune::test;

TEST(TuneSelection, KeepsTheFastestQualifyingCandidate) {
  KeyResult key = keyWithFallback();
  key.candidates = {candidate(9.0, 18.0), candidate(7.0, 15.0, 32),
                    candidate(8.0, 16.0, 64)};
  EXPECT_EQ(selectCandidate(key), 1);
}

TEST(TuneSelection, NeedsMoreThanFivePercentHotAndCold) {
  KeyResult key = keyWithFallback();
  key.candidates = {candidate(9.5, 10.0)}; // hot exactly 5 % faster: no
  EXPECT_EQ(selectCandidate(key), -1);
  key.candidates = {candidate(5.0, 19.5)}; // cold only 2.5 % faster
  EXPECT_EQ(selectCandidate(key), -1);
  key.candidates = {candidate(9.49, 18.99)};
  EXPECT_EQ(selectCandidate(key), 0);
}

TEST(TuneSelection, BothRunsMustPass) {
  KeyResult key = keyWithFallback();
  CandidateResult c = candidate(5.0, 10.0);
  c.run[1] = {9.8, 10.0}; // confirmation run: hot not 5 % faster
  key.candidates = {c};
  EXPECT_EQ(selectCandidate(key), -1);
  std::string why;
  EXPECT_TRUE(passesRun(c, key, 0));
  EXPECT_FALSE(passesRun(c, key, 1, &why));
  EXPECT_NE(why.find("run 2 hot"), std::string::npos) << why;

  c.run[1] = {-1, -1}; // not confirmed
  key.candidates = {c};
  EXPECT_EQ(selectCandidate(key), -1);
  // A slower confirmation run of the fallback is compared within its run.
  c.run[1] = {10.0, 20.0};
  key.fallback[1] = {12.0, 24.0};
  key.candidates = {c};
  EXPECT_EQ(selectCandidate(key), 0);
}

TEST(TuneSelection, AccuracyGraphAndErrorsDisqualify) {
  KeyResult key = keyWithFallback();
  CandidateResult inaccurate = candidate(1.0, 2.0);
  inaccurate.relL2 = 0.004;
  CandidateResult unchecked = candidate(1.0, 2.0);
  unchecked.relL2 = -1;
  CandidateResult replayDiffers = candidate(1.0, 2.0);
  replayDiffers.graphEqualsEager = false;
  CandidateResult failed = candidate(1.0, 2.0);
  failed.error = "launch failed";
  key.candidates = {inaccurate, unchecked, replayDiffers, failed,
                    candidate(9.0, 18.0)};
  EXPECT_EQ(selectCandidate(key), 4);

  std::string why;
  EXPECT_FALSE(passesRun(replayDiffers, key, 0, &why));
  EXPECT_NE(why.find("graph replay"), std::string::npos) << why;
}

TEST(TuneSelection, NoFallbackMeansNoChoice) {
  KeyResult key = keyWithFallback();
  key.candidates = {candidate(1.0, 2.0)};
  key.fallbackError = "cuBLASLt failed";
  EXPECT_EQ(selectCandidate(key), -1);
  key = keyWithFallback();
  key.fallback[0] = {-1, -1};
  key.candidates = {candidate(1.0, 2.0)};
  EXPECT_EQ(selectCandidate(key), -1);
  key.candidates.clear();
  EXPECT_EQ(selectCandidate(keyWithFallback()), -1);
}
