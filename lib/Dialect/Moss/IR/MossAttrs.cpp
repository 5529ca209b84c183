//===- MossAttrs.cpp - moss attributes and enums --------------------------===//
#include "moss/Dialect/Moss/IR/MossAttrs.h"
#include "moss/Dialect/Moss/IR/MossDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace moss;

#include "moss/Dialect/Moss/IR/MossEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "moss/Dialect/Moss/IR/MossAttrs.cpp.inc"

void MossDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "moss/Dialect/Moss/IR/MossAttrs.cpp.inc"
      >();
}

LogicalResult TileAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t bm, int64_t bn, int64_t bk,
                               int64_t split) {
  auto checkPow2 = [&](StringRef name, int64_t v) -> LogicalResult {
    if (v <= 0 || !llvm::isPowerOf2_64(v))
      return emitError() << "tile " << name
                         << " must be a positive power of two, found " << v;
    return success();
  };
  if (failed(checkPow2("bm", bm)) || failed(checkPow2("bn", bn)) ||
      failed(checkPow2("bk", bk)))
    return failure();
  if (split < 1)
    return emitError() << "tile split must be >= 1, found " << split;
  return success();
}
