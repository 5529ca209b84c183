//===- CublasLtFallback.h - BF16 GEMM through cuBLASLt --------*- C++ -*-===//
//
// out[m,n] = x[m,k] . w[n,k]^T with FP32 compute and bf16 output, for shapes
// the whitelist doesn't name. cuBLASLt is column-major, so it computes
// out^T[n,m] = w^T^T ... i.e. D = op(A) . B with A = w (k x n, transposed),
// B = x (k x m) and D = out (n x m, ld n), which is out row-major.
// Plans (descriptors plus the heuristic's algorithm) are cached per shape,
// pointer alignment and workspace size; the heuristic is host-only, so a
// plan can also be made during graph capture.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_CUBLASLTFALLBACK_H
#define MOSS_RUNTIME_CUBLASLTFALLBACK_H

#include "Status.h"

#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace moss::runtime {

struct LtShape {
  int64_t m = 0, n = 0, k = 0;
  int alignX = 16, alignW = 16, alignOut = 16; ///< Bytes: 2, 4, 8 or 16.
  size_t workspaceBytes = 0;

  bool operator<(const LtShape &o) const {
    return std::tie(m, n, k, alignX, alignW, alignOut, workspaceBytes) <
           std::tie(o.m, o.n, o.k, o.alignX, o.alignW, o.alignOut,
                    o.workspaceBytes);
  }
};

struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr,
                         dLayout = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0; ///< What the chosen algorithm needs.

  LtPlan() = default;
  LtPlan(const LtPlan &) = delete;
  LtPlan &operator=(const LtPlan &) = delete;
  ~LtPlan();
};

/// Plans of one cuBLASLt handle. Not thread-safe: the owner locks.
class LtPlanCache {
public:
  /// The cached plan, made on first use. The pointer stays valid for the
  /// cache's lifetime.
  Status get(cublasLtHandle_t handle, const LtShape &shape, const LtPlan *&out);
  void clear() { plans.clear(); }

private:
  std::map<LtShape, std::unique_ptr<LtPlan>> plans;
};

/// Alignment class (2, 4, 8 or 16 bytes) of a pointer cuBLASLt reads.
int alignmentOf(const void *pointer);

/// Enqueues out = x . w^T on `stream` (FP32 compute, bf16 out).
Status runLtGemm(cublasLtHandle_t handle, const LtPlan &plan, const void *x,
                 const void *w, void *out, void *workspace,
                 size_t workspaceBytes, CUstream stream);

/// MOSS_ERROR_CUBLAS "<what>: CUBLAS_STATUS_X (description)".
Status cublasFailure(const std::string &what, cublasStatus_t status);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_CUBLASLTFALLBACK_H
