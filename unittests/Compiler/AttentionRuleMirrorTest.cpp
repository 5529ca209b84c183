//===- AttentionRuleMirrorTest.cpp - host IR rule == deriveAttentionLaunch ===//
//
// moss-convert-to-gpu writes the attention launch rule into the host code as
// index arithmetic (AttentionToGPU.cpp), a hand-kept copy of
// moss::config::deriveAttentionLaunch. For static shapes it folds to
// constants: over a grid of shapes around the decoder's, every launch the
// IR makes must be the C++ rule's (function, grid, block, cluster, dynamic
// shared memory), so the two cannot drift apart unnoticed.
//
//===----------------------------------------------------------------------===//

#include "moss/Config/AttentionLaunch.h"
#include "moss/InitMoss.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace mlir;
namespace cfg = moss::config;

namespace {

using Shape = std::array<int64_t, 4>; // B, H, T, S

/// One func.func of a single streaming_attention op per shape.
std::string moduleText(const std::vector<Shape> &shapes) {
  std::ostringstream os;
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto [b, h, t, s] = shapes[i];
    std::string q = "tensor<" + std::to_string(b) + "x" + std::to_string(h) +
                    "x" + std::to_string(t) + "x64xbf16>";
    std::string kv = "tensor<" + std::to_string(b) + "x" + std::to_string(h) +
                     "x" + std::to_string(s) + "x64xbf16>";
    std::string m = "tensor<" + std::to_string(b) + "x1x" + std::to_string(t) +
                    "x" + std::to_string(s) + "xi1>";
    os << "func.func @case" << i << "(%q: " << q << ", %k: " << kv
       << ", %v: " << kv << ", %m: " << m << ") -> " << q << " {\n"
       << "  %o = moss.streaming_attention %q, %k, %v, %m : " << q << ", " << kv
       << ", " << kv << ", " << m << " -> " << q << "\n"
       << "  return %o : " << q << "\n}\n";
  }
  return os.str();
}

std::optional<int64_t> constantOf(Value v) {
  if (!v)
    return std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return attr.getInt();
  return std::nullopt;
}

TEST(AttentionRuleMirror, HostIrFoldsToTheLaunchOfDeriveAttentionLaunch) {
  std::vector<Shape> shapes;
  for (int64_t h : {12, 20})
    for (int64_t s : {64, 125, 190, 250, 400, 1024})
      for (int64_t t : {1, 4, 8, 16, 17, 32, 33, 49, 60, 240, 480})
        for (int64_t b : {1, 2, 4, 8, 16, 20, 32, 64})
          shapes.push_back({b, h, t, s});

  moss::registerAllMossPasses();
  DialectRegistry registry;
  moss::registerMossDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(moduleText(shapes), &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  ASSERT_TRUE(
      succeeded(parsePassPipeline("moss-convert-to-gpu,canonicalize", pm)));
  ASSERT_TRUE(succeeded(pm.run(*module)));

  size_t checked = 0;
  module->walk([&](func::FuncOp fn) {
    if (!fn.getName().starts_with("case"))
      return;
    size_t index = 0;
    ASSERT_FALSE(fn.getName().drop_front(4).getAsInteger(10, index));
    auto [b, h, t, s] = shapes[index];
    SCOPED_TRACE("B=" + std::to_string(b) + " H=" + std::to_string(h) +
                 " T=" + std::to_string(t) + " S=" + std::to_string(s));
    cfg::AttentionLaunch want;
    std::string err;
    // The host IR has no tensor maps: the rule without TMA copies.
    ASSERT_TRUE(cfg::deriveAttentionLaunch(b, h, t, s, 0, 0, want, err, -1,
                                           cfg::AttentionTmaMode::off))
        << err;
    std::vector<gpu::LaunchFuncOp> launches;
    fn.walk([&](gpu::LaunchFuncOp op) { launches.push_back(op); });
    ASSERT_EQ(launches.size(), 1u);
    gpu::LaunchFuncOp launch = launches.front();
    // Host IR launches the cp.async functions only (no tensor maps).
    EXPECT_EQ(launch.getKernelName().str(),
              cfg::attentionKernelSymbol(
                  {want.kvGroups, want.splits > 1, /*tma=*/false}));
    EXPECT_EQ(constantOf(launch.getGridSizeX()), want.gridX);
    EXPECT_EQ(constantOf(launch.getGridSizeY()), want.gridY);
    EXPECT_EQ(constantOf(launch.getGridSizeZ()), want.splits);
    EXPECT_EQ(constantOf(launch.getBlockSizeX()), want.threads);
    EXPECT_EQ(constantOf(launch.getDynamicSharedMemorySize()),
              want.sharedBytes);
    if (want.splits > 1) {
      EXPECT_EQ(constantOf(launch.getClusterSizeX()), 1);
      EXPECT_EQ(constantOf(launch.getClusterSizeZ()), want.splits);
    } else {
      EXPECT_FALSE(launch.hasClusterSize());
    }
    ++checked;
  });
  EXPECT_EQ(checked, shapes.size());
}

} // namespace
