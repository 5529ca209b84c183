//===- PtxasReportTest.cpp - reading ptxas -v output ----------------------===//
#include "moss/AOT/PtxasReport.h"

#include <gtest/gtest.h>

using moss::aot::parsePtxasReport;
using moss::config::KernelResources;

namespace {
const char *kTwoKernels =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
    "ptxas info    : Function properties for gemm\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 72 registers, used 1 barriers, 8192 bytes smem, "
    "400 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function 'gemm_reduce' for 'sm_90a'\n"
    "ptxas info    : Function properties for gemm_reduce\n"
    "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 0 barriers, 400 bytes cmem[0]\n";
} // namespace

TEST(PtxasReport, ReadsEveryFunction) {
  std::map<std::string, KernelResources> out;
  std::string err;
  ASSERT_TRUE(parsePtxasReport(kTwoKernels, out, err)) << err;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out["gemm"].registers, 72);
  EXPECT_EQ(out["gemm"].sharedBytes, 8192);
  EXPECT_EQ(out["gemm"].spillStoreBytes, 0);
  EXPECT_EQ(out["gemm_reduce"].registers, 40);
  EXPECT_EQ(out["gemm_reduce"].sharedBytes, 0);
  EXPECT_EQ(out["gemm_reduce"].stackBytes, 16);
  EXPECT_EQ(out["gemm_reduce"].spillStoreBytes, 8);
  EXPECT_EQ(out["gemm_reduce"].spillLoadBytes, 4);
}

TEST(PtxasReport, RejectsAReportWithoutRegisterLine) {
  std::map<std::string, KernelResources> out;
  std::string err;
  EXPECT_FALSE(parsePtxasReport(
      "ptxas info    : Function properties for gemm\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n",
      out, err));
  EXPECT_NE(err.find("gemm"), std::string::npos) << err;
}

TEST(PtxasReport, RejectsOutputWithoutFunctions) {
  std::map<std::string, KernelResources> out;
  std::string err;
  EXPECT_FALSE(parsePtxasReport("ptxas fatal : Unresolved extern\n", out, err));
  EXPECT_NE(err.find("-v"), std::string::npos) << err;
}
