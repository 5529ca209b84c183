//===- MossDialect.cpp - the moss dialect ---------------------------------===//
#include "moss/Dialect/Moss/IR/MossDialect.h"
#include "moss/Dialect/Moss/IR/MossAttrs.h"
#include "moss/Dialect/Moss/IR/MossOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace moss;

#include "moss/Dialect/Moss/IR/MossOpsDialect.cpp.inc"

void MossDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "moss/Dialect/Moss/IR/MossOps.cpp.inc"
      >();
}
