//===- CublasAnchor.cpp - Plain cuBLASLt GEMM, the benchmark's anchor -----===//

#include "CublasAnchor.h"

namespace moss::bench {

CublasAnchor::CublasAnchor() {
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    handle = nullptr;
  if (cudaMalloc(&workspace, workspaceBytes) != cudaSuccess)
    workspace = nullptr;
}

CublasAnchor::~CublasAnchor() {
  releasePlan();
  if (workspace)
    cudaFree(workspace);
  if (handle)
    cublasLtDestroy(handle);
}

void CublasAnchor::releasePlan() {
  if (d)
    cublasLtMatrixLayoutDestroy(d);
  if (b)
    cublasLtMatrixLayoutDestroy(b);
  if (a)
    cublasLtMatrixLayoutDestroy(a);
  if (desc)
    cublasLtMatmulDescDestroy(desc);
  desc = nullptr, a = b = d = nullptr;
}

bool CublasAnchor::plan(int64_t m, int64_t n, int64_t k, std::string &err) {
  releasePlan();
  if (!handle || !workspace) {
    err = "cuBLASLt handle or workspace unavailable";
    return false;
  }
  // Column-major: D (n x m) = A^T (A = w as k x n) . B (B = x as k x m).
  cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  cublasLtMatmulPreference_t pref = nullptr;
  uint64_t maxWorkspace = workspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  bool ok =
      cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA,
                                     sizeof(transA)) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transB,
                                     sizeof(transB)) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, k, n, k) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, k, m, k) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, n, m, n) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulPreferenceSetAttribute(
          pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
          sizeof(maxWorkspace)) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, d, d, pref, 1, &result,
                                     &found) == CUBLAS_STATUS_SUCCESS &&
      found > 0;
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  if (!ok) {
    err = "no cuBLASLt algorithm for m=" + std::to_string(m) +
          " n=" + std::to_string(n) + " k=" + std::to_string(k);
    return false;
  }
  algo = result.algo;
  return true;
}

bool CublasAnchor::run(const void *x, const void *w, void *out,
                       cudaStream_t stream, std::string &err) {
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t status =
      cublasLtMatmul(handle, desc, &alpha, w, a, x, b, &beta, out, d, out, d,
                     &algo, workspace, workspaceBytes, stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    err = std::string("cublasLtMatmul: ") + cublasLtGetStatusName(status);
    return false;
  }
  return true;
}

} // namespace moss::bench
