//===- ConvertMossToGPU.cpp - the moss-convert-to-gpu pass ----------------===//
#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Conversion/Passes.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

#include "mlir/Transforms/DialectConversion.h"

namespace moss {
#define GEN_PASS_DEF_MOSSCONVERTTOGPU
#include "moss/Conversion/Passes.h.inc"
} // namespace moss

using namespace mlir;
using namespace moss;

namespace {
struct ConvertMossToGPUPass
    : moss::impl::MossConvertToGPUBase<ConvertMossToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Report every op that cannot be lowered, each with its reason, before
    // rewriting anything.
    bool lowerable = true;
    module.walk(
        [&](LinearOp op) { lowerable &= succeeded(checkLinearLowerable(op)); });
    module.walk([&](QkvRopeCacheOp op) {
      lowerable &= succeeded(checkQkvRopeCacheLowerable(op));
    });
    module.walk([&](StreamingAttentionOp op) {
      lowerable &= succeeded(checkAttentionLowerable(op));
    });
    if (!lowerable)
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateLinearToGPUPatterns(patterns);
    populateQkvRopeCacheToGPUPatterns(patterns);
    populateAttentionToGPUPatterns(patterns);

    ConversionTarget target(getContext());
    target.addIllegalDialect<MossDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
