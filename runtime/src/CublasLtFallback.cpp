//===- CublasLtFallback.cpp - BF16 GEMM through cuBLASLt ------------------===//

#include "CublasLtFallback.h"

#include <cstdint>
#include <string>

namespace moss::runtime {
namespace {

std::string shapeText(const LtShape &s) {
  return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " (alignment x " +
         std::to_string(s.alignX) + ", w " + std::to_string(s.alignW) +
         ", out " + std::to_string(s.alignOut) + " bytes, workspace " +
         std::to_string(s.workspaceBytes) + " bytes)";
}

/// Runs `call` and turns a failing status into a Status naming `what`.
#define MOSS_LT_CHECK(call, what)                                              \
  do {                                                                         \
    cublasStatus_t status_ = (call);                                           \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                      \
      return cublasFailure(what, status_);                                     \
  } while (0)

Status makePlan(cublasLtHandle_t handle, const LtShape &s, LtPlan &plan) {
  std::string where = "cuBLASLt plan for " + shapeText(s);
  MOSS_LT_CHECK(
      cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      where + ": cublasLtMatmulDescCreate");
  cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  MOSS_LT_CHECK(cublasLtMatmulDescSetAttribute(plan.desc,
                                               CUBLASLT_MATMUL_DESC_TRANSA,
                                               &transA, sizeof(transA)),
                where + ": TRANSA");
  MOSS_LT_CHECK(cublasLtMatmulDescSetAttribute(plan.desc,
                                               CUBLASLT_MATMUL_DESC_TRANSB,
                                               &transB, sizeof(transB)),
                where + ": TRANSB");
  // Column-major views: A = w as k x n (ld k), B = x as k x m (ld k),
  // D = out as n x m (ld n).
  MOSS_LT_CHECK(
      cublasLtMatrixLayoutCreate(&plan.aLayout, CUDA_R_16BF, s.k, s.n, s.k),
      where + ": layout of w");
  MOSS_LT_CHECK(
      cublasLtMatrixLayoutCreate(&plan.bLayout, CUDA_R_16BF, s.k, s.m, s.k),
      where + ": layout of x");
  MOSS_LT_CHECK(
      cublasLtMatrixLayoutCreate(&plan.dLayout, CUDA_R_16BF, s.n, s.m, s.n),
      where + ": layout of out");

  cublasLtMatmulPreference_t pref = nullptr;
  MOSS_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref),
                where + ": cublasLtMatmulPreferenceCreate");
  uint64_t maxWorkspace = s.workspaceBytes;
  uint32_t alignA = s.alignW, alignB = s.alignX, alignD = s.alignOut;
  struct Preference {
    cublasLtMatmulPreferenceAttributes_t attribute;
    const void *value;
    size_t size;
  };
  const Preference preferences[] = {
      {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
       sizeof(maxWorkspace)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof(alignA)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof(alignB)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignD, sizeof(alignD)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD, sizeof(alignD)},
  };
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  for (const Preference &p : preferences)
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(pref, p.attribute, p.value,
                                                    p.size);
  constexpr int kWanted = 4;
  cublasLtMatmulHeuristicResult_t results[kWanted] = {};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(
        handle, plan.desc, plan.aLayout, plan.bLayout, plan.dLayout,
        plan.dLayout, pref, kWanted, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS)
    return cublasFailure(where + ": cublasLtMatmulAlgoGetHeuristic", status);
  for (int i = 0; i < found; ++i) {
    if (results[i].state == CUBLAS_STATUS_SUCCESS &&
        results[i].workspaceSize <= s.workspaceBytes) {
      plan.algo = results[i].algo;
      plan.workspaceBytes = results[i].workspaceSize;
      return success();
    }
  }
  return failure(MOSS_ERROR_CUBLAS,
                 "no cuBLASLt algorithm for bf16 GEMM " + shapeText(s));
}

} // namespace

LtPlan::~LtPlan() {
  if (dLayout)
    cublasLtMatrixLayoutDestroy(dLayout);
  if (bLayout)
    cublasLtMatrixLayoutDestroy(bLayout);
  if (aLayout)
    cublasLtMatrixLayoutDestroy(aLayout);
  if (desc)
    cublasLtMatmulDescDestroy(desc);
}

Status LtPlanCache::get(cublasLtHandle_t handle, const LtShape &shape,
                        const LtPlan *&out) {
  auto it = plans.find(shape);
  if (it == plans.end()) {
    auto plan = std::make_unique<LtPlan>();
    Status status = makePlan(handle, shape, *plan);
    if (!status.ok())
      return status; // Not cached: the next call retries and reports again.
    it = plans.emplace(shape, std::move(plan)).first;
  }
  out = it->second.get();
  return success();
}

int alignmentOf(const void *pointer) {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  for (int bytes = 16; bytes > 2; bytes /= 2)
    if (address % bytes == 0)
      return bytes;
  return 2;
}

Status runLtGemm(cublasLtHandle_t handle, const LtPlan &plan, const void *x,
                 const void *w, void *out, void *workspace,
                 size_t workspaceBytes, CUstream stream) {
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t status =
      cublasLtMatmul(handle, plan.desc, &alpha, w, plan.aLayout, x,
                     plan.bLayout, &beta, out, plan.dLayout, out, plan.dLayout,
                     &plan.algo, plan.workspaceBytes ? workspace : nullptr,
                     plan.workspaceBytes ? workspaceBytes : 0,
                     reinterpret_cast<cudaStream_t>(stream));
  if (status != CUBLAS_STATUS_SUCCESS)
    return cublasFailure("cublasLtMatmul", status);
  return success();
}

Status cublasFailure(const std::string &what, cublasStatus_t status) {
  return failure(MOSS_ERROR_CUBLAS, what + ": " +
                                        cublasLtGetStatusName(status) + " (" +
                                        cublasLtGetStatusString(status) + ")");
}

} // namespace moss::runtime
