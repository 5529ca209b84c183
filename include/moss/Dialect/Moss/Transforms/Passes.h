//===- Passes.h - moss dialect passes ---------------------------*- C++ -*-===//
#ifndef MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H
#define MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H

#include "moss/Config/Whitelist.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "moss/Dialect/Moss/IR/MossDialect.h"

namespace moss {
#define GEN_PASS_DECL
#include "moss/Dialect/Moss/Transforms/Passes.h.inc"

/// moss-select-tiles on a whitelist already read: moss-aot compiles through
/// the pass as moss-opt does, without reading the file again.
std::unique_ptr<mlir::Pass> createMossSelectTilesPass(config::Whitelist table);

#define GEN_PASS_REGISTRATION
#include "moss/Dialect/Moss/Transforms/Passes.h.inc"
} // namespace moss

#endif // MOSS_DIALECT_MOSS_TRANSFORMS_PASSES_H
