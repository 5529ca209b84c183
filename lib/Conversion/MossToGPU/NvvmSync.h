//===- NvvmSync.h - Address spaces and cluster barriers -------*- C++ -*-===//
//
// What the GEMM and attention kernel builders share: the NVVM address spaces
// they use and the two forms of the thread-block cluster barrier around a
// merge through distributed shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_CONVERSION_MOSSTOGPU_NVVMSYNC_H
#define MOSS_LIB_CONVERSION_MOSSTOGPU_NVVMSYNC_H

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace moss {

constexpr unsigned kGlobalSpace = 1;        // CUDA global memory
constexpr unsigned kSharedSpace = 3;        // CUDA shared memory (own CTA)
constexpr unsigned kSharedClusterSpace = 7; // shared::cluster (DSMEM)

/// barrier.cluster.arrive (release) + wait (acquire), every thread: makes
/// every rank's shared-memory writes visible to the cluster.
inline void emitClusterBarrier(mlir::OpBuilder &b, mlir::Location loc) {
  mlir::NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/mlir::UnitAttr());
  mlir::NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/mlir::UnitAttr());
}

/// barrier.cluster.arrive.relaxed + wait: only orders execution, so that no
/// rank exits (freeing its shared memory) while another may still read it. A
/// release arrive compiles to MEMBAR.ALL.GPU, which would wait for the
/// output's global stores before the kernel can exit.
inline void emitClusterExecutionBarrier(mlir::OpBuilder &b,
                                        mlir::Location loc) {
  mlir::NVVM::ClusterArriveRelaxedOp::create(b, loc,
                                             /*aligned=*/mlir::UnitAttr());
  mlir::NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/mlir::UnitAttr());
}

} // namespace moss

#endif // MOSS_LIB_CONVERSION_MOSSTOGPU_NVVMSYNC_H
