//===- HostCall.h - host code of a moss op: one runtime call ----*- C++ -*-===//
//
// The host side of every moss op is one call of the runtime's entry point for
// it (moss_ffn_gemm, moss_streaming_attention): the runtime holds the launch
// rules (moss::config, shared with moss-aot) and applies them to the run-time
// sizes, so the host IR carries no copy of a rule. Operands travel as
// memrefs of dynamic shape, the output as a buffer the caller allocated.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_CONVERSION_MOSSTOGPU_HOSTCALL_H
#define MOSS_LIB_CONVERSION_MOSSTOGPU_HOSTCALL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace moss {
/// `buffer` (a memref of any static or dynamic shape) cast to the memref of
/// its rank and element type whose every extent is dynamic: the form the
/// runtime entry points take.
mlir::Value castToDynamicShape(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value buffer);

/// `tensor` as a read-only buffer of dynamic shape.
mlir::Value dynamicBufferOf(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value tensor);

/// Calls `callee` with `args`, declaring it as a private function of `top`
/// the first time.
void emitRuntimeCall(mlir::RewriterBase &rw, mlir::Location loc,
                     mlir::ModuleOp top, llvm::StringRef callee,
                     mlir::ValueRange args);
} // namespace moss

#endif // MOSS_LIB_CONVERSION_MOSSTOGPU_HOSTCALL_H
