//===- Passes.h - moss dialect passes ---------------------------*- C++ -*-===//
#ifndef MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H
#define MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "moss/Dialect/Moss/IR/MossDialect.h"

namespace moss {
#define GEN_PASS_DECL
#include "moss/Dialect/Moss/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "moss/Dialect/Moss/Transforms/Passes.h.inc"
} // namespace moss

#endif // MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H
