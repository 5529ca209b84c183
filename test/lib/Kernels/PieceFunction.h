//===- PieceFunction.h - A function around one kernel piece -----*- C++ -*-===//
//
// The test harness of the kernel pieces: a gpu.func whose arguments are a
// piece's inputs and whose results are its outputs, so a lit test reads the
// piece's interface in the signature and its IR in the body.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TEST_LIB_KERNELS_PIECEFUNCTION_H
#define MOSS_TEST_LIB_KERNELS_PIECEFUNCTION_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace moss::test {

/// `gpu.func @name(args...)` in the `gpu.module @pieces` of `module` (made
/// on first use), with the builder at the start of its body.
class PieceFunction {
public:
  PieceFunction(mlir::OpBuilder &b, mlir::ModuleOp module, llvm::StringRef name,
                llvm::ArrayRef<mlir::Type> args);
  mlir::Value arg(unsigned i) { return fn.getArgument(i); }
  /// Arguments [first, first + count).
  llvm::SmallVector<mlir::Value> args(unsigned first, unsigned count);
  /// Ends the body with `gpu.return results` and makes them the results.
  void finish(mlir::ValueRange results);

private:
  mlir::OpBuilder &b;
  mlir::gpu::GPUFuncOp fn;
};

/// Emits piece `piece` (a `gemm-*` name) of the GEMM kernel of `n`, `k`,
/// `tile` ([bm, bn, bk, split]) and `mode` (the whitelist mode); false with
/// `error` for an unknown piece or an illegal tile.
bool emitGemmPiece(mlir::OpBuilder &b, mlir::ModuleOp module,
                   llvm::StringRef piece, int64_t n, int64_t k,
                   llvm::ArrayRef<int64_t> tile, int64_t mode,
                   std::string &error);

/// Options of the attention pieces.
struct AttentionPieceOptions {
  int64_t threads = 128;   ///< attention-copy-full: the CTA size
  bool tmaSwizzle = false; ///< the copies: the TMA engine's swizzle
  bool splitKv = false;    ///< attention-tma-trip: K and V barriers
  int64_t groups = 0;      ///< attention-group-merge: all at once with G
  bool pairs = false;      ///< attention-mask-positions: 16-byte key pairs
};

/// Emits piece `piece` (an `attention-*` name); false with `error` for an
/// unknown piece.
bool emitAttentionPiece(mlir::OpBuilder &b, mlir::ModuleOp module,
                        llvm::StringRef piece,
                        const AttentionPieceOptions &options,
                        std::string &error);

} // namespace moss::test

#endif // MOSS_TEST_LIB_KERNELS_PIECEFUNCTION_H
