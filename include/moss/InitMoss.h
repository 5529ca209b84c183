//===- InitMoss.h - what moss tools register --------------------*- C++ -*-===//
#ifndef MOSS_INITMOSS_H
#define MOSS_INITMOSS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace moss {
/// The moss dialect, the upstream dialects the pipeline produces, their
/// to-LLVM interfaces and the NVVM target/translation used to emit PTX.
void registerMossDialects(mlir::DialectRegistry &registry);
/// Every moss pass, the moss-to-cubin pipeline and the upstream passes that
/// the pipeline is made of (so each stage can be run alone in tests).
void registerAllMossPasses();
} // namespace moss

#endif // MOSS_INITMOSS_H
