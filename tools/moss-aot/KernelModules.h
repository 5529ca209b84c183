//===- KernelModules.h - MLIR side of the AOT build -------------*- C++ -*-===//
#ifndef MOSS_TOOLS_MOSSAOT_KERNELMODULES_H
#define MOSS_TOOLS_MOSSAOT_KERNELMODULES_H

#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Whitelist.h"
#include "moss/Pipeline/MossToCubin.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace moss::aot {
/// A module whose one function applies `moss.linear` of the whitelist key
/// `key` to its arguments, without a tile: moss-select-tiles attaches it,
/// as for any module moss-opt compiles.
mlir::OwningOpRef<mlir::ModuleOp>
buildLinearEntryModule(mlir::MLIRContext &ctx, const config::GemmKey &key);

/// A module whose one function applies `moss.streaming_attention` (D = 64,
/// every other size dynamic) to its arguments: the input of the pipeline for
/// the attention kernels, which serve every B, H, T and S.
mlir::OwningOpRef<mlir::ModuleOp>
buildAttentionEntryModule(mlir::MLIRContext &ctx);

/// Runs moss-select-tiles on `whitelist`, then moss-to-cubin with format=isa,
/// on `module` (the passes moss-opt runs) and returns the PTX of the
/// generated kernel module. Diagnostics go to `err`.
bool compileToPtx(mlir::ModuleOp module, const config::Whitelist &whitelist,
                  const MossToCubinOptions &options, std::string &ptx,
                  std::string &err);
} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_KERNELMODULES_H
