//===- TestKernelPieces.cpp - moss-test-kernel-piece ----------------------===//
//
// A test pass that emits one kernel piece into `gpu.module @pieces` of the
// module it runs on, as a function from the piece's inputs to its outputs:
// the per-piece lit tests (test/Kernels/Pieces) check its IR there, apart
// from the kernels that compose it.
//
//===----------------------------------------------------------------------===//
#include "PieceFunction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace moss::test {
namespace {

struct TestKernelPiecePass
    : public PassWrapper<TestKernelPiecePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestKernelPiecePass)

  TestKernelPiecePass() = default;
  TestKernelPiecePass(const TestKernelPiecePass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "moss-test-kernel-piece"; }
  StringRef getDescription() const final {
    return "Emit one kernel piece as a gpu.func from its inputs to its "
           "outputs (tests only)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    math::MathDialect, NVVM::NVVMDialect, scf::SCFDialect,
                    vector::VectorDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    std::string error;
    bool ok = false;
    StringRef name = piece;
    if (name.starts_with("gemm-")) {
      ok = emitGemmPiece(b, module, name, n, k, tile, mode, error);
    } else if (name.starts_with("attention-")) {
      AttentionPieceOptions options;
      options.threads = threads;
      options.tmaSwizzle = tmaSwizzle;
      options.splitKv = splitKv;
      options.groups = groups;
      options.pairs = pairs;
      ok = emitAttentionPiece(b, module, name, options, error);
    } else {
      error = "piece must name a gemm-* or attention-* piece, not '" +
              piece.getValue() + "'";
    }
    if (!ok) {
      module.emitError() << "moss-test-kernel-piece: " << error;
      return signalPassFailure();
    }
  }

  Option<std::string> piece{*this, "piece",
                            llvm::cl::desc("The piece to emit")};
  Option<int64_t> n{*this, "n", llvm::cl::desc("GEMM pieces: N"),
                    llvm::cl::init(768)};
  Option<int64_t> k{*this, "k", llvm::cl::desc("GEMM pieces: K"),
                    llvm::cl::init(768)};
  ListOption<int64_t> tile{*this, "tile",
                           llvm::cl::desc("GEMM pieces: bm,bn,bk,split")};
  Option<int64_t> mode{
      *this, "mode",
      llvm::cl::desc("GEMM pieces: the whitelist mode (0 none, 1 gelu, 2 "
                     "layerscale_residual, 3 layernorm, 4 layernorm_gelu, 5 "
                     "layernorm_rope_cache)"),
      llvm::cl::init(0)};
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("attention-copy-full: CTA size"),
                          llvm::cl::init(128)};
  Option<bool> tmaSwizzle{
      *this, "tma-swizzle",
      llvm::cl::desc("attention copies: the TMA engine's swizzle"),
      llvm::cl::init(false)};
  Option<bool> splitKv{*this, "split-kv",
                       llvm::cl::desc("attention-tma-trip: V on its own "
                                      "mbarrier"),
                       llvm::cl::init(false)};
  Option<bool> pairs{*this, "pairs",
                     llvm::cl::desc("attention-mask-positions: the full, "
                                    "aligned tile's 16-byte key pairs"),
                     llvm::cl::init(false)};
  Option<int64_t> groups{
      *this, "groups",
      llvm::cl::desc("attention-group-merge: merge G groups at once (0: one "
                     "at a time)"),
      llvm::cl::init(0)};
};

} // namespace

void registerTestKernelPiecePass() { PassRegistration<TestKernelPiecePass>(); }

} // namespace moss::test
