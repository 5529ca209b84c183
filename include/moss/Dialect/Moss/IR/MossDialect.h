//===- MossDialect.h - the moss dialect -------------------------*- C++ -*-===//
#ifndef MOSS_DIALECT_MOSS_IR_MOSSDIALECT_H
#define MOSS_DIALECT_MOSS_IR_MOSSDIALECT_H

#include "mlir/IR/Dialect.h"

#include "moss/Dialect/Moss/IR/MossOpsDialect.h.inc"

#endif // MOSS_DIALECT_MOSS_IR_MOSSDIALECT_H
