//===- KernelModules.cpp - MLIR side of the AOT build ---------------------===//
#include "KernelModules.h"

#include "moss/Conversion/MossToGPU/MossToGPU.h"
#include "moss/Dialect/Moss/IR/MossOps.h"
#include "moss/Dialect/Moss/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

OwningOpRef<ModuleOp>
moss::aot::buildLinearEntryModule(MLIRContext &ctx,
                                  const config::GemmKey &key) {
  ctx.loadDialect<MossDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type bf16 = b.getBF16Type();
  auto x = RankedTensorType::get({key.m, key.k}, bf16);
  auto w = RankedTensorType::get({key.n, key.k}, bf16);
  auto y = RankedTensorType::get({key.m, key.n}, bf16);
  const config::GemmModeInfo &mode = *config::gemmModeInfo(key.mode);
  auto epilogue = static_cast<Epilogue>(mode.epilogue);
  SmallVector<Type> inputs = {x, w};
  if (epilogue == Epilogue::layerscale_residual) {
    inputs.push_back(RankedTensorType::get({key.n}, bf16));
    inputs.push_back(y);
  }
  if (mode.layerNorm) { // gamma, beta
    inputs.push_back(RankedTensorType::get({key.k}, bf16));
    inputs.push_back(RankedTensorType::get({key.k}, bf16));
  }
  auto fn =
      func::FuncOp::create(b, loc, "entry", b.getFunctionType(inputs, {y}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value scale, residual, gamma, beta;
  FloatAttr eps;
  if (epilogue == Epilogue::layerscale_residual) {
    scale = body->getArgument(2);
    residual = body->getArgument(3);
  }
  if (mode.layerNorm) {
    // eps is a kernel argument: the kernel is the same for every value.
    gamma = body->getArgument(2);
    beta = body->getArgument(3);
    eps = b.getF32FloatAttr(1e-5f);
  }
  // Every kernel takes row_live as an argument: the kernel of a key is the
  // same with or without the operand.
  auto linear = LinearOp::create(
      b, loc, y, body->getArgument(0), body->getArgument(1), scale, residual,
      /*row_live=*/Value(), gamma, beta, eps, EpilogueAttr::get(&ctx, epilogue),
      /*tile=*/nullptr, /*vendor_fallback=*/nullptr);
  func::ReturnOp::create(b, loc, linear.getResult());
  return module;
}

OwningOpRef<ModuleOp> moss::aot::buildAttentionEntryModule(MLIRContext &ctx) {
  ctx.loadDialect<MossDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  int64_t dyn = ShapedType::kDynamic;
  Type bf16 = b.getBF16Type();
  auto q = RankedTensorType::get({dyn, dyn, dyn, 64}, bf16);
  auto kv = RankedTensorType::get({dyn, dyn, dyn, 64}, bf16);
  auto mask = RankedTensorType::get({dyn, 1, dyn, dyn}, b.getI1Type());
  auto fn = func::FuncOp::create(b, loc, "entry",
                                 b.getFunctionType({q, kv, kv, mask}, {q}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  auto attention = StreamingAttentionOp::create(
      b, loc, q, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3), /*slot_positions=*/Value(),
      /*query_positions=*/Value(), AttentionLayout::bthd,
      /*skip_empty_tiles=*/false, /*scale=*/FloatAttr());
  func::ReturnOp::create(b, loc, attention.getResult());
  return module;
}

bool moss::aot::compileToPtx(ModuleOp module,
                             const config::Whitelist &whitelist,
                             const MossToCubinOptions &options,
                             std::string &ptx, std::string &err) {
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    diagStream << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  if (failed(verify(module))) {
    err = "the generated entry module does not verify:\n" + diagnostics;
    return false;
  }
  PassManager pm(module.getContext());
  pm.addPass(createMossSelectTilesPass(whitelist));
  buildMossToCubinPipeline(pm, options);
  if (failed(pm.run(module))) {
    err = "moss-to-cubin failed:\n" + diagnostics;
    return false;
  }
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
  if (!binary || binary.getObjects().size() != 1) {
    err = "moss-to-cubin produced no single gpu.binary @" +
          kKernelModuleName.str();
    return false;
  }
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  ptx = object.getObject().getValue().str();
  return true;
}
