//===- moss-opt.cpp - the moss pass driver --------------------------------===//
#include "moss/InitMoss.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace moss::test {
// test/lib: passes that exist for the lit tests only.
void registerTestKernelPiecePass();
} // namespace moss::test

int main(int argc, char **argv) {
  moss::registerAllMossPasses();
  moss::test::registerTestKernelPiecePass();
  mlir::DialectRegistry registry;
  moss::registerMossDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "moss optimizer driver\n", registry));
}
