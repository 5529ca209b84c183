//===- Selection.cpp - Which tuned candidates the whitelist keeps ---------===//

#include "Selection.h"

#include <cstdio>

namespace moss::tune {

namespace {
std::string percent(double ours, double fallback) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f us vs fallback %.2f us", ours,
                fallback);
  return text;
}
} // namespace

bool passesRun(const CandidateResult &c, const KeyResult &key, int run,
               std::string *why) {
  auto no = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  if (!c.error.empty())
    return no("error: " + c.error);
  if (!key.fallbackError.empty())
    return no("fallback error: " + key.fallbackError);
  if (c.relL2 < 0 || !(c.relL2 < kMaxRelL2))
    return no("relative L2 not below 0.004");
  if (!c.graphEqualsEager)
    return no("graph replay differs from the eager call");
  const RunTimes &ours = c.run[run], &fb = key.fallback[run];
  if (ours.hotUs < 0 || ours.coldUs < 0 || fb.hotUs < 0 || fb.coldUs < 0)
    return no("run " + std::to_string(run + 1) + " not measured");
  if (!(ours.hotUs < kSpeedupMargin * fb.hotUs))
    return no("run " + std::to_string(run + 1) +
              " hot not 5% faster: " + percent(ours.hotUs, fb.hotUs));
  if (!(ours.coldUs < kSpeedupMargin * fb.coldUs))
    return no("run " + std::to_string(run + 1) +
              " cold not 5% faster: " + percent(ours.coldUs, fb.coldUs));
  return true;
}

int selectCandidate(const KeyResult &key) {
  int best = -1;
  double bestScore = 0;
  for (size_t i = 0; i < key.candidates.size(); ++i) {
    const CandidateResult &c = key.candidates[i];
    bool kept = true;
    double score = 0;
    for (int run = 0; run < kRuns && kept; ++run) {
      kept = passesRun(c, key, run);
      score += c.run[run].hotUs + c.run[run].coldUs;
    }
    if (kept && (best < 0 || score < bestScore)) {
      best = static_cast<int>(i);
      bestScore = score;
    }
  }
  return best;
}

} // namespace moss::tune
