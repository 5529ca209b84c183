//===- ReportTest.cpp - moss-tune's results JSON stays valid JSON ---------===//

#include "Report.h"
#include "TuneTestResults.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace moss::tune;
using namespace moss::tune::test;

namespace {
/// A key with a measured fallback and one candidate whose output held a
/// non-finite element (relative L2 = inf) and whose second run was skipped.
KeyResult keyWithNonFiniteCandidate() {
  KeyResult key = keyWithFallback();
  key.fallbackRelL2 = 6.6e-5;
  CandidateResult c = candidate(12.79, 14.69);
  c.round = "r046";
  c.relL2 = INFINITY;
  c.run[1] = {-1, -1};
  key.candidates.push_back(c);
  return key;
}
} // namespace

TEST(TuneReport, NonFiniteAndUnmeasuredValuesAreJsonNull) {
  std::string text = resultsJson({keyWithNonFiniteCandidate()}, {-1}, "h");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr,
                                                /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  const nlohmann::json &key = parsed["keys"][0];
  EXPECT_TRUE(key["chosen"].is_null());
  EXPECT_DOUBLE_EQ(key["fallback"]["rel_l2"].get<double>(), 6.6e-5);
  const nlohmann::json &c = key["candidates"][0];
  EXPECT_TRUE(c["rel_l2"].is_null());
  EXPECT_DOUBLE_EQ(c["runs"][0]["hot_us"].get<double>(), 12.79);
  EXPECT_TRUE(c["runs"][1]["hot_us"].is_null());
  EXPECT_TRUE(c["runs"][1]["cold_us"].is_null());
}

TEST(TuneReport, LaunchOccupancyInJsonAndTable) {
  KeyResult key = keyWithFallback();
  CandidateResult measured = candidate(4.99, 6.05);
  measured.round = "r000";
  measured.relL2 = 1e-5;
  measured.occupancy = {160, 1, 2};
  CandidateResult unknown = candidate(5.5, 6.5);
  unknown.round = "r001";
  key.candidates = {measured, unknown};
  std::string text = resultsJson({key}, {0}, "h");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr,
                                                /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  const nlohmann::json &first = parsed["keys"][0]["candidates"][0];
  EXPECT_EQ(first["ctas"].get<int64_t>(), 160);
  EXPECT_EQ(first["ctas_per_sm"].get<int64_t>(), 1);
  EXPECT_EQ(first["waves"].get<int64_t>(), 2);
  const nlohmann::json &second = parsed["keys"][0]["candidates"][1];
  EXPECT_TRUE(second["ctas"].is_null());
  EXPECT_TRUE(second["waves"].is_null());
  std::string table = markdownReport({key}, {0}, "h");
  EXPECT_NE(table.find("| 160/1/2 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| CTAs/SM/waves |"), std::string::npos) << table;
}
