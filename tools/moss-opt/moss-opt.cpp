//===- moss-opt.cpp - the moss pass driver --------------------------------===//
#include "moss/InitMoss.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  moss::registerAllMossPasses();
  mlir::DialectRegistry registry;
  moss::registerMossDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "moss optimizer driver\n", registry));
}
