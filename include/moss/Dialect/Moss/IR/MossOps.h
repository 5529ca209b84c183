//===- MossOps.h - moss operations ------------------------------*- C++ -*-===//
#ifndef MOSS_DIALECT_MOSS_IR_MOSSOPS_H
#define MOSS_DIALECT_MOSS_IR_MOSSOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "moss/Dialect/Moss/IR/MossAttrs.h"
#include "moss/Dialect/Moss/IR/MossDialect.h"

#define GET_OP_CLASSES
#include "moss/Dialect/Moss/IR/MossOps.h.inc"

#endif // MOSS_DIALECT_MOSS_IR_MOSSOPS_H
