//===- MossAttrs.h - moss attributes and enums ------------------*- C++ -*-===//
#ifndef MOSS_DIALECT_MOSS_IR_MOSSATTRS_H
#define MOSS_DIALECT_MOSS_IR_MOSSATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "moss/Dialect/Moss/IR/MossEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "moss/Dialect/Moss/IR/MossAttrs.h.inc"

#endif // MOSS_DIALECT_MOSS_IR_MOSSATTRS_H
