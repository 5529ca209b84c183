//===- CublasAnchor.h - Plain cuBLASLt GEMM, the benchmark's anchor -*- C++
//-*-//
//
// out = x . w^T in bf16 with FP32 compute and no epilogue, called directly
// (not through moss_runtime), with a 32 MiB workspace: the speed a caller
// gets from cuBLASLt alone.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_BENCH_CUBLASANCHOR_H
#define MOSS_BENCH_CUBLASANCHOR_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace moss::bench {

class CublasAnchor {
public:
  CublasAnchor();
  ~CublasAnchor();
  CublasAnchor(const CublasAnchor &) = delete;
  CublasAnchor &operator=(const CublasAnchor &) = delete;

  /// Prepares descriptors and picks the heuristic's first algorithm.
  bool plan(int64_t m, int64_t n, int64_t k, std::string &err);
  /// Enqueues the planned GEMM.
  bool run(const void *x, const void *w, void *out, cudaStream_t stream,
           std::string &err);

private:
  void releasePlan();

  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = size_t(32) << 20;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

} // namespace moss::bench

#endif // MOSS_BENCH_CUBLASANCHOR_H
